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
# Sweep cost: an EP run of 1 + r sweeps minus one of 1 sweep, divided by r,
# so one-off work (chol(K), the zero start, the final exact refresh)
# cancels. A sweep includes its refresh. Each timing repeats its call until
# it has used 0.25 s of CPU; the timings of one n are taken in 3 interleaved
# rounds and the best round is kept (the machine is shared). Columns:
#   sweep_over_chol      sequential schedule (the default), Sigma taken from
#                        the sweep's own factors (refresh_every = 0 here, so
#                        every timed sweep is one; the default refreshes from
#                        K on every 10th sweep: see default_over_chol)
#   exact_over_chol      sequential with the exact refresh from K after every
#                        sweep (refresh_every = 1; the default until 0.0.0.9000)
#   default_over_chol    the default's cost per sweep: 9 factor sweeps and one
#                        exact one in 10
#   parallel_over_chol   parallel schedule (refresh of diag(Sigma) only)
#   reference_over_chol  sequential with one-at-a-time rank-one updates of the
#                        full Sigma (block_size = 0; the pre-blocking method)
#   *_cpu                the same ratios from CPU time (user + system), the
#                        steadier one on a shared machine
#   flops_over_chol      exact sequential sweep flops / chol flops by the count
#                        in inst/bench/gpc_ep/README.md (4, plus terms for the
#                        sites with tau == 0 and tau < 0 after 5 sweeps,
#                        columns tau_zero and tau_negative); a factor sweep is
#                        3 whatever the signs
# Fits: time (elapsed and CPU), sweeps and log Z_EP of gpc_ep() with the
# default control, with refresh_every = 1 and with the parallel schedule, and
# kernlab::gausspr; test error on 2000 fresh points.
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
# CPU and elapsed seconds per call of f(), repeating it until it has used
# `target` seconds of CPU.
time_per_call <- function(f, target = 0.25) {
  r <- 0L
  t0 <- proc.time()
  repeat {
    f()
    r <- r + 1L
    t <- proc.time() - t0
    if (t[["user.self"]] + t[["sys.self"]] >= target) break
  }
  c(elapsed = t[["elapsed"]], cpu = t[["user.self"]] + t[["sys.self"]]) / r
}
# Best (minimum) over `rounds` interleaved rounds of every timing in `fs`:
# a matrix with rows elapsed, cpu and one column per timing.
interleaved_best <- function(fs, rounds = 3L) {
  res <- lapply(seq_len(rounds), function(r) vapply(fs, time_per_call, numeric(2)))
  Reduce(pmin, res)
}
run_k <- function(K, y, ep) {
  force(ep)
  function() ns$.hook("gpc_ep_run_k", list(K, y, 0.05, 0, ep, 1))
}
cpu_elapsed <- function(expr_fun) {
  st <- system.time(v <- expr_fun())
  list(value = v, elapsed = st[["elapsed"]], cpu = st[["user.self"]] + st[["sys.self"]])
}
uptime <- function() tryCatch(system("uptime", intern = TRUE), error = function(e) readLines("/proc/loadavg"))
cat("BLAS threads: OPENBLAS_NUM_THREADS =", Sys.getenv("OPENBLAS_NUM_THREADS", "(unset)"), "\n")
cat("uptime at start:", uptime(), "\n")
rows <- list()
for (n in sizes) {
  set.seed(n)
  x <- matrix(rnorm(2 * n), n)
  y <- ifelse(x[, 1] + 0.5 * x[, 2]^2 - 0.5 > 0, 1, -1)
  flip <- sample(n, round(0.05 * n))
  y[flip] <- -y[flip]
  ell <- 1
  k <- gp_kernel("mixed", ard = FALSE, variance = 4, bias = 0.1, nugget = 1, precision = 1 / ell^2)
  # each fit from the same seed (the sweep order is drawn from R's RNG), in
  # two interleaved rounds, keeping the faster of each
  fit_with <- function(control) {
    force(control)
    function() {
      set.seed(7)
      gpc_ep(x, y, kernel = k, epsilon = 0.05, learn_kernel = FALSE, standardize = FALSE,
             control = control)
    }
  }
  fit_funs <- list(default = fit_with(gpc_ep_control()),
                   exact = fit_with(gpc_ep_control(refresh_every = 1)),
                   parallel = fit_with(gpc_ep_control(schedule = "parallel")))
  fit_rounds <- lapply(1:2, function(r) lapply(fit_funs, function(f) cpu_elapsed(f)))
  best_fit <- function(v) {
    a <- fit_rounds[[1]][[v]]; b <- fit_rounds[[2]][[v]]
    list(value = a$value, elapsed = min(a$elapsed, b$elapsed), cpu = min(a$cpu, b$cpu))
  }
  f_def <- best_fit("default"); f_exact <- best_fit("exact"); f_par <- best_fit("parallel")
  fit <- f_def$value
  # kernlab: rbfdot(sigma) = exp(-sigma |x - z|^2), so sigma = 1 / (2 ell^2)
  f_kl <- cpu_elapsed(function() gausspr(x, factor(y), kernel = "rbfdot",
                                         kpar = list(sigma = 1 / (2 * ell^2)), scaled = FALSE))
  gp <- f_kl$value
  set.seed(n + 1)
  xt <- matrix(rnorm(2 * 2000), ncol = 2)
  yt <- ifelse(xt[, 1] + 0.5 * xt[, 2]^2 - 0.5 > 0, 1, -1)
  err_ep <- mean(as.numeric(as.character(predict(fit, xt))) != yt)
  err_kl <- mean(as.numeric(kl_predict(gp, xt)) != yt)
  # one sweep vs one Cholesky of K on the same matrix
  spec <- ns$kernel_spec(ns$kernel_resolve(k, x))
  K <- ns$.kernel_gram(x, spec)
  ep <- list(max_sweeps = 1L, min_sweeps = 1L, tol_logz = 0, tol_site = 0, damping = 1, clamp = FALSE,
             schedule = "sequential", block_size = 64L, refresh_every = 1L, joint_epsilon = TRUE)
  extra <- 4L
  variants <- list(factor = utils::modifyList(ep, list(refresh_every = 0L)), exact = utils::modifyList(ep, list(refresh_every = 1L)),
                   parallel = modifyList(ep, list(schedule = "parallel", damping = 0.8)))
  if (n <= 1000) variants$reference <- utils::modifyList(ep, list(block_size = 0L, refresh_every = 1L))
  fs <- list(chol = function() chol(K))
  for (v in names(variants)) {
    fs[[paste0(v, "_1")]] <- run_k(K, y, modifyList(variants[[v]], list(max_sweeps = 1L, min_sweeps = 1L)))
    r <- if (v == "reference") 1L else extra
    fs[[paste0(v, "_r")]] <- run_k(K, y, modifyList(variants[[v]],
                                                   list(max_sweeps = 1L + r, min_sweeps = 1L + r)))
  }
  tb <- interleaved_best(fs)
  per_sweep <- function(v) {
    if (!v %in% names(variants)) return(c(NA_real_, NA_real_))
    r <- if (v == "reference") 1L else extra
    (tb[, paste0(v, "_r")] - tb[, paste0(v, "_1")]) / r
  }
  chol_s <- tb[, "chol"]
  ratio <- function(v) per_sweep(v) / chol_s
  default_ratio <- (9 * ratio("factor") + ratio("exact")) / 10
  # the sites after a few sweeps, for the flop count's weak/negative terms
  st <- ns$.hook("gpc_ep_run_k", list(K, y, 0.05, 0, modifyList(ep, list(max_sweeps = 5L, min_sweeps = 5L)), 1))
  n_zero <- sum(st$site_tau == 0); n_neg <- sum(st$site_tau < 0)
  # flops per sweep / (n^3/3): sweep n^3/3 + chol(B) n^3/3 + potri 2n^3/3
  # + Sigma columns with tau == 0 (2 n^2 each) + Woodbury for tau < 0
  # (about 3 n^2 each: triangular solve and rank update)
  flops <- (4 * n^3 / 3 + 2 * n^2 * n_zero + 3 * n^2 * n_neg) / (n^3 / 3)
  rows[[length(rows) + 1]] <- data.frame(
    n = n, ep_fit_s = f_def$elapsed, ep_fit_cpu_s = f_def$cpu, ep_sweeps = fit$sweeps,
    ep_exact_fit_s = f_exact$elapsed, ep_exact_fit_cpu_s = f_exact$cpu,
    ep_exact_sweeps = f_exact$value$sweeps,
    ep_parallel_fit_s = f_par$elapsed, ep_parallel_fit_cpu_s = f_par$cpu,
    ep_parallel_sweeps = f_par$value$sweeps,
    gausspr_s = f_kl$elapsed, gausspr_cpu_s = f_kl$cpu,
    logz_default = fit$log_z, logz_exact_minus_default = f_exact$value$log_z - fit$log_z,
    logz_parallel_minus_default = f_par$value$log_z - fit$log_z,
    ep_test_error = err_ep, gausspr_test_error = err_kl,
    chol_s = chol_s[["elapsed"]], chol_cpu_s = chol_s[["cpu"]],
    sweep_s = per_sweep("factor")[["elapsed"]],
    sweep_over_chol = ratio("factor")[["elapsed"]], exact_over_chol = ratio("exact")[["elapsed"]],
    default_over_chol = default_ratio[["elapsed"]],
    parallel_over_chol = ratio("parallel")[["elapsed"]],
    reference_over_chol = ratio("reference")[["elapsed"]],
    sweep_over_chol_cpu = ratio("factor")[["cpu"]], exact_over_chol_cpu = ratio("exact")[["cpu"]],
    default_over_chol_cpu = default_ratio[["cpu"]],
    parallel_over_chol_cpu = ratio("parallel")[["cpu"]],
    reference_over_chol_cpu = ratio("reference")[["cpu"]],
    tau_zero = n_zero, tau_negative = n_neg, flops_over_chol = flops)
  print(rows[[length(rows)]])
}
res <- do.call(rbind, rows)
cat("uptime at end:", uptime(), "\n")
utils::write.csv(res, out, row.names = FALSE)
print(res, digits = 3)
