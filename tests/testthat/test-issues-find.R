# find_label_issues(), confident_joint(), clean_data().

# Six labels, two classes, worked by hand (see the comments in the test).
p6 <- rbind(c(0.9, 0.1), c(0.8, 0.2), c(0.3, 0.7), c(0.2, 0.8), c(0.95, 0.05), c(0.6, 0.4))
y6 <- c(1, 1, 2, 2, 2, 1)

# Class-conditional noise with known truth: probabilities of the true class
# from a softmax, then a fraction `rate` of labels moved to the next class
# (asym) or to a uniformly drawn class.
sim_cl <- function(n, k, rate = 0.15, asym = TRUE, strength = 2.5) {
  true <- sample.int(k, n, TRUE)
  logits <- matrix(stats::rnorm(n * k), n, k)
  logits[cbind(seq_len(n), true)] <- logits[cbind(seq_len(n), true)] + strength
  p <- exp(logits)
  p <- p / rowSums(p)
  given <- true
  u <- stats::runif(n) < rate
  given[u] <- if (asym) (true[u] %% k) + 1L else sample.int(k, sum(u), TRUE)
  list(p = p, given = given, wrong = given != true)
}

flags_in_order <- function(res) {
  f <- logical(res$n)
  f[res$label_issues$row[res$label_issues$flagged]] <- TRUE
  f
}

f1 <- function(flag, truth) 2 * sum(flag & truth) / (sum(flag) + sum(truth))

test_that("confident learning matches a hand-computed case", {
  cl <- confident_joint(labels = y6, pred_probs = p6)
  # t1 = mean(.9, .8, .6), t2 = mean(.7, .8, .05)
  expect_equal(unname(cl$thresholds), c(2.3 / 3, 1.55 / 3))
  # rows 1, 2 -> class 1; rows 3, 4 -> class 2; row 5 (given 2) reaches t1
  # only -> C[2, 1]; row 6 reaches neither threshold.
  expect_equal(unname(cl$confident_joint), matrix(c(2, 1, 0, 2), 2))
  expect_equal(cl$confident_class, c(1L, 1L, 2L, 2L, 1L, NA))
  # calibrated: row 1 (2, 0) * 3 / 2, row 2 (1, 2) * 3 / 3
  expect_equal(unname(cl$calibrated_joint), matrix(c(3, 1, 0, 2), 2))
  expect_equal(unname(cl$noise_matrix), matrix(c(0.75, 0.25, 0, 1), 2))
  expect_equal(unname(cl$inverse_noise_matrix), matrix(c(1, 1 / 3, 0, 2 / 3), 2))
  expect_equal(cl$n_issues, 1L)
})

test_that("the classification path ranks, flags and suggests as computed by hand", {
  # Six labels: too few per class for flags from p_wrong (a classed warning).
  expect_warning(res <- find_label_issues(labels = y6, pred_probs = p6),
                 class = "noisylabels_warning_small_sample")
  li <- res$label_issues
  expect_s3_class(res, "find_label_issues")
  expect_named(li, c("row", "score", "flagged", "given_label", "suggested_label", "p_wrong",
                     "q_value", "label_quality", "prob_given", "prob_suggested",
                     "model_prob_given"))
  # With 6 rows the ranking's noise matrix is the uniform one (self-confidence
  # order); p_wrong is that posterior shifted to sum to the count's midpoint.
  expect_equal(res$noise_model$weight, 1)
  expect_equal(order(li$row[order(-li$p_wrong, li$row)]), order(order(p6[cbind(1:6, y6)], 1:6)))
  expect_equal(li$score, li$p_wrong)
  expect_equal(li$label_quality, 1 - li$p_wrong)
  expect_equal(li$row[1], 5L)
  expect_equal(sum(li$p_wrong), res$wrong_count$estimate, tolerance = 1e-6)
  expect_false(any(li$flagged))
  expect_equal(as.character(li$suggested_label[li$row == 5]), "1")
  # prune by noise rate: class 2 gives up round(C[2, 1]) = 1 label, the one
  # with the largest p1 - p2 (row 5)
  pb <- find_label_issues(labels = y6, pred_probs = p6, flag_by = "prune_by_noise_rate")
  expect_equal(pb$label_issues$row[pb$label_issues$flagged], 5L)
  rk <- find_label_issues(labels = y6, pred_probs = p6, flag_by = "rank")
  expect_equal(rk$label_issues$row[rk$label_issues$flagged], 5L)
  # prune by class: class 2 gives up round(C[2, 1]) = 1, its lowest p2 (row 5)
  pc <- find_label_issues(labels = y6, pred_probs = p6, flag_by = "prune_by_class")
  expect_equal(pc$label_issues$row[pc$label_issues$flagged], 5L)
  cj <- find_label_issues(labels = y6, pred_probs = p6, flag_by = "confident_joint")
  expect_equal(cj$label_issues$row[cj$label_issues$flagged], 5L)
  sc <- find_label_issues(labels = y6, pred_probs = p6, rank_by = "self_confidence")
  expect_equal(rank(-sc$label_issues$p_wrong[order(sc$label_issues$row)]), rank(p6[cbind(1:6, y6)]))
  nm <- find_label_issues(labels = y6, pred_probs = p6, rank_by = "normalized_margin")
  expect_equal(rank(-nm$label_issues$p_wrong[order(nm$label_issues$row)]),
               rank((p6[cbind(1:6, y6)] - p6[cbind(1:6, 3 - y6)] + 1) / 2))
  fixed <- find_label_issues(labels = y6, pred_probs = p6, n_issues = 2, flag_by = "rank")
  expect_equal(sum(fixed$label_issues$flagged), 2L)
})

