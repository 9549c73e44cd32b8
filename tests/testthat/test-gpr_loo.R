opts <- function(...) {
  o <- list(noise = "full", solver = "jacobi", lambda = 0, p = 1, sigma_floor = 1e-10,
            damping = 0.8, max_sweeps = 200L, max_outer = 30L, max_hyper_iter = 50L,
            tol_sweep = 1e-10, tol_outer = 1e-8, learn_hyper = TRUE, jitter = 0,
            backend = "lapack", neighbors = NULL, threads = 1L, screen_rounds = 1L, screen_hyper_iter = 10L, tol_stationary = 1e-6, adaptive_sweeps = TRUE)
  utils::modifyList(o, list(...))
}

toy <- function(seed = 1) {
  set.seed(seed)
  d <- sim_tang1d()
  list(x = cbind(d$data$x), y = (d$data$y - mean(d$data$y)) / sd(d$data$y), d = d)
}

test_that("J and its gradients in sigma and every kernel hyperparameter match finite differences", {
  t <- toy()
  for (kern in list(gp_kernel("rbf", variance = 1.3, lengthscale = 0.3),
                    gp_kernel("matern32", variance = 0.8, lengthscale = 0.4))) {
    kr <- noisylabels:::kernel_resolve(kern, t$x)
    p0 <- noisylabels:::kernel_flatten(kr)$log_par
    s0 <- runif(24, 0.05, 0.5)
    for (o in list(opts(), opts(lambda = 0.7, p = 1), opts(lambda = 0.3, p = 0.5))) {
      J <- function(s, p) hook("gpr_loo_eval", t$x, t$y, noisylabels:::kernel_spec(kr, p), s, o)$objective
      ev <- hook("gpr_loo_eval", t$x, t$y, noisylabels:::kernel_spec(kr, p0), s0, o)
      expect_equal(ev$grad_sigma, fd_grad(function(s) J(s, p0), s0, 1e-6), tolerance = 1e-6)
      expect_equal(as.numeric(ev$grad_theta), fd_grad(function(p) J(s0, p), p0, 1e-6), tolerance = 1e-6)
      # J is the Gaussian NLL plus half the penalty
      K <- kernel_matrix(kr, t$x) + diag(s0)
      expect_equal(ev$objective, gauss_nll(K, t$y) + 0.5 * o$lambda * sum(s0^o$p), tolerance = 1e-10)
    }
  }
})

test_that("Theorem 1: with diagonal K the sweeps converge to max(0, y^2 - K_ii)", {
  set.seed(3)
  x <- cbind(seq(0, 100, length.out = 12))  # far apart: K = v I to machine precision
  y <- rnorm(12, sd = 1.2)
  kr <- noisylabels:::kernel_resolve(gp_kernel("rbf", variance = 0.5, lengthscale = 0.01), x)
  spec <- noisylabels:::kernel_spec(kr)
  expect_equal(kernel_matrix(kr, x), diag(0.5, 12))
  target <- pmax(0, y^2 - 0.5)
  for (solver in c("multiplicative", "jacobi")) {
    r <- hook("gpr_loo_sweeps", x, y, spec, rep(1, 12), opts(solver = solver), 3000L)
    pos <- target > 0
    expect_equal(r$sigma[pos], target[pos], tolerance = 1e-6, info = solver)
    # zero optima: eq. 8 approaches 0 sublinearly (Corollary 1.1), Jacobi reaches the floor
    expect_true(all(r$sigma[!pos] < if (solver == "jacobi") 1e-9 else 1e-2), info = solver)
    expect_true(all(diff(r$trace) <= 1e-12 * abs(r$trace[-1])), info = solver)
  }
})

test_that("the objective is non-increasing every sweep for eq. 8 and the Jacobi solver (Fig. 2 examples)", {
  set.seed(5)
  sims <- list(sim_tang1d(), sim_goldberg(), sim_le())
  for (d in sims) {
    x <- cbind(d$data$x); y <- (d$data$y - mean(d$data$y)) / sd(d$data$y)
    kr <- noisylabels:::kernel_resolve(gp_kernel("rbf", variance = 1, lengthscale = 0.2), x)
    for (solver in c("multiplicative", "jacobi")) {
      r <- hook("gpr_loo_sweeps", x, y, noisylabels:::kernel_spec(kr), rep(1, nrow(x)),
                                         opts(solver = solver), 150L)
      expect_true(all(diff(r$trace) <= 1e-12 * pmax(1, abs(r$trace[-1]))), info = solver)
    }
  }
})

