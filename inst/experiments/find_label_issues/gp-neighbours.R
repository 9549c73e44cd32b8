# Exact against Vecchia leave-one-out GP on the telomere table (all 10^4 rows),
# one hyperparameter fit shared by every backend (issue 43):
#   OPENBLAS_NUM_THREADS=1 Rscript inst/experiments/find_label_issues/gp-neighbours.R 40 60 100 150 250
# Prints backend, neighbours, seconds, AUPRC of |LOO residual| / LOO sd, and
# the correlation of the Vecchia LOO means with the exact ones.
suppressMessages(library(noisylabels))
ns <- asNamespace("noisylabels")
dd <- Sys.getenv("FLI_DATA", "/work/shared/data/real-label-errors")
d <- read.csv(file.path(dd, "telomere_ts.csv"), check.names = FALSE)[, -1]
x <- as.matrix(d[, setdiff(names(d), c("true_error", "true_label", "given_label"))])
y <- d$given_label
err <- d$true_error == 1
ap <- function(s, e) { o <- order(-s); e <- e[o]; sum(cumsum(e)[e] / which(e)) / sum(e) }
set.seed(1)
t0 <- proc.time()[[3]]
g <- ns$gp_loo_oof(x, y, subsample = 2000, approx = "dense", threads = 2)
cat("dense", proc.time()[[3]] - t0, ap(abs(y - g$mean) / g$sd, err), "\n")
for (m in as.integer(commandArgs(TRUE))) {
  options(noisylabels.gp_loo_neighbors = m)
  set.seed(2)
  t0 <- proc.time()[[3]]
  v <- ns$gp_loo_oof(x, y, approx = "vecchia", threads = 2, hyper = g$hyper)
  cat("vecchia", m, proc.time()[[3]] - t0, ap(abs(y - v$mean) / v$sd, err), cor(v$mean, g$mean), "\n")
}
