# The forest path of find_label_issues() on a 10-input tabular regression
# case: time, peak memory and detection quality of the out-of-fold forest
# for settings of trees, leaf size and sample fraction. One setting per
# process (peak memory is the process's VmHWM):
#   nice -n 5 Rscript inst/bench/find_label_issues/forest.R <n> <trees> <min_node|default> <sample_fraction> <threads> [default]
# With "default" as the sixth argument the call is find_label_issues(y ~ .,
# data, method = "forest") with the package's defaults (the other settings
# are ignored; `threads` is passed); with "auto" it is the user's call,
# find_label_issues(y ~ ., data) (method = "auto": the measured choice
# between GP and forest on a subsample, then the winner on all rows), with
# its progress bar on stderr. Prints one CSV line: n, trees,
# min_node, sample_fraction, threads, seconds, CPU seconds (ranger's threads
# included), peak_mb, auroc, precision at 95% recall.
args <- commandArgs(TRUE)
n <- as.numeric(args[1])
trees <- as.integer(args[2])
node <- if (args[3] == "default") NULL else as.integer(args[3])
frac <- as.numeric(args[4])
threads <- as.integer(args[5])
use_default <- length(args) >= 6 && args[6] %in% c("default", "auto")
method <- if (use_default && args[6] == "auto") "auto" else "forest"
suppressPackageStartupMessages(library(noisylabels))
set.seed(1)
# Friedman's first function on five inputs, five noise inputs of mixed
# kinds; noise sd 1; 5% of the labels shifted by 3-9 noise sds.
x <- cbind(matrix(runif(n * 5), n, 5), matrix(rnorm(n * 3), n, 3),
           matrix(rbinom(n * 2, 1, 0.3), n, 2))
colnames(x) <- paste0("x", 1:10)
f <- 10 * sin(pi * x[, 1] * x[, 2]) + 20 * (x[, 3] - 0.5)^2 + 10 * x[, 4] + 5 * x[, 5]
y <- f + rnorm(n)
wrong <- seq_len(n) %in% sample.int(n, n / 20)
y[wrong] <- y[wrong] + sample(c(-1, 1), sum(wrong), TRUE) * runif(sum(wrong), 3, 9)
set.seed(2)
if (use_default) {
  data <- data.frame(y = y, x)
  tm <- system.time(res <- find_label_issues(y ~ ., data, method = method, threads = threads,
                                             verbose = method == "auto"))
  score <- noise_scores(res)
  cat(res$method, "\n")
} else {
  tm <- system.time(oof <- noisylabels:::forest_oof(x, y, folds = 5, threads = threads, verbose = FALSE,
                                                     min_node_size = node, num_trees = trees,
                                                     sample_fraction = frac))
  score <- abs(y - oof$mean)
}
peak <- as.numeric(gsub("[^0-9]", "", grep("VmHWM", readLines("/proc/self/status"), value = TRUE))) / 1024
m <- detection_metrics(score, wrong)
cat(sprintf("%g,%d,%s,%g,%d,%.1f,%.1f,%.0f,%.4f,%.4f\n", n, trees, if (is.null(node)) "sqrt(n)" else node,
            frac, threads, tm[["elapsed"]], tm[["user.self"]] + tm[["sys.self"]] + tm[["user.child"]],
            peak, m$auc, m$precision_at_95))
