# Cost of one objective-and-gradient evaluation of the pursuit model (the unit
# both pipelines pay per L-BFGS step) split into its parts, in CPU seconds:
# kernel matrix, Cholesky + full inverse (dpotrf + dpotri), the one-pass
# kernel-gradient contraction with W = alpha alpha' - K^-1, and the whole
# packed objective of the C++ core, on the benchmark's Friedman-10 data.
#
# Usage: OMP_NUM_THREADS=1 Rscript inst/bench/gpr_pursuit/profile_eval.R 500 1000 2000
# Writes inst/bench/gpr_pursuit/profile_eval.csv.
suppressPackageStartupMessages(library(noisylabels))
ns <- asNamespace("noisylabels")
args <- commandArgs(trailingOnly = TRUE)
sizes <- if (length(args)) as.integer(args) else c(500L, 1000L, 2000L)
cpu <- function(expr, reps) {
  t <- system.time(for (r in seq_len(reps)) force(expr()))
  (t[["user.self"]] + t[["sys.self"]]) / reps
}
rows <- list()
for (n in sizes) {
  set.seed(n)
  s <- sim_friedman(n, corruption = "uniform", prob = 0.1)
  x <- scale(s$x); y <- as.vector(scale(s$y))
  k <- ns$kernel_resolve(gp_kernel("rbf", ard = TRUE, lengthscale = 1), x)
  spec <- ns$kernel_spec(k)
  reps <- if (n >= 2000) 2L else 5L
  gram <- ns$.kernel_gram(x, spec)
  kk <- gram; diag(kk) <- diag(kk) + 0.1
  pinv <- ns$.hook("chol_inverse", list(kk, "lapack"))
  alpha <- as.vector(pinv %*% y)
  w <- tcrossprod(alpha) - pinv
  p <- length(ns$kernel_flatten(k)$log_par)
  support <- seq_len(n %/% 10)
  z <- c(ns$kernel_flatten(k)$log_par, 0, log(0.1), rep(0.3, length(support)))
  rows[[length(rows) + 1]] <- data.frame(
    n = n,
    gram = cpu(function() ns$.kernel_gram(x, spec), reps),
    chol_inverse = cpu(function() ns$.hook("chol_inverse", list(kk, "lapack")), reps),
    kernel_gradient = cpu(function() ns$.hook("kernel_gradient", list(x, w, spec)), reps),
    objective = cpu(function() ns$.hook("gpr_pursuit_objective", list(x, y, spec, z, support, TRUE, NULL, NULL, NULL)), reps))
  print(rows[[length(rows)]])
}
utils::write.csv(do.call(rbind, rows), "inst/bench/gpr_pursuit/profile_eval.csv", row.names = FALSE)
