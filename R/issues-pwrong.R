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
#   P(true | x) = max(T^-1 P, 0), renormalised.
# With the true T this posterior found 80-90% F1 at a false discovery
# proportion of 0.02-0.11 on every class-conditional case of
# inst/bench/find_label_issues/, so T is the limiting factor, not the form.
# T comes from the channel model (cl_fit_channel()): the truth a softmax of
# an affine map of log(P[, -K] / P[, K]), the given label drawn from it
# through T. It contains P itself and the tempered model, and it can undo
# flips into one class, which a linear-softmax model fitted on the noisy
# labels cannot represent: there it fits the given labels far better than
# P (0.12 per label at 40% flips to the next of 3 classes), and the mean
# diagonal of its T was within 0.02 of the truth in every setting of the
# benchmark (first seed, fitted on all 5,000 rows), where confident
# learning's is up to 0.19 too low and the tempered one's up to 0.23 too
# high. A label's p_wrong is the larger of the two models' (its suggestion
# comes from the same model), both with the channel's T;
# they are used only where the channel model fits significantly better than
# P (likelihood ratio test), else the tempered model alone: without noise
# the clipping at 0 gives p_wrong = 1 to the unusual rows of overlapping
# classes. Its own posterior ranks better still (mean AUROC 0.988 against
# 0.977 in the benchmark), but the per-chunk C++ kernel of the chunked path
# forms only the tempered and unmixed posteriors.
#
# The fit uses at most `max_rows` evenly spaced rows, the same rows whether
# the probabilities are in memory or read in chunks.

# Tempered noise rate from which the unmixed model is used without a
# likelihood gain where the channel model has too few rows.
cl_unmix_min_rate <- 0.15

# The channel model (cl_fit_channel()): probability floor of its features,
# rows of its fit, and the level of the likelihood ratio test that turns it on.
cl_channel_floor <- 1e-6
cl_channel_rows <- 2000L
cl_channel_level <- 0.01

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

# The channel model: the truth a softmax of an affine map of the log-ratios
# z = log(P[, -K] / P[, K]) (P floored at cl_channel_floor), the given label
# drawn from it through T, both fitted by maximum likelihood of the given
# labels (BFGS on the affine map and on T's columns as softmaxes, from the
# tempered fit). Returns T, the mean log-likelihood gain over P itself and
# the BFGS counts.
cl_fit_channel <- function(labels, pred_probs, a0, noise0, maxit = 500L) {
  n <- nrow(pred_probs)
  k <- ncol(pred_probs)
  k1 <- k - 1L
  l <- log(pmax(pred_probs, cl_channel_floor))
  z <- cbind(l[, -k, drop = FALSE] - l[, k], 1)
  given <- matrix(0, n, k)
  given[cbind(seq_len(n), labels)] <- 1
  nw <- k1 * k
  rows <- seq_len(n)
  # f and its gradient share one evaluation per parameter vector.
  state <- new.env(parent = emptyenv())
  evaluate <- function(th) {
    if (identical(th, state$th)) return(state)
    tau <- matrix(th[nw + seq_len(k * k)], k, k)
    tau <- exp(tau - rep(apply(tau, 2, max), each = k))
    state$noise <- tau / rep(colSums(tau), each = k)
    eta <- z %*% cbind(matrix(th[seq_len(nw)], k, k1), 0)
    eta <- exp(eta - eta[cbind(rows, max.col(eta, ties.method = "first"))])
    state$truth <- eta / rowSums(eta)
    state$row_noise <- state$noise[labels, , drop = FALSE]
    state$lik <- pmax(rowSums(state$row_noise * state$truth), 1e-300)
    state$th <- th
    state
  }
  f <- function(th) -sum(log(evaluate(th)$lik))
  g <- function(th) {
    s <- evaluate(th)
    tl <- s$truth / s$lik
    d_noise <- crossprod(given, tl)
    d_tau <- s$noise * (d_noise - rep(colSums(s$noise * d_noise), each = k))
    -c(crossprod(z, (s$row_noise * tl - s$truth)[, -k, drop = FALSE]), d_tau)
  }
  th <- c(rbind(diag(a0, k1), 0), log(pmax(noise0, 1e-4)))
  o <- stats::optim(th, f, g, method = "BFGS", control = list(maxit = maxit, reltol = 1e-6))
  s <- evaluate(o$par)
  list(noise = unname(s$noise), gain = (sum(log(s$lik)) - cl_given_loglik(labels, pred_probs)) / n,
       counts = o$counts)
}

