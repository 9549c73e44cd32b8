# Flagged set of the default gpr_loo() Vecchia fit with and without the
# variance floor (vecchia_floor = 0.01 against 0) or another stopping rule
# (tol_stationary, default 1e-6): n labels (default 5,000) in 3 inputs, 10%
# shifted by N(0, 1). Both flag rules: the default, find_label_issues(fit)
# (q <= 0.1, as label_issues(fit); with the count and its 90% interval),
# and the fit's own chi-squared rule, label_issues(fit, alpha = 0.01).
# Usage: Rscript floor_flags.R <vecchia_floor> [tol_stationary] [n] [threads]
suppressPackageStartupMessages(library(noisylabels))
args <- commandArgs(TRUE)
f <- as.numeric(args[1])
tol <- if (length(args) > 1) as.numeric(args[2]) else 1e-6
n <- if (length(args) > 2) as.numeric(args[3]) else 5000
options(noisylabels.threads = if (length(args) > 3) as.integer(args[4]) else 1L)
set.seed(1); x <- matrix(runif(3*n), n)
y <- sin(2*pi*x[,1]) + cos(pi*x[,2]) + rnorm(n, sd = 0.1)
bad <- sample(n, n/10); sh <- rnorm(length(bad)); y[bad] <- y[bad] + sh
big <- bad[abs(sh) >= 0.3]
set.seed(2); fit <- suppressWarnings(gpr_loo(x, y, approx = "vecchia", control = gpr_loo_control(vecchia_floor = f, tol_stationary = tol)))
score <- function(fl) {
  tp <- sum(fl %in% bad); p <- tp / length(fl); r <- tp / length(bad)
  sprintf("flagged=%d true=%d precision=%.3f recall=%.3f F1=%.3f recall(|shift|>=3sd)=%.3f",
          length(fl), length(bad), p, r, 2 * p * r / (p + r), sum(fl %in% big) / length(big))
}
res <- find_label_issues(fit)
cat(sprintf("floor=%g tol=%g n=%d conv=%s passes=%d\n", f, tol, as.integer(n), fit$converged, fit$factorizations))
cat(sprintf("find_label_issues(fit), q <= 0.1: %s count=%.1f (%d-%d)\n",
            score(res$label_issues$row[res$label_issues$flagged]), res$wrong_count$estimate,
            as.integer(res$wrong_count$lower), as.integer(res$wrong_count$upper)))
li <- label_issues(fit, alpha = 0.01)
cat(sprintf("label_issues(fit, alpha = 0.01):  %s\n", score(li$row[li$flagged])))
