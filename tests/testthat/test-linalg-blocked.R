# The blocked Cholesky, triangular inverse and SPD inverse (src/core/linalg/
# blocked.cpp), which poll for interrupts between blocks, against base R's
# unblocked LAPACK results, at sizes that are and are not multiples of the
# block, with blocks from 1 column to more than n.

spd_matrix <- function(n, seed) {
  set.seed(seed)
  crossprod(matrix(rnorm(n * n), n)) / n + diag(n)
}

test_that("the blocked factor, L^-1 and A^-1 equal base R's to rounding", {
  for (n in c(1, 7, 64, 100, 257)) {
    a <- spd_matrix(n, n)
    l <- t(chol(a))
    ainv <- chol2inv(chol(a))
    for (block in c(1, 5, 32, 64, 300)) {
      out <- hook("chol_blocked", a, block)
      expect_identical(c(out$info_potrf, out$info_trtri, out$info_potri), c(0L, 0L, 0L))
      lower <- lower.tri(a, diag = TRUE)
      expect_equal(out$factor[lower], l[lower], tolerance = 1e-12, info = sprintf("n %d, block %d", n, block))
      expect_equal(out$factor_inverse[lower], solve(l)[lower], tolerance = 1e-10,
                   info = sprintf("n %d, block %d", n, block))
      expect_equal(out$inverse[lower], ainv[lower], tolerance = 1e-10,
                   info = sprintf("n %d, block %d", n, block))
    }
  }
})

test_that("the blocked routines leave the strict upper triangle alone", {
  a <- spd_matrix(50, 2)
  out <- hook("chol_blocked", a, 8)
  upper <- upper.tri(a)
  expect_identical(out$factor[upper], a[upper])
  expect_identical(out$factor_inverse[upper], a[upper])
  expect_identical(out$inverse[upper], a[upper])
})

test_that("a matrix that is not positive definite gives dpotrf's info (order of the failing minor)", {
  a <- spd_matrix(40, 3)
  a[23, 23] <- -1  # the leading minor of order 23 is the first one that fails
  for (block in c(4, 10, 64)) {
    expect_identical(hook("chol_blocked", a, block)$info_potrf, 23L)
  }
})

test_that("the default block gives the factor of the package's Cholesky at n above one block", {
  a <- spd_matrix(600, 4)
  r <- rnorm(600)
  out <- hook("chol_blocked", a, 0)
  loo <- hook("chol_loo", a, r, "lapack", 0)
  expect_equal(out$factor[lower.tri(a, diag = TRUE)], t(chol(a))[lower.tri(a, diag = TRUE)],
               tolerance = 1e-12)
  expect_equal(loo$inverse_diagonal, diag(chol2inv(chol(a))), tolerance = 1e-10)
  expect_equal(hook("chol_inverse", a, "lapack"), solve(a), tolerance = 1e-9)
})
