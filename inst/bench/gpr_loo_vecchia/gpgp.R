# One Vecchia log-likelihood + gradient evaluation, and a whole homoscedastic
# fit, against GpGp (CRAN, a benchmark-only peer) on the same data, ordering
# and neighbours. Matern 5/2 with one length-scale per input, d = 5, n = 10^4.
# Usage: Rscript inst/bench/gpr_loo_vecchia/gpgp.R [n] [m] [threads]
suppressPackageStartupMessages(library(noisylabels))
if (!requireNamespace("GpGp", quietly = TRUE)) {
  message("GpGp is not installed: skipped")
  quit(save = "no")
}
args <- as.numeric(commandArgs(TRUE))
n <- if (length(args) >= 1) args[1] else 1e4
m <- if (length(args) >= 2) args[2] else 30
threads <- if (length(args) >= 3) args[3] else 2
ns <- asNamespace("noisylabels")
set.seed(1)
d <- 5
locs <- matrix(stats::runif(n * d), n)
f <- 10 * sin(pi * locs[, 1] * locs[, 2]) + 20 * (locs[, 3] - 0.5)^2 + 10 * locs[, 4] + 5 * locs[, 5]
y <- f + stats::rnorm(n)
y <- (y - mean(y)) / stats::sd(y)
ord <- GpGp::order_maxmin(locs)
locs <- locs[ord, ]
y <- y[ord]
nn_gpgp <- GpGp::find_ordered_nn(locs, m)
nn <- nn_gpgp[, -1, drop = FALSE] - 1L
nn[is.na(nn)] <- -1L
storage.mode(nn) <- "integer"

# GpGp's matern25_scaledim is (1 + r + r^2/3) exp(-r) with r = |D^-1 (x - z)|;
# ours is the same with r = sqrt(5) |x - z| / l, so l = sqrt(5) * range.
variance <- 1; range <- rep(0.5, d); nugget <- 0.1
covparms <- c(variance, range, nugget)
spec <- list(type = "matern52", dim = d, ard = TRUE, log_par = log(c(variance, sqrt(5) * range)),
             categorical = logical(d))
noise <- rep(variance * nugget, n)
opts <- list(noise = "uniform", solver = "jacobi", lambda = 0, p = 1, sigma_floor = 1e-8,
             damping = 0.8, max_sweeps = 10L, max_outer = 1L, max_hyper_iter = 1L, tol_sweep = 1e-10,
             tol_outer = 1e-8, learn_hyper = TRUE, jitter = 0, backend = "lapack",
             neighbors = nn, threads = as.integer(threads), screen_rounds = 1L, screen_hyper_iter = 10L, tol_stationary = 1e-6, adaptive_sweeps = TRUE)
ll_gpgp <- GpGp::vecchia_meanzero_loglik(covparms, "matern25_scaledim", y, locs, nn_gpgp)$loglik
ours <- ns$.hook("gpr_loo_nll_grad", list(locs, y, spec, noise, opts, 1L))
cat(sprintf("n = %d, d = %d, m = %d, threads = %d\n", n, d, m, threads))
cat(sprintf("same model: log-likelihood GpGp %.6f, noisylabels %.6f\n", ll_gpgp, -ours$objective))

reps <- 5L
X1 <- matrix(1, n, 1)
t_gpgp <- system.time(for (r in seq_len(reps))
  GpGp::vecchia_profbeta_loglik_grad_info(covparms, "matern25_scaledim", y, X1, locs, nn_gpgp))[["elapsed"]] / reps
t_ours <- system.time(ns$.hook("gpr_loo_nll_grad", list(locs, y, spec, noise, opts, reps)))[["elapsed"]] / reps
cat(sprintf("one log-likelihood + gradient: GpGp %.3f s, noisylabels %.3f s, ratio %.2f\n",
            t_gpgp, t_ours, t_ours / t_gpgp))

# Whole homoscedastic fits from default starts.
yy <- y * 3 + 1
t_fit_gpgp <- system.time(g <- GpGp::fit_model(yy, locs, covfun_name = "matern25_scaledim",
                                               silent = TRUE, m_seq = c(10, m)))[["elapsed"]]
options(noisylabels.threads = threads)
t_fit_ours <- system.time(o <- gpr_loo(locs, yy, kernel = gp_kernel("matern52", ard = TRUE),
                                       noise = "uniform", approx = "vecchia", neighbors = m))[["elapsed"]]
cat(sprintf("homoscedastic fit: GpGp fit_model %.1f s (loglik %.1f), gpr_loo(noise = 'uniform', approx = 'vecchia') %.1f s (loglik %.1f), ratio %.2f\n",
            t_fit_gpgp, g$loglik, t_fit_ours, o$loglik, t_fit_ours / t_fit_gpgp))