test_that("the Jacobi solver reaches eq. 8's objective with several times fewer factorisations", {
  t <- toy()
  kr <- noisylabels:::kernel_resolve(gp_kernel("rbf", variance = 1.8, lengthscale = 0.233), t$x)
  spec <- noisylabels:::kernel_spec(kr)
  m <- hook("gpr_loo_sweeps", t$x, t$y, spec, rep(1, 24), opts(solver = "multiplicative"), 2000L)
  target <- min(m$trace) + 1e-6 * abs(min(m$trace))
  j <- hook("gpr_loo_sweeps", t$x, t$y, spec, rep(1, 24), opts(solver = "jacobi"), 400L)
  f_m <- m$factorizations[which(m$trace <= target)[1]]
  f_j <- j$factorizations[which(j$trace <= target)[1]]
  expect_false(is.na(f_j))
  expect_gte(f_m / f_j, 3)
})

test_that("LOO residuals and sds match brute-force refits leaving each label out", {
  set.seed(7)
  d <- sim_tang1d()
  fit <- gpr_loo(d$data["x"], d$data$y, restarts = 1)
  x <- fit$x; y <- d$data$y - fit$y_center
  K <- kernel_matrix(fit$kernel, x) * fit$y_scale^2
  S <- diag(pmax(fit$noise_var, fit$control$sigma_floor * fit$y_scale^2) + fit$jitter)
  for (i in c(1, 5, 12, 24)) {
    A <- K[-i, -i] + S[-i, -i]
    mu <- drop(K[i, -i] %*% solve(A, y[-i]))
    v <- K[i, i] - drop(K[i, -i] %*% solve(A, K[-i, i]))
    expect_equal(fit$loo_residual[i], y[i] - mu, tolerance = 1e-6)
    expect_equal(fit$loo_sd[i]^2, v, tolerance = 1e-5)
  }
  # fitted values are the posterior mean of f at the training inputs
  expect_equal(fitted(fit), predict(fit), tolerance = 1e-6)
})

test_that("the flag statistic is the LOO chi-square at the clean level, with every variance floored at it", {
  # 2-D, 40 labels, 3 outliers: an overfit regime for n free variances
  set.seed(2)
  n <- 40
  x <- matrix(runif(2 * n), n)
  y <- sin(4 * x[, 1]) + x[, 2] + rnorm(n, sd = 0.1)
  y[1:3] <- y[1:3] + 3
  fit <- gpr_loo(x, y)
  s0 <- fit$noise_level
  expect_gt(s0, 0)
  # brute force: refit without label i under K + diag(max(sigma, s0))
  K <- kernel_matrix(fit$kernel, fit$x) * fit$y_scale^2
  S <- pmax(fit$noise_var, s0)
  yc <- y - fit$y_center
  chisq <- vapply(seq_len(n), function(i) {
    A <- K[-i, -i] + diag(S[-i])
    mu <- drop(K[i, -i] %*% solve(A, yc[-i]))
    v <- K[i, i] - drop(K[i, -i] %*% solve(A, K[-i, i]))
    (yc[i] - mu)^2 / (v + s0)
  }, numeric(1))
  # (1e-6 relative differences: the factorisations' jitter, not modelled here)
  expect_equal(fit$flag_statistic, chisq, tolerance = 1e-5)
  # s0 is where the median equals the chi-squared(1) median
  expect_equal(median(fit$flag_statistic), qchisq(0.5, 1), tolerance = 1e-5)
  li <- label_issues(fit, alpha = 0.01)
  expect_equal(li$chisq, fit$flag_statistic[li$row])
  expect_identical(li$flagged, li$chisq > qchisq(0.99, 1))
  expect_identical(label_issues(fit)$flagged, label_issues(fit)$q_value <= 0.1)
  expect_identical(label_issues(fit, alpha = 1e-6)$flagged,
                   label_issues(fit, alpha = 1e-6)$chisq > qchisq(1 - 1e-6, 1))
})

