# Out-of-fold models of find_label_issues() (R/issues-oof.R): the engine's
# own output stays hidden, fewer trees at many rows, and "auto" measures its
# choice on a subsample at larger n.

test_that("ranger is always called with verbose = FALSE and nothing leaks with verbose = FALSE", {
  skip_if_not_installed("ranger")
  seen <- new.env()
  seen$verbose <- logical()
  # Record the verbose argument of every ranger() call.
  suppressMessages(trace("ranger", where = asNamespace("ranger"), print = FALSE,
                         tracer = bquote(assign("verbose", c(get("verbose", envir = .(seen)), verbose),
                                                envir = .(seen)))))
  on.exit(suppressMessages(untrace("ranger", where = asNamespace("ranger"))), add = TRUE)
  withr::local_seed(1)
  n <- 120
  x <- matrix(stats::runif(2 * n), n)
  y <- x[, 1] + stats::rnorm(n, sd = 0.1)
  cls <- factor(x[, 1] + x[, 2] > 1)
  expect_silent(r <- find_label_issues(x, y, method = "forest", folds = 3, verbose = FALSE))
  expect_silent(find_label_issues(x, cls, method = "forest", folds = 3, verbose = FALSE))
  expect_length(seen$verbose, 6L)
  expect_false(any(seen$verbose))
  # 500 trees, 100 above forest_many_rows rows and 50 above forest_huge_rows.
  expect_match(r$method, "500 trees, min.node.size 11")
  withr::local_options(noisylabels.forest_many_rows = 100)
  expect_match(find_label_issues(x, y, method = "forest", folds = 3, verbose = FALSE)$method, "100 trees")
  withr::local_options(noisylabels.forest_huge_rows = 100)
  expect_match(find_label_issues(x, y, method = "forest", folds = 3, verbose = FALSE)$method, "50 trees")
})

test_that("regression 'auto' above choice_rows measures both models on a subsample and reports it", {
  skip_if_not_installed("ranger")
  withr::local_seed(2)
  n <- 400
  x <- matrix(stats::runif(2 * n), n)
  y <- sin(6 * x[, 1]) + x[, 2] + stats::rnorm(n, sd = 0.05)
  bad <- 1:20
  y[bad] <- y[bad] + sample(c(-1, 1), 20, TRUE)
  withr::local_options(noisylabels.choice_rows = 150)
  res <- find_label_issues(x, y, verbose = FALSE)
  ch <- res$model_choice
  expect_equal(ch$rows, c(150L, 150L))
  expect_true(ch$chosen[ch$model == "gp"])
  expect_lt(ch$median_abs_residual[ch$model == "gp"], ch$median_abs_residual[ch$model == "forest"])
  # The chosen GP then runs on all rows, and the result says why.
  expect_match(res$method, "at n = 400")
  expect_match(res$method, "chosen by method = \"auto\".*150 of 400 rows")
  expect_equal(nrow(res$label_issues), n)
  expect_gt(detection_metrics(noise_scores(res), seq_len(n) %in% bad)$auc, 0.95)
  # Too many inputs rule the GP out before anything is measured on it.
  res2 <- find_label_issues(x, y, gp_max_dim = 1, verbose = FALSE)
  expect_match(res2$method, "ruled out \\(2 inputs > gp_max_dim = 1\\)")
  expect_true(is.na(res2$model_choice$median_abs_residual[2]))
})