test_that("labels coded as factor, character, 0-based or 1-based give the same answer", {
  colnames(p6) <- c("cat", "dog")
  base <- find_label_issues(labels = y6, pred_probs = unname(p6))
  chr <- find_label_issues(labels = c("cat", "dog")[y6], pred_probs = p6)
  fac <- find_label_issues(labels = factor(c("cat", "dog")[y6]), pred_probs = p6)
  zero <- find_label_issues(labels = y6 - 1, pred_probs = unname(p6))
  for (r in list(chr, fac, zero)) {
    expect_equal(r$label_issues$row, base$label_issues$row)
    expect_equal(r$label_issues$score, base$label_issues$score)
    expect_equal(r$label_issues$flagged, base$label_issues$flagged)
  }
  # Columns in another order, matched by name: the same result.
  perm <- find_label_issues(labels = c("cat", "dog")[y6], pred_probs = p6[, 2:1])
  expect_equal(perm$label_issues$score, chr$label_issues$score)
  expect_equal(as.character(perm$label_issues$suggested_label),
               as.character(chr$label_issues$suggested_label))
})

test_that("the model-agnostic path depends only on the probabilities, not on their source", {
  skip_if_not_installed("ranger")
  set.seed(11)
  n <- 240
  x <- matrix(stats::rnorm(n * 3), n)
  y <- factor(ifelse(x[, 1] + x[, 2] > 0, "a", "b"))
  y[1:12] <- ifelse(y[1:12] == "a", "b", "a")
  withr::with_seed(3, fitted_path <- find_label_issues(x, y, method = "forest", verbose = FALSE))
  agnostic <- find_label_issues(labels = y, pred_probs = fitted_path$pred_probs)
  expect_equal(agnostic$label_issues$score, fitted_path$label_issues$score)
  expect_equal(agnostic$label_issues$row, fitted_path$label_issues$row)
  expect_equal(agnostic$estimated_issues, fitted_path$estimated_issues)
  # The same probabilities produced another way (a logistic regression on the
  # same folds would give different numbers; the same numbers from another
  # object type give the same answer).
  glm_like <- as.data.frame(fitted_path$pred_probs)
  from_df <- find_label_issues(labels = as.character(y), pred_probs = glm_like)
  expect_equal(from_df$label_issues$score, fitted_path$label_issues$score)
  # The forest finds most of the flipped labels.
  expect_gt(detection_metrics(noise_scores(fitted_path), 1:n <= 12)$auc, 0.8)
})

