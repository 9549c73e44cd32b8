# Classes: p_wrong, q-values, FDR flags and the chunked path of find_label_issues().

# Features from class-specific Gaussians, out-of-fold multinomial
# probabilities fitted on the noisy labels (as a user's model would give).
# `to_next`: flips go to the next class instead of a uniformly drawn other one.
sim_oof <- function(n, k, rate, seed, to_next = FALSE) {
  withr::local_seed(seed)
  mu <- matrix(stats::rnorm(k * 4, sd = 1.5), k, 4)
  true <- sample.int(k, n, TRUE)
  x <- mu[true, ] + matrix(stats::rnorm(n * 4), n, 4)
  given <- true
  u <- stats::runif(n) < rate
  shift <- if (to_next) rep(1L, sum(u)) else sample.int(k - 1L, sum(u), TRUE)
  given[u] <- (true[u] + shift - 1L) %% k + 1L
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

test_that("p_wrong is the larger of the tempered and the unmixed posterior, by hand", {
  # T = [0.8 0.3; 0.2 0.7], T^-1 = 2 [0.7 -0.3; -0.2 0.8].
  # P = (0.9, 0.1): T^-1 P = (1.2, -0.2) -> truth (1, 0); label 2 is wrong for sure.
  # P = (0.7, 0.3): truth (0.8, 0.2); label 1: 0.3 * 0.2 / (0.8 * 0.8 + 0.3 * 0.2)
  # = 0.06 / 0.70; label 2: 0.2 * 0.8 / (0.2 * 0.8 + 0.7 * 0.2) = 0.16 / 0.30.
  tm <- matrix(c(0.8, 0.2, 0.3, 0.7), 2)
  p <- rbind(c(0.9, 0.1), c(0.7, 0.3), c(0.7, 0.3))
  lab <- c(2L, 1L, 2L)
  # Tempered model with T = I: its posterior is the given label, p_wrong 0.
  model <- list(a = 1, noise = diag(2), unmix_noise = tm, unmix = solve(tm))
  w <- noisylabels:::cl_wrong_block(lab, p, model)
  expect_equal(w$p_wrong, c(1, 0.06 / 0.70, 0.16 / 0.30))
  expect_equal(w$best, c(1L, 1L, 1L))
  expect_equal(w$prob_best, c(1, 0.64 / 0.70, 0.16 / 0.30))
  # Tempered model with uninformative T: P(true | x, given) = P, p_wrong =
  # 1 - P[given], larger than the unmixed one in rows 2 and 3.
  model$noise <- matrix(0.5, 2, 2)
  w <- noisylabels:::cl_wrong_block(lab, p, model)
  expect_equal(w$p_wrong, c(1, 0.3, 0.7))
  expect_equal(w$prob_other, c(1, 0.3, 0.7))
  # Without the unmixed model only the tempered posterior counts.
  model$unmix <- NULL
  expect_equal(noisylabels:::cl_wrong_block(lab, p, model)$p_wrong, c(0.9, 0.3, 0.7))
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
  # The unmixed model needs evidence of noise: here with 20%, not at 0%.
  expect_gt(res$noise_model$gain, 0)
  expect_false(is.null(res$noise_model$unmix))
  expect_lte(r0$noise_model$gain, 0)
  expect_null(r0$noise_model$unmix)
  # The default rule is the FDR one.
  expect_identical(find_label_issues(labels = s$given, pred_probs = s$p)$label_issues, res$label_issues)
})

test_that("the channel model turns the unmixed model on where it fits the labels significantly better than P", {
  skip_on_cran()
  skip_if_not_installed("nnet")
  # 40% of the labels flipped to the next of 3 classes: P fitted on the noisy
  # labels is calibrated for them, so the tempered model gains nothing over
  # P, but the channel model, which can undo flips into one class, does.
  s <- sim_oof(3000, 3, 0.4, 35, to_next = TRUE)
  res <- find_label_issues(labels = s$given, pred_probs = s$p)
  nm <- res$noise_model
  expect_lte(nm$gain, 0)
  expect_gt(nm$channel_gain, 0.05)
  # The rate by its definition: off-diagonal mass of T weighted by the
  # given-label counts; here near the true 40%.
  expect_equal(nm$rate, 1 - sum(diag(nm$noise) * tabulate(s$given, 3)) / length(s$given))
  expect_lt(abs(nm$rate - mean(s$wrong)), 0.05)
  expect_equal(nm$unmix_noise, nm$noise)
  expect_equal(nm$unmix, solve(nm$unmix_noise))
  f <- in_row_order(res, "flagged")
  expect_gt(mean(f[s$wrong]), 0.6)
  expect_lt(1 - mean(s$wrong[f]), 0.15)
  # The rule on these sets and on clean ones: on iff the likelihood ratio
  # statistic of the channel model on its 2,000 rows passes the 1% level.
  for (case in list(s, sim_oof(3000, 5, 0, 3), sim_oof(2500, 4, 0.15, 1), sim_oof(2000, 3, 0, 6))) {
    m <- find_label_issues(labels = case$given, pred_probs = case$p)$noise_model
    k <- ncol(case$p)
    expect_identical(!is.null(m$unmix),
                     2 * 2000 * m$channel_gain > stats::qchisq(0.99, 2 * k * (k - 1)))
  }
})

test_that("the channel fit recovers a known noise matrix and beats the true parameters' likelihood", {
  # P from a linear softmax; the truth a tempered P (a = 2.5); the given
  # label drawn from the truth through a known T with flips into one class.
  withr::local_seed(11)
  n <- 2000
  x <- matrix(stats::rnorm(n * 2), n, 2)
  w <- rbind(c(1.5, 0), c(-0.8, 1.3), c(-0.7, -1.3))
  p <- exp(x %*% t(w))
  p <- p / rowSums(p)
  truth <- p^2.5 / rowSums(p^2.5)
  tm <- rbind(c(0.7, 0, 0.2), c(0.3, 0.9, 0), c(0, 0.1, 0.8))
  true <- apply(truth, 1, function(r) sample.int(3, 1, prob = r))
  given <- vapply(true, function(j) sample.int(3, 1, prob = tm[, j]), 1L)
  fit <- noisylabels:::cl_fit_channel(given, p, a0 = 1, noise0 = diag(3) * 0.9 + 0.1 / 3)
  expect_true(all(abs(fit$noise - tm) < 0.06))
  expect_equal(colSums(fit$noise), rep(1, 3))
  # Maximum likelihood: at least the likelihood of the true parameters.
  ll_true <- sum(log(rowSums(tm[given, ] * truth)))
  ll_p <- sum(log(p[cbind(seq_len(n), given)]))
  expect_gte(n * fit$gain + ll_p, ll_true - 1e-6)
  expect_gt(fit$gain, 0)
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
  # The default (fdr) reads chunks; the rules that need every row at once do not.
  expect_identical(find_label_issues(labels = lab, pred_probs = bin)$label_issues, mem$label_issues)
  expect_error(find_label_issues(labels = lab, pred_probs = bin, flag_by = "consensus"),
               class = "noisylabels_error_choice")
  expect_error(find_label_issues(labels = lab[-1], pred_probs = chunks, flag_by = "fdr"),
               class = "noisylabels_error_length")
  expect_error(find_label_issues(labels = lab, pred_probs = tempfile(), flag_by = "fdr"),
               class = "noisylabels_error_pred_probs")
})
