# Tests for the robust-regression baselines of R/gpr_baseline.R:
# iterative trimming (Li et al.) and the trimmed marginal likelihood
# (Andrade & Takeda), with a brute-force oracle for the subset step.

ns <- asNamespace("noisylabels")

# Clean smooth data on [0, 1]^2 and the same data with k gross outliers
# appended as extra rows (so the clean fit uses exactly the first n rows).
appended_outliers <- function(n = 40, k = 4, seed = 7) {
  set.seed(seed)
  x <- matrix(runif(2 * n), n)
  y <- sin(4 * x[, 1]) + cos(3 * x[, 2]) + rnorm(n, sd = 0.05)
  xo <- matrix(runif(2 * k), k)
  yo <- sin(4 * xo[, 1]) + cos(3 * xo[, 2]) + c(4, -4, 5, -5, 4.5, -4.5)[seq_len(k)]
  list(x = rbind(x, xo), y = c(y, yo), clean = seq_len(n), out = n + seq_len(k))
}

test_that("the trimmed-MLL subset step finds the brute-force optimal subset", {
  set.seed(11)
  n <- 9
  x <- matrix(runif(n))
  spec <- ns$kernel_spec(ns$kernel_resolve(gp_kernel("rbf", lengthscale = 0.3), x))
  k <- ns$.kernel_gram(x, spec)
  diag(k) <- diag(k) + 0.01
  r <- as.vector(t(chol(k)) %*% rnorm(n))
  r[c(3, 7)] <- r[c(3, 7)] + c(3, -2.5)
  inlier_term <- function(out) {
    keep <- setdiff(seq_len(n), out)
    sum(r[keep] * solve(k[keep, keep], r[keep]))
  }
  pairs <- utils::combn(n, 2)
  vals <- apply(pairs, 2, inlier_term)
  best <- pairs[, which.min(vals)]
  sub <- ns$.gpr_trimmed_subset(x, spec, 0.01, r, 2L, 20000L, 1e-10, "lapack")
  expect_true(sub$converged)
  expect_equal(sub$outliers, sort(best))
  # at a converged support, b is the exact minimiser: the objective is the
  # inliers' own quadratic form
  expect_equal(sub$objective, min(vals), tolerance = 1e-6)
  # no trimming: the full quadratic form, no offset
  none <- ns$.gpr_trimmed_subset(x, spec, 0.01, r, 0L, 200L, 1e-10, "lapack")
  expect_equal(none$objective, sum(r * solve(k, r)), tolerance = 1e-10)
  expect_length(none$outliers, 0)
  expect_error(ns$.gpr_trimmed_subset(x, spec, 0.01, r, n, 200L, 1e-10, "lapack"), "n_trim")
})

test_that("trimmed MLL with trim = 0 is the standard GP", {
  d <- appended_outliers()
  xt <- matrix(runif(20), 10)
  std <- gpr_baseline(d$x, d$y, "standard")
  t0 <- gpr_baseline(d$x, d$y, "trimmed_mll", trim = 0)
  expect_equal(t0$kept, seq_along(d$y))
  expect_equal(t0$rounds, 0L)
  expect_equal(predict(t0, xt), predict(std, xt))
  i0 <- gpr_baseline(d$x, d$y, "trimmed", trim = 0)
  expect_equal(predict(i0, xt), predict(std, xt))
})

test_that("trimmed MLL and iterative trimming remove planted gross outliers and recover the clean fit", {
  d <- appended_outliers()
  set.seed(2)
  xt <- matrix(runif(40), 20)
  clean <- gpr_baseline(d$x[d$clean, ], d$y[d$clean], "standard")
  p_clean <- predict(clean, xt)
  std <- gpr_baseline(d$x, d$y, "standard")
  # the outliers do hurt the standard GP (so the recovery below is not vacuous)
  expect_gt(sqrt(mean((predict(std, xt) - p_clean)^2)), 0.05)
  trim <- length(d$out) / length(d$y)
  for (m in c("trimmed_mll", "trimmed")) {
    b <- gpr_baseline(d$x, d$y, m, trim = trim)
    expect_true(b$converged)
    expect_equal(b$kept, d$clean, info = m)
    expect_equal(predict(b, xt), p_clean, tolerance = 1e-8, info = m)
  }
  expect_output(print(gpr_baseline(d$x, d$y, "trimmed_mll", trim = trim)), "40 of 44 points kept")
})

test_that("trimmed MLL rejects a trim fraction that leaves too few points", {
  d <- appended_outliers(n = 6, k = 2)
  expect_error(gpr_baseline(d$x, d$y, "trimmed_mll", trim = 0.5), class = "noisylabels_error_input")
  expect_error(gpr_baseline(d$x, d$y, "trimmed_mll", trim = 1), class = "noisylabels_error_input")
})

test_that("too few observations is a classed error naming gpr_baseline()", {
  x <- matrix(c(0.1, 0.5, 0.9, 0.3), ncol = 1)
  for (m in c("standard", "winsorize", "yeo_johnson", "trimmed", "trimmed_mll")) {
    expect_error(gpr_baseline(x, c(1, 2, 4, 3), m), class = "noisylabels_error_too_few",
                 regexp = "gpr_baseline")
  }
  expect_error(gpr_baseline(x[1, , drop = FALSE], 1), class = "noisylabels_error_too_few")
})
