# Forward search of selection = "esd": the C++ search on the covariance
# operator (this package) against the R loop it replaced (a library with the
# package before issue 28). Same data, entry order compared by the caller.
#   OPENBLAS_NUM_THREADS=1 Rscript inst/bench/gpr_pursuit/forward_search.R <lib> <base|new> <out.rds>
args <- commandArgs(TRUE)
library(noisylabels, lib.loc = args[1])
ns <- asNamespace("noisylabels")
out <- list()
for (n in c(500L, 1000L)) {
  set.seed(n)
  x <- matrix(runif(2 * n), n)
  kern <- ns$kernel_resolve(gp_kernel("rbf", ard = TRUE, lengthscale = c(0.2, 0.3)), x)
  r <- rnorm(n, sd = 0.1)
  r[1:20] <- r[1:20] + 2
  if (args[2] == "base") {  # the R loop takes the n x n covariance
    C <- ns$.kernel_gram(x, ns$kernel_spec(kern))
    diag(C) <- diag(C) + 0.01
    t <- system.time(fs <- ns$forward_search(C, r, kmax = n / 2, alpha = 0.05))[["elapsed"]]
  } else {
    t <- system.time(fs <- ns$forward_search(x, kern, 0.01, r, kmax = n / 2, alpha = 0.05))[["elapsed"]]
  }
  out[[as.character(n)]] <- list(entered = fs$entered, statistic = fs$statistic, k = fs$k, time = t)
  cat(args[2], n, t, "\n")
}
saveRDS(out, args[3])
