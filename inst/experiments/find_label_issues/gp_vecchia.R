# find_label_issues()'s GP path through the covariance operator: Vecchia at
# n = 5 x 10^4 and dense against Vecchia on a 5,000-row subset of the same
# smooth simulated case. One configuration per process (peak memory is the
# process's VmHWM):
#   OPENBLAS_NUM_THREADS=1 Rscript inst/experiments/find_label_issues/gp_vecchia.R <n> <dense|vecchia>
# Prints one CSV line: n, backend, seconds, peak_mb, auroc, auroc on the
# first 5,000 rows.
args <- commandArgs(TRUE)
n <- as.integer(args[1])
backend <- args[2]
library(noisylabels)
set.seed(1)
n_all <- 50000L
x1 <- runif(n_all); x2 <- runif(n_all)
f <- sin(2 * pi * x1) + 0.5 * cos(3 * pi * x2)
y <- f + rnorm(n_all, sd = 0.1)
wrong <- seq_len(n_all) %in% sample.int(n_all, n_all / 20)
y[wrong] <- y[wrong] + sample(c(-1, 1), sum(wrong), TRUE) * runif(sum(wrong), 0.5, 1.5)
data <- data.frame(y = y, x1 = x1, x2 = x2)[seq_len(n), ]
truth <- wrong[seq_len(n)]
# dense up to n here; Vecchia otherwise (the default switches above 5,000 rows)
options(noisylabels.gp_loo_dense_max = if (backend == "dense") n else 0L)
set.seed(2)
t <- system.time(res <- find_label_issues(y ~ ., data, method = "gp", verbose = FALSE))[["elapsed"]]
peak <- as.numeric(sub("kB", "", grep("VmHWM", readLines("/proc/self/status"), value = TRUE)
                       |> sub(pattern = "VmHWM:\\s*", replacement = ""))) / 1024
score <- noise_scores(res)
auc <- detection_metrics(score, truth)$auc
sub5 <- seq_len(min(n, 5000L))
auc5 <- detection_metrics(score[sub5], truth[sub5])$auc
cat(sprintf("%d,%s,%.1f,%.0f,%.4f,%.4f\n", n, backend, t, peak, auc, auc5))
cat(res$method, "\n")
