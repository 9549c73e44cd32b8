# cv_gpr_loo(): the cross-validation error is recomputed by hand from the
# returned folds, the choice is the grid minimum, and the final fit is the
# plain gpr_loo() fit with that lambda. restarts = 2 uses no random numbers,
# so the hand computation is exact.

cv_data <- function(seed = 4) {
  set.seed(seed)
  d <- sim_tang1d()
  list(x = cbind(x = d$data$x), y = d$data$y, d = d)
}

test_that("the held-out error equals a hand computation over the same folds", {
  cd <- cv_data()
  set.seed(11)
  cv <- cv_gpr_loo(cd$x, cd$y, lambda = c(0, 2, 8), folds = 4, restarts = 2)
  expect_s3_class(cv, "cv_gpr_loo")
  expect_setequal(unique(cv$folds), 1:4)
  hand <- vapply(c(0, 2, 8), function(l) {
    e <- unlist(lapply(1:4, function(k) {
      tr <- cv$folds != k
      m <- suppressWarnings(if (l == 0) gpr_loo(cd$x[tr, , drop = FALSE], cd$y[tr], restarts = 2)
                            else gpr_loo(cd$x[tr, , drop = FALSE], cd$y[tr], restarts = 2,
                                         penalty = "lp", lambda = l, p = 1))
      cd$y[!tr] - predict(m, cd$x[!tr, , drop = FALSE])
    }))
    mean(abs(e))
  }, numeric(1))
  expect_equal(cv$results$mean_abs_error, hand, tolerance = 1e-10)
  expect_identical(cv$best, cv$results$lambda[which.min(hand)])
  expect_identical(cv$results$failed, c(0, 0, 0))
  full <- suppressWarnings(if (cv$best == 0) gpr_loo(cd$x, cd$y, restarts = 2)
                           else gpr_loo(cd$x, cd$y, restarts = 2, penalty = "lp", lambda = cv$best, p = 1))
  expect_equal(cv$fit$noise_var, full$noise_var, tolerance = 1e-10)
  expect_equal(noise_scores(cv), noise_scores(full))
  expect_equal(fitted(cv), fitted(full))
  expect_equal(predict(cv, cd$x[1:3, , drop = FALSE]), predict(full, cd$x[1:3, , drop = FALSE]))
  expect_identical(label_issues(cv), label_issues(full))
  expect_output(print(cv), "Chosen: lambda")
})

test_that("a larger penalty shrinks the noise variances (the property the grid spans)", {
  cd <- cv_data(7)
  heavy <- suppressWarnings(gpr_loo(cd$x, cd$y, restarts = 2, penalty = "lp", lambda = 50, p = 1))
  light <- suppressWarnings(gpr_loo(cd$x, cd$y, restarts = 2))
  expect_lt(sum(heavy$noise_var), sum(light$noise_var))
})

test_that("same seed gives the same choice and fit", {
  cd <- cv_data(5)
  set.seed(9); a <- cv_gpr_loo(cd$x, cd$y, lambda = c(0, 5), folds = 3, restarts = 3)
  set.seed(9); b <- cv_gpr_loo(cd$x, cd$y, lambda = c(0, 5), folds = 3, restarts = 3)
  expect_identical(a$folds, b$folds)
  expect_identical(a$results, b$results)
  expect_identical(a$fit$noise_var, b$fit$noise_var)
})

test_that("the formula method gives the matrix method's folds, errors and fit", {
  cd <- cv_data(6)
  df <- data.frame(x = cd$x[, 1], y = cd$y)
  df$y[5] <- NA  # dropped by na.omit, as in gpr_loo()
  keep <- -5
  set.seed(3); m <- cv_gpr_loo(cd$x[keep, , drop = FALSE], cd$y[keep], lambda = c(0, 4), folds = 3, restarts = 2)
  set.seed(3); f <- cv_gpr_loo(y ~ x, data = df, lambda = c(0, 4), folds = 3, restarts = 2)
  expect_identical(f$folds, m$folds)
  expect_identical(f$results, m$results)
  expect_identical(f$fit$noise_var, m$fit$noise_var)
  new <- data.frame(x = c(-0.9, 0.1, 0.7))
  expect_equal(predict(f, new), predict(m, cbind(x = new$x)))
  expect_identical(as.integer(unclass(f$fit$na.action)), 5L)
  expect_identical(f$call$x, quote(y ~ x))
  expect_error(cv_gpr_loo(y ~ x), class = "noisylabels_error_input")
  expect_error(cv_gpr_loo(y ~ nothere, data = df), class = "noisylabels_error_input")
  expect_error(cv_gpr_loo(~ x, data = df), class = "noisylabels_error_input")
})

