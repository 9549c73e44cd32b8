loss_eval <- function(name, z, s = -1, c = 2) {
  noisylabels:::.sgd_loss_eval(noisylabels:::sgd_loss_spec(name, s = s, c = c), z)
}

test_that("losses match their reference values", {
  sr <- loss_eval("smooth_ramp", c(0, 1), s = -1)
  expect_equal(sr$value, c(1.030, 0.2513), tolerance = 5e-4)
  go <- loss_eval("gompertz", c(0, 1, -1), c = 2)
  expect_equal(go$value[1], exp(-1), tolerance = 1e-14)
  expect_equal(go$value[2:3], c(0.00062, 0.873), tolerance = 5e-3)
  expect_equal(loss_eval("ramp", c(-3, 0, 2), s = -1)$value, c(2, 1, 0))
  # bounds and flat-region starts
  expect_equal(loss_eval("smooth_ramp", 0, s = -2)$bound, 3)
  expect_equal(loss_eval("ramp", 0, s = -0.7)$flat_start, -0.7)
  expect_equal(loss_eval("gompertz", 0)$flat_start, -(exp(1) - 1) / 2)
})

test_that("loss values agree with the paper's formulas and derivatives with finite differences", {
  z <- seq(-6, 6, by = 0.173)  # avoids the kinks of hinge and ramp at 1 and s
  cases <- list(list("hinge", -1), list("logistic", -1), list("ramp", -1), list("ramp", -0.7),
                list("smooth_ramp", -0.7), list("smooth_ramp", -1), list("smooth_ramp", -2),
                list("gompertz", -1))
  for (cs in cases) {
    name <- cs[[1]]; s <- cs[[2]]
    spec <- noisylabels:::sgd_loss_spec(name, s = s)
    ev <- noisylabels:::.sgd_loss_eval(spec, z)
    ref <- ref_sgd_loss(name, z, s = spec$s, alpha = spec$alpha, beta = spec$beta, c = spec$c)
    expect_equal(ev$value, ref, tolerance = 1e-12, label = paste(name, s, "value"))
    h <- 1e-5
    fd <- (ref_sgd_loss(name, z + h, spec$s, spec$alpha, spec$beta, spec$c) -
             ref_sgd_loss(name, z - h, spec$s, spec$alpha, spec$beta, spec$c)) / (2 * h)
    expect_equal(ev$deriv, fd, tolerance = 1e-7, label = paste(name, s, "derivative"))
  }
  # max |r'| of SRamp(-0.7, 3, -0.15), at its inflection point, is (1 - s) alpha / 4 = 1.275
  ev <- loss_eval("smooth_ramp", seq(-3, 3, by = 1e-4), s = -0.7)
  expect_equal(max(abs(ev$deriv)), 1.275, tolerance = 1e-6)
})

test_that("losses are evaluated stably at extreme margins", {
  z <- c(-1e4, -800, -40, 40, 800, 1e4)
  for (name in c("logistic", "smooth_ramp", "gompertz")) {
    ev <- loss_eval(name, z)
    expect_true(all(is.finite(ev$value)) && all(is.finite(ev$deriv)), label = name)
  }
  expect_equal(loss_eval("logistic", -800)$value, 800)
  expect_equal(loss_eval("smooth_ramp", -800)$value, 2)
  expect_equal(loss_eval("smooth_ramp", -800)$deriv, 0)
  expect_equal(loss_eval("gompertz", c(-800, 800))$value, c(1, 0))
})

test_that("smooth_ramp_params returns the published tuples and refits others", {
  expect_equal(unname(smooth_ramp_params(-1)), c(-1, 2, -0.03))
  expect_equal(unname(smooth_ramp_params(-2)), c(-2, 1.5, 0.5))
  # an independent L2 refit on [-5, 5]: (3.118, -0.150) for s = -0.7
  rf <- smooth_ramp_params(-0.7, refit = TRUE)
  expect_equal(unname(rf[2:3]), c(3.118, -0.150), tolerance = 2e-3)
  # beta is the ramp midpoint -(1 + s)/2 for a symmetric criterion
  expect_equal(unname(smooth_ramp_params(-0.5)[3]), -0.25, tolerance = 1e-3)
})

test_that("loss parameters given for a loss that does not use them are a classed warning naming them", {
  dat <- sgd_toy(n = 40)
  expect_warning(sgd_robust(dat$x, dat$y, loss = "hinge", s = -2, epochs = 1, control = sgd_robust_control(eta = 0.1, tol = 1)),
                 class = "noisylabels_warning_unused_argument", regexp = "`s`")
  expect_warning(sgd_robust(dat$x, dat$y, loss = "logistic", c = 3, epochs = 1, control = sgd_robust_control(eta = 0.1, tol = 1)),
                 class = "noisylabels_warning_unused_argument", regexp = "`c`")
  expect_warning(sgd_robust(dat$x, dat$y, loss = "ramp", alpha = 1, epochs = 1, control = sgd_robust_control(eta = 0.1, tol = 1)),
                 class = "noisylabels_warning_unused_argument", regexp = "`alpha`")
  expect_warning(cv_sgd_robust(dat$x, dat$y, loss = "hinge", s = -2, lambda = 1e-3, folds = 2,
                               epochs = 1, control = sgd_robust_control(eta = 0.1, tol = 1)),
                 class = "noisylabels_warning_unused_argument")
  # parameters the loss reads, or left at their defaults: no such warning
  expect_no_warning(
    withCallingHandlers(sgd_robust(dat$x, dat$y, loss = "gompertz", c = 3, epochs = 1, control = sgd_robust_control(eta = 0.1, tol = 1)),
                        noisylabels_warning_convergence = function(w) invokeRestart("muffleWarning")))
  expect_no_warning(
    withCallingHandlers(sgd_robust(dat$x, dat$y, loss = "hinge", s = -1, c = 2, epochs = 1, control = sgd_robust_control(eta = 0.1, tol = 1)),
                        noisylabels_warning_convergence = function(w) invokeRestart("muffleWarning")))
})
