# How far is the exact-GP fixed point from the optimum of the Vecchia
# objective? At fixed kernel hyperparameters (n = 500, Friedman-5, 10%
# corrupted labels), for several m:
#  - "approx optimum": gpr_loo(approx = "vecchia", learn_kernel = FALSE), the
#    checked descent on the approximate objective J_V;
#  - "exact-GP fixed point": Tang's Jacobi update with the exact-GP gradient
#    formula (Q_ii - (Qy)_i^2)/2 = 0 read on the Vecchia precision Q, iterated
#    without checks until sigma stops moving;
#  - the dense (exact) optimum.
# Usage: Rscript inst/bench/gpr_loo_vecchia/fixed_point.R
suppressPackageStartupMessages(library(noisylabels))
ns <- asNamespace("noisylabels")
set.seed(1)
n <- 500; d <- 5
x <- matrix(stats::runif(n * d), n)
f <- 10 * sin(pi * x[, 1] * x[, 2]) + 20 * (x[, 3] - 0.5)^2 + 10 * x[, 4] + 5 * x[, 5]
bad <- sample(n, n / 10)
y <- f + stats::rnorm(n)
y[bad] <- y[bad] + sample(c(-1, 1), length(bad), TRUE) * stats::runif(length(bad), 5, 15)
ys <- (y - mean(y)) / stats::sd(y)
pilot <- gpr_loo(x, y, approx = "dense", restarts = 2)
kernel <- pilot$kernel
dense <- gpr_loo(x, y, kernel = kernel, learn_kernel = FALSE, approx = "dense", restarts = 1)
spec <- ns$kernel_spec(kernel)
auc <- function(s) detection_metrics(s, bad)$auc
rows <- list()
for (m in c(5, 10, 20, 40)) {
  set.seed(100 + m)
  fitv <- gpr_loo(x, y, kernel = kernel, learn_kernel = FALSE, approx = "vecchia", neighbors = m,
                  restarts = 1, control = gpr_loo_control(max_sweeps = 1000))
  set.seed(100 + m)
  nn <- ns$vecchia_setup(x, kernel, m)$neighbors
  opts <- list(noise = "full", solver = "jacobi", lambda = 0, p = 1, sigma_floor = 1e-8, damping = 0.8,
               max_sweeps = 1L, max_outer = 1L, max_hyper_iter = 1L, tol_sweep = 1e-10, tol_outer = 1e-8,
               learn_hyper = FALSE, jitter = 1e-8, backend = "lapack", neighbors = nn, threads = 1L,
               screen_rounds = 1L, screen_hyper_iter = 10L, tol_stationary = 1e-6, adaptive_sweeps = TRUE)
  s_opt <- fitv$noise_var / stats::sd(y)^2
  j_opt <- ns$.hook("gpr_loo_eval", list(x, ys, spec, pmax(s_opt, 1e-8), opts))
  # Tang's update with the exact-GP formula on Q, from the approximate optimum.
  s <- pmax(s_opt, 1e-8)
  for (it in seq_len(2000)) {
    e <- ns$.hook("gpr_loo_eval", list(x, ys, spec, s, opts))
    e2 <- (e$alpha / e$inverse_diagonal)^2
    v <- 1 / e$inverse_diagonal - s
    s_new <- pmax(0.5 * s + 0.5 * pmax(e2 - v, 0), 1e-8)
    moved <- max(abs(s_new - s))
    s <- s_new
    if (moved < 1e-9) break
  }
  j_fp <- ns$.hook("gpr_loo_eval", list(x, ys, spec, s, opts))
  rel <- function(a, b) sqrt(sum((a - b)^2) / sum(b^2))
  s_dense <- dense$noise_var / stats::sd(y)^2
  rows[[length(rows) + 1]] <- data.frame(
    m = m, J_V_opt = j_opt$objective, J_V_fixed_point = j_fp$objective,
    fp_iterations = it, grad_norm_at_fp = sqrt(sum(j_fp$grad_sigma^2)),
    sigma_rel_diff_fp_vs_opt = rel(s, s_opt), sigma_rel_diff_opt_vs_dense = rel(s_opt, s_dense),
    sigma_rel_diff_fp_vs_dense = rel(s, s_dense),
    auc_opt = auc(s_opt), auc_fp = auc(s), auc_dense = auc(s_dense))
}
out <- do.call(rbind, rows)
print(format(out, digits = 4), row.names = FALSE)
