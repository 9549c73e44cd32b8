conv_fixture <- function() {
  set.seed(11)
  n <- 60
  p <- matrix(runif(3 * n), n, 3, dimnames = list(NULL, c("a", "b", "c")))
  p <- p / rowSums(p)
  d <- data.frame(x = rnorm(n), group = factor(sample(c("u", "v"), n, TRUE)),
                  y = colnames(p)[max.col(p)], stringsAsFactors = FALSE)
  d$y[1:6] <- "a"
  list(d = d, res = find_label_issues(labels = d$y, pred_probs = p))
}

test_that("as.data.frame() holds the label_issues columns and round-trips to the data", {
  f <- conv_fixture()
  df <- as.data.frame(f$res)
  expect_s3_class(df, "data.frame")
  expect_false(inherits(df, "noisylabels_issues"))
  expect_identical(df, tidy(f$res))
  by_row <- as.data.frame(f$res, data = f$d, order = "row")
  expect_identical(by_row$row, seq_len(nrow(f$d)))
  # The appended data columns are the data, row for row.
  back <- by_row[names(f$d)]
  rownames(back) <- NULL
  expect_identical(back, f$d)
  # Re-sorting the row-ordered frame gives the score-ordered one.
  again <- by_row[order(-by_row$score, by_row$row), names(df)]
  rownames(again) <- NULL
  expect_identical(again, df)
})

test_that("clashing data column names are prefixed, and a wrong-sized data is an error", {
  f <- conv_fixture()
  d <- f$d
  d$score <- 1
  df <- as.data.frame(f$res, data = d)
  expect_true(all(c("score", "data_score") %in% names(df)))
  expect_error(as.data.frame(f$res, data = d[-1, ]), class = "noisylabels_error_length")
})

test_that("as_tibble() gives the same content as a tibble", {
  skip_if_not_installed("tibble")
  f <- conv_fixture()
  tb <- tibble::as_tibble(f$res, data = f$d)
  expect_s3_class(tb, "tbl_df")
  expect_identical(as.data.frame(tb), as.data.frame(f$res, data = f$d))
})

test_that("issue_count() reads the estimated count and its interval", {
  f <- conv_fixture()
  cnt <- noisylabels:::issue_count(f$res)
  expect_true(cnt$interval)
  expect_equal(cnt$estimate, f$res$wrong_count$estimate)
  r2 <- f$res
  r2$wrong_count <- list(estimate = 7.5, lower = 4, upper = 11, level = 0.9)
  cnt2 <- noisylabels:::issue_count(r2)
  expect_true(cnt2$interval)
  expect_equal(c(cnt2$lower, cnt2$upper, cnt2$rate), c(4, 11, 7.5 / 60))
  r3 <- f$res
  r3$wrong_count <- NULL
  cnt3 <- noisylabels:::issue_count(r3)
  expect_false(cnt3$interval)
  expect_identical(cnt3$estimate, r3$estimated_issues)
})
