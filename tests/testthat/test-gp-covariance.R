# The covariance-operator layer: dense and Vecchia backends (src/covariance.*).

cov_opts <- function(neighbors = NULL, threads = 1L) {
  list(noise = "full", solver = "jacobi", lambda = 0, p = 1, sigma_floor = 1e-8, damping = 0.8,
       max_sweeps = 10L, max_outer = 3L, max_hyper_iter = 10L, tol_sweep = 1e-10,
       tol_outer = 1e-8, learn_hyper = TRUE, jitter = 0, backend = "lapack",
       neighbors = neighbors, threads = threads, screen_rounds = 1L, screen_hyper_iter = 10L, tol_stationary = 1e-6, adaptive_sweeps = TRUE)
}

cov_case <- function(n = 40, d = 2, seed = 1) {
  set.seed(seed)
  x <- matrix(stats::runif(n * d), n)
  y <- sin(4 * x[, 1]) + x[, 2] + stats::rnorm(n, sd = 0.2)
  y <- (y - mean(y)) / stats::sd(y)
  k <- kernel_resolve(gp_kernel("rbf", ard = TRUE), x)
  spec <- kernel_spec(k)
  spec$log_par <- spec$log_par + 0.1
  list(x = x, y = y, spec = spec, kernel = k, s = stats::runif(n, 0.05, 0.5))
}

test_that("Vecchia conditioning on every earlier point reproduces the dense GP", {
  cc <- cov_case()
  n <- length(cc$y)
  full <- t(vapply(seq_len(n), function(i) c(seq_len(i - 1L) - 1L, rep(-1L, n - i)), integer(n - 1L)))
  dn <- hook("gpr_loo_eval", cc$x, cc$y, cc$spec, cc$s, cov_opts())
  vc <- hook("gpr_loo_eval", cc$x, cc$y, cc$spec, cc$s, cov_opts(full, threads = 2L))
  for (nm in c("objective", "grad_sigma", "grad_theta", "alpha", "inverse_diagonal")) {
    expect_equal(vc[[nm]], dn[[nm]], tolerance = 1e-8, info = nm)
  }
  # With all earlier points, the negative gradient part is (C^-1 y)^2.
  expect_equal(vc$grad_neg, dn$alpha^2, tolerance = 1e-8)
})

test_that("Vecchia gradients match finite differences of its own likelihood", {
  cc <- cov_case(seed = 2)
  nn <- brute_neighbors(cc$x, 5)
  o <- cov_opts(nn)
  v0 <- hook("gpr_loo_eval", cc$x, cc$y, cc$spec, cc$s, o)
  h <- 1e-6
  fd_s <- vapply(seq_along(cc$s), function(i) {
    sp <- cc$s; sp[i] <- sp[i] + h
    sm <- cc$s; sm[i] <- sm[i] - h
    (hook("gpr_loo_eval", cc$x, cc$y, cc$spec, sp, o)$objective -
       hook("gpr_loo_eval", cc$x, cc$y, cc$spec, sm, o)$objective) / (2 * h)
  }, numeric(1))
  expect_equal(v0$grad_sigma, fd_s, tolerance = 1e-6)
  fd_t <- vapply(seq_along(cc$spec$log_par), function(j) {
    sp <- cc$spec; sp$log_par[j] <- sp$log_par[j] + h
    sm <- cc$spec; sm$log_par[j] <- sm$log_par[j] - h
    (hook("gpr_loo_eval", cc$x, cc$y, sp, cc$s, o)$objective -
       hook("gpr_loo_eval", cc$x, cc$y, sm, cc$s, o)$objective) / (2 * h)
  }, numeric(1))
  expect_equal(v0$grad_theta, fd_t, tolerance = 1e-6)
  # ... and it is not the exact-GP formula applied to the approximate precision.
  expect_gt(max(abs(0.5 * (v0$inverse_diagonal - v0$alpha^2) - v0$grad_sigma)), 1e-3)
})

test_that("Vecchia LOO quantities are those of its precision matrix (brute force)", {
  cc <- cov_case(n = 30, seed = 3)
  n <- length(cc$y)
  nn <- brute_neighbors(cc$x, 4)
  v <- hook("gpr_loo_eval", cc$x, cc$y, cc$spec, cc$s, cov_opts(nn))
  # Q = U U' built in R from the conditional distributions.
  C <- .kernel_gram(cc$x, cc$spec) + diag(cc$s)
  U <- matrix(0, n, n)
  for (i in seq_len(n)) {
    S <- c(nn[i, nn[i, ] >= 0] + 1L, i)
    cond <- if (length(S) > 1) {
      b <- solve(C[S[-length(S)], S[-length(S)], drop = FALSE], C[S[-length(S)], i])
      list(b = b, v = C[i, i] - sum(C[i, S[-length(S)]] * b))
    } else list(b = numeric(), v = C[i, i])
    U[S, i] <- c(-cond$b, 1) / sqrt(cond$v)
  }
  Q <- U %*% t(U)
  expect_equal(v$alpha, as.numeric(Q %*% cc$y), tolerance = 1e-8)
  expect_equal(v$inverse_diagonal, diag(Q), tolerance = 1e-8)
  expect_equal(v$objective, 0.5 * sum(cc$y * (Q %*% cc$y)) -
                 0.5 * as.numeric(determinant(Q)$modulus) + n / 2 * log(2 * pi), tolerance = 1e-8)
  # Leave-one-out of the approximate Gaussian, by conditioning Sigma = Q^-1.
  sig <- solve(Q)
  for (i in c(1, 7, n)) {
    mu <- sig[i, -i] %*% solve(sig[-i, -i], cc$y[-i])
    vv <- sig[i, i] - sig[i, -i] %*% solve(sig[-i, -i], sig[-i, i])
    expect_equal(cc$y[i] - as.numeric(mu), v$alpha[i] / v$inverse_diagonal[i], tolerance = 1e-7)
    expect_equal(as.numeric(vv), 1 / v$inverse_diagonal[i], tolerance = 1e-7)
  }
})

