# Walks the exported API with bad values of every argument type. A call may
# end in a result or in a classed noisylabels error (warnings are fine); it
# must never end in an unclassed error, and a result's noise scores must be
# finite. Small data and one process, so the walk takes seconds.

fuzz_values <- list(
  null = NULL, na = NA, na_real = NA_real_, neg = -1, zero = 0, huge = 1e9, inf = Inf,
  nan = NaN, string = "x", empty = numeric(), list = list(1, 2), vec = c(1, 2, 3),
  true = TRUE, fun = function(x) x, bigthreads = 1e6
)

fuzz_outcome <- function(expr) {
  res <- tryCatch(withCallingHandlers(expr, warning = function(w) invokeRestart("muffleWarning"),
                                      message = function(m) invokeRestart("muffleMessage")),
                  error = function(e) e)
  if (inherits(res, "error")) {
    if (inherits(res, "noisylabels_error")) return("classed")
    return(paste("unclassed:", conditionMessage(res)))
  }
  sc <- tryCatch(noise_scores(res), error = function(e) NULL)
  if (!is.null(sc) && is.numeric(sc) && any(!is.finite(sc))) return("non-finite scores")
  "ok"
}

# Run `fun(base args with one argument replaced)` for every argument and
# every bad value; return the failures as "arg=value: outcome".
fuzz_walk <- function(fun, base, args = names(base), values = fuzz_values) {
  bad <- character()
  for (a in args) {
    for (v in names(values)) {
      call_args <- base
      if (is.null(values[[v]])) call_args[a] <- list(NULL) else call_args[[a]] <- values[[v]]
      out <- fuzz_outcome(do.call(fun, call_args))
      if (out != "ok" && out != "classed") bad <- c(bad, paste0(a, "=", v, ": ", out))
    }
  }
  bad
}

fuzz_data <- function(n = 30) {
  set.seed(11)
  x <- matrix(stats::runif(n * 2), n, 2)
  y <- sin(3 * x[, 1]) + stats::rnorm(n, sd = 0.1)
  cls <- factor(ifelse(x[, 1] + stats::rnorm(n, sd = 0.2) > 0.5, "a", "b"))
  list(x = x, y = y, cls = cls)
}

test_that("gpr_loo, gpr_pursuit and gpr_baseline never fail unclassed", {
  skip_on_cran()
  d <- fuzz_data()
  expect_equal(fuzz_walk(gpr_loo, list(x = d$x, y = d$y),
                         args = c("x", "y", "kernel", "noise", "lambda", "restarts", "control")),
               character())
  expect_equal(fuzz_walk(gpr_pursuit, list(x = d$x, y = d$y),
                         args = c("x", "y", "kernel", "control")), character())
  expect_equal(fuzz_walk(gpr_baseline, list(x = d$x, y = d$y),
                         args = c("x", "y", "method")), character())
})

test_that("extreme magnitudes give finite scores or a classed error", {
  skip_on_cran()
  d <- fuzz_data()
  for (s in c(1e-300, 1e300)) {
    expect_true(fuzz_outcome(gpr_loo(d$x, d$y * s)) %in% c("ok", "classed"))
    expect_true(fuzz_outcome(gpr_loo(d$x * s, d$y)) %in% c("ok", "classed"))
    expect_true(fuzz_outcome(gpr_pursuit(d$x, d$y * s)) %in% c("ok", "classed"))
    expect_true(fuzz_outcome(find_label_issues(x = d$x, y = d$y * s)) %in% c("ok", "classed"))
  }
})

test_that("gpc_ep, sgd_robust and label_dist_vb never fail unclassed", {
  skip_on_cran()
  d <- fuzz_data()
  expect_equal(fuzz_walk(gpc_ep, list(x = d$x, y = d$cls),
                         args = c("x", "y", "kernel", "likelihood")), character())
  expect_equal(fuzz_walk(sgd_robust, list(x = d$x, y = d$cls),
                         args = c("x", "y", "loss", "lambda", "eta")), character())
  sim <- sim_label_dist(M = 3, U = 12, N = 60, group_size = 6, D = 3, n_test = 10)
  expect_equal(fuzz_walk(label_dist_vb, list(x = sim$x, groups = sim$groups,
                                             label_dist = sim$label_dist),
                         args = c("x", "groups", "label_dist", "alpha_w", "threads")),
               character())
})

test_that("find_label_issues never fails unclassed", {
  skip_on_cran()
  d <- fuzz_data()
  p <- cbind(a = stats::plogis(d$x[, 1] * 4 - 2), b = 0)
  p[, "b"] <- 1 - p[, "a"]
  expect_equal(fuzz_walk(find_label_issues, list(labels = d$cls, pred_probs = p),
                         args = c("labels", "pred_probs", "fdr")), character())
  expect_equal(fuzz_walk(find_label_issues, list(x = d$x, y = d$y),
                         args = c("x", "y", "folds", "threads")), character())
})

test_that("simulators and helpers bound their sizes", {
  skip_on_cran()
  expect_equal(fuzz_walk(sim_friedman, list(n = 20), args = "n"), character())
  expect_equal(fuzz_walk(corrupt_labels, list(y = rnorm(20), rate = 0.1),
                         args = c("y", "rate", "level")), character())
  expect_equal(fuzz_walk(kernel_matrix, list(kernel = gp_kernel("rbf"), x = cbind(1:5)),
                         args = c("kernel", "x", "z")), character())
})
