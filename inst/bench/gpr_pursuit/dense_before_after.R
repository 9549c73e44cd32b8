# The dense gpr_pursuit() default before and after the covariance-operator
# change (issue 20): the same fit (bench_pursuit.R's data: Friedman-10, 10%
# uniform corruption, set.seed(n)) with two installed versions of the package,
# each in its own R process, one after the other. Prints CPU seconds,
# factorizations, the selected support size and NMLL, and whether the two
# fits are identical.
# Usage: Rscript inst/bench/gpr_pursuit/dense_before_after.R LIB_BEFORE LIB_AFTER [n]
args <- commandArgs(TRUE)
if (length(args) >= 1 && args[1] == "--one") {
  .libPaths(c(args[2], .libPaths()))
  suppressPackageStartupMessages(library(noisylabels))
  n <- as.integer(args[3])
  set.seed(n)
  s <- sim_friedman(n, corruption = "uniform", prob = 0.1)
  tm <- system.time(fit <- gpr_pursuit(s$x, s$y))  # n <= 2000: "auto" is dense
  cat(sprintf("%s,%.1f,%.1f,%d,%d,%.6f,%s\n", args[2], tm[["user.self"]] + tm[["sys.self"]],
              tm[["elapsed"]], as.integer(fit$factorizations), length(fit$support),
              -fit$trace$loglik[fit$selected], paste(fit$support, collapse = " ")))
  quit(save = "no")
}
n <- if (length(args) >= 3) as.integer(args[3]) else 1000L
rscript <- file.path(R.home("bin"), "Rscript")
me <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
cat("uptime:", system("uptime", intern = TRUE), "\n")
out <- vapply(args[1:2], function(lib) {
  system2(rscript, c(me, "--one", lib, n), stdout = TRUE, env = c("OPENBLAS_NUM_THREADS=1", "OMP_NUM_THREADS=1"))
}, character(1))
res <- utils::read.csv(text = out, header = FALSE,
                       col.names = c("lib", "cpu_s", "elapsed_s", "factorizations", "outliers",
                                     "nmll", "support"))
print(res[, 1:6], row.names = FALSE)
cat(sprintf("CPU ratio after/before: %.3f; same support: %s; NMLL difference: %.2e\n",
            res$cpu_s[2] / res$cpu_s[1], identical(res$support[1], res$support[2]),
            res$nmll[2] - res$nmll[1]))
cat("uptime:", system("uptime", intern = TRUE), "\n")
