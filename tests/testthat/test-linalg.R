spd <- function(n, seed) {
  set.seed(seed)
  A <- crossprod(matrix(rnorm(n * n), n)) + diag(n)
  A
}

test_that("factor, log-determinant, solve and diag(inverse) agree with base R (both backends)", {
  A <- spd(30, 1); r <- rnorm(30)
  for (b in c("lapack", "eigen")) {
    out <- hook("chol_loo", A, r, b, 0)
    Ai <- solve(A)
    expect_equal(out$logdet, as.numeric(determinant(A)$modulus), tolerance = 1e-10)
    expect_equal(out$alpha, drop(Ai %*% r), tolerance = 1e-10)
    expect_equal(out$inverse_diagonal, diag(Ai), tolerance = 1e-10)
    expect_equal(hook("chol_inverse", A, b), Ai, tolerance = 1e-10)
    expect_equal(out$nll, gauss_nll(A, r), tolerance = 1e-10)
    expect_equal(out$jitter, 0)
  }
})

test_that("LOO identities (R&W eq. 5.12) match brute-force refits leaving each point out", {
  set.seed(4)
  x <- matrix(runif(15), ncol = 1)
  K <- kernel_matrix(gp_kernel("rbf", lengthscale = 0.3), x) + diag(0.05 + runif(15) / 10)
  r <- sin(6 * x[, 1]) + rnorm(15, sd = 0.2)
  out <- hook("chol_loo", K, r, "lapack", 0)
  for (i in seq_along(r)) {
    Kmi <- K[-i, -i]
    mu <- drop(K[i, -i] %*% solve(Kmi, r[-i]))
    v <- K[i, i] - drop(K[i, -i] %*% solve(Kmi, K[-i, i]))
    expect_equal(out$loo_residual[i], r[i] - mu, tolerance = 1e-9)
    expect_equal(out$loo_variance[i], v, tolerance = 1e-9)
  }
})

test_that("jitter escalation is reported, and hopeless matrices give an R error", {
  x <- matrix(rep(c(0, 0.5, 1), each = 2), ncol = 1)  # duplicated rows: singular K
  K <- kernel_matrix(gp_kernel("rbf", lengthscale = 1), x)
  out <- hook("chol_loo", K, rnorm(6), "lapack", 0)
  expect_gt(out$jitter, 0)
  expect_gt(out$attempts, 1)
  expect_error(hook("chol_loo", -diag(3), rnorm(3), "lapack", 0), "not positive definite")
})

test_that("rank-one update and downdate of the factor match refactorising", {
  A <- spd(12, 5); v <- rnorm(12)
  up <- hook("chol_rank_one", A, v, 0.7)
  expect_equal(up, t(chol(A + 0.7 * tcrossprod(v))), tolerance = 1e-10)
  down <- hook("chol_rank_one", A + tcrossprod(v), v, -1)
  expect_equal(down, t(chol(A)), tolerance = 1e-9)
  e <- replace(numeric(12), 7, 1)
  expect_equal(hook("chol_rank_one", A, e, 2.5), t(chol(A + diag(replace(numeric(12), 7, 2.5)))),
               tolerance = 1e-10)
  expect_error(hook("chol_rank_one", diag(3), c(2, 0, 0), -1), "not positive definite")
})

test_that("the box-constrained optimiser solves Rosenbrock and respects bounds", {
  rosen <- function(p) list(value = 100 * (p[2] - p[1]^2)^2 + (1 - p[1])^2,
                            gradient = c(-400 * p[1] * (p[2] - p[1]^2) - 2 * (1 - p[1]),
                                         200 * (p[2] - p[1]^2)))
  r <- hook("minimize_box", rosen, c(-1.2, 1), c(-5, -5), c(5, 5), 500L)
  expect_true(r$converged)
  expect_equal(r$par, c(1, 1), tolerance = 1e-5)
  # optimum outside the box: the solution sits on the bound with KKT signs
  r2 <- hook("minimize_box", rosen, c(0, 0), c(-2, -2), c(0.5, 2), 500L)
  expect_equal(r2$par[1], 0.5)
  expect_equal(r2$par[2], 0.25, tolerance = 1e-5)
  # compare with optim's L-BFGS-B
  o <- optim(c(0, 0), function(p) rosen(p)$value, function(p) rosen(p)$gradient,
             method = "L-BFGS-B", lower = c(-2, -2), upper = c(0.5, 2))
  expect_lte(r2$value, o$value + 1e-8)
})
