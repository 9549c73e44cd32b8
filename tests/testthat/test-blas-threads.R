# The BLAS runs with `noisylabels.blas_threads` threads inside call_core() and
# gets its own setting back afterwards (src/rcpp_blas.cpp). Skips with a BLAS
# whose thread count cannot be set (reference BLAS, Accelerate).

test_that("call_core() runs the BLAS with the option's thread count and restores it", {
  own <- hook("blas_threads_get")
  skip_if(is.na(own), "this BLAS has no thread setter")
  on.exit(noisylabels:::.blas_threads_set(own), add = TRUE)
  noisylabels:::.blas_threads_set(2L)
  inside <- function() noisylabels:::call_core(hook("blas_threads_get"))
  withr::local_options(noisylabels.blas_threads = NULL)
  expect_identical(inside(), 1L)
  expect_identical(hook("blas_threads_get"), 2L)
  withr::local_options(noisylabels.blas_threads = 3L)
  expect_identical(inside(), 3L)
  expect_identical(hook("blas_threads_get"), 2L)
  # restored after a core error too
  boom <- structure(list(message = "boom", call = NULL),
                    class = c("std::runtime_error", "C++Error", "error", "condition"))
  expect_error(noisylabels:::call_core(stop(boom)), class = "noisylabels_error_core")
  expect_identical(hook("blas_threads_get"), 2L)
})

test_that("a fit leaves the BLAS setting as it found it, and a bad option is a classed error", {
  own <- hook("blas_threads_get")
  skip_if(is.na(own))
  set.seed(1)
  x <- matrix(stats::runif(60), 30)
  y <- x[, 1] + stats::rnorm(30, sd = 0.1)
  fit <- gpr_loo(x, y, restarts = 1)
  expect_identical(hook("blas_threads_get"), own)
  withr::local_options(noisylabels.blas_threads = 0)
  expect_error(gpr_loo(x, y, restarts = 1), class = "noisylabels_error_input")
  expect_identical(hook("blas_threads_get"), own)
})

test_that("the setter refuses what is not a thread count", {
  expect_identical(noisylabels:::.blas_threads_set(NA_integer_), NA_integer_)
  expect_identical(noisylabels:::.blas_threads_set(0L), NA_integer_)
})

test_that("a fit's own thread count sets the BLAS unless the option does", {
  own <- hook("blas_threads_get")
  skip_if(is.na(own), "this BLAS has no thread setter")
  on.exit(noisylabels:::.blas_threads_set(own), add = TRUE)
  noisylabels:::.blas_threads_set(1L)
  inside <- function(threads) noisylabels:::call_core(hook("blas_threads_get"), threads = threads)
  withr::local_options(noisylabels.blas_threads = NULL)
  expect_identical(inside(2L), 2L)
  expect_identical(inside(NULL), 1L)
  withr::local_options(noisylabels.blas_threads = 3L)
  expect_identical(inside(2L), 3L)
  expect_identical(hook("blas_threads_get"), 1L)
})

test_that("gpc_ep() gives the same fit on one or two BLAS threads", {
  skip_if(noisylabels:::available_cores() < 2L)
  withr::local_options(noisylabels.blas_threads = NULL)
  set.seed(3)
  n <- 400
  x <- matrix(stats::rnorm(2 * n), n)
  y <- factor(ifelse(x[, 1] + 0.5 * x[, 2]^2 > 0.3, "a", "b"))
  flip <- sample.int(n, 40)
  y[flip] <- ifelse(y[flip] == "a", "b", "a")
  one <- withr::with_seed(4, gpc_ep(x, y, approx = "sparse", inducing = 30, threads = 1))
  two <- withr::with_seed(4, gpc_ep(x, y, approx = "sparse", inducing = 30, threads = 2))
  expect_equal(two$epsilon, one$epsilon, tolerance = 1e-6)
  expect_equal(noise_scores(two), noise_scores(one), tolerance = 1e-5)
  expect_error(gpc_ep(x, y, threads = 0), class = "noisylabels_error_input")
})
