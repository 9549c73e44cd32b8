# consensus_labels() on the multi-annotator dev data, next to the majority
# vote, textbook Dawid-Skene EM (written here, 50 iterations) and, where a
# model's probabilities exist (CIFAR-10H), cleanlab 2.9's CROWDLAB.
#
# Run from the package root with the package installed:
#   R_LIBS=<lib> Rscript inst/experiments/consensus/multi_annotator.R
# cleanlab is used when PYTHONPATH or CLEANLAB_SRC points at it (python3 with
# numpy/pandas/sklearn); without it those rows are skipped.
# Output: results/table.csv, emotion.csv, cifar10h.csv (and the tables printed).
suppressPackageStartupMessages(library(noisylabels))
data_dir <- Sys.getenv("MULTI_ANNOTATOR_DIR", "/work/shared/data/multi-annotator")
here <- "inst/experiments/consensus"
dir.create(file.path(here, "results"), showWarnings = FALSE)
rd <- function(f) utils::read.csv(file.path(data_dir, f))

# ---- baselines ----------------------------------------------------------------

majority <- function(d, classes) {
  v <- table(factor(d$item, levels = sort(unique(d$item))), factor(d$label, levels = classes))
  classes[max.col(unclass(v), ties.method = "first")]
}

# Textbook Dawid-Skene: one free confusion matrix per annotator (tiny floor
# only against log 0), majority-vote start, 50 EM iterations.
dawid_skene <- function(d, classes, iter = 50) {
  it <- factor(d$item); an <- factor(d$annotator)
  lab <- match(as.character(d$label), classes)
  K <- length(classes); N <- nlevels(it); J <- nlevels(an)
  ii <- as.integer(it); jj <- as.integer(an)
  T <- matrix(0, N, K)
  for (q in seq_along(ii)) T[ii[q], lab[q]] <- T[ii[q], lab[q]] + 1
  T <- T / rowSums(T)
  for (r in seq_len(iter)) {
    rho <- colMeans(T)
    conf <- array(1e-10, c(K, K, J))
    for (l in seq_len(K)) {
      sel <- lab == l
      s <- rowsum(T[ii[sel], , drop = FALSE], jj[sel])
      conf[, l, as.integer(rownames(s))] <- conf[, l, as.integer(rownames(s))] + t(s)
    }
    for (j in seq_len(J)) conf[, , j] <- conf[, , j] / rowSums(conf[, , j])
    lp <- matrix(log(rho), N, K, byrow = TRUE)
    for (k in seq_len(K)) {
      lp[, k] <- lp[, k] + rowsum(log(conf[cbind(k, lab, jj)]), ii)[, 1]
    }
    T <- exp(lp - apply(lp, 1, max))
    T <- T / rowSums(T)
  }
  acc <- vapply(seq_len(J), function(j) sum(rho * diag(conf[, , j])), 0)
  list(label = classes[max.col(T, ties.method = "first")], items = levels(it),
       annotator_accuracy = stats::setNames(acc, levels(an)))
}

true_annotator_accuracy <- function(d, truth) {
  tl <- truth$true_label[match(d$item, truth$item)]
  ok <- !is.na(tl)
  acc <- tapply(as.character(d$label[ok]) == as.character(tl[ok]), d$annotator[ok], mean)
  n <- tapply(ok, d$annotator, sum)
  list(acc = acc, n = n[names(acc)])
}

spearman <- function(est, truth_acc) {
  keep <- names(truth_acc$acc)[truth_acc$n >= 5]
  stats::cor(est[keep], truth_acc$acc[keep], method = "spearman")
}

# ---- class data sets ----------------------------------------------------------------

rows <- list()
ann_rows <- list()
for (nm in c("dog", "face_sentiment", "product", "duck")) {
  d <- rd(sprintf("%s_annotations.csv.gz", nm))
  truth <- rd(sprintf("%s_truth.csv.gz", nm))
  classes <- as.character(sort(unique(d$label)))
  items <- sort(unique(d$item))
  tl <- as.character(truth$true_label[match(items, truth$item)])
  acc <- function(lab) mean(lab == tl, na.rm = TRUE)
  mv <- majority(d, classes)
  ds <- dawid_skene(d, classes)
  t0 <- proc.time()[[3]]
  fit <- consensus_labels(d, verbose = FALSE)
  secs <- proc.time()[[3]] - t0
  ta <- true_annotator_accuracy(d, truth)
  q <- stats::setNames(fit$annotators$quality, fit$annotators$annotator)
  rows[[nm]] <- data.frame(
    data = nm, items = length(items), labels = nrow(d), with_truth = sum(!is.na(tl)),
    majority = acc(mv), dawid_skene = acc(ds$label),
    consensus = acc(as.character(fit$items$consensus_label)),
    spearman_ds = spearman(ds$annotator_accuracy, ta), spearman_consensus = spearman(q, ta),
    annotators_ge5 = sum(ta$n >= 5), seconds = secs, iterations = fit$iterations)
  ann_rows[[nm]] <- data.frame(data = nm, annotator = names(q), quality = q,
                               true_accuracy = as.numeric(ta$acc[names(q)]),
                               n_truth = as.numeric(ta$n[names(q)]))
}
classes_tab <- do.call(rbind, rows)

# ---- emotion (numbers) ----------------------------------------------------------------