test_that("on class-conditional noise the ranking beats self-confidence and the consensus flags beat prune-by-noise-rate", {
  set.seed(2)
  auc_gain <- f1_gain <- numeric(4)
  for (rep in 1:4) {
    s <- sim_cl(3000, c(3, 5, 10, 5)[rep])
    res <- find_label_issues(labels = s$given, pred_probs = s$p, flag_by = "consensus")
    self_conf <- 1 - s$p[cbind(seq_along(s$given), s$given)]
    auc_gain[rep] <- detection_metrics(noise_scores(res), s$wrong)$auc -
      detection_metrics(self_conf, s$wrong)$auc
    pb <- find_label_issues(labels = s$given, pred_probs = s$p, flag_by = "prune_by_noise_rate")
    f1_gain[rep] <- f1(flags_in_order(res), s$wrong) - f1(flags_in_order(pb), s$wrong)
  }
  expect_true(all(auc_gain >= 0))
  expect_gt(mean(auc_gain), 0.002)
  expect_true(all(f1_gain >= 0))
  # The estimate of how many labels are wrong is within 30% of the truth.
  expect_lt(abs(res$estimated_issues / sum(s$wrong) - 1), 0.3)
})

test_that("under uniform flips the posterior ranks like self-confidence", {
  set.seed(5)
  s <- sim_cl(3000, 4, asym = FALSE)
  res <- find_label_issues(labels = s$given, pred_probs = s$p)
  self_conf <- 1 - s$p[cbind(seq_along(s$given), s$given)]
  expect_equal(detection_metrics(noise_scores(res), s$wrong)$auc,
               detection_metrics(self_conf, s$wrong)$auc, tolerance = 2e-3)
})

test_that("bad classification input is a classed error that says what to do", {
  expect_error(find_label_issues(labels = y6, pred_probs = p6 * 0.9),
               class = "noisylabels_error_pred_probs", regexp = "sum to 1")
  expect_error(find_label_issues(labels = c(y6[-1], 3), pred_probs = p6),
               class = "noisylabels_error_label_range", regexp = "outside")
  expect_error(find_label_issues(labels = c("a", "b", "a", "b", "c", "a"),
                                 pred_probs = `colnames<-`(p6, c("a", "b"))),
               class = "noisylabels_error_label_range", regexp = "not among")
  expect_error(find_label_issues(labels = c(NA, y6[-1]), pred_probs = p6),
               class = "noisylabels_error_na")
  p_na <- p6; p_na[2, 1] <- NA
  expect_error(find_label_issues(labels = y6, pred_probs = p_na), class = "noisylabels_error_na")
  p3 <- cbind(p6 * 0.5, 0.5)
  expect_error(find_label_issues(labels = y6, pred_probs = p3),
               class = "noisylabels_error_empty_class", regexp = "no labelled example")
  expect_error(find_label_issues(labels = y6[-1], pred_probs = p6),
               class = "noisylabels_error_length", regexp = "length 5")
  expect_error(find_label_issues(labels = y6, pred_probs = p6[, 1]),
               class = "noisylabels_error_pred_probs", regexp = "cbind")
  expect_error(find_label_issues(labels = y6, pred_probs = log(p6)),
               class = "noisylabels_error_pred_probs", regexp = "logits")
  expect_error(find_label_issues(labels = y6, pred_probs = p6, predictions = 1:6),
               class = "noisylabels_error_input")
  expect_error(find_label_issues(), class = "noisylabels_error_input", regexp = "Nothing")
  expect_error(find_label_issues(labels = y6, pred_probs = p6, rank_by = "entropy"),
               class = "noisylabels_error_choice")
  expect_error(find_label_issues(labels = y6, pred_probs = p6, flagby = "rank"),
               class = "noisylabels_error_unknown_argument")
})

test_that("the regression path standardises residuals as computed by hand", {
  y <- c(1, 2, 3, 4, 5, 6, 7, 8, 9, 30)
  yhat <- c(1.1, 1.9, 3.2, 3.8, 5.1, 6.0, 6.8, 8.1, 9.1, 10)
  s <- c(0.1, 0.1, 0.2, 0.2, 0.1, 0.1, 0.2, 0.1, 0.1, 1)
  res <- find_label_issues(labels = y, predictions = yhat, sd = s)
  li <- res$label_issues
  expect_equal(li$score[order(li$row)], abs(y - yhat) / s)
  expect_equal(li$residual[order(li$row)], y - yhat)
  expect_equal(li$row[1], 10L)
  expect_true(li$flagged[1])
  # Without sd the scale is the MAD of the residuals.
  res2 <- find_label_issues(labels = y, predictions = yhat)
  expect_equal(res2$label_issues$score[order(res2$label_issues$row)],
               abs(y - yhat) / stats::mad(y - yhat))
  expect_equal(res2$estimated_issues, 1L)
  expect_equal(res2$label_issues$row[res2$label_issues$flagged], 10L)
  # label_quality is a probability and decreases with the score.
  q <- res2$label_issues$label_quality
  expect_true(all(q >= 0 & q <= 1))
  expect_true(all(diff(q) >= -1e-12))
  expect_error(find_label_issues(labels = y, predictions = yhat[-1]),
               class = "noisylabels_error_length")
  expect_error(find_label_issues(labels = y, predictions = yhat, sd = -s),
               class = "noisylabels_error_input")
  expect_error(find_label_issues(labels = c(NA, y[-1]), predictions = yhat),
               class = "noisylabels_error_na")
  expect_error(find_label_issues(labels = factor(y), predictions = yhat),
               class = "noisylabels_error_input", regexp = "pred_probs")
})

