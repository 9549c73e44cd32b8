# Progress bars: when they show, and that the C++ monitor drives them.

test_that("progress is off in non-interactive runs unless asked for", {
  withr::local_options(noisylabels.progress = NULL, noisylabels.progress_nested = NULL)
  expect_identical(progress_enabled(NULL), interactive())
  expect_true(progress_enabled(TRUE))
  expect_false(progress_enabled(FALSE))
  withr::local_options(noisylabels.progress = TRUE)
  expect_true(progress_enabled(NULL))
  expect_false(progress_enabled(FALSE))  # the argument wins
  withr::local_options(noisylabels.progress_nested = TRUE)  # inside a CV fold
  expect_false(progress_enabled(NULL))
  expect_false(progress_enabled(TRUE))
  expect_null(progress_bar("x", verbose = FALSE))
  expect_error(progress_enabled("yes"), class = "noisylabels_error_input")
})

test_that("local_nested_progress() silences fits until its caller returns", {
  withr::local_options(noisylabels.progress = TRUE, noisylabels.progress_nested = NULL)
  inside <- function() {
    local_nested_progress()
    progress_enabled(TRUE)
  }
  expect_false(inside())
  expect_true(progress_enabled(TRUE))
  expect_null(getOption("noisylabels.progress_nested"))
})

test_that("the C++ monitor reports every step to R, across stages, from the main thread only", {
  seen <- list()
  record <- function(step, total) seen[[length(seen) + 1L]] <<- c(step, total)
  calls <- hook("monitor_demo", record, 5, 3, 0, FALSE, .Machine$integer.max)
  expect_identical(calls, 15L)
  m <- do.call(rbind, seen)
  expect_equal(m[, 1], 1:15)          # stage s, step i -> s * 5 + i
  expect_true(all(m[, 2] == 15))
  # throttled: the first call and the final step get through
  seen <- list()
  calls <- hook("monitor_demo", record, 1000, 1, 60000, FALSE, .Machine$integer.max)
  expect_identical(calls, 2L)
  expect_equal(do.call(rbind, seen)[, 1], c(1, 1000))
  # a loop that stops short of its total: flush() sends the last step held back
  seen <- list()
  calls <- hook("monitor_demo", record, 50, 2, 60000, FALSE, .Machine$integer.max)
  expect_identical(calls, 2L)
  expect_equal(do.call(rbind, seen)[, 1], c(1, 100))
  seen <- list()
  calls <- hook("monitor_demo", record, 50, 1, 60000, FALSE, 20)
  expect_equal(do.call(rbind, seen), rbind(c(1, 50), c(20, 50)))
  # no callback, or calls from a worker thread: R is never called
  expect_identical(hook("monitor_demo", NULL, 5, 2, 0, FALSE, .Machine$integer.max), 0L)
  seen <- list()
  expect_identical(hook("monitor_demo", record, 5, 2, 0, TRUE, .Machine$integer.max), 0L)
  expect_length(seen, 0)
  # an R error in the callback unwinds the C++ loop and reaches R
  expect_error(hook("monitor_demo", function(step, total) if (step == 3) stop("stop at 3"), 5, 1, 0, FALSE, .Machine$integer.max),
               "stop at 3")
  expect_error(hook("monitor_demo", "not a function", 5, 1, 0, FALSE, .Machine$integer.max), "function")
})

# cli's "logger" handler writes one line per bar event; show bars at once.
local_logged_bars <- function(env = parent.frame()) {
  withr::local_options(cli.progress_show_after = 0, cli.progress_handlers_only = "logger",
                       noisylabels.progress = NULL, .local_envir = env)
}

bar_lines <- function(expr) {
  out <- utils::capture.output(expr, type = "output")
  msg <- utils::capture.output(NULL, type = "message")
  grep("cli-[0-9]+-[0-9]+ ", c(out, msg), value = TRUE)
}