d <- rd("emotion_annotations.csv.gz")
truth <- rd("emotion_truth.csv.gz")
fit_e <- consensus_labels(d, type = "numeric", verbose = FALSE)
tv <- truth$true_label[match(fit_e$items$item, truth$item)]
mean_i <- tapply(d$label, d$item, mean)[fit_e$items$item]
med_i <- tapply(d$label, d$item, stats::median)[fit_e$items$item]
fit_eg <- consensus_labels(d, type = "numeric", df = Inf, verbose = FALSE)
emotion_tab <- data.frame(
  estimator = c("per-item mean", "per-item median", "consensus (t, df = 10, default)",
                "consensus (Gaussian, df = Inf)"),
  mae = c(mean(abs(mean_i - tv)), mean(abs(med_i - tv)),
          mean(abs(fit_e$items$consensus_value - tv)), mean(abs(fit_eg$items$consensus_value - tv))),
  coverage_90 = c(NA, NA, mean(tv >= fit_e$items$lower & tv <= fit_e$items$upper),
                  mean(tv >= fit_eg$items$lower & tv <= fit_eg$items$upper)))

# ---- CIFAR-10H (counts, probabilities) ------------------------------------------------

cf <- rd("cifar10h_counts_probs.csv.gz")
counts <- as.matrix(cf[paste0("count", 0:9)])
colnames(counts) <- 0:9
rownames(counts) <- cf$item
probs <- as.matrix(cf[paste0("p", 0:9)])
colnames(probs) <- 0:9
orig <- as.character(cf$original_label)
mv_c <- as.character(0:9)[max.col(counts, ties.method = "first")]
t0 <- proc.time()[[3]]
fit_c <- consensus_labels(counts, format = "counts", verbose = FALSE)
secs_c <- proc.time()[[3]] - t0
t0 <- proc.time()[[3]]
fit_cp <- consensus_labels(counts, probs, format = "counts", verbose = FALSE)
secs_cp <- proc.time()[[3]] - t0
cifar_tab <- data.frame(
  estimator = c("per-image majority", "model argmax", "consensus (counts)",
                "consensus (counts + probabilities)"),
  equal_original = c(mean(mv_c == orig), mean(as.character(0:9)[max.col(probs)] == orig),
                     mean(as.character(fit_c$items$consensus_label) == orig),
                     mean(as.character(fit_cp$items$consensus_label) == orig)),
  seconds = c(NA, NA, secs_c, secs_cp))
tempering_cifar <- fit_cp$tempering

# cleanlab: counts expanded into anonymous annotator slots (the image's
# labels in a random order across columns 1..max count). Annotator identity
# is not published, so its annotator qualities mean nothing here; its
# consensus is comparable.
cl_path <- Sys.getenv("CLEANLAB_SRC", Sys.getenv("PYTHONPATH"))
if (nzchar(cl_path)) {
  set.seed(1)
  M <- max(rowSums(counts))
  wide <- matrix(NA_integer_, nrow(counts), M)
  for (i in seq_len(nrow(counts))) {
    v <- sample(rep(0:9, counts[i, ]))
    wide[i, seq_along(v)] <- v
  }
  colnames(wide) <- paste0("a", seq_len(M))
  f_lab <- tempfile(fileext = ".csv"); f_p <- tempfile(fileext = ".csv"); f_out <- tempfile(fileext = ".csv")
  utils::write.csv(wide, f_lab, row.names = FALSE, na = "")
  utils::write.csv(probs, f_p, row.names = FALSE)
  status <- system2("/usr/bin/python3", c(file.path(here, "cleanlab_multiannotator.py"), f_lab, f_p, f_out),
                    env = paste0("PYTHONPATH=", cl_path))
  if (status == 0 && file.exists(f_out)) {
    cl <- utils::read.csv(f_out)
    cifar_tab <- rbind(cifar_tab, data.frame(
      estimator = "cleanlab 2.9 CROWDLAB (anonymous slots + probabilities)",
      equal_original = mean(as.character(cl$consensus_label) == orig), seconds = cl$seconds[1]))
    # Ranking of doubtful images: how well 1 - quality finds the images whose
    # original label differs from the crowd majority.
    differ <- orig != mv_c
    auc <- function(score, pos) {
      r <- rank(score); n1 <- sum(pos); n0 <- sum(!pos)
      (sum(r[pos]) - n1 * (n1 + 1) / 2) / (n1 * n0)
    }
    cifar_rank <- data.frame(
      method = c("consensus (counts + probabilities)", "cleanlab CROWDLAB"),
      auc_original_ne_majority = c(auc(-fit_cp$items$quality, differ),
                                   auc(-cl$consensus_quality_score, differ)))
  } else {
    message("cleanlab run failed (status ", status, "); its row is skipped")
  }
} else {
  message("cleanlab not found (set PYTHONPATH or CLEANLAB_SRC); its rows are skipped")
}

# ---- output ----------------------------------------------------------------------------

utils::write.csv(classes_tab, file.path(here, "results", "table.csv"), row.names = FALSE)
# Per-annotator estimates are not written: the annotator ids are crowd
# workers' ids from the dev data.
utils::write.csv(emotion_tab, file.path(here, "results", "emotion.csv"), row.names = FALSE)
utils::write.csv(cifar_tab, file.path(here, "results", "cifar10h.csv"), row.names = FALSE)
print(classes_tab, digits = 4, row.names = FALSE)
print(emotion_tab, digits = 4, row.names = FALSE)
print(cifar_tab, digits = 5, row.names = FALSE)
if (exists("cifar_rank")) print(cifar_rank, digits = 4, row.names = FALSE)
cat(sprintf("CIFAR-10H tempering exponent of the model: %.3f\n", tempering_cifar))
