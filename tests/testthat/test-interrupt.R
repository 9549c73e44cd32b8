# Ctrl-C during a long fit: the fit stops soon, ends with R's own interrupt
# condition (tryCatch(interrupt = ) fires, tryCatch(error = ) does not), and
# the R session goes on. The fit runs in a child R process that gets SIGINT.

interrupt_child <- function(fit_code, setup_code) {
  code <- c(
    "suppressPackageStartupMessages(library(noisylabels))", setup_code, "cat('start\\n')",
    "r <- tryCatch({", fit_code, "; 'finished'}, interrupt = function(i) 'interrupted',",
    "  error = function(e) paste('error:', conditionMessage(e)))",
    "cat('result:', r, '\\n'); x <- sum(1:10); cat('alive', x, '\\n')")
  file <- withr::local_tempfile(fileext = ".R")
  writeLines(code, file)
  p <- processx::process$new(file.path(R.home("bin"), "Rscript"), file, stdout = "|", stderr = "|")
  on.exit(if (p$is_alive()) p$kill(), add = TRUE)
  out <- ""
  deadline <- Sys.time() + 120
  while (!grepl("start", out) && p$is_alive() && Sys.time() < deadline) {
    p$poll_io(200)
    out <- paste0(out, p$read_output())
  }
  Sys.sleep(1.5)
  p$interrupt()
  deadline <- Sys.time() + 60
  while (p$is_alive() && Sys.time() < deadline) {
    p$poll_io(100)
    out <- paste0(out, p$read_output())
  }
  paste0(out, p$read_output())
}

test_that("an interrupted fit signals R's interrupt condition and the session goes on", {
  skip_on_cran()
  skip_on_os("windows")
  skip_if_not_installed("processx")
  out <- interrupt_child(
    "sgd_robust(x, y, epochs = 100000, control = sgd_robust_control(tol = 0))",
    "set.seed(1); x <- matrix(rnorm(2e4 * 20), 2e4); y <- factor(x[, 1] > 0)")
  expect_match(out, "result: interrupted")
  expect_match(out, "alive 55")
  out <- interrupt_child(
    "gpc_ep(x, cls, approx = 'dense')",
    "set.seed(1); x <- matrix(runif(3000 * 2), 3000); cls <- factor(ifelse(x[, 1] + rnorm(3000, sd = 0.3) > 0.5, 'a', 'b'))")
  expect_match(out, "result: interrupted")
  expect_match(out, "alive 55")
})

test_that("Ctrl-C inside the dense factorizations ends in R's interrupt, not an error", {
  skip_on_cran()
  skip_on_os("windows")
  skip_if_not_installed("processx")
  # gpr_loo's dense evaluations are one n x n Cholesky and inverse each: the
  # blocked factorizations poll between blocks.
  out <- interrupt_child(
    "gpr_loo(x, y, approx = 'dense', restarts = 1)",
    "set.seed(1); x <- matrix(runif(3000 * 2), 3000); y <- sin(3 * x[, 1]) + rnorm(3000, sd = 0.1)")
  expect_match(out, "result: interrupted")
  expect_match(out, "alive 55")
  # find_label_issues' GP path: one leave-one-out pass over a dense covariance
  # (its R wrapper turns C++ failures into a classed error, but not a Ctrl-C).
  out <- interrupt_child(
    "noisylabels:::gp_loo(x, y, gp_kernel('rbf', lengthscale = 0.3), 0.01)",
    "set.seed(1); x <- matrix(runif(6000 * 2), 6000); y <- sin(3 * x[, 1]) + rnorm(6000, sd = 0.1)")
  expect_match(out, "result: interrupted")
  expect_match(out, "alive 55")
})

# R's time limits (setTimeLimit(), which R.utils::withTimeout(), Shiny and
# callr-style limits use) fire inside R_CheckUserInterrupt, i.e. inside the
# core's poll: they must come back as R's error, caught by tryCatch(error = )
# and seen by withCallingHandlers(), not as an interrupt or a dead session.
time_limit_child <- function(fit_code, setup_code, limit = 1.5) {
  code <- c(
    "suppressPackageStartupMessages(library(noisylabels))", setup_code,
    "seen <- FALSE",
    sprintf("r <- tryCatch(withCallingHandlers({ setTimeLimit(elapsed = %s, transient = TRUE); %s; 'finished' },", limit, fit_code),
    "  error = function(e) seen <<- TRUE),",
    "  interrupt = function(i) 'interrupted',",
    "  error = function(e) paste0('error [', class(e)[1], ']: ', conditionMessage(e)))",
    "setTimeLimit()",
    "cat('result:', r, '\\n'); cat('handler saw it:', seen, '\\n'); x <- sum(1:10); cat('alive', x, '\\n')")
  file <- withr::local_tempfile(fileext = ".R")
  writeLines(code, file)
  p <- processx::run(file.path(R.home("bin"), "Rscript"), file, error_on_status = FALSE, timeout = 120)
  paste(p$stdout, p$stderr)
}

test_that("a time limit during a fit is R's error, catchable, and the session goes on", {
  skip_on_cran()
  skip_on_os("windows")
  skip_if_not_installed("processx")
  cases <- list(
    c("sgd_robust(x, y, epochs = 1e9)",
      "set.seed(1); x <- matrix(rnorm(2000 * 5), 2000); y <- factor(x[, 1] > 0)"),
    c("sgd_robust(x, y, epochs = 1e9, control = sgd_robust_control(tol = 0))",
      "set.seed(1); x <- matrix(rnorm(2000 * 5), 2000); y <- factor(x[, 1] > 0)"),
    c("label_dist_vb(s$x, s$groups, s$label_dist, control = label_dist_vb_control(restarts = 1e9))",
      "set.seed(1); s <- sim_label_dist(M = 3, U = 60, N = 200, group_size = 10, D = 4)"),
    c("label_dist_vb(s$x, s$groups, s$label_dist, control = label_dist_vb_control(restarts = 1e9, tol = 0))",
      "set.seed(1); s <- sim_label_dist(M = 3, U = 60, N = 200, group_size = 10, D = 4)"))
  for (cs in cases) {
    out <- time_limit_child(cs[1], cs[2])
    expect_match(out, "result: error \\[simpleError\\]: reached elapsed time limit", info = cs[1])
    expect_match(out, "handler saw it: TRUE", info = cs[1])
    expect_match(out, "alive 55", info = cs[1])
    expect_no_match(out, "Execution halted", info = cs[1])
  }
})

test_that("a poll of R that hits an R error hands that error back, not an interrupt", {
  skip_on_cran()
  skip_on_os("windows")
  # a core-style loop polling R (rate-limited to one poll per 50 ms) for
  # far longer than the limit: the limit fires inside the poll
  seen <- NULL
  err <- tryCatch(withCallingHandlers({
    setTimeLimit(elapsed = 0.5, transient = TRUE)
    noisylabels:::call_core(hook("monitor_demo", NULL, 2e9, 1L, 100L, FALSE, .Machine$integer.max))
  }, error = function(e) seen <<- e), error = function(e) e, interrupt = function(i) "interrupt")
  setTimeLimit()
  expect_s3_class(err, "simpleError")
  expect_match(conditionMessage(err), "time limit")
  expect_identical(seen, err)
  # nothing is left over for the next call
  expect_null(noisylabels:::.poll_condition_take())
  expect_identical(sum(1:10), 55L)
})
