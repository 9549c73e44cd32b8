review_fixture <- function() {
  set.seed(3)
  n <- 40
  p <- matrix(runif(2 * n), n, 2, dimnames = list(NULL, c("no", "yes")))
  p <- p / rowSums(p)
  d <- data.frame(x = seq_len(n), label = factor(colnames(p)[max.col(p)], levels = c("no", "yes")))
  d$label[1:4] <- ifelse(d$label[1:4] == "no", "yes", "no")
  list(d = d, res = find_label_issues(labels = d$label, pred_probs = p))
}

test_that("apply_review() applies a hand-made decisions CSV", {
  d <- data.frame(x = 1:6, y = c("a", "a", "b", "b", "b", "a"), z = factor(c("p", "q", "p", "q", "p", "q")))
  csv <- withr::local_tempfile(fileext = ".csv")
  writeLines(c("row,decision,new_label,label_column",
               "2,relabel,b,y", "5,drop,,y", "6,keep,,y", "3,relabel,\"c, new\",y"), csv)
  out <- apply_review(d, csv)
  expect_identical(out$x, c(1L, 2L, 3L, 4L, 6L))
  expect_identical(out$y, c("a", "b", "c, new", "b", "a"))
  expect_identical(attr(out, "dropped_rows"), 5L)
  expect_identical(attr(out, "relabelled_rows"), c(2L, 3L))
  # factor columns gain a level; numeric and integer labels keep their type
  f <- apply_review(d, data.frame(row = 1, decision = "relabel", new_label = "r"), response = "z")
  expect_identical(levels(f$z), c("p", "q", "r"))
  expect_identical(as.character(f$z[1]), "r")
  v <- apply_review(c(1.5, 2, 3), data.frame(row = 2, decision = "relabel", new_label = "2.25"))
  expect_identical(as.numeric(v), c(1.5, 2.25, 3))
  iv <- apply_review(1:3, data.frame(row = c(1, 3), decision = c("relabel", "drop"), new_label = c("7", "")))
  expect_identical(as.vector(iv), c(7L, 2L))
})

test_that("apply_review() rejects bad decisions with classed errors", {
  d <- data.frame(x = 1:3, y = c("a", "b", "a"))
  expect_error(apply_review(d, data.frame(row = 9, decision = "drop")), class = "noisylabels_error_length")
  expect_error(apply_review(d, data.frame(row = 1, decision = "remove")), class = "noisylabels_error_input")
  expect_error(apply_review(d, data.frame(row = c(1, 1), decision = c("drop", "keep"))),
               class = "noisylabels_error_input")
  expect_error(apply_review(d, data.frame(row = 1, decision = "relabel", new_label = "")),
               class = "noisylabels_error_input")
  expect_error(apply_review(d, data.frame(row = 1, decision = "relabel", new_label = "b")),
               "Which column", class = "noisylabels_error_input")
  expect_error(apply_review(c(1, 2), data.frame(row = 1, decision = "relabel", new_label = "x")),
               class = "noisylabels_error_input")
})

test_that("review_report() writes one self-contained HTML file", {
  skip_if_not_installed("DT")
  f <- review_fixture()
  file <- withr::local_tempfile(fileext = ".html")
  expect_message(out <- review_report(f$res, f$d, file, response = "label"), "Wrote")
  expect_identical(as.character(out), file)
  html <- paste(readLines(file, warn = FALSE), collapse = "\n")
  # nothing loaded from elsewhere: no src/href to files or hosts
  expect_false(grepl("<script[^>]+src=", html))
  expect_false(grepl("<link[^>]+href=", html))
  expect_true(grepl("data:image/png;base64,", html, fixed = TRUE))
  expect_true(grepl("NLReview.init", html, fixed = TRUE))
  expect_true(grepl("Estimated wrong labels", html, fixed = TRUE))
  expect_equal(attr(out, "size"), file.size(file))
})

test_that("the review table puts flagged rows first and leaves out the label column", {
  f <- review_fixture()
  tab <- noisylabels:::review_table(f$res, f$d, "label")
  expect_identical(nrow(tab), nrow(f$d))
  expect_true(all(diff(tab$flagged) <= 0))
  expect_false("label" %in% names(tab))
  expect_true(all(c("decision", "new_label", "x", "given_label", "suggested_label") %in% names(tab)))
  expect_identical(tab$new_label, as.character(f$res$label_issues$suggested_label[match(tab$row, f$res$label_issues$row)]))
  # columns of the calibrated flags are shown when present
  r2 <- f$res
  r2$label_issues$p_wrong <- 1 - r2$label_issues$label_quality
  r2$label_issues$q_value <- 0.5
  tab2 <- noisylabels:::review_table(r2, f$d, "label")
  expect_true(all(c("p_wrong", "q_value") %in% names(tab2)))
})

test_that("regression results suggest the prediction, or suggested_value when present", {
  set.seed(5)
  x <- runif(50)
  y <- x + rnorm(50, sd = 0.05)
  y[3] <- 4
  res <- find_label_issues(labels = y, predictions = x)
  tab <- noisylabels:::review_table(res, data.frame(x = x, y = y), "y")
  i <- match(3L, tab$row)
  expect_identical(tab$new_label[i], as.character(signif(x[3], 6)))
  res$label_issues$suggested_value <- res$label_issues$suggested_label <- res$label_issues$prediction + 1
  res$label_issues$suggested_lower <- res$label_issues$prediction
  tab2 <- noisylabels:::review_table(res, NULL, "y")
  expect_identical(tab2$new_label[match(3L, tab2$row)], as.character(signif(x[3] + 1, 6)))
  expect_true("suggested_lower" %in% names(tab2))
})

test_that("review_report() needs a find_label_issues result", {
  expect_error(review_report(list(), NULL, tempfile()), class = "noisylabels_error_input")
})
