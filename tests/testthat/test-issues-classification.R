# Classes: p_wrong, q-values, FDR flags and the chunked path of find_label_issues().

# Features from class-specific Gaussians, out-of-fold multinomial
# probabilities fitted on the noisy labels (as a user's model would give).
sim_oof <- function(n, k, rate, seed) {
  withr::local_seed(seed)
  mu <- matrix(stats::rnorm(k * 4, sd = 1.5), k, 4)
  true <- sample.int(k, n, TRUE)
  x <- mu[true, ] + matrix(stats::rnorm(n * 4), n, 4)
  given <- true
  u <- stats::runif(n) < rate
  given[u] <- (true[u] + sample.int(k - 1L, sum(u), TRUE) - 1L) %% k + 1L
  folds <- rep_len(1:4, n)
  p <- matrix(0, n, k)
  df <- data.frame(x)
  for (f in 1:4) {
    tr <- folds != f
    fit <- nnet::multinom(factor(given[tr], levels = 1:k) ~ ., data = df[tr, ], trace = FALSE)
    p[!tr, ] <- stats::predict(fit, df[!tr, ], type = "probs")
  }
  list(p = p / rowSums(p), given = given, wrong = given != true)
}

in_row_order <- function(res, col) res$label_issues[[col]][order(res$label_issues$row)]

test_that("p_wrong is a probability, q-values are monotone in it, and fdr has its limits", {
  skip_if_not_installed("nnet")
  s <- sim_oof(1500, 4, 0.15, 1)
  res <- find_label_issues(labels = s$given, pred_probs = s$p, flag_by = "fdr")
  pw <- in_row_order(res, "p_wrong")
  q <- in_row_order(res, "q_value")
  expect_true(all(pw >= 0 & pw <= 1))
  o <- order(-pw)
  expect_true(all(diff(q[o]) >= -1e-12))
  expect_equal(in_row_order(res, "flagged"), q <= 0.1)
  expect_equal(res$wrong_count$estimate, sum(pw))
  all_flag <- find_label_issues(labels = s$given, pred_probs = s$p, flag_by = "fdr", fdr = 1)
  expect_true(all(all_flag$label_issues$flagged))
  none <- find_label_issues(labels = s$given, pred_probs = s$p, flag_by = "fdr", fdr = 1e-12)
  expect_false(any(none$label_issues$flagged & none$label_issues$p_wrong < 1))
  expect_error(find_label_issues(labels = s$given, pred_probs = s$p, fdr = 0), class = "noisylabels_error_input")
  # The suggestion of a flagged label is another class, with its probability.
  li <- res$label_issues[res$label_issues$flagged, ]
  expect_true(all(as.character(li$suggested_label) != as.character(li$given_label)))
  expect_true(all(li$prob_suggested > 0 & li$prob_suggested <= 1))
})

test_that("FDR flags find wrong labels with a realised FDP near the target, and few at 0% noise", {
  skip_on_cran()
  skip_if_not_installed("nnet")
  s <- sim_oof(3000, 5, 0.2, 2)
  res <- find_label_issues(labels = s$given, pred_probs = s$p, flag_by = "fdr")
  f <- in_row_order(res, "flagged")
  expect_lt(1 - mean(s$wrong[f]), 0.2)
  ef1 <- find_label_issues(labels = s$given, pred_probs = s$p, flag_by = "expected_f1")
  pb <- find_label_issues(labels = s$given, pred_probs = s$p, flag_by = "prune_by_noise_rate")
  f1 <- function(fl) 2 * sum(fl & s$wrong) / (sum(fl) + sum(s$wrong))
  expect_gte(f1(in_row_order(ef1, "flagged")), f1(in_row_order(pb, "flagged")) - 0.02)
  expect_gt(f1(f), 0.6)
  # The count interval is in the right region.
  expect_lt(abs(res$wrong_count$estimate / sum(s$wrong) - 1), 0.25)
  clean <- sim_oof(3000, 5, 0, 3)
  r0 <- find_label_issues(labels = clean$given, pred_probs = clean$p, flag_by = "fdr")
  expect_lte(mean(r0$label_issues$flagged), 0.01)
})

test_that("chunked input (binary file, csv file, chunk function) gives the in-memory answer exactly", {
  skip_if_not_installed("nnet")
  s <- sim_oof(700, 3, 0.2, 4)
  # Files carry no class names: a factor's levels name the columns in order.
  lab <- factor(c("a", "b", "c")[s$given])
  mem <- find_label_issues(labels = lab, pred_probs = s$p, flag_by = "fdr")
  withr::local_options(noisylabels.chunk_rows = 128)
  bin <- withr::local_tempfile(fileext = ".bin")
  writeBin(as.double(t(s$p)), bin)
  csv <- withr::local_tempfile(fileext = ".csv")
  utils::write.table(format(s$p, digits = 17), csv, sep = ",", row.names = FALSE,
                     col.names = FALSE, quote = FALSE)
  chunks <- function(i) if (i <= 7) s$p[(i - 1) * 100 + 1:100, , drop = FALSE] else NULL
  for (src in list(bin, csv, chunks)) {
    ch <- find_label_issues(labels = lab, pred_probs = src, flag_by = "fdr")
    expect_identical(ch$label_issues, mem$label_issues)
    expect_identical(ch$confident_learning, mem$confident_learning)
    expect_identical(ch$wrong_count, mem$wrong_count)
  }
  for (rule in c("expected_f1", "rank", "confident_joint")) {
    expect_identical(find_label_issues(labels = lab, pred_probs = bin, flag_by = rule)$label_issues,
                     find_label_issues(labels = lab, pred_probs = s$p, flag_by = rule)$label_issues)
  }
  expect_error(find_label_issues(labels = lab, pred_probs = bin), class = "noisylabels_error_choice")
  expect_error(find_label_issues(labels = lab[-1], pred_probs = chunks, flag_by = "fdr"),
               class = "noisylabels_error_length")
  expect_error(find_label_issues(labels = lab, pred_probs = tempfile(), flag_by = "fdr"),
               class = "noisylabels_error_pred_probs")
})
