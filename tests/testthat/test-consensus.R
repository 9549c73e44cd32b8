# consensus_labels(): R/consensus.R and R/consensus-methods.R.

# Labels of J annotators on N items of K classes, annotator j correct with
# probability acc[j] (else a uniform other class), each item labelled by
# `per_item` annotators drawn at random.
sim_annotations <- function(N = 400, K = 3, acc = c(0.9, 0.8, 0.7, 0.6, 0.5), per_item = NULL,
                            seed = 1) {
  set.seed(seed)
  J <- length(acc)
  truth <- sample.int(K, N, replace = TRUE)
  per_item <- per_item %||% J
  rows <- lapply(seq_len(N), function(i) {
    js <- sort(sample.int(J, per_item))
    ok <- stats::runif(per_item) < acc[js]
    wrong <- vapply(truth[i] + sample.int(K - 1L, per_item, replace = TRUE), function(v) as.integer((v - 1L) %% K + 1L), 1L)
    data.frame(item = i, annotator = paste0("a", js), label = ifelse(ok, truth[i], wrong))
  })
  list(ann = do.call(rbind, rows), truth = truth)
}

test_that("the EM objective never decreases (classes, with and without probabilities)", {
  s <- sim_annotations(N = 300, acc = c(0.85, 0.7, 0.6, 0.55), per_item = 3)
  fit <- suppressWarnings(consensus_labels(s$ann, shrinkage = 2, tol = 1e-12, max_iter = 200))
  expect_gt(length(fit$objective), 5)
  expect_true(all(diff(fit$objective) >= -1e-8 * abs(fit$objective[-1])))
  set.seed(4)
  p <- matrix(stats::runif(300 * 3), 300, 3)
  p[cbind(1:300, s$truth)] <- p[cbind(1:300, s$truth)] + 1
  p <- p / rowSums(p)
  fitp <- suppressWarnings(consensus_labels(s$ann, pred_probs = p, tol = 1e-12, max_iter = 200))
  expect_true(all(diff(fitp$objective) >= -1e-8 * abs(fitp$objective[-1])))
  expect_gt(fitp$tempering, 0.2)
  # The model's probabilities carry information: the consensus improves.
  expect_gt(mean(as.integer(fitp$items$consensus_label) == s$truth),
            mean(as.integer(fit$items$consensus_label) == s$truth))
})

test_that("the numeric ECM objective never decreases", {
  set.seed(2)
  mu <- stats::rnorm(150, 0, 10)
  ann <- expand.grid(item = 1:150, annotator = 1:6)
  sd_j <- c(1, 2, 3, 1, 5, 2)
  ann$label <- mu[ann$item] + c(0, 2, -1, 0, 1, 0)[ann$annotator] +
    sd_j[ann$annotator] * stats::rt(nrow(ann), 3)
  for (b in c(TRUE, FALSE)) {
    fit <- consensus_labels(ann, type = "numeric", bias = b, df = 4, scale_shape = 2, tol = 1e-13)
    expect_true(all(diff(fit$objective) >= -1e-9 * abs(fit$objective[-1])))
  }
  expect_lt(mean(abs(fit$items$consensus_value - mu)), mean(abs(tapply(ann$label, ann$item, mean) - mu)))
})

test_that("simulated confusion matrices are recovered", {
  set.seed(3)
  K <- 3
  N <- 3000
  truth <- sample.int(K, N, replace = TRUE, prob = c(0.5, 0.3, 0.2))
  conf <- list(matrix(c(0.9, 0.05, 0.05, 0.1, 0.8, 0.1, 0.2, 0.2, 0.6), 3, byrow = TRUE),
               matrix(c(0.7, 0.3, 0, 0.1, 0.9, 0, 0.05, 0.05, 0.9), 3, byrow = TRUE),
               matrix(c(0.6, 0.2, 0.2, 0.2, 0.6, 0.2, 0.1, 0.1, 0.8), 3, byrow = TRUE),
               diag(0.85, 3) + 0.05)
  ann <- do.call(rbind, lapply(seq_along(conf), function(j) {
    lab <- vapply(truth, function(k) sample.int(K, 1, prob = conf[[j]][k, ]), 1L)
    data.frame(item = seq_len(N), annotator = j, label = lab)
  }))
  fit <- consensus_labels(ann, shrinkage = 0)
  for (j in seq_along(conf)) {
    expect_lt(max(abs(fit$confusion[, , j] - conf[[j]])), 0.05)
  }
  expect_lt(max(abs(fit$class_prior - c(0.5, 0.3, 0.2))), 0.03)
  # Rows sum to one; the crowd matrix lies between the annotators'.
  expect_equal(unname(apply(fit$confusion, c(1, 3), sum)), matrix(1, 3, 4), tolerance = 1e-12)
  expect_equal(unname(rowSums(fit$crowd)), rep(1, 3), tolerance = 1e-12)
})

