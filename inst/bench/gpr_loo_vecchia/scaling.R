# gpr_loo() default (approx = "auto", which is Vecchia at these sizes) on
# Friedman-5 with 10% corrupted labels: fit time, peak memory and noise-score
# AUC for n = 10^4 .. 10^5, and the log-log slope of time in n.
# Each n runs in its own R process so that peak memory (VmHWM) is its own.
# Usage: Rscript inst/bench/gpr_loo_vecchia/scaling.R [threads] [n ...]
args <- commandArgs(TRUE)
if (length(args) >= 2 && args[1] == "--one") {
  suppressPackageStartupMessages(library(noisylabels))
  n <- as.numeric(args[2]); threads <- as.integer(args[3])
  set.seed(1)
  d <- 5
  x <- matrix(stats::runif(n * d), n)
  f <- 10 * sin(pi * x[, 1] * x[, 2]) + 20 * (x[, 3] - 0.5)^2 + 10 * x[, 4] + 5 * x[, 5]
  bad <- sample(n, round(n / 10))
  y <- f + stats::rnorm(n)
  y[bad] <- y[bad] + sample(c(-1, 1), length(bad), TRUE) * stats::runif(length(bad), 5, 15)
  options(noisylabels.threads = threads)
  tm <- system.time(fit <- gpr_loo(x, y))[["elapsed"]]
  hwm <- grep("VmHWM", readLines("/proc/self/status"), value = TRUE)
  kb <- as.numeric(gsub("[^0-9]", "", hwm))
  cat(sprintf("%d,%s,%.1f,%.2f,%.4f,%d,%s\n", as.integer(n), fit$approx, tm, kb / 2^20,
              detection_metrics(noise_scores(fit), bad)$auc, fit$factorizations, fit$converged))
  quit(save = "no")
}
threads <- if (length(args)) as.integer(args[1]) else 2L
ns <- if (length(args) > 1) as.numeric(args[-1]) else c(1e4, 3e4, 1e5)
rscript <- file.path(R.home("bin"), "Rscript")
me <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
cat("n,approx,seconds,peak_gb,auc,passes,converged\n")
res <- lapply(ns, function(n) {
  out <- system2(rscript, c(me, "--one", n, threads), stdout = TRUE)
  cat(out, sep = "\n")
  utils::read.csv(text = out, header = FALSE)
})
res <- do.call(rbind, res)
if (nrow(res) >= 2) {
  slope <- stats::coef(stats::lm(log(res[[3]]) ~ log(res[[1]])))[2]
  cat(sprintf("log-log slope of fit time in n: %.2f\n", slope))
}
