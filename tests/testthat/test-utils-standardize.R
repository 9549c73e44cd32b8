# Tests for standardize_columns() (R/utils-standardize.R): the one rule for
# constant and skipped (categorical) columns.

test_that("columns are centred and scaled; constant columns centred only; skipped ones untouched", {
  x <- cbind(a = c(1, 2, 3, 6), b = 5, c = c(0, 1, 0, 1))
  s <- standardize_columns(x, skip = c(FALSE, FALSE, TRUE))
  expect_equal(s$center, c(3, 5, 0))
  expect_equal(s$scale, c(stats::sd(x[, 1]), 1, 1))
  expect_equal(s$constant, 2L)
  expect_equal(s$x[, "a"], (x[, 1] - 3) / stats::sd(x[, 1]))
  expect_equal(unname(s$x[, "b"]), rep(0, 4))
  expect_equal(s$x[, "c"], x[, "c"])
  expect_identical(s$x, scale_inputs(x, s$center, s$scale))
  # without centring (the Vecchia metric of a kernel without length-scales)
  u <- standardize_columns(x, center = FALSE)
  expect_equal(unname(u$x[, "b"]), rep(5, 4))
  # one row: no sd, treated as constant
  expect_equal(standardize_columns(x[1, , drop = FALSE])$constant, 1:3)
})
