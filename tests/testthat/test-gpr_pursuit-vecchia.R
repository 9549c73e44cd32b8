# gpr_pursuit() and gpr_baseline() on the Vecchia covariance operator
# (issue 20): the Vecchia path against the dense exact GP when every earlier
# label is conditioned on, its gradients against finite differences, what is
# and is not exact about Lemma 1 there, the methods on a Vecchia fit, bad input.

ns <- asNamespace("noisylabels")

# Every earlier point (in the row order) as conditioning set: the exact GP.
full_neighbors <- function(n) {
  t(vapply(seq_len(n), function(i) c(seq_len(i - 1L) - 1L, rep(-1L, n - i)), integer(n - 1L)))
}

vcase <- function(n = 30, seed = 1) {
  set.seed(seed)
  x <- matrix(runif(n * 2), n)
  y <- sin(4 * x[, 1]) + x[, 2] + rnorm(n, sd = 0.1)
  y[c(3, 11)] <- y[c(3, 11)] + c(2, -1.5)
  y <- (y - mean(y)) / sd(y)
  k <- ns$kernel_resolve(gp_kernel("rbf", ard = TRUE), x)
  list(x = x, y = y, spec = ns$kernel_spec(k), n = n)
}

test_that("the Vecchia pursuit objective with all earlier points is the dense one", {
  cc <- vcase()
  S <- c(3L, 7L, 11L)
  p <- length(cc$spec$log_par)
  for (convex in c(TRUE, FALSE)) {
    z <- c(cc$spec$log_par + 0.1, 0.15, log(0.05), if (convex) c(0.3, 0.01, 0.8) else c(0.5, 0.01, 2))
    dn <- hook("gpr_pursuit_objective", cc$x, cc$y, cc$spec, z, S, convex, NULL, NULL, NULL)
    vc <- hook("gpr_pursuit_objective", cc$x, cc$y, cc$spec, z, S, convex, NULL, NULL,
                                    full_neighbors(cc$n))
    expect_equal(vc$value, dn$value, tolerance = 1e-10)
    expect_equal(vc$gradient, dn$gradient, tolerance = 1e-8)
    expect_equal(vc$rho, dn$rho, tolerance = 1e-12)
  }
})

test_that("the Vecchia pursuit gradient (theta, mean, sigma2, s) matches finite differences", {
  cc <- vcase(seed = 2)
  nn <- brute_neighbors(cc$x, 4)
  S <- c(3L, 7L, 11L)
  p <- length(cc$spec$log_par)
  for (convex in c(TRUE, FALSE)) {
    z <- c(cc$spec$log_par - 0.2, -0.1, log(0.08), if (convex) c(0.3, 0.05, 0.7) else c(0.5, 0.05, 2))
    f <- function(zz) hook("gpr_pursuit_objective", cc$x, cc$y, cc$spec, zz, S, convex, NULL, NULL, nn)$value
    g <- hook("gpr_pursuit_objective", cc$x, cc$y, cc$spec, z, S, convex, NULL, NULL, nn)$gradient
    expect_equal(g, fd_grad(f, z, 1e-6), tolerance = 1e-6)
    # and it is a different model from the dense one
    expect_gt(abs(f(z) - hook("gpr_pursuit_objective", cc$x, cc$y, cc$spec, z, S, convex, NULL, NULL, NULL)$value), 1e-4)
  }
})

test_that("Lemma 1 from the Vecchia precision: exact with all earlier points, a proposal otherwise", {
  cc <- vcase(seed = 3)
  rho <- numeric(cc$n); rho[c(4, 11)] <- c(0.5, 0.7)
  dn <- ns$.gpr_pursuit_lemma1(cc$x, cc$y, cc$spec, 0.1, 0.03, rho)
  vc <- ns$.gpr_pursuit_lemma1(cc$x, cc$y, cc$spec, 0.1, 0.03, rho, full_neighbors(cc$n))
  expect_equal(vc, dn, tolerance = 1e-8)
  gd <- ns$.gpr_pursuit_gain(cc$x, cc$y, cc$spec, 0.1, 0.03, rho, "lapack")
  gv <- ns$.gpr_pursuit_gain(cc$x, cc$y, cc$spec, 0.1, 0.03, rho, "lapack", full_neighbors(cc$n))
  expect_equal(gv, gd, tolerance = 1e-8)
  # m = 3: the closed form is the LOO-based proposal, not the 1-D maximiser
  # of the Vecchia likelihood (rho_i also enters later points' blocks).
  nn <- brute_neighbors(cc$x, 3)
  crit <- ns$.gpr_pursuit_lemma1(cc$x, cc$y, cc$spec, 0.1, 0.03, rho, nn)
  p <- length(cc$spec$log_par)
  S <- which(rho > 0)
  vnll <- function(i, r) {
    rr <- rho; rr[i] <- r
    SS <- sort(unique(c(S, i)))
    z <- c(cc$spec$log_par, 0.1, log(0.03), rr[SS])
    hook("gpr_pursuit_objective", cc$x, cc$y, cc$spec, z, SS, FALSE, NULL, NULL, nn)$value * cc$n
  }
  best <- vapply(c(3L, 11L), function(i) optimize(function(r) vnll(i, r), c(0, 50), tol = 1e-10)$minimum,
                 numeric(1))
  expect_gt(crit[3], 1)  # the planted outlier is proposed
  expect_gt(max(abs(best - crit[c(3L, 11L)]) / best), 1e-4)
  expect_lt(max(abs(best - crit[c(3L, 11L)]) / best), 0.5)
})

