# gpr_loo(kernel_fit = "uniform") against the joint fit (the paper's) and
# the Basic (uniform-noise) model, and both fits with the penalty
# lambda = "auto" (exponential prior on each variance whose mean is the mean
# variance of the unpenalised fit): MAE of the fitted mean against f and AUC
# of the noise scores, on Fig. 2's example 1 under both readings of its noise
# (see fig2_draws.R) and on the 2-D function with 300 labels, 15% corrupted.
# Writes results/kernel_fit.csv and prints the paired comparison.
#   OPENBLAS_NUM_THREADS=1 Rscript inst/experiments/gpr_loo/kernel_fit.R [draws 1-D] [draws 2-D] [out dir]
suppressPackageStartupMessages(library(noisylabels))
args <- commandArgs(TRUE)
draws <- if (length(args) >= 1) as.integer(args[1]) else 50L
draws_2d <- if (length(args) >= 2) as.integer(args[2]) else 10L
out_dir <- if (length(args) >= 3) args[3] else "inst/experiments/gpr_loo/results"
f2d <- function(x) sin(2 * x[, 1]) * cos(2 * x[, 2]) + 0.5 * x[, 1]

one_draw <- function(seed, case) {
  set.seed(seed)
  if (case == "2-D") {
    x <- matrix(stats::runif(600, -2, 2), ncol = 2)
    cl <- corrupt_labels(f2d(x) + stats::rnorm(300, 0, 0.05), rate = 0.15, level = 1)
    y <- cl$y; f <- f2d(x); bad <- cl$corrupted; restarts <- 2
  } else {
    d <- if (case == "example 1, variance") sim_tang1d() else sim_tang1d(noise_var = 0.05^2, corrupt_var = 0.75^2)
    x <- as.matrix(d$data["x"]); y <- d$data$y; f <- d$f; bad <- d$corrupted; restarts <- 5
  }
  fits <- list(joint = gpr_loo(x, y, restarts = restarts),
               uniform = gpr_loo(x, y, kernel_fit = "uniform", restarts = restarts),
               basic = gpr_loo(x, y, noise = "uniform", restarts = restarts),
               auto = gpr_loo(x, y, kernel_fit = "uniform", penalty = "lp", lambda = "auto",
                              restarts = restarts),
               joint_auto = gpr_loo(x, y, penalty = "lp", lambda = "auto", restarts = restarts))
  do.call(rbind, lapply(names(fits), function(m) {
    li <- label_issues(fits[[m]])
    data.frame(case = case, seed = seed, model = m, mae = mean(abs(fitted(fits[[m]]) - f)),
               auc = if (m == "basic") NA else detection_metrics(noise_scores(fits[[m]]), bad)$auc,
               flagged = sum(li$flagged), flagged_correct = sum(li$flagged & li$row %in% bad))
  }))
}
res <- suppressWarnings(do.call(rbind, c(
  lapply(c("example 1, variance", "example 1, sd"), function(case)
    do.call(rbind, lapply(seq_len(draws), one_draw, case = case))),
  list(do.call(rbind, lapply(seq_len(draws_2d), one_draw, case = "2-D"))))))
utils::write.csv(res, file.path(out_dir, "kernel_fit.csv"), row.names = FALSE)

for (case in unique(res$case)) {
  r <- res[res$case == case, ]
  w <- reshape(r[c("seed", "model", "mae", "auc")], idvar = "seed", timevar = "model", direction = "wide")
  d_u <- w$mae.uniform - w$mae.basic
  d_j <- w$mae.uniform - w$mae.joint
  cat(sprintf(paste0("%s (%d draws): MAE joint %.4f, uniform %.4f, basic %.4f; uniform - basic %+.4f (se %.4f, ",
                     "better in %d); uniform - joint %+.4f (se %.4f, better in %d); AUC joint %.3f, uniform %.3f\n"),
              case, nrow(w), mean(w$mae.joint), mean(w$mae.uniform), mean(w$mae.basic),
              mean(d_u), sd(d_u) / sqrt(nrow(w)), sum(d_u < 0), mean(d_j), sd(d_j) / sqrt(nrow(w)), sum(d_j < 0),
              mean(w$auc.joint), mean(w$auc.uniform)))
  d_a <- w$mae.auto - w$mae.basic
  d_au <- w$mae.auto - w$mae.uniform
  cat(sprintf(paste0("  uniform + auto penalty: MAE %.4f, minus basic %+.4f (se %.4f, better in %d), ",
                     "minus uniform %+.4f (se %.4f, better in %d); AUC %.3f\n"),
              mean(w$mae.auto), mean(d_a), sd(d_a) / sqrt(nrow(w)), sum(d_a < 0),
              mean(d_au), sd(d_au) / sqrt(nrow(w)), sum(d_au < 0), mean(w$auc.auto)))
  d_ja <- w$mae.joint_auto - w$mae.basic
  cat(sprintf("  joint + auto penalty: MAE %.4f, minus basic %+.4f (se %.4f, better in %d); AUC %.3f\n",
              mean(w$mae.joint_auto), mean(d_ja), sd(d_ja) / sqrt(nrow(w)), sum(d_ja < 0),
              mean(w$auc.joint_auto)))
}