test_that("the scale mixture recovers the fraction of wide residuals", {
  set.seed(4)
  z <- c(stats::rnorm(1900), stats::rnorm(100, sd = 8))
  mix <- scale_mixture(z)
  expect_equal(mix$weight, 0.05, tolerance = 0.25)
  expect_equal(mix$sd_clean, 1, tolerance = 0.1)
  expect_gt(mix$sd_wide, 5)
  # Pure Gaussian residuals: (almost) no wrong labels.
  mix0 <- scale_mixture(stats::rnorm(2000))
  expect_lt(mix0$n_wide, 40)
})

test_that("the GP leave-one-out shortcut equals refits without each label", {
  set.seed(6)
  x <- matrix(stats::runif(40), 20)
  kern <- gp_kernel("rbf", lengthscale = 0.4)
  k <- kernel_matrix(kern, x) + diag(0.05, 20)
  ys <- stats::rnorm(20)
  loo <- gp_loo(x, ys, kern, 0.05)
  for (i in c(1, 7, 20)) {
    w <- solve(k[-i, -i], k[-i, i])
    expect_equal(ys[i] - loo$residual[i], sum(w * ys[-i]))
    expect_equal(loo$sd[i]^2, k[i, i] - sum(w * k[-i, i]))
  }
})

test_that("regression with data: GP for few smooth inputs, formula and matrix interfaces agree", {
  skip_if_not_installed("ranger")
  set.seed(7)
  n <- 200
  x <- matrix(stats::runif(2 * n), n)
  y <- sin(6 * x[, 1]) + x[, 2] + stats::rnorm(n, sd = 0.1)
  bad <- 1:10
  y[bad] <- y[bad] + sample(c(-1, 1), 10, TRUE)
  withr::with_seed(1, res <- find_label_issues(x, y, verbose = FALSE))
  expect_equal(res$task, "regression")
  expect_true(res$model_choice$chosen[res$model_choice$model == "gp"])
  expect_gt(detection_metrics(noise_scores(res), 1:n %in% bad)$auc, 0.97)
  expect_gt(mean(res$label_issues$row[res$label_issues$flagged] %in% bad), 0.6)
  d <- data.frame(a = x[, 1], b = x[, 2], y = y)
  withr::with_seed(1, res_f <- find_label_issues(y ~ a + b, data = d, verbose = FALSE))
  expect_equal(res_f$label_issues$row, res$label_issues$row)
  expect_equal(res_f$label_issues$score, res$label_issues$score)
  # The forest alone, and row numbers that skip rows dropped for NA.
  d$a[3] <- NA
  withr::with_seed(1, res_na <- find_label_issues(y ~ a + b, data = d, method = "forest", verbose = FALSE))
  expect_false(3L %in% res_na$label_issues$row)
  expect_equal(sort(res_na$label_issues$row), setdiff(1:n, 3))
  expect_match(res_na$method, "ranger")
  expect_equal(nrow(clean_data(res_na, d)), n - sum(res_na$label_issues$flagged))
})

test_that("folds give the same answer under a parallel future plan", {
  skip_on_cran()
  skip_if_not_installed("ranger")
  skip_if_not_installed("future")
  skip_if_not_installed("future.apply")
  set.seed(8)
  x <- matrix(stats::rnorm(300), 100)
  y <- x[, 1] * 2 + stats::rnorm(100)
  withr::with_seed(2, seq_res <- find_label_issues(x, y, method = "forest", verbose = FALSE))
  old <- future::plan(future::multisession, workers = 2)
  on.exit(future::plan(old), add = TRUE)
  withr::with_seed(2, par_res <- find_label_issues(x, y, method = "forest", verbose = FALSE))
  expect_equal(par_res$label_issues$score, seq_res$label_issues$score)
})

