test_that("each kernel matrix matches a direct R computation", {
  set.seed(1)
  x <- matrix(rnorm(12), 6, 2); z <- matrix(rnorm(8), 4, 2)
  for (type in c("rbf", "matern12", "matern32", "matern52")) {
    for (ard in c(FALSE, TRUE)) {
      ls <- if (ard) c(0.7, 1.9) else 1.3
      k <- gp_kernel(type, variance = 2.5, lengthscale = ls, ard = ard)
      expect_equal(kernel_matrix(k, x, z), ref_kernel(type, x, z, list(variance = 2.5, lengthscale = ls)),
                   tolerance = 1e-12, info = paste(type, ard))
      expect_equal(kernel_matrix(k, x), ref_kernel(type, x, x, list(variance = 2.5, lengthscale = ls)),
                   tolerance = 1e-12)
    }
  }
  k <- gp_kernel("linear", variance = 0.5, bias = 2)
  expect_equal(kernel_matrix(k, x, z), ref_kernel("linear", x, z, list(variance = 0.5, bias = 2)))
})

test_that("the mixed kernel handles categorical columns and puts the nugget on the diagonal only", {
  x <- cbind(c(0.1, 0.5, 0.9, 0.5), c(1, 2, 1, 3))
  k <- gp_kernel("mixed", variance = 1.5, bias = 0.2, nugget = 0.7, precision = c(2, 0.5),
                 ard = TRUE, categorical = 2)
  ref <- ref_kernel("mixed", x, x, list(variance = 1.5, bias = 0.2, precision = c(2, 0.5)),
                    categorical = c(FALSE, TRUE))
  expect_equal(kernel_matrix(k, x), ref + diag(0.7, 4))
  expect_equal(kernel_matrix(k, x, x), ref)
})

test_that("kernel gradients follow the W-contraction contract (finite differences)", {
  set.seed(2)
  n <- 7
  x <- cbind(runif(n), runif(n), sample(1:3, n, replace = TRUE))
  W <- crossprod(matrix(rnorm(n * n), n)) / n
  cases <- list(
    gp_kernel("rbf", variance = 1.3, lengthscale = c(0.4, 0.8, 1.1), ard = TRUE),
    gp_kernel("rbf", variance = 0.8, lengthscale = 0.6),
    gp_kernel("matern12", variance = 1.1, lengthscale = c(0.5, 0.9, 2), ard = TRUE),
    gp_kernel("matern32", variance = 0.9, lengthscale = 0.7),
    gp_kernel("matern52", variance = 1.2, lengthscale = c(0.3, 0.6, 1.5), ard = TRUE),
    gp_kernel("linear", variance = 0.4, bias = 0.3),
    gp_kernel("mixed", variance = 1.4, bias = 0.2, nugget = 0.5, precision = c(3, 1, 0.5),
              ard = TRUE, categorical = 3),
    gp_kernel("mixed", variance = 1.4, bias = 0.2, nugget = 0.5, precision = 2)
  )
  for (k in cases) {
    kr <- noisylabels:::kernel_resolve(k, x)
    p0 <- noisylabels:::kernel_flatten(kr)$log_par
    obj <- function(p) 0.5 * sum(W * noisylabels:::.kernel_gram(x, noisylabels:::kernel_spec(kr, p)))
    g <- hook("kernel_gradient", x, W, noisylabels:::kernel_spec(kr, p0))
    expect_equal(as.numeric(g), fd_grad(obj, p0), tolerance = 1e-7, info = k$type)
    # diagonal gradient: d k(x_i, x_i) / d theta
    dg <- hook("kernel_diag_gradient", x, noisylabels:::kernel_spec(kr, p0))
    dfd <- sapply(seq_along(p0), function(j) fd_grad(function(t) {
      p <- p0; p[j] <- t
      hook("kernel_diag", x, noisylabels:::kernel_spec(kr, p))[3]
    }, p0[j]))
    expect_equal(dg[3, ], dfd, tolerance = 1e-7, info = k$type)
  }
})

test_that("the gradient pass is exact on a large problem too (parallel path)", {
  set.seed(3)
  n <- 300
  x <- matrix(runif(2 * n), n)
  W <- tcrossprod(rnorm(n)) - diag(n)
  kr <- noisylabels:::kernel_resolve(gp_kernel("matern52", lengthscale = c(0.3, 0.5), ard = TRUE), x)
  spec <- noisylabels:::kernel_spec(kr)
  K <- noisylabels:::.kernel_gram(x, spec)
  # d K / d log variance = K, so g_1 = 0.5 * sum(W * K)
  expect_equal(hook("kernel_gradient", x, W, spec)[1], 0.5 * sum(W * K), tolerance = 1e-10)
  expect_identical(hook("kernel_gradient", x, W, spec), hook("kernel_gradient", x, W, spec))
})

