# Writes the review reports that check-review.js opens, and what it should
# find in them (expected.json): a 300-row classification report, a 200-row
# regression report and a 10^4-row classification report for the timing.
#   Rscript tools/review-check/make-reports.R OUTDIR
suppressMessages(library(noisylabels))
out <- commandArgs(TRUE)[1]
if (is.na(out)) out <- "review-check-out"
dir.create(out, showWarnings = FALSE, recursive = TRUE)

sim_classes <- function(n, seed) {
  set.seed(seed)
  d <- data.frame(id = sprintf("item-%05d", seq_len(n)), size = round(rnorm(n, 10, 2), 2),
                  colour = factor(sample(c("red", "green", "blue"), n, TRUE)))
  p <- matrix(runif(3 * n)^3, n, 3, dimnames = list(NULL, c("cat", "dog", "fox")))
  p <- p / rowSums(p)
  d$animal <- colnames(p)[max.col(p)]
  wrong <- sample(n, round(0.08 * n))
  d$animal[wrong] <- colnames(p)[(max.col(p)[wrong] %% 3) + 1]
  list(data = d, res = find_label_issues(labels = d$animal, pred_probs = p))
}

expect_for <- function(res, d, file, response) {
  f <- file.path(out, file)
  review_report(res, d, f, response = response)
  tab <- noisylabels:::review_table(res, d, response)
  first <- tab$row[1:4]
  custom <- if (is.character(tab$given_label)) setdiff(c("cat", "dog", "fox"), tab$new_label[4])[1] else "12.5"
  csv <- c("row,decision,new_label,label_column,row_fingerprint",
           sort_lines <- vapply(order(first), function(i) {
             r <- first[i]
             fp <- noisylabels:::fingerprint_rows(d, r)
             switch(i, sprintf("%d,drop,,%s,%s", r, response, fp),
                    sprintf("%d,relabel,%s,%s,%s", r, tab$new_label[2], response, fp),
                    sprintf("%d,keep,,%s,%s", r, response, fp), sprintf("%d,relabel,%s,%s,%s", r, custom, response, fp))
           }, ""))
  list(file = normalizePath(f), n = nrow(tab), size = file.size(f), first_rows = first,
       custom_value = custom, expected_csv = paste0(paste(csv, collapse = "\n"), "\n"),
       score_min = min(tab$score), score_max = max(tab$score),
       score_col = match("score", names(tab)) - 1L,
       filter_col = match("given_label", names(tab)) - 1L,
       filter_value = as.character(tab$given_label[1]),
       numeric_filter = is.numeric(tab$given_label),
       filter_count = if (is.numeric(tab$given_label)) sum(tab$given_label == tab$given_label[1])
                      else sum(grepl(tab$given_label[1], tab$given_label, fixed = TRUE)),
       score_above_half = sum(tab$score > 0.5),
       flagged = sum(tab$flagged))
}

small <- sim_classes(300, 1)
set.seed(2)
x <- runif(200, 0, 6)
reg <- data.frame(x = x, y = sin(x) + rnorm(200, sd = 0.1))
reg$y[c(3, 50, 120)] <- reg$y[c(3, 50, 120)] + 2
reg_res <- find_label_issues(labels = reg$y, predictions = sin(reg$x))
big <- sim_classes(10000, 3)
# An audit of 30 rows of the small report, blind: the check marks them by
# keyboard and hands its download to estimate_errors() (audit-check.R).
audit <- audit_sample(small$res, 30, seed = 1)
review_report(small$res, small$data, file.path(out, "review-audit.html"), response = "animal",
              audit = audit, blind = TRUE)
saveRDS(list(result = small$res, data = small$data, audit = audit), file.path(out, "audit.rds"))
expected <- list(audit = list(file = normalizePath(file.path(out, "review-audit.html")), n = nrow(audit),
                              rows = audit$row, classes = c("cat", "dog", "fox"),
                              rds = normalizePath(file.path(out, "audit.rds"))),
                 classes = expect_for(small$res, small$data, "review-classes.html", "animal"),
                 regression = expect_for(reg_res, reg, "review-regression.html", "y"),
                 large = expect_for(big$res, big$data, "review-large.html", "animal"))
jsonlite::write_json(expected, file.path(out, "expected.json"), auto_unbox = TRUE, pretty = TRUE,
                     digits = NA)
cat("review-check: reports written to", out, "\n")