test_that("the clean level is near the true noise variance and false flags are rare", {
  # Measured from the fitted model's own LOO residuals, the level was a
  # median 16 times too small in this setting and 9.7 of 37 clean labels were
  # flagged per draw (10 draws, inst/experiments/gpr_loo/flag_rule.R).
  out <- vapply(1:5, function(seed) {
    set.seed(seed)
    n <- 40
    x <- matrix(runif(2 * n), n)
    y <- sin(4 * x[, 1]) + x[, 2] + rnorm(n, sd = 0.1)
    y[1:3] <- y[1:3] + 3
    fit <- gpr_loo(x, y, restarts = 2)
    li <- label_issues(fit)
    c(ratio = fit$noise_level / 0.01, false = sum(li$flagged & li$row > 3),
      found = sum(li$flagged & li$row <= 3))
  }, numeric(3))
  expect_true(all(out["found", ] == 3))
  expect_lte(sum(out["false", ]), 12)
  expect_gt(median(out["ratio", ]), 0.2)
  expect_lt(median(out["ratio", ]), 5)
  # clean homoscedastic labels: the level is the noise variance, about
  # alpha of the labels are flagged
  set.seed(11)
  x <- matrix(runif(300, -3, 3))
  y <- sin(2 * x[, 1]) + rnorm(300, sd = 0.2)
  fit <- gpr_loo(x, y, restarts = 2)
  expect_gt(fit$noise_level, 0.04 / 1.5)
  expect_lt(fit$noise_level, 0.04 * 1.5)
  expect_lte(sum(label_issues(fit)$flagged), 9)
})

test_that("kernel_fit = 'uniform' is the Basic model's kernel kept fixed while sigma is fitted", {
  set.seed(4)
  d <- sim_tang1d(noise_var = 0.05^2, corrupt_var = 0.75^2)
  x <- as.matrix(d$data["x"])
  set.seed(1)
  two <- gpr_loo(x, d$data$y, kernel_fit = "uniform", restarts = 3)
  set.seed(1)
  basic <- gpr_loo(x, d$data$y, noise = "uniform", restarts = 3)
  fixed <- gpr_loo(x, d$data$y, kernel = basic$kernel, learn_kernel = FALSE, restarts = 3)
  expect_equal(coef(two), coef(basic))
  expect_equal(two$noise_var, fixed$noise_var)
  expect_equal(fitted(two), fitted(fixed))
  expect_identical(two$factorizations, basic$factorizations + fixed$factorizations)
  expect_identical(two$n_free, basic$n_free)
  expect_identical(two$kernel_fit, "uniform")
  expect_output(print(two), "learned under uniform noise")
  expect_error(gpr_loo(x, d$data$y, kernel_fit = "uniform", noise = "uniform"),
               class = "noisylabels_error_input")
  expect_error(gpr_loo(x, d$data$y, kernel_fit = "uniform", learn_kernel = FALSE),
               class = "noisylabels_error_input")
})

test_that("on Fig. 2's example 1 (sd reading) the two-stage fit is closer to f than the joint fit", {
  # 50 draws in inst/experiments/gpr_loo/kernel_fit.R: 0.179 against 0.201
  mae <- vapply(1:8, function(seed) {
    set.seed(seed)
    d <- sim_tang1d(noise_var = 0.05^2, corrupt_var = 0.75^2)
    x <- as.matrix(d$data["x"])
    c(joint = mean(abs(fitted(gpr_loo(x, d$data$y, restarts = 3)) - d$f)),
      uniform = mean(abs(fitted(gpr_loo(x, d$data$y, kernel_fit = "uniform", restarts = 3)) - d$f)))
  }, numeric(2))
  # (these 8 draws: 0.195 against 0.221, better in 5)
  expect_lt(mean(mae["uniform", ]), mean(mae["joint", ]))
})

