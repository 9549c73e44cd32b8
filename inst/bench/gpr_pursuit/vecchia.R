# gpr_pursuit() default (approx = "auto": Vecchia above 2,000 labels) on the
# data of the gpr_loo Vecchia benchmark: Friedman-5, d = 5, 10% of the labels
# shifted by +-U(5, 15). Fit time (elapsed and CPU), noise-score AUC,
# precision and recall of the flagged support, Vecchia passes.
# Usage: Rscript inst/bench/gpr_pursuit/vecchia.R [n ...] (default 20000)
suppressPackageStartupMessages(library(noisylabels))
args <- as.numeric(commandArgs(TRUE))
ns <- if (length(args)) args else 2e4
threads <- getOption("noisylabels.threads", 1L)
cat("n,approx,neighbors,threads,elapsed_s,cpu_s,auc,flagged,precision,recall,passes,converged,selected_size\n")
for (n in ns) {
  set.seed(1)
  d <- 5
  x <- matrix(stats::runif(n * d), n)
  f <- 10 * sin(pi * x[, 1] * x[, 2]) + 20 * (x[, 3] - 0.5)^2 + 10 * x[, 4] + 5 * x[, 5]
  bad <- sample(n, round(n / 10))
  y <- f + stats::rnorm(n)
  y[bad] <- y[bad] + sample(c(-1, 1), length(bad), TRUE) * stats::runif(length(bad), 5, 15)
  up0 <- system("uptime", intern = TRUE)
  tm <- system.time(fit <- suppressWarnings(gpr_pursuit(x, y)))
  auc <- detection_metrics(noise_scores(fit), bad)$auc
  flag <- fit$support
  cat(sprintf("%d,%s,%s,%d,%.1f,%.1f,%.4f,%d,%.3f,%.3f,%d,%s,%d\n", as.integer(n), fit$approx,
              fit$neighbors, fit$threads, tm[["elapsed"]], tm[["user.self"]] + tm[["sys.self"]],
              auc, length(flag), mean(flag %in% bad), mean(bad %in% flag),
              as.integer(fit$factorizations), fit$converged, fit$trace$size[fit$selected]))
  cat("# uptime before:", up0, "\n# uptime after: ", system("uptime", intern = TRUE), "\n")
  print(fit$trace[, c("stage", "size", "loglik", "score", "iterations", "evaluations", "converged")])
}
