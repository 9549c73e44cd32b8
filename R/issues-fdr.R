# Flags from per-label probabilities of being wrong, for every label type.
#
# Each path of find_label_issues() ends with p_wrong, its posterior
# probability that a label is wrong. Flagging the labels whose p_wrong is
# highest, the expected share of clean labels among the first r flagged is
# mean(1 - p_wrong) over them (the Bayesian false discovery rate). The
# q-value of a label is the smallest such share over every flagged set that
# contains it, so q is monotone in p_wrong, and flagging q <= fdr controls
# the expected false discovery proportion at fdr when p_wrong is calibrated.
#
# The number of wrong labels is a sum of independent Bernoulli(p_wrong)
# draws given the model: its mean is sum(p_wrong) and its interval is taken
# from the Poisson-binomial distribution (normal approximation with a
# continuity correction, exact limits at 0 and n). `model_var` adds the
# variance of sum(p_wrong) that comes from estimating the model (for numeric
# labels n^2 times the variance of the fitted weight of the wrong group), so
# the interval is wide where the groups overlap.

# q-values: q[i] = min over r >= rank(i) of mean(1 - p_sorted[1:r]), where
# tied p_wrong share the rank of the last of them (ties are flagged together).
fdr_qvalues <- function(p_wrong) {
  n <- length(p_wrong)
  if (n == 0L) return(numeric())
  o <- order(-p_wrong, seq_len(n))
  share <- cumsum(1 - p_wrong[o]) / seq_len(n)
  q <- rev(cummin(rev(share)))
  ps <- p_wrong[o]
  last <- c(ps[-1] != ps[-n], TRUE)
  q <- q[rev(cummin(rev(ifelse(last, seq_len(n), n + 1L))))]
  out <- numeric(n)
  out[o] <- pmin(pmax(q, 0), 1)
  out
}

# Estimated number of wrong labels with a `level` interval.
wrong_count <- function(p_wrong, level = 0.9, model_var = 0) {
  n <- length(p_wrong)
  mu <- sum(p_wrong)
  s <- sqrt(sum(p_wrong * (1 - p_wrong)) + model_var)
  zq <- stats::qnorm(1 - (1 - level) / 2)
  lo <- max(0, floor(mu - zq * s - 0.5))
  hi <- min(n, ceiling(mu + zq * s + 0.5))
  list(estimate = mu, lower = lo, upper = hi, rate = mu / max(n, 1),
       rate_lower = lo / max(n, 1), rate_upper = hi / max(n, 1), level = level)
}

# Everything the result carries about the flag decision.
fdr_select <- function(p_wrong, fdr = 0.1, level = 0.9, model_var = 0) {
  q <- fdr_qvalues(p_wrong)
  list(q_value = q, flagged = q <= fdr, count = wrong_count(p_wrong, level, model_var), fdr = fdr)
}

# The user's `fdr` argument: one number in (0, 1].
check_fdr <- function(fdr, call = parent.frame()) {
  check_number(fdr, "fdr", lower = 0, upper = 1, open_lower = TRUE, call = call)
}