test_that("a fitted model of the package goes into the same contract", {
  set.seed(9)
  d <- sim_tang1d()
  fit <- gpr_loo(y ~ x, data = d$data, restarts = 1)
  res <- find_label_issues(fit)
  expect_s3_class(res, "find_label_issues")
  li <- res$label_issues
  expect_identical(names(li)[1:7], c("row", "score", "flagged", "given_label", "suggested_label",
                                     "p_wrong", "q_value"))
  expect_equal(sort(li$row), seq_len(nrow(d$data)))
  expect_true(all(li$label_quality >= 0 & li$label_quality <= 1))
  expect_equal(li$score, sort(noise_scores(fit), decreasing = TRUE))
  expect_equal(li$flagged, label_issues(fit)$flagged)
  via_method <- find_label_issues(d$data["x"], d$data$y, method = fit)
  expect_equal(via_method$label_issues$score, li$score)
})

test_that("clean_data removes flagged rows or relabels them", {
  colnames(p6) <- c("a", "b")
  d <- data.frame(x = 1:6, y = c("a", "b")[y6])
  res <- suppressWarnings(find_label_issues(labels = d$y, pred_probs = p6, flag_by = "rank"))
  out <- clean_data(res, d)
  expect_equal(out$x, c(1, 2, 3, 4, 6))
  expect_equal(attr(out, "removed_rows"), 5L)
  rel <- clean_data(res, d, action = "relabel", response = "y")
  expect_equal(rel$y, c("a", "a", "b", "b", "a", "a"))
  expect_equal(clean_data(res, d$y, action = "relabel"), structure(c("a", "a", "b", "b", "a", "a"),
                                                                   relabelled_rows = 5L))
  expect_error(clean_data(res, d[-1, ]), class = "noisylabels_error_length")
  # Numeric labels: flagged labels are replaced by the suggested value.
  set.seed(2)
  yhat <- sin(1:60 / 5)
  yy <- yhat + rnorm(60, sd = 0.1)
  yy[c(7, 30)] <- yy[c(7, 30)] + 3
  r2 <- find_label_issues(labels = yy, predictions = yhat, sd = 0.1)
  fl <- sort(r2$label_issues$row[r2$label_issues$flagged])
  expect_true(all(c(7L, 30L) %in% fl))
  rel2 <- clean_data(r2, data.frame(y = yy), action = "relabel", response = "y")
  expect_equal(rel2$y[fl], yhat[fl])
  expect_equal(rel2$y[-fl], yy[-fl])
  expect_identical(attr(rel2, "relabelled_rows"), fl)
  r3 <- r2
  r3$label_issues$suggested_value <- NULL
  r3$label_issues$suggested_label <- NULL
  expect_error(clean_data(r3, yy, action = "relabel"), class = "noisylabels_error_input")
})

test_that("print, summary, plot and autoplot work", {
  res <- suppressWarnings(find_label_issues(labels = y6, pred_probs = p6))
  expect_output(print(res), "0 of 6 labels flagged")
  expect_output(print(summary(res)), "noise matrix")
  r2 <- find_label_issues(labels = c(1, 2, 3, 4, 50, 6, 7), predictions = 1:7)
  expect_output(print(summary(r2)), "Residual mixture")
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off(), add = TRUE)
  expect_invisible(plot(res))
  expect_invisible(plot(r2, which = "top"))
  skip_if_not_installed("ggplot2")
  expect_s3_class(ggplot2::autoplot(res), "ggplot")
  expect_s3_class(ggplot2::autoplot(r2, which = "top"), "ggplot")
})

test_that("classification on 50,000 x 10 probabilities ranks every label", {
  # (its speed is measured in inst/experiments/find_label_issues/classification.R)
  skip_on_cran()
  set.seed(10)
  s <- sim_cl(50000, 10)
  res <- find_label_issues(labels = s$given, pred_probs = s$p)
  expect_equal(nrow(res$label_issues), 50000L)
  expect_setequal(res$label_issues$row, seq_len(50000))
  expect_true(all(is.finite(res$label_issues$p_wrong)))
})

