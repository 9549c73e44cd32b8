# The one entry point of the test and benchmark hooks (src/rcpp_hooks.cpp):
# arguments converted as an Rcpp export converts them, a clear error for an
# unknown name or a wrong number of arguments.

test_that("a hook converts its arguments and wraps its result like an export", {
  set.seed(1)
  x <- matrix(rnorm(12), 6)
  spec <- noisylabels:::kernel_spec(noisylabels:::kernel_resolve(gp_kernel("rbf", lengthscale = 0.7), x))
  # the kernel's diagonal is its variance; the Gram matrix comes from a real export
  expect_equal(hook("kernel_diag", x, spec), diag(noisylabels:::.kernel_gram(x, spec)),
               tolerance = 1e-14)
  a <- crossprod(matrix(rnorm(16), 4)) + diag(4)
  expect_equal(hook("chol_inverse", a, "lapack"), solve(a), tolerance = 1e-10)
  expect_type(hook("monitor_poll"), "logical")
})

test_that("an unknown hook or a wrong number of arguments is an error naming the hooks", {
  expect_error(noisylabels:::.hook("no_such_hook", list()), "unknown hook 'no_such_hook'.*chol_loo")
  expect_error(noisylabels:::.hook("chol_inverse", list(diag(2))),
               "takes 2 arguments \\(a, backend\\), not 1")
  expect_error(hook("chol_inverse", a = diag(2), backend = "lapack"), "by position")
})

test_that("at most three Rcpp exports serve only tests and benchmarks", {
  ns <- asNamespace("noisylabels")
  exports <- grep("^\\.", ls(ns, all.names = TRUE), value = TRUE)
  native <- Filter(function(f) {
    g <- get(f, ns)
    is.function(g) && any(grepl(".Call(`_noisylabels_", deparse(body(g)), fixed = TRUE))
  }, exports)
  expect_true(".hook" %in% native)
  # the R code's own calls: every other native export appears in a function body
  bodies <- unlist(lapply(setdiff(ls(ns, all.names = TRUE), native), function(f) {
    g <- get(f, ns)
    if (is.function(g)) all.names(body(g))
  }))
  expect_lte(length(setdiff(native, bodies)), 3L)
})

test_that("the glue refuses an options list with a key missing or given twice", {
  set.seed(2)
  x <- matrix(rnorm(20), 10)
  y <- rnorm(10)
  spec <- noisylabels:::kernel_spec(noisylabels:::kernel_resolve(gp_kernel("rbf"), x))
  o <- list(noise = "full", solver = "jacobi", lambda = 0, p = 1, sigma_floor = 1e-8,
            damping = 0.8, max_sweeps = 5L, max_outer = 2L, max_hyper_iter = 5L,
            tol_sweep = 1e-10, tol_outer = 1e-8, learn_hyper = FALSE, jitter = 0,
            backend = "lapack", neighbors = NULL, threads = 1L, screen_rounds = 1L,
            screen_hyper_iter = 10L, tol_stationary = 1e-6, adaptive_sweeps = TRUE)
  ok <- hook("gpr_loo_eval", x, y, spec, rep(0.1, 10), o)
  expect_true(is.finite(ok$objective))
  expect_error(hook("gpr_loo_eval", x, y, spec, rep(0.1, 10), o[names(o) != "adaptive_sweeps"]),
               "option 'adaptive_sweeps' is missing")
  expect_error(hook("gpr_loo_eval", x, y, spec, rep(0.1, 10), c(o, threads = 2L)),
               "option 'threads' appears twice")
})