test_that("shrinkage pulls an annotator with few labels toward the crowd matrix", {
  s <- sim_annotations(N = 300, acc = c(0.9, 0.9, 0.9, 0.9), per_item = 3, seed = 5)
  few <- data.frame(item = 1:4, annotator = "new", label = s$truth[1:4])
  ann <- rbind(s$ann, few)
  loose <- consensus_labels(ann, shrinkage = 0)
  tight <- consensus_labels(ann, shrinkage = 20)
  d <- function(fit) sum(abs(fit$confusion[, , "new"] - fit$crowd))
  expect_lt(d(tight), d(loose))
})

test_that("one annotator gives that annotator's labels", {
  set.seed(6)
  lab <- sample(c("x", "y", "z"), 100, replace = TRUE)
  # The class prior alone identifies nothing, so EM drifts slowly (and may
  # warn that it did not converge); the consensus stays the labels.
  fit <- suppressWarnings(consensus_labels(data.frame(item = 1:100, annotator = "only", label = lab)))
  expect_identical(as.character(fit$items$consensus_label), lab)
  expect_equal(nrow(fit$annotators), 1L)
})

test_that("perfect annotators give their labels, with quality near 1", {
  set.seed(7)
  truth <- sample(letters[1:4], 120, replace = TRUE)
  ann <- expand.grid(item = 1:120, annotator = c("p", "q", "r"), stringsAsFactors = FALSE)
  ann$label <- truth[ann$item]
  fit <- consensus_labels(ann)
  expect_identical(as.character(fit$items$consensus_label), truth)
  expect_true(all(fit$items$quality > 0.99))
  expect_true(all(fit$annotators$quality > 0.99))
  expect_true(all(fit$items$agreement == 1))
  # Items with one label each from perfect annotators keep it.
  one <- data.frame(item = 1:120, annotator = rep(c("p", "q", "r"), 40), label = truth)
  fit1 <- consensus_labels(rbind(ann[ann$item <= 60, ], one[one$item > 60, ]))
  expect_identical(as.character(fit1$items$consensus_label), truth)
})

test_that("counts-only input equals the expanded long input of one anonymous annotator", {
  set.seed(8)
  counts <- matrix(stats::rpois(50 * 3, 2), 50, 3, dimnames = list(NULL, c("u", "v", "w")))
  counts[counts[, 1] + counts[, 2] + counts[, 3] == 0, 1] <- 1L
  fit_c <- consensus_labels(counts, format = "counts", tol = 1e-12)
  long <- do.call(rbind, lapply(seq_len(nrow(counts)), function(i) {
    data.frame(item = i, annotator = "(anonymous)", label = rep(colnames(counts), counts[i, ]))
  }))
  long <- long[sample(nrow(long)), ]
  fit_l <- consensus_labels(long, classes = colnames(counts), tol = 1e-12)
  expect_equal(fit_c$items[c("quality", "prob_u", "prob_v", "prob_w")],
               fit_l$items[c("quality", "prob_u", "prob_v", "prob_w")], tolerance = 1e-9)
  expect_equal(fit_c$confusion, fit_l$confusion, tolerance = 1e-9)
  # Label issues of the counts weigh each cell by its count.
  fi <- find_label_issues(fit_c)
  expect_equal(fi$wrong_count$estimate, sum(fit_l$labels$p_wrong), tolerance = 1e-8)
})

