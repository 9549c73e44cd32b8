# Runs the testthat suite and prints one machine-readable summary line
# ("noisylabels-tests: N passed, N failed, N skipped") that tools/run-check.sh reports.
library(testthat)
library(noisylabels)

res <- test_check("noisylabels", stop_on_failure = FALSE, reporter = "summary")
df <- as.data.frame(res)
n_failed <- sum(df$failed) + sum(df$error)
n_skipped <- sum(df$skipped)
n_passed <- sum(df$passed)
cat(sprintf("noisylabels-tests: %d passed, %d failed, %d skipped\n",
            as.integer(n_passed), as.integer(n_failed), as.integer(n_skipped)))
if (n_failed > 0) stop(n_failed, " test(s) failed")