test_that("label_dist_vb() drives a cli bar over its iterations only when asked", {
  local_logged_bars()
  set.seed(3)
  sim <- sim_label_dist(U = 30, N = 60, group_size = 5, D = 2, n_test = 0)
  lines <- utils::capture.output(fit <- label_dist_vb(sim$x, sim$groups, sim$label_dist,
                                                      verbose = TRUE, control = label_dist_vb_control(restarts = 2)))
  lines <- grep("cli-", lines, value = TRUE)
  expect_match(lines[1], "0/400 created")  # max_iter 200 x 2 restarts
  expect_match(lines[length(lines)], "terminated")
  done <- as.integer(sub(".* ([0-9]+)/400 .*", "\\1", lines))
  expect_false(is.unsorted(done))
  expect_gte(done[length(done)], 200)      # the second restart counted on top of the first
  silent <- utils::capture.output(label_dist_vb(sim$x, sim$groups, sim$label_dist, verbose = FALSE))
  expect_length(grep("cli-", silent), 0)
  silent <- utils::capture.output(label_dist_vb(sim$x, sim$groups, sim$label_dist))
  expect_length(grep("cli-", silent), 0)   # testthat runs non-interactively
  # the fit is the same with and without the bar
  set.seed(1); a <- label_dist_vb(sim$x, sim$groups, sim$label_dist, verbose = FALSE)
  set.seed(1); utils::capture.output(b <- label_dist_vb(sim$x, sim$groups, sim$label_dist, verbose = TRUE))
  expect_identical(a$zeta, b$zeta)
  # tuning: one bar over grid points x folds
  lines <- utils::capture.output(label_dist_vb(sim$x, sim$groups, sim$label_dist, verbose = TRUE,
                                               tune = list(alpha_s = c(5, 20)), folds = 2))
  expect_true(any(grepl("4/4 ", lines)))
  expect_error(label_dist_vb(sim$x, sim$groups, sim$label_dist, verbose = "yes"),
               class = "noisylabels_error_input")
})

test_that("gpc_ep() drives a cli bar (epsilon iterations, optimiser evaluations, classes)", {
  local_logged_bars()
  set.seed(4)
  x <- matrix(rnorm(120), 60)
  y <- factor(ifelse(x[, 1] + rnorm(60, sd = 0.3) > 0, "a", "b"))
  lines <- grep("cli-", utils::capture.output(fit <- gpc_ep(x, y, verbose = TRUE)), value = TRUE)
  expect_match(lines[1], "0/50 created")   # max_outer = 50
  expect_match(lines[length(lines)], paste0(fit$outer_iterations, "/50 terminated"))
  lines <- grep("cli-", utils::capture.output(gpc_ep(x, y, epsilon = 0.1, verbose = TRUE)), value = TRUE)
  expect_match(lines[1], "0/NA created")   # evaluations: total unknown
  expect_match(lines[length(lines)], "[1-9][0-9]*/NA terminated")
  expect_length(grep("cli-", utils::capture.output(gpc_ep(x, y))), 0)
  y3 <- factor(cut(x[, 1], c(-Inf, -0.5, 0.5, Inf), labels = c("a", "b", "c")))
  lines <- grep("cli-", utils::capture.output(suppressMessages(
    gpc_ep(x, y3, multiclass = "ovr", verbose = TRUE))), value = TRUE)
  expect_match(lines[1], "0/3 created")    # one bar over the classes, none per class
  expect_length(grep("created", lines), 1)
  expect_match(lines[length(lines)], "3/3 terminated")
})