test_that("Vecchia pursuit with neighbors = n - 1 gives the dense pursuit's result", {
  withr::local_options(noisylabels.vecchia_exact_check = TRUE)
  set.seed(11)
  n <- 40
  x <- seq(0, 1, length.out = n)
  y <- sin(6 * x) + rnorm(n, sd = 0.1)
  y[c(5, 20, 33)] <- y[c(5, 20, 33)] + 3
  # refine_cold = TRUE on both (the Vecchia default skips the cold refits)
  ctl <- pursuit_control(ftol = 1e-12, pgtol = 1e-9, refine_cold = TRUE)
  for (dir in c("forward", "backward")) {
    # selection = "bic" on both: the default "esd" test is dense-only
    args <- list(x, y, direction = dir, n_outliers = c(0:4, if (dir == "backward") 40),
                 selection = "bic", control = ctl)
    set.seed(1)
    dn <- suppressWarnings(do.call(gpr_pursuit, c(args, approx = "dense")))
    set.seed(1)
    vc <- suppressWarnings(do.call(gpr_pursuit, c(args, approx = "vecchia", neighbors = n - 1L)))
    expect_equal(vc$approx, "vecchia")
    expect_equal(vc$neighbors, n - 1L)
    expect_equal(vc$support, dn$support, info = dir)
    expect_equal(vc$trace$size, dn$trace$size, info = dir)
    expect_equal(vc$trace$loglik, dn$trace$loglik, tolerance = 1e-6, info = dir)
    expect_equal(vc$rho, dn$rho, tolerance = 1e-4, info = dir)
    expect_equal(vc$sigma2, dn$sigma2, tolerance = 1e-4, info = dir)
    expect_equal(noise_scores(vc), noise_scores(dn), tolerance = 1e-4, info = dir)
    xn <- c(0.1, 0.55, 0.9)
    expect_equal(predict(vc, xn, se.fit = TRUE), predict(dn, xn, se.fit = TRUE), tolerance = 1e-4)
  }
})

test_that("an explicit selection = 'esd' on the Vecchia path is a clear error", {
  set.seed(3)
  x <- matrix(runif(60), 60)
  y <- sin(6 * x[, 1]) + rnorm(60, sd = 0.1)
  expect_error(gpr_pursuit(x, y, approx = "vecchia", neighbors = 10L, selection = "esd"),
               "dense covariance", class = "noisylabels_error_input")
})

test_that("gpr_baseline(approx = 'vecchia') with m = n - 1 equals the dense standard GP", {
  withr::local_options(noisylabels.vecchia_exact_check = TRUE)
  set.seed(12)
  s <- sim_friedman(60, d = 5)
  ctl <- pursuit_control(ftol = 1e-12, pgtol = 1e-9)
  dn <- gpr_baseline(s$x, s$y, approx = "dense", control = ctl)
  vc <- gpr_baseline(s$x, s$y, approx = "vecchia", neighbors = 59L, control = ctl)
  expect_equal(vc$fit$approx, "vecchia")
  expect_equal(logLik(vc$fit), logLik(dn$fit), tolerance = 1e-6)
  expect_equal(coef(vc$fit), coef(dn$fit), tolerance = 1e-4)
  t <- sim_friedman(10, d = 5)
  expect_equal(predict(vc, t$x, se.fit = TRUE), predict(dn, t$x, se.fit = TRUE), tolerance = 1e-4)
})