test_that("the blocked stationary gradient is exact across column blocks (n > block width)", {
  # n = 150 spans three 64-column blocks, including a ragged last one.
  set.seed(4)
  n <- 150
  x <- matrix(runif(3 * n), n)
  W <- crossprod(matrix(rnorm(n * n), n)) / n
  for (k in list(gp_kernel("rbf", variance = 1.3, lengthscale = c(0.4, 0.8, 1.1), ard = TRUE),
                 gp_kernel("matern12", variance = 0.7, lengthscale = 0.5),
                 gp_kernel("matern32", variance = 1.1, lengthscale = c(0.5, 0.9, 2), ard = TRUE),
                 gp_kernel("matern52", variance = 0.9, lengthscale = 0.6))) {
    kr <- noisylabels:::kernel_resolve(k, x)
    p0 <- noisylabels:::kernel_flatten(kr)$log_par
    obj <- function(p) 0.5 * sum(W * noisylabels:::.kernel_gram(x, noisylabels:::kernel_spec(kr, p)))
    g <- hook("kernel_gradient", x, W, noisylabels:::kernel_spec(kr, p0))
    expect_equal(as.numeric(g), fd_grad(obj, p0), tolerance = 1e-7, info = k$type)
  }
})

test_that("the NLL gradient from an in-place inverse equals finite differences and the W path", {
  # objective_and_gradient factors K + diag(sigma) in place, inverts it in
  # place and reads one triangle; check it against R at n = 150.
  set.seed(5)
  n <- 150
  x <- matrix(runif(2 * n), n)
  y <- sin(4 * x[, 1]) + x[, 2]^2 + rnorm(n, 0, 0.1)
  y <- (y - mean(y)) / sd(y)
  sigma <- runif(n, 0.01, 0.2)
  kr <- noisylabels:::kernel_resolve(gp_kernel("matern52", lengthscale = c(0.3, 0.6), ard = TRUE), x)
  p0 <- noisylabels:::kernel_flatten(kr)$log_par + c(0.2, -0.1, 0.1)
  o <- list(noise = "full", solver = "jacobi", lambda = 0, p = 1, sigma_floor = 1e-10,
            damping = 0.8, max_sweeps = 200L, max_outer = 30L, max_hyper_iter = 50L,
            tol_sweep = 1e-10, tol_outer = 1e-8, learn_hyper = TRUE, jitter = 0,
            backend = "lapack", neighbors = NULL, threads = 1L, screen_rounds = 1L, screen_hyper_iter = 10L, tol_stationary = 1e-6, adaptive_sweeps = TRUE)
  J <- function(p) gauss_nll(noisylabels:::.kernel_gram(x, noisylabels:::kernel_spec(kr, p)) + diag(sigma), y)
  ng <- hook("gpr_loo_nll_grad", x, y, noisylabels:::kernel_spec(kr, p0), sigma, o, 1L)
  expect_equal(ng$objective, J(p0), tolerance = 1e-10)
  expect_equal(as.numeric(ng$gradient), fd_grad(J, p0, 1e-6), tolerance = 1e-6)
  ev <- hook("gpr_loo_eval", x, y, noisylabels:::kernel_spec(kr, p0), sigma, o)
  expect_equal(as.numeric(ng$gradient), as.numeric(ev$grad_theta), tolerance = 1e-10)
  # Duplicated rows and no noise: the in-place factor fails, is restored from
  # the untouched triangle and retried with jitter; J is that of K + jitter I.
  xd <- rbind(x[1:40, ], x[1:40, ])
  yd <- c(y[1:40], y[1:40] + 0.01)
  o0 <- utils::modifyList(o, list(jitter = 0))
  nd <- hook("gpr_loo_nll_grad", xd, yd, noisylabels:::kernel_spec(kr, p0), rep(0, 80), o0, 1L)
  expect_gt(nd$jitter, 0)
  Kd <- noisylabels:::.kernel_gram(xd, noisylabels:::kernel_spec(kr, p0))
  expect_equal(nd$objective, gauss_nll(Kd + diag(nd$jitter, 80), yd), tolerance = 1e-6)
})

test_that("gp_kernel rejects bad hyperparameters and dimension mismatches", {
  expect_error(gp_kernel("rbf", variance = -1), class = "noisylabels_error_input")
  expect_error(gp_kernel("rbf", lengthscale = Inf), class = "noisylabels_error_input")
  expect_error(gp_kernel("rbf", lengthscale = NA_real_), class = "noisylabels_error_input")
  expect_error(gp_kernel("rbf", fixed = "nugget"), class = "noisylabels_error_input")
  expect_error(gp_kernel("rbf", categorical = 1), class = "noisylabels_error_input")
  k <- gp_kernel("rbf", lengthscale = c(1, 2, 3), ard = TRUE)
  expect_error(kernel_matrix(k, matrix(1:4, 2)), class = "noisylabels_error_input")
  expect_snapshot(print(gp_kernel("matern32", ard = TRUE, fixed = "variance")))
})