test_that("lambda = 'auto' is the exponential prior with the unpenalised fit's mean variance as its mean", {
  set.seed(4)
  d <- sim_tang1d()
  x <- as.matrix(d$data["x"]); y <- d$data$y
  for (kf in c("uniform", "joint")) {
    set.seed(1)
    auto <- gpr_loo(x, y, kernel_fit = kf, penalty = "lp", lambda = "auto", restarts = 3)
    set.seed(1)
    if (kf == "uniform") {
      basic <- gpr_loo(x, y, noise = "uniform", restarts = 3)
      pilot <- gpr_loo(x, y, kernel = basic$kernel, learn_kernel = FALSE, restarts = 3)
    } else {
      basic <- NULL
      pilot <- gpr_loo(x, y, restarts = 3)
    }
    # the mean on the standardised scale; J carries lambda / 2 = 1 / mean
    lam <- 2 / (mean(pilot$noise_var) / sd(y)^2)
    expect_equal(auto$lambda, 2 / mean(pilot$noise_var / var(y)))
    expect_identical(auto$lambda_rule, "auto")
    fixed <- if (kf == "uniform") {
      gpr_loo(x, y, kernel = basic$kernel, learn_kernel = FALSE, penalty = "lp", lambda = lam, restarts = 3)
    } else {
      gpr_loo(x, y, penalty = "lp", lambda = lam, restarts = 3)
    }
    expect_equal(auto$noise_var, fixed$noise_var)
    expect_equal(coef(auto), coef(fixed))
    expect_identical(auto$factorizations,
                     sum(basic$factorizations, pilot$factorizations, fixed$factorizations))
    # the prior pulls the variances towards zero
    expect_lt(sum(auto$noise_var), sum(pilot$noise_var))
  }
  expect_output(print(auto), "prior mean from the unpenalised fit")
  expect_output(print(summary(auto)), "Penalty: lambda = .*prior mean from the unpenalised fit")
  expect_equal(glance(auto)$lambda, auto$lambda)
  set.seed(1)
  a2 <- gpr_loo(x, y, penalty = "lp", lambda = "auto", p = 2, restarts = 3)
  expect_equal(a2$lambda, 2 / (mean(pilot$noise_var) / var(y))^2)
  expect_error(gpr_loo(x, y, lambda = "auto"), class = "noisylabels_error_input")
  expect_error(gpr_loo(x, y, penalty = "lp", lambda = "Auto"), class = "noisylabels_error_input")
})

test_that("lambda = 'auto' stays moderate when the uniform model interpolates gross outliers", {
  # With an ARD kernel the uniform model can explain constant outliers by the
  # kernel, with its noise level at the floor; a prior mean taken from that
  # level would pin every variance at zero.
  set.seed(2)
  tr <- sim_friedman(100, corruption = "constant", prob = 0.1)
  te <- sim_friedman(300)
  k <- gp_kernel("rbf", ard = TRUE)
  rmse <- function(f) sqrt(mean((predict(f, te$x) - te$y_clean)^2))
  basic <- suppressWarnings(gpr_loo(tr$x, tr$y, kernel = k, noise = "uniform", restarts = 2))
  joint <- suppressWarnings(gpr_loo(tr$x, tr$y, kernel = k, restarts = 2))
  auto <- suppressWarnings(gpr_loo(tr$x, tr$y, kernel = k, penalty = "lp", lambda = "auto", restarts = 2))
  expect_lt(basic$noise_var[1] / var(tr$y), 1e-6)  # the scenario: the uniform model interpolates
  expect_lt(auto$lambda, 100)
  # (this draw: 1.85 against 1.78 unpenalised and 6.26 for the uniform model)
  expect_lt(rmse(auto), 1.5 * rmse(joint))
  expect_lt(rmse(auto), 0.5 * rmse(basic))
})

test_that("on Fig. 2's example 1 (variance reading) the auto-penalised two-stage fit beats Basic", {
  # 50 draws in inst/experiments/gpr_loo/kernel_fit.R
  mae <- vapply(1:20, function(seed) {
    set.seed(seed)
    d <- sim_tang1d()
    x <- as.matrix(d$data["x"])
    c(basic = mean(abs(fitted(gpr_loo(x, d$data$y, noise = "uniform", restarts = 3)) - d$f)),
      auto = mean(abs(fitted(gpr_loo(x, d$data$y, kernel_fit = "uniform", penalty = "lp",
                                     lambda = "auto", restarts = 3)) - d$f)))
  }, numeric(2))
  expect_lt(mean(mae["auto", ]), mean(mae["basic", ]))
  # (these 20 draws: 0.295 against 0.314, better in 12)
  expect_gte(sum(mae["auto", ] < mae["basic", ]), 10)
})

