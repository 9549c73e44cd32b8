# A short run of every C++ path under valgrind (tools/sanitize.sh valgrind):
# small fits of each model plus their predictions, so that each core module
# (kernels, linalg, gpr_loo, gpr_pursuit, gpc_ep, sgd, label_dist, monitor)
# executes. Prints "valgrind-smoke: done" at the end.
suppressPackageStartupMessages(library(noisylabels))
step <- function(what, expr) {
  t0 <- proc.time()[["elapsed"]]
  force(expr)
  cat(sprintf("valgrind-smoke: %-14s ok (%.1f s)\n", what, proc.time()[["elapsed"]] - t0))
}
set.seed(1)
d <- sim_tang1d(n = 20, n_corrupted = 5)
step("kernels", {
  k <- kernel_matrix(gp_kernel("matern52"), matrix(runif(20), 10))
  stopifnot(isSymmetric(k))
})
step("blocked chol", {
  set.seed(2)
  a <- crossprod(matrix(rnorm(50 * 50), 50)) / 50 + diag(50)
  out <- noisylabels:::.hook("chol_blocked", list(a, 8L))  # several blocks, a partial last one
  stopifnot(max(abs(out$inverse[lower.tri(a, TRUE)] - solve(a)[lower.tri(a, TRUE)])) < 1e-8)
})
step("gpr_loo", {
  fit <- gpr_loo(y ~ x, data = d$data, restarts = 1)
  p <- predict(fit, data.frame(x = c(-0.5, 0.5)), se.fit = TRUE)
  label_issues(fit)
})
step("gpr_pursuit", {
  fit <- gpr_pursuit(y ~ x, data = d$data)
  predict(fit, data.frame(x = 0))
})
step("gpc_ep", {
  x <- matrix(rnorm(60), 30)
  y <- factor(ifelse(x[, 1] > 0, "a", "b"))
  fit <- gpc_ep(x, y)
  predict(fit, x[1:3, ], type = "prob")
})
step("sgd_robust", {
  x <- matrix(rnorm(400), 200)
  y <- ifelse(x[, 1] - x[, 2] > 0, 1, -1)
  fit <- suppressWarnings(sgd_robust(x, y, loss = "gompertz", epochs = 3))
  xs <- Matrix::Matrix(x, sparse = TRUE)
  fit2 <- suppressWarnings(sgd_robust(xs, y, epochs = 2))
  predict(fit, x[1:5, ])
})
step("label_dist_vb", {
  sim <- sim_label_dist(U = 20, N = 40, group_size = 5, D = 2, n_test = 5)
  fit <- label_dist_vb(sim$x, sim$groups, sim$label_dist, control = label_dist_vb_control(max_iter = 20, restarts = 2))
  fit2 <- label_dist_vb(sim$x, sim$groups, sim$label_dist, structured = TRUE, control = label_dist_vb_control(max_iter = 10))
  predict(fit, sim$x_test)
})
step("progress", {
  calls <- noisylabels:::.hook("monitor_demo", list(function(step, total) NULL, 10L, 2L, 0L, FALSE, .Machine$integer.max))
  stopifnot(calls == 20L)
})
cat("valgrind-smoke: done\n")
