# Cost of the interruptible blocked factorizations (src/core/linalg/blocked.cpp)
# against one LAPACK call each (the BLAS/LAPACK R links to), in the same run:
# the Cholesky factor alone (potrf) and factor + SPD inverse (potrf + potri),
# the median of `reps` alternating timings per size. Ratio = blocked / LAPACK.
# Run from the package root (with the package installed):
#   Rscript inst/bench/interrupt/blocked_chol.R
library(noisylabels)
reps <- as.integer(Sys.getenv("REPS", "5"))
sizes <- as.integer(strsplit(Sys.getenv("SIZES", "2000,4000"), ",")[[1]])
time_one <- function(a, what, blocked) noisylabels:::.hook("chol_blocked_timing", list(a, what, blocked, 1L, 0L))
res <- do.call(rbind, lapply(sizes, function(n) {
  set.seed(n)
  a <- crossprod(matrix(rnorm(n * n), n)) / n + diag(n)
  do.call(rbind, lapply(c("potrf", "potri"), function(what) {
    t <- replicate(reps, c(lapack = time_one(a, what, FALSE), blocked = time_one(a, what, TRUE)))
    data.frame(n = n, what = what, lapack_s = median(t["lapack", ]), blocked_s = median(t["blocked", ]),
               ratio = median(t["blocked", ] / t["lapack", ]))
  }))
}))
res$lapack_s <- round(res$lapack_s, 3)
res$blocked_s <- round(res$blocked_s, 3)
res$ratio <- round(res$ratio, 2)
cat(sprintf("BLAS: %s\n", extSoftVersion()[["BLAS"]]))
print(res, row.names = FALSE)