test_that("on the real telomere table the default finds the recorded errors", {
  skip_on_cran()
  skip_if_not_installed("ranger")
  path <- shared_data_path("real-label-errors", "telomere_ts.csv")
  skip_if(is.null(path), "shared data not available")
  d <- utils::read.csv(path, check.names = FALSE)[, -1]
  d <- d[1:800, ]
  withr::with_seed(1, res <- find_label_issues(given_label ~ true.dna.scg + true.telo.var, data = d,
                                               verbose = FALSE))
  expect_gt(detection_metrics(noise_scores(res), d$true_error == 1)$auc, 0.97)
})

test_that("the package's GP classifier is a source of out-of-fold probabilities", {
  skip_on_cran()
  set.seed(12)
  n <- 80
  x <- matrix(stats::rnorm(2 * n), n)
  y <- factor(ifelse(x[, 1] - x[, 2] > 0, "up", "down"))
  flip <- c(3, 17, 41, 66)
  y[flip] <- ifelse(y[flip] == "up", "down", "up")
  res <- find_label_issues(x, y, method = "gpc_ep", folds = 4, verbose = FALSE)
  expect_match(res$method, "gpc_ep")
  expect_equal(dim(res$pred_probs), c(n, 2L))
  expect_equal(rowSums(res$pred_probs), rep(1, n))
  expect_gt(detection_metrics(noise_scores(res), 1:n %in% flip)$auc, 0.85)
})

test_that("regression 'auto' keeps to the forest when the dense GP would not fit in memory", {
  skip_if_not_installed("ranger")
  set.seed(13)
  x <- matrix(stats::runif(200), 100)
  y <- x[, 1] + stats::rnorm(100, sd = 0.1)
  withr::local_options(noisylabels.max_gb = 1e-4)
  res <- find_label_issues(x, y, verbose = FALSE)
  expect_match(res$method, "ranger")
  expect_false(res$model_choice$memory_ok[res$model_choice$model == "gp"])
  expect_error(find_label_issues(x, y, method = "gp", verbose = FALSE), class = "noisylabels_error_memory")
})

test_that("sgd_robust with Platt scaling is a source of out-of-fold probabilities", {
  set.seed(14)
  n <- 300
  x <- matrix(stats::rnorm(3 * n), n)
  y <- factor(ifelse(x[, 1] + 0.5 * x[, 2] > 0, "pos", "neg"), levels = c("neg", "pos"))
  flip <- 1:15
  y[flip] <- ifelse(y[flip] == "pos", "neg", "pos")
  res <- find_label_issues(x, y, method = "sgd_robust", verbose = FALSE)
  expect_match(res$method, "Platt")
  expect_equal(rowSums(res$pred_probs), rep(1, n))
  expect_gt(detection_metrics(noise_scores(res), 1:n %in% flip)$auc, 0.9)
  expect_error(find_label_issues(x, factor(sample(letters[1:3], n, TRUE)), method = "sgd_robust"),
               class = "noisylabels_error_input", regexp = "binary")
})

test_that("tidy() and glance() follow the package's broom-style methods", {
  res <- suppressWarnings(find_label_issues(labels = y6, pred_probs = p6, flag_by = "rank"))
  td <- tidy(res)
  expect_false(inherits(td, "noisylabels_issues"))
  expect_equal(td$row, res$label_issues$row)
  gl <- glance(res)
  expect_equal(nrow(gl), 1L)
  # glance() gives the headline count, the one print() and summary() give.
  expect_equal(gl$estimated_issues, as.integer(round(res$wrong_count$estimate)))
  expect_equal(gl$flagged, sum(res$label_issues$flagged))
})

test_that("printed results and error messages are stable", {
  res <- find_label_issues(labels = y6, pred_probs = p6)
  res$time <- 0
  expect_snapshot(print(res))
  expect_snapshot(print(summary(res)))
  expect_snapshot(find_label_issues(labels = y6, pred_probs = p6 * 0.9), error = TRUE)
  expect_snapshot(find_label_issues(labels = c(1, 1, 2, 2, 2, 3), pred_probs = p6), error = TRUE)
})

