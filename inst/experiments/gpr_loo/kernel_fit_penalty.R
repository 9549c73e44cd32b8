# The two-stage fit (gpr_loo(kernel_fit = "uniform"): Basic's kernel kept
# fixed) with the l1 penalty of eq. 17, on Fig. 2's example 1 under both
# readings of its noise: fixed lambda in {0, 1, 3, 6, 10} and lambda chosen by
# 6-fold cross-validation on the noisy labels (cv_gpr_loo()). MAE of the
# fitted mean against f, paired with the Basic (uniform-noise) model.
# Writes results/kernel_fit_penalty.csv.
#   OPENBLAS_NUM_THREADS=1 Rscript inst/experiments/gpr_loo/kernel_fit_penalty.R [draws] [out dir]
suppressPackageStartupMessages(library(noisylabels))
args <- commandArgs(TRUE)
draws <- if (length(args) >= 1) as.integer(args[1]) else 50L
out_dir <- if (length(args) >= 2) args[2] else "inst/experiments/gpr_loo/results"

one_draw <- function(seed, reading) {
  set.seed(seed)
  d <- if (reading == "variance") sim_tang1d() else sim_tang1d(noise_var = 0.05^2, corrupt_var = 0.75^2)
  x <- as.matrix(d$data["x"]); y <- d$data$y
  basic <- gpr_loo(x, y, noise = "uniform", restarts = 5)
  mae <- function(f) mean(abs(fitted(f) - d$f))
  out <- data.frame(reading = reading, seed = seed, model = "basic", lambda = NA, mae = mae(basic))
  for (lam in c(0, 1, 3, 6, 10)) {
    f <- gpr_loo(x, y, kernel = basic$kernel, learn_kernel = FALSE, restarts = 5,
                 penalty = if (lam > 0) "lp" else "none", lambda = lam)
    out <- rbind(out, data.frame(reading = reading, seed = seed, model = "two-stage", lambda = lam, mae = mae(f)))
  }
  set.seed(seed + 1000)
  cv <- cv_gpr_loo(x, y, folds = 6, kernel = basic$kernel, learn_kernel = FALSE, restarts = 5)
  rbind(out, data.frame(reading = reading, seed = seed, model = "two-stage, CV", lambda = cv$best,
                        mae = mae(cv$fit)))
}
res <- suppressWarnings(do.call(rbind, lapply(c("variance", "sd"), function(r)
  do.call(rbind, lapply(seq_len(draws), one_draw, reading = r)))))
utils::write.csv(res, file.path(out_dir, "kernel_fit_penalty.csv"), row.names = FALSE)

for (r in unique(res$reading)) {
  b <- res[res$reading == r & res$model == "basic", ]
  cat(sprintf("%s reading, %d draws: Basic MAE %.4f\n", r, nrow(b), mean(b$mae)))
  for (lab in c(paste("two-stage, lambda", c(0, 1, 3, 6, 10)), "two-stage, CV")) {
    m <- if (lab == "two-stage, CV") res[res$reading == r & res$model == lab, ]
         else res[res$reading == r & res$model == "two-stage" & res$lambda == as.numeric(sub(".* ", "", lab)), ]
    dd <- m$mae[order(m$seed)] - b$mae[order(b$seed)]
    cat(sprintf("  %-24s MAE %.4f, minus Basic %+.4f (se %.4f), better in %d\n", lab, mean(m$mae),
                mean(dd), sd(dd) / sqrt(length(dd)), sum(dd < 0)))
  }
}