test_that("gpc_ep()'s formula method passes verbose on; the bar does not change the fit", {
  local_logged_bars()
  set.seed(6)
  df <- data.frame(a = rnorm(60), g = factor(sample(c("p", "q", "r"), 60, TRUE)))
  df$y <- factor(ifelse(df$a + (df$g == "q") + rnorm(60, sd = 0.3) > 0.3, "yes", "no"))
  set.seed(1)
  lines <- grep("cli-", utils::capture.output(fit <- gpc_ep(y ~ a + g, data = df, verbose = TRUE)),
                value = TRUE)
  expect_match(lines[1], "0/50 created")
  expect_match(lines[length(lines)], paste0(fit$outer_iterations, "/50 terminated"))
  # the session option shows it too; verbose = FALSE wins over the option
  withr::local_options(noisylabels.progress = TRUE)
  set.seed(1)
  lines <- grep("cli-", utils::capture.output(fit2 <- gpc_ep(y ~ a + g, data = df)), value = TRUE)
  expect_gt(length(lines), 1)
  expect_length(grep("cli-", utils::capture.output(gpc_ep(y ~ a + g, data = df, verbose = FALSE))), 0)
  expect_identical(fit2$site_tau, fit$site_tau)
  expect_identical(fit2$log_par, fit$log_par)
})

test_that("cv_gpr_loo() reports one step per fold through progressr", {
  skip_if_not_installed("progressr")
  set.seed(5)
  d <- sim_tang1d(n = 20, n_corrupted = 4)
  steps <- 0
  handler <- progressr::make_progression_handler("count", reporter = list(
    update = function(config, state, progression, ...) steps <<- state$step), enable = TRUE)
  withr::local_options(progressr.handlers = list(handler))
  cv <- cv_gpr_loo(cbind(x = d$data$x), d$data$y, lambda = c(0, 3), folds = 4, restarts = 1,
                   verbose = TRUE)
  expect_equal(steps, 4)
  steps <- 0
  cv <- cv_gpr_loo(cbind(x = d$data$x), d$data$y, lambda = c(0, 3), folds = 4, restarts = 1)
  expect_equal(steps, 0)
  expect_error(cv_gpr_loo(cbind(x = d$data$x), d$data$y, verbose = 1), class = "noisylabels_error_input")
})

test_that("lapply_folds() runs the fold function of a caller with dots, with and without progress", {
  # future.apply passes the caller's `...` (a global of the fold function) on
  # as FUN's dots; cv_sgd_robust() broke on that once.
  caller <- function(verbose, ...) {
    one <- function(k) k * length(list(...))
    unlist(lapply_folds(3, one, verbose = verbose))
  }
  expect_equal(caller(FALSE, a = 1, b = 2), c(2, 4, 6))
  skip_if_not_installed("progressr")
  steps <- 0
  handler <- progressr::make_progression_handler("count", reporter = list(
    update = function(config, state, progression, ...) steps <<- state$step), enable = TRUE)
  withr::local_options(progressr.handlers = list(handler))
  expect_equal(caller(TRUE, a = 1, b = 2), c(2, 4, 6))
  expect_equal(steps, 3)
})

test_that("gpr_loo() drives one cli bar over its starts and rounds, silent by default", {
  local_logged_bars()
  set.seed(5)
  x <- matrix(runif(60), 30)
  y <- sin(3 * x[, 1]) + rnorm(30, sd = 0.1)
  lines <- grep("cli-", utils::capture.output(
    fit <- suppressWarnings(gpr_loo(x, y, restarts = 2, control = gpr_loo_control(max_outer = 5),
                                    verbose = TRUE))),
    value = TRUE)
  expect_gt(length(lines), 1)
  # two starts screened plus the continued best: 3 stages of max_outer rounds
  expect_match(lines[length(lines)], "/15 terminated")
  expect_length(grep("cli-", utils::capture.output(gpr_loo(x, y, restarts = 1))), 0)
})

test_that("gpr_pursuit() drives a cli bar when asked, silent by default", {
  local_logged_bars()
  set.seed(6)
  x <- matrix(runif(40), 40)
  y <- sin(4 * x[, 1]) + rnorm(40, sd = 0.05)
  y[1:4] <- y[1:4] + 3
  lines <- grep("cli-", utils::capture.output(gpr_pursuit(x, y, verbose = TRUE)), value = TRUE)
  expect_gt(length(lines), 1)
  expect_match(lines[length(lines)], "terminated")
  expect_length(grep("cli-", utils::capture.output(gpr_pursuit(x, y))), 0)
})