test_that("formula and matrix interfaces agree; the same seed gives an identical fit", {
  d <- toy(11)$d
  set.seed(42); a <- gpr_loo(y ~ x, data = d$data, restarts = 3)
  set.seed(42); b <- gpr_loo(d$data["x"], d$data$y, restarts = 3)
  expect_identical(a$noise_var, b$noise_var)
  expect_identical(coef(a), coef(b))
  set.seed(42); c2 <- gpr_loo(y ~ x, data = d$data, restarts = 3)
  expect_identical(a$noise_var, c2$noise_var)
  expect_identical(a$trace, c2$trace)
  expect_equal(predict(a, data.frame(x = c(0, 0.3))), predict(b, cbind(c(0, 0.3))))
})

test_that("the full model finds corrupted labels and beats the basic and plain models (2-D, 15%, level 100%)", {
  set.seed(1)
  f2 <- function(x) sin(2 * x[, 1]) * cos(2 * x[, 2]) + 0.5 * x[, 1]
  n <- 200
  X <- matrix(runif(2 * n, -2, 2), n)
  cl <- corrupt_labels(f2(X) + rnorm(n, 0, 0.05), rate = 0.15, level = 1)
  full <- gpr_loo(X, cl$y, restarts = 1)
  basic <- gpr_loo(X, cl$y, noise = "uniform", restarts = 1)
  plain <- gpr_loo(X, cl$y, noise = "none", restarts = 1)
  dm <- detection_metrics(noise_scores(full), cl$corrupted)
  expect_gte(dm$auc, 0.85)
  Xt <- matrix(runif(1000, -2, 2), ncol = 2)
  mae <- vapply(list(full, basic, plain), function(m) mean(abs(predict(m, Xt) - f2(Xt))), 1)
  expect_lt(mae[1], mae[2])
  expect_lt(mae[2], mae[3])
  li <- label_issues(full)
  expect_equal(nrow(li), n)
  # Flagged rows first, each part by decreasing score.
  expect_true(all(diff(li$flagged) <= 0))
  expect_true(all(tapply(li$score, li$flagged, function(s) all(diff(s) <= 0))))
  # flagged labels are mostly corrupted, and most corrupted labels are flagged
  expect_gt(mean(cl$is_corrupted[li$row[li$flagged]]), 0.6)
  expect_gt(mean(li$flagged[match(cl$corrupted, li$row)]), 0.5)
})

test_that("the second start (small initial noise) escapes the all-noise optimum and the best start is kept", {
  # From sigma = var(y) this draw settles in the optimum that calls every label
  # noise: a long length-scale, f nearly flat, J far above the other optimum.
  set.seed(9)
  f2 <- function(x) sin(2 * x[, 1]) * cos(2 * x[, 2]) + 0.5 * x[, 1]
  n <- 100
  X <- matrix(runif(2 * n, -2, 2), ncol = 2)
  cl <- corrupt_labels(f2(X) + rnorm(n, 0, 0.05), rate = 0.15, level = 1)
  one <- gpr_loo(X, cl$y, restarts = 1)
  # screen_rounds = 0: every start runs to the end, so restart_objectives are
  # the final objectives of each start.
  two <- gpr_loo(X, cl$y, restarts = 2, control = gpr_loo_control(screen_rounds = 0))
  # The default screens the starts after one round and continues the best:
  # the same start wins and reaches the same optimum.
  screened <- gpr_loo(X, cl$y, restarts = 2)
  expect_identical(screened$restart, two$restart)
  expect_equal(screened$objective, two$objective, tolerance = 1e-4)
  expect_lt(screened$factorizations, two$factorizations)
  expect_equal(two$restart_objectives[1], one$objective)
  expect_gt(two$restart_objectives[1] - two$restart_objectives[2], 20)
  expect_equal(two$objective, min(two$restart_objectives))
  expect_equal(two$restart, 2L)
  expect_lt(two$kernel$par$lengthscale, one$kernel$par$lengthscale)
  mae <- function(f) mean(abs(fitted(f) - f2(X)))
  expect_lt(mae(two), 0.1)
  expect_gt(mae(one), 2 * mae(two))
  # a third start draws a random scale below the first start's
  set.seed(1)
  sc <- noisylabels:::restart_sigma_scale(5)
  expect_equal(sc[1:2], c(1, 0.1))
  expect_true(all(sc[3:5] <= 1 & sc[3:5] >= 0.01))
})

