# Time of audit_sample(), estimate_errors() and flag_audited() on a result
# of 10^5 labels (target: estimate_errors() <= 1 s).
#   Rscript inst/bench/audit/bench-estimate.R [N]
suppressMessages(library(noisylabels))
N <- as.integer(commandArgs(TRUE)[1])
if (is.na(N)) N <- 1e5L
set.seed(1)
k <- 5
p <- matrix(runif(k * N)^4, N, k); p <- p / rowSums(p)
truth <- max.col(p)
y <- truth; bad <- sample(N, N %/% 10); y[bad] <- (y[bad] %% k) + 1
res <- find_label_issues(labels = y, pred_probs = p)
time_of <- function(expr, reps = 5) {
  t <- vapply(seq_len(reps), function(i) system.time(force(expr()))[["elapsed"]], 0)
  median(t)
}
t_sample <- time_of(function() audit_sample(res, 200, seed = 1))
a <- audit_sample(res, 200, seed = 1)
a$wrong <- y[a$row] != truth[a$row]
t_est <- time_of(function() estimate_errors(res, a))
t_flag <- time_of(function() flag_audited(res, a, precision = 0.9))
est <- estimate_errors(res, a)
cat(sprintf("N = %d labels, audit of 200: audit_sample %.3f s, estimate_errors %.3f s, flag_audited %.3f s (medians of 5)\n",
            N, t_sample, t_est, t_flag))
cat(sprintf("count %.0f (%.0f-%.0f) for %d true\n", est$wrong_count$estimate, est$wrong_count$lower,
            est$wrong_count$upper, sum(y != truth)))
