# Confident learning, the probability that a label is wrong: a noise model
# fitted by maximum likelihood, and per-label posteriors under it.
#
# Out-of-fold probabilities P come from a model trained on the noisy labels,
# so they sit between P(true | x) and P(given | x): read as P(true | x) they
# count the noise twice, and the posterior that a clearly wrong label is
# correct stays far from 0 (40% uniform noise, 10 classes: 0.36 for a label
# the model gives 0.04). The model here reads the truth as a tempered
# version of P,
#   P(true = j | x) = P[j]^a / sum_l P[l]^a,
# and the given label as drawn from the noise matrix T[s, j] = P(given = s |
# true = j). Starting from confident learning's calibrated joint (shrunk as
# in cl_posterior()), EM alternates a (one-dimensional maximum likelihood of
# the given labels) and T (expected counts of (given, true) pairs plus half a
# count per cell). The fit uses at most `max_rows` evenly spaced rows, the
# same rows whether the probabilities are in memory or read in chunks.
# Measured on simulated features with an out-of-fold multinomial model
# (inst/bench/find_label_issues/): the sum of p_wrong is within a few percent
# of the true number of wrong labels at 10-40% uniform and 10-20%
# class-conditional noise, and about 1-2% of labels at 0% noise.

# Rows used for the fit: evenly spaced, at most max_rows of n.
cl_fit_rows <- function(n, max_rows = 5000L) {
  if (n <= max_rows) return(seq_len(n))
  unique(as.integer(round(seq(1, n, length.out = max_rows))))
}

# Column-normalised noise matrix from a count matrix after adding the mean
# off-diagonal count of each column to its off-diagonal cells.
cl_shrunk_noise <- function(calibrated) {
  k <- ncol(calibrated)
  cs <- calibrated
  for (j in seq_len(k)) {
    off <- seq_len(k)[-j]
    cs[off, j] <- cs[off, j] + mean(calibrated[off, j])
  }
  tot <- colSums(cs)
  sweep(cs, 2, ifelse(tot > 0, tot, 1), "/")
}

# log P minus its row maximum (floored at log(1e-300)), so that
# cl_temper(lp, a) = P^a / rowSums(P^a) needs one exp per cell.
cl_log_probs <- function(p) {
  l <- log(pmax(p, 1e-300))
  l - l[cbind(seq_len(nrow(l)), max.col(l, ties.method = "first"))]
}

cl_temper <- function(lp, a) {
  e <- exp(a * lp)
  e / rowSums(e)
}

# P(true = j | x_i, given = s_i) for every j (rows sum to 1).
cl_noise_posterior <- function(labels, truth, noise) {
  j <- noise[labels, , drop = FALSE] * truth
  den <- rowSums(j)
  den[den <= 0] <- 1
  j / den
}

cl_fit_noise_model <- function(labels, pred_probs, calibrated, iter = 6L) {
  k <- ncol(pred_probs)
  noise <- cl_shrunk_noise(calibrated)
  lp <- cl_log_probs(pred_probs)
  loglik <- function(a) {
    sum(log(pmax(rowSums(noise[labels, , drop = FALSE] * cl_temper(lp, a)), 1e-300)))
  }
  a <- 1
  for (it in seq_len(iter)) {
    a <- stats::optimize(loglik, c(0.3, 20), maximum = TRUE, tol = 1e-3)$maximum
    post <- cl_noise_posterior(labels, cl_temper(lp, a), noise)
    cnt <- rowsum(post, factor(labels, levels = seq_len(k)), reorder = TRUE) + 0.5
    noise <- sweep(cnt, 2, colSums(cnt), "/")
  }
  list(a = a, noise = unname(noise))
}

# Per-label results of the noise model for a block of rows: p_wrong, the most
# probable true class and its probability, and the most probable class other
# than the given one and its probability.
cl_wrong_block <- function(labels, pred_probs, model) {
  n <- length(labels)
  post <- cl_noise_posterior(labels, cl_temper(cl_log_probs(pred_probs), model$a), model$noise)
  own <- cbind(seq_len(n), labels)
  p_wrong <- pmin(pmax(1 - post[own], 0), 1)
  best <- max.col(post, ties.method = "first")
  prob_best <- post[cbind(seq_len(n), best)]
  post[own] <- -Inf
  other <- max.col(post, ties.method = "first")
  list(p_wrong = p_wrong, best = best, prob_best = prob_best,
       other = other, prob_other = post[cbind(seq_len(n), other)])
}

# Flags maximising the expected F1 given calibrated p_wrong: the r labels of
# highest p_wrong with r maximising 2 sum_{top r} p / (r + sum p).
flag_expected_f1 <- function(p_wrong) {
  n <- length(p_wrong)
  flagged <- logical(n)
  if (n == 0L || sum(p_wrong) <= 0) return(flagged)
  o <- order(-p_wrong, seq_len(n))
  ef1 <- 2 * cumsum(p_wrong[o]) / (seq_len(n) + sum(p_wrong))
  flagged[o[seq_len(which.max(ef1))]] <- TRUE
  flagged
}
