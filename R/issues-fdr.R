# The flags layer of the issues family, shared by every label type and path
# (find_label_issues() and the fits' own label_issues()): q-values, the
# Poisson-binomial count, the flag rules that read only p_wrong or a ranking,
# and the result object.
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
  o <- order(p_wrong, decreasing = TRUE, method = "radix")  # stable: ties by position
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

# Flags by the ranking: the `m` examples of lowest quality (ties by row).
flag_lowest <- function(quality, m) {
  flagged <- logical(length(quality))
  if (m > 0) flagged[order(quality, seq_along(quality))[seq_len(min(m, length(quality)))]] <- TRUE
  flagged
}

# Flags maximising the expected F1 given calibrated p_wrong: the r labels of
# highest p_wrong with r maximising 2 sum_{top r} p / (r + sum p).
flag_expected_f1 <- function(p_wrong) {
  n <- length(p_wrong)
  flagged <- logical(n)
  if (n == 0L || sum(p_wrong) <= 0) return(flagged)
  o <- order(p_wrong, decreasing = TRUE, method = "radix")  # stable: ties by position
  ef1 <- 2 * cumsum(p_wrong[o]) / (seq_len(n) + sum(p_wrong))
  flagged[o[seq_len(which.max(ef1))]] <- TRUE
  flagged
}

# The result of find_label_issues() (every path builds it through this).
# Its parent class noisylabels_result says "a result about labels", and it
# is deliberately not noisylabels_fit: a result has no model to predict
# with, and as a fit find_label_issues(result) or `method = result` would
# wrap it again instead of refusing it.
new_find_label_issues <- function(x) {
  stopifnot(is.list(x), inherits(x$label_issues, "noisylabels_issues"))
  structure(x, class = c("find_label_issues", "noisylabels_result"))
}