test_that("a flagged label is never suggested as its own correction", {
  set.seed(15)
  s <- sim_cl(2000, 4, asym = FALSE)
  res <- find_label_issues(labels = s$given, pred_probs = s$p)
  li <- res$label_issues[res$label_issues$flagged, ]
  expect_gt(nrow(li), 0)
  expect_true(all(as.character(li$suggested_label) != as.character(li$given_label)))
  # Unflagged labels keep the posterior's argmax, which is mostly the given label.
  kept <- res$label_issues[!res$label_issues$flagged, ]
  expect_gt(mean(as.character(kept$suggested_label) == as.character(kept$given_label)), 0.9)
})

test_that("verbose folds report progress through progressr and change nothing", {
  skip_if_not_installed("ranger")
  skip_if_not_installed("progressr")
  set.seed(16)
  x <- matrix(stats::rnorm(200), 100)
  y <- x[, 1] + stats::rnorm(100, sd = 0.3)
  ticks <- 0L
  counter <- progressr::make_progression_handler("count", reporter = list(
    update = function(config, state, progression, ...) ticks <<- ticks + 1L), enable = TRUE)
  withr::local_options(progressr.handlers = list(counter))
  withr::with_seed(3, loud <- find_label_issues(x, y, method = "forest", verbose = TRUE))
  withr::with_seed(3, quiet <- find_label_issues(x, y, method = "forest", verbose = FALSE))
  expect_gte(ticks, 5L)
  expect_equal(loud$label_issues$score, quiet$label_issues$score)
  expect_error(find_label_issues(x, y, verbose = "yes"), class = "noisylabels_error_input")
})

test_that("group label distributions go to label_dist_vb() and into the same contract", {
  set.seed(17)
  sim <- sim_label_dist(U = 30, N = 120, group_size = 8, D = 3, alpha_c1 = 20, n_test = 0)
  # Proportions of the groups' noisy labels (the simulator's raw draws add
  # Gaussian noise and can be negative).
  props <- sim$t
  res <- withr::with_seed(5, find_label_issues(sim$x, groups = sim$groups, label_dist = props))
  fit <- withr::with_seed(5, label_dist_vb(sim$x, sim$groups, props))
  expect_match(res$method, "label_dist_vb")
  expect_equal(nrow(res$label_issues), nrow(sim$x))
  expect_true(all(res$label_issues$label_quality >= 0 & res$label_issues$label_quality <= 1))
  expect_equal(res$label_issues$score, sort(noise_scores(fit), decreasing = TRUE))
  expect_error(find_label_issues(sim$x, groups = sim$groups), class = "noisylabels_error_input")
})

test_that("unmodified iris gets at most one flag per seed, and ten rows warn", {
  skip_on_cran()
  skip_if_not_installed("ranger")
  for (s in 1:8) {
    set.seed(s)
    res <- find_label_issues(Species ~ ., iris)
    expect_lte(sum(res$label_issues$flagged), 1L)
  }
  set.seed(1)
  expect_warning(find_label_issues(Species ~ ., iris[sample(150, 10), ]),
                 class = "noisylabels_warning_small_sample")
})

test_that("a forest on 5,000 rows with 250 flips: flags near the best cut, the interval covers 250", {
  skip_on_cran()
  skip_if_not_installed("ranger")
  set.seed(42)
  n <- 5000
  d <- data.frame(x1 = rnorm(n), x2 = rnorm(n), x3 = rnorm(n), f = factor(sample(letters[1:4], n, TRUE)))
  lin <- d$x1 - 0.8 * d$x2 + 0.5 * d$x3 + c(a = -1, b = 0, c = 0.5, d = 1)[as.character(d$f)]
  cls <- ifelse(lin + rnorm(n, sd = 0.5) > 0, "yes", "no")
  flip <- sample(n, 250)
  cls[flip] <- ifelse(cls[flip] == "yes", "no", "yes")
  d$y <- factor(cls)
  set.seed(1)
  res <- find_label_issues(y ~ ., d)
  li <- res$label_issues
  wrong <- li$row %in% flip
  f1 <- 2 * sum(li$flagged & wrong) / (sum(li$flagged) + 250)
  best <- max(2 * cumsum(wrong[order(-li$score)]) / (seq_len(n) + 250))
  expect_gte(f1, 0.8 * best)
  expect_true(res$wrong_count$lower <= 250 && 250 <= res$wrong_count$upper)
})