test_that("uniform and penalised models decrease J monotonically and return sensible output", {
  t <- toy(2)
  kr <- noisylabels:::kernel_resolve(gp_kernel("rbf", variance = 1, lengthscale = 0.25), t$x)
  for (o in list(opts(noise = "uniform", solver = "multiplicative"), opts(lambda = 1, p = 1),
                 opts(lambda = 0.5, p = 2, solver = "multiplicative"))) {
    r <- hook("gpr_loo_sweeps", t$x, t$y, noisylabels:::kernel_spec(kr), rep(1, 24), o, 100L)
    expect_true(all(diff(r$trace) <= 1e-12 * pmax(1, abs(r$trace[-1]))))
    if (o$noise == "uniform") expect_equal(length(unique(r$sigma)), 1)
  }
  fit <- gpr_loo(t$x, t$d$data$y, penalty = "lp", lambda = 5, restarts = 1)
  fit0 <- gpr_loo(t$x, t$d$data$y, restarts = 1)
  expect_lte(sum(fit$noise_var), sum(fit0$noise_var))  # the penalty shrinks the variances
})

test_that("methods return the documented shapes", {
  set.seed(3)
  d <- sim_tang1d()
  fit <- gpr_loo(y ~ x, data = d$data, restarts = 1)
  expect_s3_class(logLik(fit), "logLik")
  expect_equal(nrow(tidy(fit)), 3)
  g <- glance(fit)
  expect_equal(nrow(g), 1)
  expect_equal(g$logLik, fit$loglik)
  a <- augment(fit)
  expect_equal(a$.noise_var, noise_scores(fit))
  pr <- predict(fit, data.frame(x = seq(-1, 1, 0.5)), se.fit = TRUE)
  expect_true(all(pr$se.obs >= pr$se.fit))
  expect_output(print(fit), "per-label")
  expect_output(print(summary(fit)), "flagged")
  expect_equal(residuals(fit), d$data$y - fitted(fit))
  pdf(NULL); on.exit(grDevices::dev.off())
  for (w in c("fit", "scores", "trace")) expect_silent(plot(fit, which = w))
  skip_if_not_installed("ggplot2")
  expect_s3_class(ggplot2::autoplot(fit), "ggplot")
})

test_that("bad input gives classed errors, never a crash", {
  x <- cbind(1:10 / 10); y <- sin(1:10)
  E <- "noisylabels_error_input"
  expect_error(gpr_loo(replace(x, 3, NA), y), class = E)
  expect_error(gpr_loo(replace(x, 3, Inf), y), class = E)
  expect_error(gpr_loo(x, replace(y, 2, NaN)), class = E)
  expect_error(gpr_loo(x, replace(y, 2, Inf)), class = E)
  expect_error(gpr_loo(data.frame(a = letters[1:10]), y), class = E)
  expect_error(gpr_loo(x[1:2, , drop = FALSE], y[1:2]), class = E)
  expect_error(gpr_loo(x, rep(1, 10)), class = E)
  expect_error(gpr_loo(x, y[1:9]), class = E)
  expect_error(gpr_loo(x, y, kernel = gp_kernel("rbf", lengthscale = c(1, 2), ard = TRUE)), class = E)
  expect_error(gpr_loo(x, y, kernel = gp_kernel("rbf", lengthscale = c(1, 2))), "takes a single lengthscale, got 2", class = E)
  expect_error(gpr_loo(x, y, kernel = gp_kernel("rbf", variance = -2)), class = E)
  expect_error(gpr_loo(x, y, sigma_init = 0), class = E)
  expect_error(gpr_loo(x, y, penalty = "lp", lambda = -1), class = E)
  expect_error(gpr_loo(x, y, restarts = 0), class = E)
  expect_error(gpr_loo(x, y, control = gpr_loo_control(damping = 2)), class = E)
  expect_error(gpr_loo(y ~ x), class = E)
  withr::with_options(list(noisylabels.max_gb = 1e-6),
                      expect_error(gpr_loo(x, y), class = "noisylabels_error_memory"))
  expect_snapshot(gpr_loo(x, rep(1, 10)), error = TRUE)
  # duplicated inputs still work: sigma and jitter handle the singular kernel
  xd <- rbind(x, x); yd <- c(y, y + rnorm(10, sd = 0.05))
  fit <- gpr_loo(xd, yd, restarts = 1)
  expect_true(all(is.finite(fit$noise_var)))
})