test_that("ordered nearest neighbours from the kd-tree equal a brute-force scan", {
  set.seed(4)
  u <- matrix(stats::rnorm(1500 * 3), 1500)
  expect_identical(ordered_neighbors(u, 7), brute_neighbors(u, 7))
})

test_that("the Vecchia storage order renumbers the same model", {
  cc <- cov_case(n = 300, d = 2, seed = 8)
  set.seed(9)
  vs <- vecchia_setup(cc$x, cc$kernel, 8L, layout = TRUE)
  lay <- vs$layout
  expect_setequal(lay, seq_len(300))
  # Each label keeps its conditioning set, as the same labels.
  back <- vs$layout_neighbors
  back[back >= 0L] <- lay[back[back >= 0L] + 1L] - 1L
  expect_identical(back, vs$neighbors[lay, ])
  a <- hook("gpr_loo_eval", cc$x, cc$y, cc$spec, cc$s, cov_opts(vs$neighbors))
  b <- hook("gpr_loo_eval", cc$x[lay, ], cc$y[lay], cc$spec, cc$s[lay], cov_opts(vs$layout_neighbors, threads = 2L))
  expect_equal(b$objective, a$objective, tolerance = 1e-12)
  expect_equal(b$grad_theta, a$grad_theta, tolerance = 1e-10)
  for (nm in c("grad_sigma", "alpha", "inverse_diagonal")) {
    expect_equal(original_rows(b[[nm]], lay), a[[nm]], tolerance = 1e-12, info = nm)
  }
  # The point of the order: consecutive stored labels are near each other
  # (a Z-order curve over 300 uniform points: far nearer than random pairs).
  u <- vecchia_inputs(cc$x, cc$kernel)[lay, ]
  step <- sqrt(rowSums(diff(u)^2))
  pairs <- sqrt(rowSums((u[sample(300), ] - u)^2))
  expect_lt(stats::median(step), stats::median(pairs) / 3)
  expect_identical(z_order(matrix(c(3, 1, 2), 3)), c(2L, 3L, 1L))
})

test_that("Vecchia prediction on all training points equals the dense prediction", {
  cc <- cov_case(seed = 5)
  n <- length(cc$y)
  xnew <- matrix(stats::runif(10 * 2), 10)
  dn <- .gp_predict(cc$x, cc$y, cc$spec, cc$s, xnew, TRUE, 0, "lapack")
  all_nn <- matrix(rep(seq_len(n) - 1L, each = 10), 10)
  vc <- .gp_predict(cc$x, cc$y, cc$spec, cc$s, xnew, TRUE, 0, "lapack", all_nn, 2L)
  expect_equal(vc$mean, dn$mean, tolerance = 1e-8)
  expect_equal(vc$var, dn$var, tolerance = 1e-8)
})

test_that("blocked Vecchia predictions equal the dense prediction when a block sees all labels", {
  cc <- cov_case(seed = 9)
  n <- length(cc$y)
  xnew <- matrix(stats::runif(40 * 2), 40)
  sets <- vecchia_predict_sets(cc$x, xnew, cc$kernel, m = n, m_own = 3, block = 7)
  expect_identical(sort(sets$order), seq_len(40))
  expect_true(all(diff(sets$start) <= 7))
  expect_true(all(apply(sets$neighbors, 1, function(r) setequal(r, seq_len(n) - 1L))))
  dn <- .gp_predict(cc$x, cc$y, cc$spec, cc$s, xnew, TRUE, 0, "lapack")
  vc <- .gp_predict(cc$x, cc$y, cc$spec, cc$s, xnew[sets$order, ], TRUE, 0, "lapack",
                    sets$neighbors, 2L, sets$start)
  back <- order(sets$order)
  expect_equal(vc$mean[back], dn$mean, tolerance = 1e-8)
  expect_equal(vc$var[back], dn$var, tolerance = 1e-8)
  # Smaller sets: every member's own nearest labels are in its block's set.
  sm <- vecchia_predict_sets(cc$x, xnew, cc$kernel, m = 25, m_own = 5, block = 7)
  own <- RANN::nn2(vecchia_inputs(cc$x, cc$kernel), vecchia_inputs(xnew, cc$kernel), k = 5)$nn.idx - 1L
  for (b in seq_len(nrow(sm$neighbors))) {
    rows <- sm$order[(sm$start[b] + 1):sm$start[b + 1]]
    expect_true(all(own[rows, ] %in% sm$neighbors[b, ]))
  }
})

