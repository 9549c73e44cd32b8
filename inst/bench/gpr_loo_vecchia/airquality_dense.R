# Dense default gpr_loo() on 1,000 rows of the air-quality table with real
# recorded label errors (factors as dummies, inputs scaled: 17 columns),
# against the rule before version 0.2.0 (every restart run to the end, every
# round's sweeps to tol_sweep) in the same run.
# Usage: Rscript inst/bench/gpr_loo_vecchia/airquality_dense.R [path/to/airquality_co.csv] [blocks]
# `blocks` (default 1): how many consecutive blocks of 1,000 rows (rows
# 1-1000, 1001-2000, ...) to run; with 34 wrong labels per block an AUROC has
# a standard error near 0.05, so more blocks give the comparison weight.
suppressPackageStartupMessages(library(noisylabels))
args <- commandArgs(TRUE)
path <- if (length(args)) args[1] else "../shared/data/real-label-errors/airquality_co.csv"
blocks <- if (length(args) >= 2) as.integer(args[2]) else 1L
if (!file.exists(path)) {
  message("airquality_co.csv not found at ", path, ": skipped")
  quit(save = "no")
}
all <- utils::read.csv(path, check.names = FALSE)[, -1]
# Average precision (area under the precision-recall curve).
auprc <- function(s, t) {
  o <- order(-s)
  mean((cumsum(t[o]) / seq_along(o))[t[o]])
}
res <- NULL
for (b in seq_len(blocks)) {
  d <- all[(b - 1) * 1000 + seq_len(1000), ]
  truth <- d$true_error == 1
  y <- d$given_label
  feat <- d[, setdiff(names(d), c("true_error", "true_label", "given_label"))]
  x <- scale(stats::model.matrix(~ . - 1, data = feat))
  x <- x[, apply(x, 2, function(v) all(is.finite(v)))]
  cat(sprintf("block %d: n = %d, %d columns, %d wrong labels\n", b, nrow(x), ncol(x), sum(truth)))
  set.seed(1)
  tm <- system.time(fit <- suppressWarnings(gpr_loo(x, y, approx = "dense")))[["elapsed"]]
  sc <- noise_scores(fit)
  cat(sprintf("gpr_loo dense default: %.1f s, %d factorisations, %d rounds, AUROC %.3f, AUPRC %.3f\n",
              tm, fit$factorizations, fit$outer_iterations, detection_metrics(sc, truth)$auc,
              auprc(sc, truth)))
  set.seed(1)
  tm0 <- system.time(old <- suppressWarnings(
    gpr_loo(x, y, approx = "dense", control = gpr_loo_control(screen_rounds = 0, adaptive_sweeps = FALSE))
  ))[["elapsed"]]
  so <- noise_scores(old)
  cat(sprintf("previous rule:         %.1f s, %d factorisations, %d rounds, AUROC %.3f, AUPRC %.3f\n",
              tm0, old$factorizations, old$outer_iterations, detection_metrics(so, truth)$auc,
              auprc(so, truth)))
  cat(sprintf("time ratio new / previous: %.2f\n", tm / tm0))
  res <- rbind(res, data.frame(block = b, seconds = tm, seconds_previous = tm0,
                               auroc = detection_metrics(sc, truth)$auc,
                               auroc_previous = detection_metrics(so, truth)$auc,
                               auprc = auprc(sc, truth), auprc_previous = auprc(so, truth)))
}
if (blocks > 1) {
  print(res, digits = 3, row.names = FALSE)
  cat(sprintf("mean over %d blocks: time %.1f s vs %.1f s (ratio %.2f); AUROC %.3f vs %.3f; AUPRC %.3f vs %.3f\n",
              blocks, mean(res$seconds), mean(res$seconds_previous),
              mean(res$seconds) / mean(res$seconds_previous), mean(res$auroc), mean(res$auroc_previous),
              mean(res$auprc), mean(res$auprc_previous)))
}
