# The outer (epsilon / hyperparameter) loop of gpc_ep() with the plain EM
# step for epsilon (gpc_ep_control(joint_epsilon = FALSE)) against the
# default, where the L-BFGS steps move log(epsilon) with the kernel after
# each EM step. Data: two Gaussian classes in 2-D, n = 200, centres sep
# apart along x1 (sep = 1: heavily overlapping), 0 or 10% of labels flipped,
# 3 seeds. Columns: outer iterations of EM-only run to convergence
# (max_outer = 200), whether EM-only converges within the default 50, the
# joint loop's iterations and convergence, its final log Z_EP minus EM-only's,
# and both epsilons.
#   OPENBLAS_NUM_THREADS=1 Rscript inst/experiments/gpc_ep/outer_loop.R
suppressPackageStartupMessages(library(noisylabels))
blobs <- function(n, sep, rate, seed) {
  set.seed(seed); cl <- sample(c(-1, 1), n, TRUE)
  x <- matrix(rnorm(2 * n), n) + cbind(cl * sep / 2, 0)
  y <- cl; fl <- sample(n, round(rate * n)); y[fl] <- -y[fl]; list(x = x, y = y) }
rows <- list()
for (sep in c(1, 2, 4)) for (rate in c(0, 0.1)) for (s in 1:3) {
  d <- blobs(200, sep, rate, s)
  set.seed(s); em <- suppressWarnings(gpc_ep(d$x, d$y, control = gpc_ep_control(joint_epsilon = FALSE, max_outer = 200)))
  set.seed(s); em50 <- suppressWarnings(gpc_ep(d$x, d$y, control = gpc_ep_control(joint_epsilon = FALSE)))
  set.seed(s); jt <- suppressWarnings(gpc_ep(d$x, d$y))
  rows[[length(rows)+1]] <- data.frame(sep, rate, s, em_iter = em$outer_iterations, em50_conv = em50$converged,
    joint_iter = jt$outer_iterations, joint_conv = jt$converged, dlogz = jt$log_z - em$log_z, eps_em = em$epsilon, eps_joint = jt$epsilon)
}
tab <- do.call(rbind, rows); print(tab, digits = 3)
cat(sprintf("EM-only: median %g iterations (max %d), %d of %d not converged at 50; joint: median %g (max %d), all converged: %s; log Z joint - EM(200): min %.4f, max %.4f\n",
  median(tab$em_iter), max(tab$em_iter), sum(!tab$em50_conv), nrow(tab), median(tab$joint_iter), max(tab$joint_iter), all(tab$joint_conv), min(tab$dlogz), max(tab$dlogz)))