test_that("a Vecchia pursuit finds planted outliers and every method works on it", {
  set.seed(13)
  n <- 400
  s <- sim_friedman(n, d = 5, corruption = "constant", prob = 0.05)
  # (the full-support level may stop unconverged, as on the dense path)
  fit <- suppressWarnings(gpr_pursuit(s$x, s$y, approx = "vecchia", neighbors = 10L,
                                      fractions = c(0, 0.05, 0.1, 0.2)))
  expect_equal(fit$approx, "vecchia")
  expect_true(fit$vecchia_pilot)
  auc <- detection_metrics(noise_scores(fit), s$is_corrupted)$auc
  expect_gt(auc, 0.95)
  expect_output(print(fit), "Vecchia approximation, 10 neighbours")
  expect_output(print(summary(fit)), "Covariance: Vecchia")
  li <- label_issues(fit)
  expect_equal(nrow(li), n)
  expect_setequal(li$row[li$flagged], fit$support)
  expect_length(predict(fit, s$x[1:5, ]), 5)
  expect_equal(glance(fit)$approx, "vecchia")
  expect_equal(nrow(augment(fit)), n)
  expect_true(all(c("term", "estimate") %in% names(tidy(fit))))
  pdf(NULL); on.exit(grDevices::dev.off(), add = TRUE)
  expect_silent(plot(fit))
  # the dense fit's print names its backend too
  small <- gpr_pursuit(s$x[1:30, ], s$y[1:30], direction = "forward", n_outliers = 0:1)
  expect_output(print(small), "covariance: exact")
})

test_that("the same seed gives the identical Vecchia fit", {
  set.seed(14)
  s <- sim_friedman(150, d = 5, corruption = "constant", prob = 0.1)
  run <- function() {
    set.seed(3)
    suppressWarnings(gpr_pursuit(s$x, s$y, approx = "vecchia", neighbors = 8L,
                                 fractions = c(0, 0.1, 0.2)))
  }
  a <- run(); b <- run()
  expect_identical(a$rho, b$rho)
  expect_identical(a$trace$loglik, b$trace$loglik)
})

test_that("bad backend input gives classed errors or a message", {
  set.seed(15)
  x <- matrix(runif(40), 20); y <- rnorm(20)
  expect_error(gpr_pursuit(x, y, approx = "sparse"), class = "noisylabels_error_input")
  expect_error(gpr_pursuit(x, y, approx = "vecchia", neighbors = 0), class = "noisylabels_error_input")
  expect_error(gpr_pursuit(x, y, approx = "vecchia", neighbors = "a"), class = "noisylabels_error_input")
  expect_error(gpr_pursuit(x, y, approx = "vecchia", threads = -1), class = "noisylabels_error_input")
  expect_message(fit <- gpr_pursuit(x, y, approx = "vecchia", neighbors = 50L, direction = "forward",
                                    n_outliers = 0:1),
                 class = "noisylabels_message_dense")
  expect_equal(fit$approx, "dense")
  expect_error(gpr_baseline(x, y, "trimmed_mll", approx = "vecchia"), "trimmed_mll",
               class = "noisylabels_error_input")
  expect_error(gpr_baseline(x, y, approx = "vecchia", neighbors = -2), class = "noisylabels_error_input")
  withr::local_options(noisylabels.max_gb = 1e-6)
  expect_error(gpr_pursuit(x, y, approx = "dense"), "vecchia", class = "noisylabels_error_memory")
})

test_that("iterative trimming and winsorising run on the Vecchia backend", {
  set.seed(16)
  s <- sim_friedman(120, d = 5)
  y <- s$y
  out <- c(3L, 40L, 77L)
  y[out] <- y[out] + 25
  tr <- gpr_baseline(s$x, y, "trimmed", trim = 0.05, approx = "vecchia", neighbors = 10L)
  expect_equal(tr$fit$approx, "vecchia")
  expect_false(any(out %in% tr$kept))
  expect_output(print(tr), "Vecchia approximation, 10 neighbours")
  wz <- gpr_baseline(s$x, y, "winsorize", approx = "vecchia", neighbors = 10L)
  expect_equal(wz$fit$approx, "vecchia")
  # the clipped labels are what the Vecchia GP was fitted to
  q <- stats::quantile(y, c(0.25, 0.75), names = FALSE)
  clipped <- pmin(pmax(y, q[1] - 1.5 * diff(q)), q[2] + 1.5 * diff(q))
  expect_equal(wz$fit$y_center + wz$fit$y_scale * wz$fit$y, clipped)
})
