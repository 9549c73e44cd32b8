# Benchmark of gpc_ep() against kernlab::gausspr (Laplace, logistic) on the
# same data, and the cost of one EP sweep relative to one Cholesky of K.
#
# Usage: Rscript bench_gpc_ep.R [sizes = 500,1000,2000] [out = bench_gpc_ep.csv]
# Data: 2-D inputs, linear boundary with curvature, 5% of labels flipped.
# Both models use an RBF-type kernel with the same fixed length-scale and
# gpc_ep a fixed epsilon = 0.05, so the timings compare one inference run
# each (EP against kernlab's Laplace/Newton iteration), not hyperparameter
# searches. Set OPENBLAS_NUM_THREADS=1 for stable timings on a shared machine.
args <- commandArgs(trailingOnly = TRUE)
sizes <- if (length(args) >= 1) as.integer(strsplit(args[1], ",")[[1]]) else c(500L, 1000L, 2000L)
out <- if (length(args) >= 2) args[2] else "bench_gpc_ep.csv"
suppressPackageStartupMessages({
  library(noisylabels)
  library(kernlab)
})
ns <- asNamespace("noisylabels")
# kernlab 0.9-x predict() on a gausspr classifier fails ("logical subscript
# too long") when asked for more points than it was trained on; predict in
# chunks.
kl_predict <- function(model, x, chunk = 200) {
  idx <- split(seq_len(nrow(x)), ceiling(seq_len(nrow(x)) / chunk))
  unlist(lapply(idx, function(i) as.character(predict(model, x[i, , drop = FALSE]))))
}
rows <- list()
for (n in sizes) {
  set.seed(n)
  x <- matrix(rnorm(2 * n), n)
  y <- ifelse(x[, 1] + 0.5 * x[, 2]^2 - 0.5 > 0, 1, -1)
  flip <- sample(n, round(0.05 * n))
  y[flip] <- -y[flip]
  ell <- 1
  k <- gp_kernel("mixed", ard = FALSE, variance = 4, bias = 0.1, nugget = 1, precision = 1 / ell^2)
  t_ep <- system.time(fit <- gpc_ep(x, y, kernel = k, epsilon = 0.05,
                                             learn_kernel = FALSE, scale = FALSE))[["elapsed"]]
  # kernlab: rbfdot(sigma) = exp(-sigma |x - z|^2), so sigma = 1 / (2 ell^2)
  t_kl <- system.time(gp <- gausspr(x, factor(y), kernel = "rbfdot",
                                     kpar = list(sigma = 1 / (2 * ell^2)), scaled = FALSE))[["elapsed"]]
  set.seed(n + 1)
  xt <- matrix(rnorm(2 * 2000), ncol = 2)
  yt <- ifelse(xt[, 1] + 0.5 * xt[, 2]^2 - 0.5 > 0, 1, -1)
  err_ep <- mean(as.numeric(as.character(predict(fit, xt))) != yt)
  err_kl <- mean(as.numeric(kl_predict(gp, xt)) != yt)
  # one sweep vs one Cholesky of K on the same matrix
  spec <- ns$kernel_spec(ns$kernel_resolve(k, x))
  K <- ns$.kernel_gram(x, spec)
  ep1 <- list(max_sweeps = 1L, min_sweeps = 1L, tol_logz = 0, tol_site = 0, damping = 1, clamp = FALSE)
  ep4 <- modifyList(ep1, list(max_sweeps = 4L, min_sweeps = 4L))
  t1 <- system.time(ns$.gpc_ep_run_k(K, y, 0.05, 0, ep1, 1))[["elapsed"]]
  t4 <- system.time(ns$.gpc_ep_run_k(K, y, 0.05, 0, ep4, 1))[["elapsed"]]
  sweep_s <- (t4 - t1) / 3
  reps <- max(1L, round(2000 / n))
  chol_s <- system.time(for (r in seq_len(reps)) chol(K))[["elapsed"]] / reps
  rows[[length(rows) + 1]] <- data.frame(
    n = n, ep_fit_s = t_ep, ep_sweeps = fit$sweeps, gausspr_s = t_kl, ep_test_error = err_ep, gausspr_test_error = err_kl,
    sweep_s = sweep_s, chol_s = chol_s, sweep_over_chol = sweep_s / chol_s)
  print(rows[[length(rows)]])
}
res <- do.call(rbind, rows)
utils::write.csv(res, out, row.names = FALSE)
print(res)
