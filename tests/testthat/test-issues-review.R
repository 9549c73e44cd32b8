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
  expect_error(apply_review(d, csv), class = "noisylabels_error_review_label")
  out <- apply_review(d, csv, new_classes = TRUE)
  expect_identical(out$x, c(1L, 2L, 3L, 4L, 6L))
  expect_identical(out$y, c("a", "b", "c, new", "b", "a"))
  expect_identical(attr(out, "dropped_rows"), 5L)
  expect_identical(attr(out, "relabelled_rows"), c(2L, 3L))
  # factor columns gain a level; numeric and integer labels keep their type
  expect_error(apply_review(d, data.frame(row = 1, decision = "relabel", new_label = "r"), response = "z"),
               class = "noisylabels_error_review_label")
  f <- apply_review(d, data.frame(row = 1, decision = "relabel", new_label = "r"), response = "z",
                    new_classes = TRUE)
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

test_that("apply_review() refuses shifted, reordered or edited rows and unknown classes", {
  fx <- review_fixture()
  d <- fx$d
  tab <- noisylabels:::review_table(fx$res, d, "label")
  rows <- tab$row[1:3]
  dec <- data.frame(row = rows, decision = c("relabel", "drop", "keep"),
                    new_label = c(setdiff(c("no", "yes"), as.character(d$label[rows[1]])), "", ""),
                    label_column = "label", row_fingerprint = noisylabels:::fingerprint_rows(d, rows))
  out <- apply_review(d, dec)
  expect_identical(nrow(out), nrow(d) - 1L)
  expect_identical(as.character(out$label[out$x == rows[1]]), dec$new_label[1])
  expect_error(apply_review(d[-1, ], dec), class = "noisylabels_error_review_rows")
  expect_error(apply_review(d[nrow(d):1, ], dec), class = "noisylabels_error_review_rows")
  edited <- d; edited$x[rows[3]] <- 99L
  expect_error(apply_review(edited, dec), class = "noisylabels_error_review_rows")
  typo <- dec; typo$new_label[1] <- "yes "
  expect_error(apply_review(d, typo), class = "noisylabels_error_review_label")
  # The fingerprint depends on the row number, every column and its value.
  expect_false(identical(noisylabels:::fingerprint_rows(d, 1), noisylabels:::fingerprint_rows(d[c(2, 1), ], 2)))
  expect_identical(noisylabels:::fingerprint_strings(c("a", "a", "b"))[1:2], noisylabels:::fingerprint_strings(c("a", "a")))
  expect_false(noisylabels:::fingerprint_strings("ab") == noisylabels:::fingerprint_strings("ba"))
})

test_that("an audit-mode page lists the sample and its export goes through estimate_errors()", {
  skip_if_not_installed("DT")
  fx <- review_fixture()
  a <- audit_sample(fx$res, 12, seed = 1)
  f <- withr::local_tempfile(fileext = ".html")
  suppressMessages(review_report(fx$res, fx$d, f, response = "label", audit = a, blind = TRUE))
  html <- paste(readLines(f, warn = FALSE), collapse = "\n")
  expect_match(html, "Audit mode: 12 sampled rows", fixed = TRUE)
  expect_match(html, a$design[1], fixed = TRUE)
  tab <- noisylabels:::review_table(fx$res, fx$d, "label", a)
  expect_identical(tab$row, a$row)
  # What the page writes for an audit: the verdict, the result's and the data's fingerprints.
  keep <- seq_len(12) %% 3 != 0
  csv <- data.frame(row = a$row, decision = ifelse(keep, "keep", "drop"), new_label = "",
                    label_column = "label", row_fingerprint = noisylabels:::fingerprint_rows(fx$d, a$row),
                    wrong = !keep, fingerprint = a$fingerprint, design = a$design)
  g <- withr::local_tempfile(fileext = ".csv")
  utils::write.csv(csv, g, row.names = FALSE)
  est <- estimate_errors(fx$res, utils::read.csv(g))
  expect_identical(est$n_wrong, 4)
  expect_identical(nrow(apply_review(fx$d, g)), nrow(fx$d) - 4L)
  expect_error(review_report(fx$res, fx$d, f, audit = a[, c("row", "wrong")]), class = "noisylabels_error_audit")
})