# Log-likelihood of the given labels under P as it is (the reference of
# both noise models' gains).
cl_given_loglik <- function(labels, pred_probs) {
  sum(log(pmax(pred_probs[cbind(seq_along(labels), labels)], 1e-300)))
}

# Free parameters of the channel model against P itself: the affine map
# (K - 1 classes, K - 1 log-ratios and an intercept) and T (K - 1 per column).
cl_channel_df <- function(k) 2L * k * (k - 1L)

cl_fit_noise_model <- function(labels, pred_probs, calibrated, iter = 6L) {
  k <- ncol(pred_probs)
  noise <- cl_shrunk_noise(calibrated)
  lp <- cl_log_probs(pred_probs)
  loglik <- function(a, noise) {
    sum(log(pmax(rowSums(noise[labels, , drop = FALSE] * cl_temper(lp, a)), 1e-300)))
  }
  fit_a <- function(noise) {
    stats::optimize(loglik, c(0.3, 20), noise = noise, maximum = TRUE, tol = 1e-3)$maximum
  }
  a <- 1
  for (it in seq_len(iter)) {
    a <- fit_a(noise)
    post <- cl_noise_posterior(labels, cl_temper(lp, a), noise)
    cnt <- rowsum(post, factor(labels, levels = seq_len(k)), reorder = TRUE) + 0.5
    noise <- sweep(cnt, 2, colSums(cnt), "/")
  }
  noise <- unname(noise)
  # Evidence of label noise: the mean log-likelihood of the given labels
  # under the tempered model minus under P as it is.
  gain <- (loglik(a, noise) - cl_given_loglik(labels, pred_probs)) / length(labels)
  # The channel model, where the rows suffice for its parameters; used (with
  # its T in both models) only where it fits the labels significantly better
  # than P itself (likelihood ratio test at level cl_channel_level): without
  # noise the unmixed model flags the unusual rows of clean, overlapping
  # classes (4.7% of 3,000 clean labels of 5 classes).
  rows <- cl_fit_rows(length(labels), cl_channel_rows)
  channel <- if (length(rows) >= 10 * cl_channel_df(k)) {
    cl_fit_channel(labels[rows], pred_probs[rows, , drop = FALSE], a, noise)
  }
  # The share of wrong labels under a T (its off-diagonal mass, weighted by
  # the given-label counts).
  rate_of <- function(noise) 1 - sum(diag(noise) * tabulate(labels, k)) / length(labels)
  if (!is.null(channel)) {
    evidence <- 2 * length(rows) * channel$gain >
      stats::qchisq(1 - cl_channel_level, cl_channel_df(k)) && rcond(channel$noise) > 1e-8
    if (evidence) {
      noise <- channel$noise
      a <- fit_a(noise)
    }
    unmix_noise <- noise
  } else {
    # Too few rows for the channel model: the unmixed model takes the mean
    # of confident learning's T and the tempered one, with evidence a gain
    # or a tempered rate of at least cl_unmix_min_rate (the tempered fit
    # drifts towards no noise, so such a rate survives only with noise).
    tot <- colSums(calibrated)
    unmix_noise <- (unname(sweep(calibrated, 2, ifelse(tot > 0, tot, 1), "/")) + noise) / 2
    evidence <- (gain > 0 || rate_of(noise) >= cl_unmix_min_rate) && rcond(unmix_noise) > 1e-8
  }
  list(a = a, noise = noise, gain = gain, rate = rate_of(noise),
       channel_gain = if (!is.null(channel)) channel$gain,
       unmix_noise = if (evidence) unmix_noise, unmix = if (evidence) solve(unmix_noise))
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
