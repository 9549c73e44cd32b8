# Can the l1 penalty's lambda be chosen from the noisy labels alone?
# Companion of penalty_draws.R (which scores each lambda against the clean f):
# here lambda in {0, 1, 3, 6, 10, 20} is chosen per draw by cv_gpr_loo()
# (6-fold cross-validation of the mean absolute error on held-out noisy
# labels, 3 restarts per fold fit), the Full model refitted on all labels with
# that lambda (5 restarts) and compared with the Basic model on Fig. 2
# example 1.
#
# Usage (package root): OPENBLAS_NUM_THREADS=1 Rscript inst/experiments/gpr_loo/penalty_cv.R [variance|sd] [draws] [folds]
# folds = 0 means leave-one-out (24 folds). About a minute per reading at 50
# draws and 6 folds. Prints the lambda chosen per draw, the mean MAEs and the
# paired difference Full - Basic with its standard error over draws.
suppressPackageStartupMessages(library(noisylabels))
args <- commandArgs(TRUE)
reading <- if (length(args) >= 1) args[1] else "variance"
draws <- if (length(args) >= 2) as.integer(args[2]) else 50L
folds <- if (length(args) >= 3) as.integer(args[3]) else 6L
lambdas <- c(0, 1, 3, 6, 10, 20)

res <- do.call(rbind, lapply(seq_len(draws), function(seed) {
  set.seed(seed)
  d <- if (reading == "variance") sim_tang1d() else sim_tang1d(noise_var = 0.05^2, corrupt_var = 0.75^2)
  x <- cbind(x = d$data$x)
  y <- d$data$y
  cv <- cv_gpr_loo(x, y, lambda = lambdas, folds = if (folds == 0) length(y) else folds, restarts = 3)
  l <- cv$best
  m <- suppressWarnings(if (l == 0) gpr_loo(x, y, restarts = 5) else gpr_loo(x, y, restarts = 5, penalty = "lp", lambda = l, p = 1))
  b <- suppressWarnings(gpr_loo(x, y, restarts = 5, noise = "uniform"))
  data.frame(seed = seed, lambda = l, mae_full = mean(abs(fitted(m) - d$f)),
             mae_basic = mean(abs(fitted(b) - d$f)))
}))
cat("lambda chosen (count of draws):\n")
print(table(res$lambda))
cat(sprintf("%s reading, %d draws: MAE Full with CV lambda %.4f, Basic %.4f; Full lower in %.0f%% of draws\n",
            reading, nrow(res), mean(res$mae_full), mean(res$mae_basic), 100 * mean(res$mae_full < res$mae_basic)))
diff <- res$mae_full - res$mae_basic
cat(sprintf("paired Full - Basic: %.4f (se %.4f)\n", mean(diff), stats::sd(diff) / sqrt(length(diff))))
