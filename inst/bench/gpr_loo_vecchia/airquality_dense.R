# Dense default gpr_loo() on 1,000 rows of the air-quality table with real
# recorded label errors (factors as dummies, inputs scaled: 17 columns).
# Usage: Rscript inst/bench/gpr_loo_vecchia/airquality_dense.R [path/to/airquality_co.csv]
suppressPackageStartupMessages(library(noisylabels))
args <- commandArgs(TRUE)
path <- if (length(args)) args[1] else "../shared/data/real-label-errors/airquality_co.csv"
if (!file.exists(path)) {
  message("airquality_co.csv not found at ", path, ": skipped")
  quit(save = "no")
}
d <- utils::read.csv(path, check.names = FALSE)[, -1]
d <- d[seq_len(1000), ]
truth <- d$true_error == 1
y <- d$given_label
feat <- d[, setdiff(names(d), c("true_error", "true_label", "given_label"))]
x <- scale(stats::model.matrix(~ . - 1, data = feat))
x <- x[, apply(x, 2, function(v) all(is.finite(v)))]
cat(sprintf("n = %d, %d columns, %d wrong labels\n", nrow(x), ncol(x), sum(truth)))
set.seed(1)
tm <- system.time(fit <- gpr_loo(x, y, approx = "dense"))[["elapsed"]]
# Average precision (area under the precision-recall curve).
auprc <- function(s, t) {
  o <- order(-s)
  mean((cumsum(t[o]) / seq_along(o))[t[o]])
}
sc <- noise_scores(fit)
cat(sprintf("gpr_loo dense default: %.1f s, %d factorisations, %d rounds, AUROC %.3f, AUPRC %.3f\n",
            tm, fit$factorizations, fit$outer_iterations, detection_metrics(sc, truth)$auc,
            auprc(sc, truth)))
# The rule before version 0.2.0 in the same run: every restart to the end,
# every round's sweeps to tol_sweep.
set.seed(1)
tm0 <- system.time(old <- gpr_loo(x, y, approx = "dense",
                                  control = gpr_loo_control(screen_rounds = 0, adaptive_sweeps = FALSE)))[["elapsed"]]
so <- noise_scores(old)
cat(sprintf("previous rule:         %.1f s, %d factorisations, %d rounds, AUROC %.3f, AUPRC %.3f\n",
            tm0, old$factorizations, old$outer_iterations, detection_metrics(so, truth)$auc, auprc(so, truth)))
cat(sprintf("time ratio new / previous: %.2f\n", tm / tm0))