test_that("wide input equals long input", {
  s <- sim_annotations(N = 60, acc = c(0.9, 0.7, 0.6), per_item = 2, seed = 9)
  wide <- matrix(NA_integer_, 60, 3, dimnames = list(1:60, c("a1", "a2", "a3")))
  wide[cbind(s$ann$item, match(s$ann$annotator, colnames(wide)))] <- s$ann$label
  fw <- consensus_labels(wide)
  fl <- consensus_labels(s$ann)
  expect_equal(fw$items$quality, fl$items$quality, tolerance = 1e-10)
  expect_identical(as.character(fw$items$consensus_label), as.character(fl$items$consensus_label))
})

test_that("numeric consensus matches the closed form of a balanced design", {
  set.seed(10)
  y <- matrix(stats::rnorm(40 * 5, 3), 40, 5) + rep(c(-1, 0, 2, 0.5, -1.5), each = 40)
  ann <- data.frame(item = rep(1:40, 5), annotator = rep(1:5, each = 40), label = as.vector(y))
  # Equal scales (a very strong prior), Gaussian noise: the item means ...
  f0 <- consensus_labels(ann, type = "numeric", df = Inf, scale_shape = 1e9, bias = FALSE, tol = 1e-14)
  expect_equal(f0$items$consensus_value, rowMeans(y), tolerance = 1e-8)
  # ... and with biases, mu_i = row mean, bias_j = column mean - grand mean
  # (centred biases in a complete two-way layout).
  f1 <- consensus_labels(ann, type = "numeric", df = Inf, scale_shape = 1e9, bias = TRUE, tol = 1e-14)
  expect_equal(f1$items$consensus_value, rowMeans(y), tolerance = 1e-6)
  expect_equal(f1$annotators$bias, colMeans(y) - mean(y), tolerance = 1e-6)
  # Interval: sigma0 / sqrt(5), sigma0^2 the pooled variance around item means.
  s0 <- sqrt(sum((y - rowMeans(y))^2) / (200 - 40))
  expect_equal(f0$items$se, rep(s0 / sqrt(5), 40), tolerance = 1e-6)
  expect_equal(f0$items$upper - f0$items$lower, rep(2 * stats::qnorm(0.95) * s0 / sqrt(5), 40),
               tolerance = 1e-6)
})

test_that("bad input gives classed errors", {
  ann <- data.frame(item = c(1, 1, 2, 2), annotator = c("a", "b", "a", "b"), label = c(1, 2, 2, 2))
  expect_error(consensus_labels(ann, classes = c(1, 3)), class = "noisylabels_error_label_class")
  bad <- ann
  bad$label[2] <- NA
  expect_error(consensus_labels(bad), class = "noisylabels_error_missing")
  expect_error(consensus_labels(ann[c("item", "label")], format = "long"),
               class = "noisylabels_error_missing")
  expect_error(consensus_labels(ann, pred_probs = matrix(0.5, 3, 2)),
               class = "noisylabels_error_pred_probs")
  expect_error(consensus_labels(ann, pred_probs = matrix(0.7, 2, 2)),
               class = "noisylabels_error_pred_probs")
  named <- matrix(0.5, 2, 2, dimnames = list(c("1", "9"), NULL))
  expect_error(consensus_labels(ann, pred_probs = named), class = "noisylabels_error_pred_probs")
  expect_error(consensus_labels(ann, shrinkage = -1), class = "noisylabels_error_input")
  expect_error(consensus_labels(ann, shrink_age = 1), class = "noisylabels_error_unknown_argument")
  expect_error(consensus_labels(matrix(c(-1, 2), 1), format = "counts"),
               class = "noisylabels_error_counts")
  expect_error(consensus_labels(data.frame(item = 1:2, annotator = 1, label = c(1, 1))),
               class = "noisylabels_error_label_class")
  num <- data.frame(item = 1:3, annotator = 1, label = c(0.5, 1.5, 2.25))
  expect_error(consensus_labels(num, pred_probs = matrix(1 / 2, 3, 2)),
               class = "noisylabels_error_pred_probs")
  fit <- consensus_labels(ann)
  expect_error(label_issues(unclass(fit)), class = "noisylabels_error_input")
  edited <- fit
  edited$items <- NULL
  expect_error(print(edited), class = "noisylabels_error_object")
})

