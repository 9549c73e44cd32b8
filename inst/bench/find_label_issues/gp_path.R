# find_label_issues(y ~ ., data) on a smooth 5-input case at n = 10^5: the GP
# path through the Vecchia operator, against the exact dense GP on a
# 10^4-row subset of the same data, scored the same way. One configuration
# per process (peak memory is the process's VmHWM):
#   OPENBLAS_NUM_THREADS=1 nice -n 5 Rscript inst/bench/find_label_issues/gp_path.R <n> <auto|gp|dense> [rows]
# `rows`: fit on the first `rows` rows only (the dense reference: 10000).
# Prints one CSV line: n_fit, method, seconds, peak_mb, auroc, auroc on the
# first 10^4 rows; then the path the fit took (and, for auto, why).
args <- commandArgs(TRUE)
n_all <- as.integer(args[1])
how <- args[2]
rows <- if (length(args) >= 3) as.integer(args[3]) else n_all
suppressPackageStartupMessages(library(noisylabels))
set.seed(1)
x <- matrix(runif(n_all * 5), n_all, 5, dimnames = list(NULL, paste0("x", 1:5)))
# Smooth in two inputs, a weak linear trend in a third, two irrelevant ones;
# noise sd 0.1, 5% of the labels shifted by 1-6 noise sds.
f <- sin(2 * pi * x[, 1]) + 0.5 * cos(3 * pi * x[, 2]) + 0.3 * x[, 3]
y <- f + rnorm(n_all, sd = 0.1)
wrong <- seq_len(n_all) %in% sample.int(n_all, n_all / 20)
y[wrong] <- y[wrong] + sample(c(-1, 1), sum(wrong), TRUE) * runif(sum(wrong), 0.1, 0.6)
data <- data.frame(y = y, x)[seq_len(rows), ]
truth <- wrong[seq_len(rows)]
method <- if (how == "dense") "gp" else how
if (how == "dense") options(noisylabels.gp_loo_dense_max = rows, noisylabels.max_gb = 16)
set.seed(2)
t <- system.time(res <- find_label_issues(y ~ ., data, method = method, verbose = FALSE))[["elapsed"]]
peak <- as.numeric(gsub("[^0-9]", "", grep("VmHWM", readLines("/proc/self/status"), value = TRUE))) / 1024
score <- noise_scores(res)
auc <- detection_metrics(score, truth)$auc
sub <- seq_len(min(rows, 10000L))
auc_sub <- detection_metrics(score[sub], truth[sub])$auc
cat(sprintf("%d,%s,%.1f,%.0f,%.4f,%.4f\n", rows, how, t, peak, auc, auc_sub))
cat(res$method, "\n")
if (!is.null(res$model_choice)) print(res$model_choice)
