# The flag rule of label_issues.gpr_loo(): the clean noise level s0 measured
# with every variance floored at s0 (current) against the level measured from
# the fitted model's own LOO residuals (before 2026-11-24), on four
# simulated settings with known corrupted labels. Prints, per setting, the
# mean over seeds of: s0 / true clean variance (median), labels flagged,
# false flags, and recall of the corrupted labels. alpha = 0.01 (default).
# Usage: OPENBLAS_NUM_THREADS=1 Rscript inst/experiments/gpr_loo/flag_rule.R [seeds]
suppressPackageStartupMessages(library(noisylabels))
args <- commandArgs(TRUE)
seeds <- if (length(args)) seq_len(as.integer(args[1])) else 1:10
q <- qchisq(0.99, 1)

# The previous rule: s0 from the fitted model's own LOO residuals, flags
# e^2 > q (v + s0) with the same residuals.
old_level <- function(e2, v) {
  g <- function(s0) median(e2 / (v + s0)) - qchisq(0.5, 1)
  if (g(0) <= 0) return(0)
  hi <- max(median(e2), 1e-12)
  while (g(hi) > 0) hi <- hi * 2
  uniroot(g, c(0, hi), tol = 1e-10 * hi)$root
}

settings <- list(
  "2-D, n = 40, 3 outliers (+3)" = function() {
    n <- 40; x <- matrix(runif(2 * n), n)
    y <- sin(4 * x[, 1]) + x[, 2] + rnorm(n, sd = 0.1); y[1:3] <- y[1:3] + 3
    list(x = x, y = y, bad = seq_len(n) <= 3, clean_var = 0.01)
  },
  "2-D, n = 200, 15%, level 1" = function() {
    f2 <- function(x) sin(2 * x[, 1]) * cos(2 * x[, 2]) + 0.5 * x[, 1]
    n <- 200; x <- matrix(runif(2 * n, -2, 2), n)
    cl <- corrupt_labels(f2(x) + rnorm(n, 0, 0.05), rate = 0.15, level = 1)
    list(x = x, y = cl$y, bad = cl$is_corrupted, clean_var = 0.05^2)
  },
  "1-D, n = 300, 10%, level 1" = function() {
    n <- 300; x <- matrix(runif(n, -3, 3))
    cl <- corrupt_labels(sin(2 * x[, 1]) + rnorm(n, sd = 0.2), rate = 0.1, level = 1)
    list(x = x, y = cl$y, bad = cl$is_corrupted, clean_var = 0.04)
  },
  "1-D, n = 300, clean" = function() {
    n <- 300; x <- matrix(runif(n, -3, 3))
    list(x = x, y = sin(2 * x[, 1]) + rnorm(n, sd = 0.2), bad = rep(FALSE, n), clean_var = 0.04)
  },
  "sim_tang1d() (10 of 24)" = function() {
    d <- sim_tang1d()
    list(x = as.matrix(d$data["x"]), y = d$data$y, bad = d$is_corrupted, clean_var = 0.05)
  })

rows <- list()
for (nm in names(settings)) for (seed in seeds) {
  set.seed(seed)
  d <- settings[[nm]]()
  fit <- gpr_loo(d$x, d$y, restarts = 2)
  s_old <- old_level(fit$loo_residual^2, fit$loo_sd^2)
  f_old <- fit$loo_residual^2 > q * (fit$loo_sd^2 + s_old)
  f_new <- label_issues(fit)
  f_new <- f_new$flagged[order(f_new$row)]
  for (rule in c("previous", "floored")) {
    f <- if (rule == "previous") f_old else f_new
    rows[[length(rows) + 1]] <- data.frame(
      setting = nm, seed = seed, rule = rule,
      level_ratio = (if (rule == "previous") s_old else fit$noise_level) / d$clean_var,
      flagged = sum(f), false_flags = sum(f & !d$bad),
      recall = if (any(d$bad)) mean(f[d$bad]) else NA_real_)
  }
}
res <- do.call(rbind, rows)
agg <- aggregate(cbind(flagged, false_flags, recall) ~ setting + rule, res, mean, na.action = na.pass)
agg$median_level_ratio <- aggregate(level_ratio ~ setting + rule, res, median)$level_ratio
agg <- agg[order(agg$setting, agg$rule), ]
cat(sprintf("%d seeds per setting; mean over seeds (recall: share of corrupted labels flagged)\n", length(seeds)))
print(agg, row.names = FALSE, digits = 3)