test_that("plot() draws the CV curve with the choice at its minimum, or the refitted model", {
  cd <- cv_data()
  set.seed(2)
  cv <- cv_gpr_loo(cd$x, cd$y, lambda = c(0, 2, 8), folds = 3, restarts = 2)
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off())
  p <- plot(cv)
  expect_identical(p$lambda, cv$results$lambda)
  expect_identical(p$lambda[p$chosen], cv$best)
  expect_equal(p$error[p$chosen], min(cv$results$mean_abs_error))
  expect_equal(p$upper - p$error, cv$results$se)
  expect_equal(p$error - p$lower, cv$results$se)
  expect_error(plot(cv, which = "fit"), NA)
  expect_error(plot(cv, which = "neither"))
  expect_error(plot(cv, main = "my title", ylab = "MAE", ylim = c(0, 2)), NA)
  td <- tidy(cv)
  expect_identical(td$lambda[td$chosen], cv$best)
  expect_identical(td[names(cv$results)], cv$results)
  gl <- glance(cv)
  expect_identical(nrow(gl), 1L)
  expect_identical(gl$lambda, cv$best)
  expect_equal(gl$mean_abs_error, min(cv$results$mean_abs_error))
  expect_identical(c(gl$n, gl$folds), c(length(cd$y), 3L))
})

test_that("bad input gets classed errors", {
  cd <- cv_data()
  expect_error(cv_gpr_loo(cd$x, cd$y, lambda = -1), class = "noisylabels_error_input")
  expect_error(cv_gpr_loo(cd$x, cd$y, lambda = c(1, NA)), class = "noisylabels_error_input")
  expect_error(cv_gpr_loo(cd$x, cd$y, lambda = Inf), class = "noisylabels_error_input")
  expect_error(cv_gpr_loo(cd$x, cd$y, folds = 1), class = "noisylabels_error_input")
  expect_error(cv_gpr_loo(cd$x, cd$y, folds = 25), class = "noisylabels_error_input")
  expect_error(cv_gpr_loo(cd$x[1:4, , drop = FALSE], cd$y[1:4], folds = 2), class = "noisylabels_error_input")
  expect_error(cv_gpr_loo(cd$x, cd$y[-1]), class = "noisylabels_error_input")
  expect_error(cv_gpr_loo(cd$x[1, , drop = FALSE], cd$y[1], folds = 2), class = "noisylabels_error_input")
  expect_error(cv_gpr_loo(cd$x, cd$y, penalty = "lp"), class = "noisylabels_error_input")
  expect_error(cv_gpr_loo(cd$x, replace(cd$y, 2, NA)), class = "noisylabels_error_input")
})

test_that("Fig. 2 example 1: the Full model with a cross-validated penalty beats Basic and Plain (8 draws)", {
  # Reduced version of inst/experiments/gpr_loo/penalty_cv.R (50 draws: Full
  # 0.168, Basic 0.253, Plain 0.289 under this reading of the noise levels).
  skip_on_cran()
  mae <- vapply(1:8, function(seed) {
    set.seed(seed)
    d <- sim_tang1d(noise_var = 0.05^2, corrupt_var = 0.75^2)
    x <- cbind(x = d$data$x)
    cv <- cv_gpr_loo(x, d$data$y, folds = 6, restarts = 3)
    b <- suppressWarnings(gpr_loo(x, d$data$y, noise = "uniform", restarts = 5))
    p <- suppressWarnings(gpr_loo(x, d$data$y, noise = "none", restarts = 5))
    c(full = mean(abs(fitted(cv) - d$f)), basic = mean(abs(fitted(b) - d$f)),
      plain = mean(abs(fitted(p) - d$f)))
  }, numeric(3))
  m <- rowMeans(mae)
  expect_lt(m[["full"]], m[["basic"]])
  expect_lt(m[["full"]], m[["plain"]])
})

test_that("autoplot() of a CV result draws the CV curve with the choice circled", {
  skip_if_not_installed("ggplot2")
  set.seed(5)
  x <- matrix(runif(60, -2, 2))
  y <- sin(2 * x[, 1]) + rnorm(60, sd = 0.1)
  y[1:6] <- y[1:6] + 2
  cg <- cv_gpr_loo(x, y, folds = 3, lambda = c(0, 2, 6))
  p <- ggplot2::autoplot(cg)
  expect_s3_class(p, "ggplot")
  b <- ggplot2::ggplot_build(p)
  # layers: error bars, line, points, the circled choice
  expect_equal(sort(b$data[[3]]$y), sort(cg$results$mean_abs_error))
  expect_equal(b$data[[4]]$y, cg$results$mean_abs_error[cg$results$lambda == cg$best])
  expect_equal(sort(b$data[[1]]$ymax - b$data[[1]]$ymin), sort(2 * cg$results$se))
  expect_s3_class(ggplot2::autoplot(cg, which = "fit"), "ggplot")
  expect_error(ggplot2::autoplot(cg, which = "folds"), class = "noisylabels_error_choice")
})