test_that("label_issues follows the package's schema and review_report accepts the result", {
  s <- sim_annotations(N = 200, acc = c(0.9, 0.8, 0.6, 0.5), per_item = 3, seed = 11)
  fit <- consensus_labels(s$ann)
  li <- label_issues(fit)
  expect_identical(names(li)[1:7], c("row", "score", "flagged", "given_label", "suggested_label",
                                     "p_wrong", "q_value"))
  expect_equal(nrow(li), nrow(s$ann))
  expect_true(all(diff(li$score) <= 0))
  # p_wrong of a label = 1 - posterior probability of the class given.
  r <- li$row[1]
  it <- match(s$ann$item[r], fit$items$item)
  expect_equal(li$p_wrong[1], 1 - fit$items[[paste0("prob_", s$ann$label[r])]][it])
  expect_identical(as.character(li$given_label), as.character(s$ann$label[li$row]))
  # Flagged labels are wrong far more often than the others.
  wrong <- s$ann$label[li$row] != s$truth[s$ann$item[li$row]]
  expect_gt(mean(wrong[li$flagged]), 0.8)
  expect_lt(mean(wrong[!li$flagged]), 0.3)
  items <- label_issues(fit, level = "items")
  expect_equal(items$p_wrong, 1 - fit$items$quality[items$row])
  res <- find_label_issues(fit)
  expect_s3_class(res, "find_label_issues")
  expect_equal(res$wrong_count$estimate, sum(fit$labels$p_wrong))
  expect_equal(res$label_issues$label_quality, 1 - res$label_issues$p_wrong)
  skip_if_not_installed("DT")
  skip_if_not_installed("htmlwidgets")
  f <- tempfile(fileext = ".html")
  on.exit(unlink(f), add = TRUE)
  suppressWarnings(review_report(fit, data = s$ann, file = f))
  expect_true(file.exists(f))
})

test_that("numeric label issues find wild labels", {
  set.seed(12)
  mu <- stats::runif(100, -50, 50)
  ann <- expand.grid(item = 1:100, annotator = 1:5)
  ann$label <- mu[ann$item] + stats::rnorm(500, 0, 2)
  wild <- sample(500, 15)
  ann$label[wild] <- ann$label[wild] + sample(c(-1, 1), 15, TRUE) * 40
  fit <- consensus_labels(ann, type = "numeric")
  li <- label_issues(fit)
  expect_gte(sum(li$flagged & li$row %in% wild), 13)
  expect_lte(sum(li$flagged & !li$row %in% wild), 3)
  expect_error(label_issues(fit, level = "items"), class = "noisylabels_error_choice")
  expect_lt(max(abs(fit$items$consensus_value - mu)), 6)
})

test_that("print, summary, as.data.frame and autoplot work", {
  s <- sim_annotations(N = 80, seed = 13)
  fit <- consensus_labels(s$ann)
  expect_output(print(fit), "Consensus of 400 labels on 80 items from 5 annotators")
  expect_output(print(summary(fit)), "Expected number of wrong labels")
  expect_identical(as.data.frame(fit, what = "annotators"), fit$annotators)
  expect_identical(as.data.frame(fit), fit$items)
  skip_if_not_installed("ggplot2")
  expect_s3_class(autoplot(fit), "ggplot")
  expect_s3_class(autoplot(fit, which = "confusion", n = 2), "ggplot")
})

test_that("dev data: consensus at least as accurate as the majority vote", {
  path <- shared_data_path("multi-annotator", "dog_annotations.csv.gz")
  skip_if(is.null(path))
  d <- utils::read.csv(path)
  tr <- utils::read.csv(sub("annotations", "truth", path))
  fit <- consensus_labels(d)
  tl <- tr$true_label[match(fit$items$item, tr$item)]
  votes <- table(factor(d$item), factor(d$label))
  mv <- colnames(votes)[max.col(unclass(votes), ties.method = "first")]
  expect_gte(mean(as.character(fit$items$consensus_label) == tl), mean(mv == tl))
  expect_gte(mean(as.character(fit$items$consensus_label) == tl), 0.84)
})
