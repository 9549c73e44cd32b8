# The homoscedastic Vecchia GP of gpr_baseline(approx = "vecchia") against
# GpGp::fit_model() (CRAN, a benchmark-only peer) on the same data and the
# same conditioning-set size m: whole-fit time (each package's own ordering,
# neighbour search, fit and its defaults), both log-likelihoods and both test
# RMSEs. Kernel: Matern 5/2 with one length-scale per input in both
# (GpGp "matern25_scaledim"; ours gp_kernel("matern52", ard = TRUE)).
# Friedman-5 (d = 5), clean labels, a constant mean (GpGp: intercept).
# Usage: Rscript inst/bench/gpr_loo_vecchia/baseline_gpgp.R [n] [m] [threads]
suppressPackageStartupMessages(library(noisylabels))
if (!requireNamespace("GpGp", quietly = TRUE)) {
  message("GpGp is not installed: skipped")
  quit(save = "no")
}
args <- as.numeric(commandArgs(TRUE))
n <- if (length(args) >= 1) args[1] else 1e4
m <- if (length(args) >= 2) args[2] else 30
threads <- if (length(args) >= 3) args[3] else 1
set.seed(1)
d <- 5
gen <- function(k) {
  x <- matrix(stats::runif(k * d), k)
  f <- 10 * sin(pi * x[, 1] * x[, 2]) + 20 * (x[, 3] - 0.5)^2 + 10 * x[, 4] + 5 * x[, 5]
  list(x = x, f = f, y = f + stats::rnorm(k))
}
tr <- gen(n)
te <- gen(2000)
cat(sprintf("n = %d, d = %d, m = %d, threads = %d; uptime: %s\n", n, d, m, threads,
            system("uptime", intern = TRUE)))
options(noisylabels.threads = threads)
Sys.setenv(OMP_NUM_THREADS = threads)

t_gpgp <- system.time(g <- GpGp::fit_model(tr$y, tr$x, X = matrix(1, n, 1),
                                           covfun_name = "matern25_scaledim",
                                           m_seq = c(10, m), silent = TRUE))
p_gpgp <- GpGp::predictions(g, te$x, X_pred = matrix(1, nrow(te$x), 1), m = max(5 * m, 150))
t_ours <- system.time(b <- gpr_baseline(tr$x, tr$y, approx = "vecchia", neighbors = m,
                                        kernel = gp_kernel("matern52", ard = TRUE),
                                        threads = threads))
p_ours <- predict(b, te$x)
rmse <- function(p) sqrt(mean((p - te$f)^2))

# Both fitted parameter sets on one likelihood: GpGp's Vecchia likelihood
# with its maxmin ordering and m neighbours, mean profiled (beta).
ord <- GpGp::order_maxmin(tr$x)
nn <- GpGp::find_ordered_nn(tr$x[ord, ], m)
fit <- b$fit
ell <- fit$kernel$par$lengthscale * fit$x_scale      # our length-scales on the data scale
var_f <- fit$kernel$par$variance * fit$y_scale^2
ours_par <- c(var_f, ell / sqrt(5), fit$sigma2 / var_f)  # GpGp: r = |D^-1 dx|, nugget relative
common <- function(par) GpGp::vecchia_profbeta_loglik(par, "matern25_scaledim", tr$y[ord],
                                                      matrix(1, n, 1), tr$x[ord, ], nn)$loglik
cat(sprintf("GpGp fit_model:              %6.1f s elapsed (%6.1f CPU), loglik %.2f (own), test RMSE %.4f\n",
            t_gpgp[["elapsed"]], t_gpgp[["user.self"]] + t_gpgp[["sys.self"]], g$loglik, rmse(p_gpgp)))
cat(sprintf("gpr_baseline(approx = 'vecchia'): %6.1f s elapsed (%6.1f CPU), loglik %.2f (own), test RMSE %.4f, %d passes\n",
            t_ours[["elapsed"]], t_ours[["user.self"]] + t_ours[["sys.self"]],
            as.numeric(logLik(fit)), rmse(p_ours), as.integer(fit$factorizations)))
cat(sprintf("time ratio ours / GpGp: %.2f elapsed, %.2f CPU\n", t_ours[["elapsed"]] / t_gpgp[["elapsed"]],
            (t_ours[["user.self"]] + t_ours[["sys.self"]]) / (t_gpgp[["user.self"]] + t_gpgp[["sys.self"]])))
cat(sprintf("both parameter sets on GpGp's Vecchia likelihood (maxmin, m = %d): GpGp %.2f, ours %.2f\n",
            m, common(g$covparms), common(ours_par)))
cat("uptime after:", system("uptime", intern = TRUE), "\n")
