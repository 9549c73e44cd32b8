# Vecchia against dense gpr_loo() at n = 3,000 (issue 20): Friedman-5 with
# 10% corrupted labels (the generator of scaling.R), 2,000 test inputs.
# Reports each default fit's time, noise-score AUC and test RMSE against f,
# and the ratios Vecchia / dense.
# Usage: Rscript inst/bench/gpr_loo_vecchia/n3000.R [n] [threads] [save.rds]
suppressPackageStartupMessages(library(noisylabels))
args <- commandArgs(TRUE)
n <- if (length(args) >= 1) as.integer(args[1]) else 3000L
threads <- if (length(args) >= 2) as.integer(args[2]) else 1L
save_to <- if (length(args) >= 3) args[3] else ""
set.seed(1)
friedman5 <- function(n, d = 5) {
  x <- matrix(stats::runif(n * d), n)
  list(x = x, f = 10 * sin(pi * x[, 1] * x[, 2]) + 20 * (x[, 3] - 0.5)^2 + 10 * x[, 4] + 5 * x[, 5])
}
tr <- friedman5(n)
te <- friedman5(2000)
bad <- sample(n, round(n / 10))
y <- tr$f + stats::rnorm(n)
y[bad] <- y[bad] + sample(c(-1, 1), length(bad), TRUE) * stats::runif(length(bad), 5, 15)
options(noisylabels.threads = threads)
one <- function(approx) {
  set.seed(2)
  tm <- system.time(fit <- suppressWarnings(gpr_loo(tr$x, y, approx = approx)))[["elapsed"]]
  tp <- system.time(p <- predict(fit, te$x))[["elapsed"]]
  list(fit = fit, row = data.frame(approx = approx, seconds = tm, predict_seconds = tp,
                                   evaluations = fit$factorizations,
                                   auc = detection_metrics(noise_scores(fit), bad)$auc,
                                   rmse = sqrt(mean((p - te$f)^2))))
}
v <- one("vecchia")
d <- one("dense")
res <- rbind(v$row, d$row)
print(res, digits = 4, row.names = FALSE)
cat(sprintf("AUC difference (dense - vecchia): %.4f; RMSE ratio vecchia / dense: %.3f; time ratio: %.3f\n",
            d$row$auc - v$row$auc, v$row$rmse / d$row$rmse, v$row$seconds / d$row$seconds))
if (nzchar(save_to)) saveRDS(list(vecchia = v$fit, dense = d$fit, te = te, bad = bad), save_to)
