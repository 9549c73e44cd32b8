# Confident learning, the probability that a label is wrong: two noise
# models fitted to the labels, and per-label posteriors under each.
#
# Out-of-fold probabilities P come from a model trained on the noisy labels,
# so they sit between P(true | x) and P(given | x): read as P(true | x) they
# count the noise twice, and the posterior that a clearly wrong label is
# correct stays far from 0 (40% uniform noise, 10 classes: 0.36 for a label
# the model gives 0.04).
#
# The tempered model reads the truth as a tempered version of P,
#   P(true = j | x) = P[j]^a / sum_l P[l]^a,
# and the given label as drawn from the noise matrix T[s, j] = P(given = s |
# true = j). Starting from confident learning's calibrated joint (shrunk as
# in cl_posterior()), EM alternates a (one-dimensional maximum likelihood of
# the given labels) and T (expected counts of (given, true) pairs plus half a
# count per cell), six rounds. The likelihood of the given labels does not
# identify the noise: P itself (a = 1, T = I) already fits them as well as
# any (a, T), and EM run to convergence drifts there (40% flips to the next
# class, 3 classes: the sum of p_wrong falls from 769 after six rounds to 96
# after fifty, against 2,015 wrong labels). Six rounds keep most of the
# noise under uniform flips, but where flips go to one other class the
# tempered family cannot undo them (it would need a >> 1, which spoils the
# rows between classes), and the count falls to 44-84% of the truth at 40%.
#
# The unmixed model reads P as P(given | x) = T P(true | x) and inverts it:
#   P(true | x) = max(T^-1 P, 0), renormalised,
# with T the mean of confident learning's noise matrix (which overcounts by
# 5-50% with many classes and little noise) and the tempered model's (which
# undercounts under class-conditional flips). With the true T this posterior
# found 80-90% F1 at a false discovery proportion of 0.02-0.11 on every
# class-conditional case of inst/bench/find_label_issues/, so T is the
# limiting factor, not the form. A label's p_wrong is the larger of the two
# models' (its suggestion comes from the same model): each model misses the
# wrong labels of the noise the other describes. The unmixed model is used
# only with evidence of noise: the tempered model fits the given labels
# better than P itself (`gain` > 0), or estimates at least 15% wrong labels
# (`rate`); without noise, the clipping at 0 gives p_wrong = 1 to the
# unusual rows of overlapping classes. Where 40% of the labels are flipped
# to one other class (3 classes) neither model fits better than P, since
# the labels carry no likelihood evidence of that noise, but the tempered
# rate (0.18-0.22) still shows it: with the gain alone the unmixed model
# was off there and 0.4% of the labels were flagged against 40% wrong.
#
# The fit uses at most `max_rows` evenly spaced rows, the same rows whether
# the probabilities are in memory or read in chunks.

# Tempered noise rate from which the unmixed model is used without a
# likelihood gain (see cl_fit_noise_model()).
cl_unmix_min_rate <- 0.15

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
  noise <- unname(noise)
  # Evidence of label noise: the mean log-likelihood of the given labels
  # under the tempered model minus under P as it is.
  gain <- (loglik(a) - sum(log(pmax(pred_probs[cbind(seq_along(labels), labels)], 1e-300)))) /
    length(labels)
  tot <- colSums(calibrated)
  cl_noise <- unname(sweep(calibrated, 2, ifelse(tot > 0, tot, 1), "/"))
  unmix_noise <- (cl_noise + noise) / 2
  # The tempered model's share of wrong labels (its noise matrix's
  # off-diagonal mass, weighted by the given-label counts).
  rate <- 1 - sum(diag(noise) * tabulate(labels, k)) / length(labels)
  # The unmixed model only with evidence of noise (without it, it flags the
  # unusual rows of clean, overlapping classes: 4.7% of 3,000 clean labels
  # of 5 classes), and only with an inverse to read the truth by. Evidence is
  # a likelihood gain, or a tempered noise rate of at least
  # cl_unmix_min_rate: the tempered fit drifts towards no noise, so a rate
  # that large survives only where there is noise, also where flips into one
  # class leave no likelihood gain (40% of the labels flipped to the next of
  # 3 classes: gain -0.02, rate 0.18-0.22; clean sets: rate 0.002-0.07).
  evidence <- gain > 0 || rate >= cl_unmix_min_rate
  unmix <- if (evidence && rcond(unmix_noise) > 1e-8) solve(unmix_noise)
  list(a = a, noise = noise, gain = gain, rate = rate,
       unmix_noise = if (!is.null(unmix)) unmix_noise, unmix = unmix)
}

# P(true | x) under the unmixed model: max(T^-1 P, 0) per row, renormalised.
# Each entry is a row sum of products (as the C++ kernel forms it).
cl_unmix <- function(pred_probs, unmix) {
  n <- nrow(pred_probs)
  k <- ncol(pred_probs)
  raw <- matrix(0, n, k)
  for (j in seq_len(k)) raw[, j] <- rowSums(pred_probs * rep(unmix[j, ], each = n))
  raw <- pmax(raw, 0)
  tot <- rowSums(raw)
  raw / ifelse(tot > 0, tot, 1)
}

# Per-label results of the noise model for a block of rows: p_wrong, the most
# probable true class and its probability, and the most probable class other
# than the given one and its probability.
cl_wrong_block <- function(labels, pred_probs, model) {
  n <- length(labels)
  own <- cbind(seq_len(n), labels)
  post <- cl_noise_posterior(labels, cl_temper(cl_log_probs(pred_probs), model$a), model$noise)
  p_wrong <- pmin(pmax(1 - post[own], 0), 1)
  if (!is.null(model$unmix)) {
    alt <- cl_noise_posterior(labels, cl_unmix(pred_probs, model$unmix), model$unmix_noise)
    alt_wrong <- pmin(pmax(1 - alt[own], 0), 1)
    use <- alt_wrong > p_wrong
    post[use, ] <- alt[use, , drop = FALSE]
    p_wrong[use] <- alt_wrong[use]
  }
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