vecchia_fit_case <- function(n = 300, seed = 6) {
  set.seed(seed)
  x <- matrix(stats::runif(n * 2), n)
  f <- sin(3 * x[, 1]) + cos(2 * x[, 2])
  y <- f + stats::rnorm(n, sd = 0.1)
  bad <- sample(n, n / 10)
  y[bad] <- y[bad] + 3
  list(x = x, y = y, bad = bad, f = f)
}

test_that("a Vecchia gpr_loo fit is reproducible and finds the corrupted labels", {
  d <- vecchia_fit_case()
  ctl <- gpr_loo_control(vecchia_pilot = 150)
  set.seed(11)
  a <- gpr_loo(d$x, d$y, approx = "vecchia", neighbors = 10, threads = 2, restarts = 2, control = ctl)
  set.seed(11)
  b <- gpr_loo(d$x, d$y, approx = "vecchia", neighbors = 10, threads = 2, restarts = 2, control = ctl)
  expect_identical(a$noise_var, b$noise_var)
  expect_identical(a$approx, "vecchia")
  expect_gt(detection_metrics(noise_scores(a), d$bad)$auc, 0.95)
  p <- predict(a, d$x[1:5, ], se.fit = TRUE)
  expect_length(p$fit, 5)
  expect_true(all(p$se.fit >= 0))
  expect_output(print(a), "Vecchia")
  expect_s3_class(label_issues(a), "data.frame")
})

test_that("a Vecchia gpr_loo fit is the same stored in the given order or along the curve", {
  d <- vecchia_fit_case()
  ctl <- gpr_loo_control(vecchia_pilot = 150)
  fit <- function(layout) {
    withr::local_options(noisylabels.vecchia_layout = layout)
    withr::with_seed(11, gpr_loo(d$x, d$y, approx = "vecchia", neighbors = 10, restarts = 2, control = ctl))
  }
  a <- fit(TRUE)
  b <- fit(FALSE)
  # Same model and start; the iterates differ by rounding only, within the
  # variance fit's stopping rule.
  expect_equal(a$objective, b$objective, tolerance = 1e-6)
  expect_equal(a$noise_var, b$noise_var, tolerance = 1e-3)
  expect_equal(noise_scores(a), noise_scores(b), tolerance = 1e-3)
})

test_that("a warning of the Vecchia fit's dense pilot says it is the pilot's", {
  d <- vecchia_fit_case(n = 200, seed = 12)
  set.seed(3)
  expect_warning(gpr_loo(d$x, d$y, approx = "vecchia", neighbors = 8, restarts = 1,
                         control = gpr_loo_control(vecchia_pilot = 80, max_outer = 1)),
                 "dense pilot", class = "noisylabels_warning_convergence")
})

test_that("duplicated inputs never make a Vecchia conditioning set singular", {
  d <- vecchia_fit_case(n = 120, seed = 7)
  x <- rbind(d$x, d$x[1:20, ])
  y <- c(d$y, d$y[1:20] + stats::rnorm(20, sd = 0.01))
  set.seed(1)
  fit <- gpr_loo(x, y, approx = "vecchia", neighbors = 8, restarts = 1,
                 control = gpr_loo_control(vecchia_pilot = 60))
  expect_true(all(is.finite(fit$noise_var)))
  expect_true(is.finite(fit$jitter))
})

test_that("neighbors >= n falls back to the dense GP with a message", {
  d <- vecchia_fit_case(n = 30, seed = 8)
  expect_message(fit <- gpr_loo(d$x, d$y, approx = "vecchia", neighbors = 40, restarts = 1),
                 class = "noisylabels_message_dense")
  expect_identical(fit$approx, "dense")
})

test_that("the dense memory check names approx = 'vecchia' as the way out", {
  withr::local_options(noisylabels.max_gb = 1e-4)
  d <- vecchia_fit_case(n = 60, seed = 9)
  expect_error(gpr_loo(d$x, d$y, approx = "dense"), "vecchia", class = "noisylabels_error_memory")
})

test_that("one resolver picks every GP path's backend at its measured threshold", {
  ns <- asNamespace("noisylabels")
  expect_identical(ns$gp_backend("fit", ns$vecchia_auto_n), "dense")
  expect_identical(ns$gp_backend("fit", ns$vecchia_auto_n + 1L), "vecchia")
  expect_identical(ns$resolve_approx("auto", 2500L, 20L, 1L)$approx, "vecchia")
  expect_identical(ns$resolve_approx("auto", 500L, 20L, 1L)$approx, "dense")
  # the leave-one-out pass is one pass: dense far beyond the fits' threshold
  expect_identical(ns$gp_backend("loo", 5 * ns$vecchia_auto_n), "dense")
  withr::local_options(noisylabels.gp_loo_dense_max = 100L)
  expect_identical(ns$gp_backend("loo", 101L), "vecchia")
  expect_error(ns$gp_backend("nothing", 10L))
})
