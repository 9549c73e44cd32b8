# The Vecchia backend's per-label variance fit (scaled box L-BFGS, stopping
# rule on the predicted decrease of J): see ?gpr_loo_control, tol_stationary.

vecchia_case <- function(n, seed) {
  set.seed(seed)
  x <- matrix(stats::runif(2 * n), n)
  y <- sin(2 * pi * x[, 1]) + cos(pi * x[, 2]) + stats::rnorm(n, sd = 0.1)
  bad <- sample(n, round(n / 10))
  y[bad] <- y[bad] + sample(c(-1, 1), length(bad), TRUE) * stats::runif(length(bad), 0.5, 1.5)
  y <- (y - mean(y)) / stats::sd(y)
  kr <- kernel_resolve(gp_kernel("rbf", variance = 1, lengthscale = 0.3), x)
  list(x = x, y = y, bad = bad, kernel = kr, spec = kernel_spec(kr), log_par = kernel_flatten(kr)$log_par)
}

# Two inputs matter, noise sd 0.1, 10% of the labels shifted by N(0, 1).
smooth_case <- function(n, d, seed) {
  set.seed(seed)
  x <- matrix(stats::runif(d * n), n)
  y <- sin(2 * pi * x[, 1]) + cos(pi * x[, 2]) + stats::rnorm(n, sd = 0.1)
  bad <- sample(n, n / 10)
  y[bad] <- y[bad] + stats::rnorm(length(bad))
  list(x = x, y = y, bad = bad)
}

# The sigma fit alone (kernel fixed), dense or Vecchia with these neighbours.
sigma_fit <- function(cc, neighbors = NULL, sigma0 = 0.05, ...) {
  n <- length(cc$y)
  o <- list(noise = "full", solver = "jacobi", lambda = 0, p = 1, sigma_floor = 1e-8,
            damping = 0.8, max_sweeps = 2000L, max_outer = 1L, max_hyper_iter = 1L,
            tol_sweep = 1e-13, tol_outer = 1e-8, learn_hyper = FALSE, jitter = 0,
            backend = "lapack", neighbors = neighbors, threads = 1L, screen_rounds = 1L, screen_hyper_iter = 10L, tol_stationary = 1e-6, adaptive_sweeps = TRUE)
  o <- utils::modifyList(o, list(...))
  fit <- .gpr_loo_fit(cc$x, cc$y, cc$spec, matrix(sigma0, n, 1), rbind(cc$log_par),
                      cc$log_par, cc$log_par, o)
  fit$options <- o
  fit
}

# Predicted remaining decrease of the stopping rule, from the gpr_loo_eval hook's
# gradient (an independent path: the operator's nll_gradient).
predicted_decrease <- function(cc, fit) {
  ev <- hook("gpr_loo_eval", cc$x, cc$y, cc$spec, fit$sigma, fit$options)
  gz <- sqrt(2) / ev$inverse_diagonal * ev$grad_sigma
  gz[fit$sigma <= fit$options$sigma_floor * (1 + 1e-9) & gz > 0] <- 0
  list(decrease = 0.5 * sum(gz^2), objective = ev$objective)
}

test_that("with every earlier label as a neighbour the Vecchia fit reaches the dense fixed point", {
  cc <- vecchia_case(60, 1)
  n <- length(cc$y)
  full <- t(vapply(seq_len(n), function(i) c(seq_len(i - 1L) - 1L, rep(-1L, n - i)), integer(n - 1L)))
  dn <- sigma_fit(cc)
  vc <- sigma_fit(cc, full, tol_stationary = 1e-14)
  expect_true(dn$converged)
  expect_true(vc$converged)
  expect_equal(vc$objective, dn$objective, tolerance = 1e-9)
  expect_equal(as.numeric(vc$sigma), as.numeric(dn$sigma), tolerance = 1e-5)
  # The dense fixed point of eq. 8: alpha_i^2 = d_i wherever sigma_i is above the floor.
  free <- dn$sigma > 1e-6
  expect_gt(sum(free), 5)
  expect_equal((vc$alpha^2 / vc$inverse_diagonal)[free], rep(1, sum(free)), tolerance = 1e-4)
})

test_that("the Vecchia sigma fit decreases J at every step and stops where its rule holds", {
  cc <- vecchia_case(400, 2)
  nn <- vecchia_setup(cc$x, cc$kernel, 10L)
  for (tol in c(1e-6, 1e-8)) {
    fit <- sigma_fit(cc, nn$neighbors, tol_stationary = tol)
    expect_true(fit$converged, info = tol)
    expect_true(all(diff(fit$trace) <= 1e-12 * pmax(1, abs(fit$trace[-1]))), info = tol)
    pd <- predicted_decrease(cc, fit)
    expect_equal(pd$objective, fit$objective, tolerance = 1e-12)
    expect_lte(pd$decrease, tol * (1 + abs(pd$objective)))
    # A stricter rule ends no higher.
    if (tol == 1e-6) j6 <- fit$objective else expect_lte(fit$objective, j6 + 1e-10)
    expect_gt(detection_metrics(fit$sigma, cc$bad)$auc, 0.95)
  }
})

test_that("a Vecchia fit of 2,000 labels converges without a warning", {
  skip_on_cran()
  cc <- smooth_case(2000, 5, 3)
  x <- cc$x
  y <- cc$y
  bad <- cc$bad
  kern <- gp_kernel("rbf", variance = 8, lengthscale = 0.8)
  expect_no_warning(fit <- gpr_loo(x, y, kernel = kern, learn_kernel = FALSE, approx = "vecchia"))
  expect_true(fit$converged)
  expect_true(all(diff(fit$trace) <= 1e-12 * pmax(1, abs(fit$trace[-1]))))
  expect_gt(detection_metrics(noise_scores(fit), bad)$auc, 0.85)
})

test_that("a Vecchia fit with a learned kernel floors the variances at a fraction of the pilot's clean level", {
  skip_on_cran()
  n <- 2500
  cc <- smooth_case(n, 3, 4)
  x <- cc$x
  y <- cc$y
  bad <- cc$bad
  fit_with <- function(f) {
    set.seed(5)
    gpr_loo(x, y, approx = "vecchia", restarts = 2,
            control = gpr_loo_control(vecchia_pilot = 300, vecchia_floor = f))
  }
  fit <- fit_with(0.01)
  fit0 <- fit_with(0)
  # Same pilot (same seed), so the same kernel; the floor is 1% of the
  # pilot's clean level, which the fit without it reports as its own
  # sigma_floor's reference point.
  expect_equal(fit$kernel, fit0$kernel)
  expect_equal(fit0$sigma_floor, gpr_loo_control()$sigma_floor * stats::var(y))
  expect_gt(fit$sigma_floor, 100 * fit0$sigma_floor)
  expect_lt(fit$sigma_floor, 0.1 * stats::median(fit$noise_var[bad]))
  expect_gte(min(fit$noise_var), fit$sigma_floor * (1 - 1e-12))
  at_floor <- fit$noise_var <= fit$sigma_floor * (1 + 1e-9)
  expect_gt(sum(at_floor), n / 10)
  # The floor binds: without it, labels go below it.
  expect_gt(sum(fit0$noise_var < fit$sigma_floor), n / 10)
  expect_true(fit$converged)
  expect_lt(length(fit$trace), length(fit0$trace))
  expect_gt(detection_metrics(noise_scores(fit), bad)$auc,
            detection_metrics(noise_scores(fit0), bad)$auc - 0.01)
})
