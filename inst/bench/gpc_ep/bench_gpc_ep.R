# Benchmark of gpc_ep() against kernlab::gausspr (Laplace, logistic) on the
# same data, and the cost of one EP sweep relative to one Cholesky of K.
#
# Usage: Rscript bench_gpc_ep.R [sizes = 500,1000,2000] [out = bench_gpc_ep.csv]
# Run it with OPENBLAS_NUM_THREADS=1 (both the sweep and R's chol() use the
# same BLAS, so the ratio is like for like) on an otherwise idle machine.
#
# Data: 2-D inputs, a curved boundary, 5% of labels flipped. Both models use
# an RBF-type kernel with the same fixed length-scale and gpc_ep a fixed
# epsilon = 0.05, so the fit timings compare one inference run each (EP
# against kernlab's Laplace/Newton iteration), not hyperparameter searches.
#
# Sweep cost: an EP run of 1 + r sweeps minus one of 1 sweep, divided by r
# (best of 3), so one-off work (chol(K), the zero start) cancels. A sweep
# includes its refresh. Columns:
#   sweep_over_chol      sequential schedule (blocked updates; the default)
#   parallel_over_chol   parallel schedule (refresh of diag(Sigma) only)
#   reference_over_chol  sequential with one-at-a-time rank-one updates of the
#                        full Sigma (block_size = 0; the pre-blocking method)
#   *_cpu                the same ratios from CPU time (user + system)
#   flops_over_chol      sequential sweep flops / chol flops by the count in
#                        inst/bench/gpc_ep/README.md (4, plus terms for the
#                        sites with tau == 0 and tau < 0 after 5 sweeps,
#                        columns tau_zero and tau_negative)
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
# Best of `times` runs, as c(elapsed, cpu) seconds; cpu = user + system time
# of this process, which (with one BLAS thread) is the steadier of the two on
# a shared machine.
best_of <- function(expr_fun, times = 3) {
  t <- vapply(seq_len(times), function(i) {
    st <- system.time(expr_fun())
    c(st[["elapsed"]], st[["user.self"]] + st[["sys.self"]])
  }, numeric(2))
  apply(t, 1, min)
}
sweep_seconds <- function(K, y, ep, extra) {
  ep1 <- modifyList(ep, list(max_sweeps = 1L, min_sweeps = 1L))
  epr <- modifyList(ep, list(max_sweeps = 1L + extra, min_sweeps = 1L + extra))
  t1 <- best_of(function() ns$.gpc_ep_run_k(K, y, 0.05, 0, ep1, 1))
  tr <- best_of(function() ns$.gpc_ep_run_k(K, y, 0.05, 0, epr, 1))
  (tr - t1) / extra
}
cat("BLAS threads: OPENBLAS_NUM_THREADS =", Sys.getenv("OPENBLAS_NUM_THREADS", "(unset)"), "\n")
cat("load average at start:", readLines("/proc/loadavg", warn = FALSE), "\n")
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
  t_par <- system.time(fit_par <- gpc_ep(x, y, kernel = k, epsilon = 0.05, learn_kernel = FALSE,
                                         scale = FALSE,
                                         control = gpc_ep_control(schedule = "parallel")))[["elapsed"]]
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
  ep <- list(max_sweeps = 1L, min_sweeps = 1L, tol_logz = 0, tol_site = 0, damping = 1, clamp = FALSE)
  extra <- if (n <= 1000) 4L else 2L
  sweep_s <- sweep_seconds(K, y, ep, extra)
  par_s <- sweep_seconds(K, y, modifyList(ep, list(schedule = "parallel", damping = 0.8)), extra)
  ref_s <- if (n <= 1000) sweep_seconds(K, y, modifyList(ep, list(block_size = 0L)), 1L) else c(NA, NA)
  reps <- max(3L, round(4000 / n))
  chol_s <- best_of(function() for (r in seq_len(reps)) chol(K), times = 5) / reps
  # the sites after a few sweeps, for the flop count's weak/negative terms
  st <- ns$.gpc_ep_run_k(K, y, 0.05, 0, modifyList(ep, list(max_sweeps = 5L, min_sweeps = 5L)), 1)
  n_zero <- sum(st$site_tau == 0); n_neg <- sum(st$site_tau < 0)
  # flops per sweep / (n^3/3): sweep n^3/3 + chol(B) n^3/3 + potri 2n^3/3
  # + Sigma columns with tau == 0 (2 n^2 each) + Woodbury for tau < 0
  # (about 3 n^2 each: triangular solve and rank update)
  flops <- (4 * n^3 / 3 + 2 * n^2 * n_zero + 3 * n^2 * n_neg) / (n^3 / 3)
  rows[[length(rows) + 1]] <- data.frame(
    n = n, ep_fit_s = t_ep, ep_sweeps = fit$sweeps, ep_parallel_fit_s = t_par,
    ep_parallel_sweeps = fit_par$sweeps, gausspr_s = t_kl,
    ep_test_error = err_ep, gausspr_test_error = err_kl,
    chol_s = chol_s[1], sweep_s = sweep_s[1], sweep_over_chol = sweep_s[1] / chol_s[1],
    parallel_over_chol = par_s[1] / chol_s[1], reference_over_chol = ref_s[1] / chol_s[1],
    sweep_over_chol_cpu = sweep_s[2] / chol_s[2], parallel_over_chol_cpu = par_s[2] / chol_s[2],
    reference_over_chol_cpu = ref_s[2] / chol_s[2],
    tau_zero = n_zero, tau_negative = n_neg, flops_over_chol = flops)
  print(rows[[length(rows)]])
}
res <- do.call(rbind, rows)
cat("load average at end:", readLines("/proc/loadavg", warn = FALSE), "\n")
utils::write.csv(res, out, row.names = FALSE)
print(res, digits = 3)
