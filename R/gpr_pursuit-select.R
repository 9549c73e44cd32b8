# Model selection of gpr_pursuit() by a sequential outlier test
# (selection = "esd"). Kept apart from R/gpr_pursuit.R so that the selection
# rule and the pursuit's backends can change independently.
#
# Rosner's (1983) generalised extreme studentised deviate (ESD) test, carried
# over to a GP: under the model y ~ N(m, C), C = K_f + sigma2 I, every
# leave-one-out standardised residual z_i = (Q r)_i / sqrt(Q_ii)
# (Q = C^-1, r = y - m) is N(0, 1). Step j of the path removes the point
# with the largest |z| among the remaining m_j = n - j + 1 points (an exact
# Schur-complement downdate of Q, O(m^2)) and records R_j = max |z|. The
# test compares R_j with the Bonferroni critical value
# lambda_j = qt(1 - alpha / (2 m_j), df = m_j - 1) and flags the first k
# points, k the largest j with R_j > lambda_j. Without outliers and with the
# right hyperparameters, P(k > 0) <= alpha up to the t approximation, so the
# false-positive count is controlled by construction; points after the
# first exceedance are still tested (the largest j), which is what keeps a
# block of outliers from masking itself.

# The ESD path of a Gaussian model N(0, C) for the residuals r: the points
# in removal order, the statistics R_j and the critical values lambda_j.
# Returns k, the number of points the test flags.
esd_path <- function(C, r, kmax, alpha) {
  n <- length(r)
  kmax <- min(as.integer(kmax), n - 3L)
  Q <- .chol_inverse(C, "lapack")
  b <- drop(Q %*% r)
  active <- seq_len(n)
  removed <- integer(kmax)
  stat <- numeric(kmax)
  for (j in seq_len(kmax)) {
    dq <- diag(Q)
    i <- which.max(abs(b) / sqrt(dq))
    removed[j] <- active[i]
    stat[j] <- abs(b[i]) / sqrt(dq[i])
    # C without point i has the inverse Q[-i, -i] - q q' / Q_ii (q = Q[-i, i]),
    # and (Q' r[-i]) = b[-i] - q b_i / Q_ii.
    q <- Q[-i, i]
    b <- b[-i] - q * (b[i] / dq[i])
    Q <- Q[-i, -i, drop = FALSE] - tcrossprod(q) / dq[i]
    active <- active[-i]
  }
  m <- n - seq_len(kmax) + 1
  crit <- stats::qt(1 - alpha / (2 * m), df = m - 1)
  over <- which(stat > crit)
  list(removed = removed, statistic = stat, critical = crit,
       k = if (length(over)) max(over) else 0L)
}

# Forward search (Atkinson & Riani) of a Gaussian model N(0, C) for the
# residuals r: starting from an empty clean set, the point with the smallest
# |z_j| = |r_j - mu_j| / sqrt(P_jj) joins it, mu and P the conditional mean
# and covariance of the points given the clean set (updated by one
# conditioning step, O(n^2)). M_m, the smallest |z| outside a clean set of
# m points, is the generalised ESD statistic for k = n - m outliers computed
# from a fit that no outlier has touched (the greedy removal path of
# esd_path() conditions on the outliers themselves, so that an outlier
# swamps its inlier neighbours when sigma2 is small). The test flags the
# k = n - m points outside the smallest clean set (m >= n - kmax) whose M_m
# exceeds lambda = qt(1 - alpha / (2 (m + 1)), df = m).
forward_search <- function(C, r, kmax, alpha) {
  n <- length(r)
  kmax <- min(as.integer(kmax), n - 3L)
  mu <- numeric(n)
  P <- C
  inside <- logical(n)
  entered <- integer(n)
  stat <- numeric(n)
  for (m in 0:(n - 1L)) {
    out <- which(!inside)
    z <- abs(r[out] - mu[out]) / sqrt(diag(P)[out])
    i <- which.min(z)
    j <- out[i]
    entered[m + 1L] <- j
    stat[m + 1L] <- z[i]
    if (m == n - 1L) break
    p <- P[, j]
    mu <- mu + p * ((r[j] - mu[j]) / p[j])
    P <- P - tcrossprod(p) / p[j]
    inside[j] <- TRUE
  }
  m <- 0:(n - 1L)
  crit <- stats::qt(1 - alpha / (2 * (m + 1)), df = pmax(m, 1))
  over <- which(stat > crit & m >= n - kmax)
  k <- if (length(over)) n - m[min(over)] else 0L
  list(entered = entered, statistic = stat, critical = crit, k = k,
       outliers = sort(utils::tail(entered, k)))
}

# The forward search of one fitted pursuit model: its kernel, mean and
# sigma2, every point tested (the support's included).
esd_search <- function(step, xs, ys, kernel, alpha, kmax) {
  C <- .kernel_gram(xs, kernel_spec(kernel, step$log_par))
  diag(C) <- diag(C) + exp(step$log_noise)
  forward_search(C, ys - step$mean, kmax, alpha)
}

# Selection by the forward-search test. The test needs hyperparameters that
# the outliers did not shape, and the outlier set decides which data they
# are learned from, so the set is found by a fixed-point iteration: test
# with a model's hyperparameters, refit the model with the flagged points as
# its support (kernel re-learned on the rest; warm and cold start, the
# better MAP fit kept), test again with the refit, until the flagged set
# repeats (at most `rounds` refits). Two starts:
#   * the best model of the trace by BIC (after the refinement);
#   * the model refitted on the cleanest half of the data (the first
#     n / 2 points of the first start's forward search): a cluster of
#     outliers that the first start's kernel explains as signal (a short
#     length-scale on an input on which they differ) is outside that half,
#     so its kernel is learned without them.
# The two fixed points are compared by the BIC, which is where a masked
# cluster shows: the fit that keeps it pays in likelihood.
# The refits join the trace (stage "esd"); returns the trace with the index
# of the selected model in `selected`.
pursuit_esd <- function(raw, xs, ys, kernel, ctl, core_fit, alpha, cold_start, max_size,
                        rounds = 4L) {
  n <- length(ys)
  # at most half of the points, and no more than the schedule's largest
  # support (n_outliers = 0 asks for the model without outliers)
  kmax <- min(floor(n / 2), max_size)
  size_of <- function(steps) vapply(steps, function(s) length(s$support), integer(1))
  bic_of <- function(steps) {
    pursuit_scores(pursuit_map_loglik(steps), size_of(steps), n, "bic", NULL)$score
  }
  bic <- bic_of(raw$steps)
  visited <- lapply(raw$steps, function(s) sort(s$support))
  refit <- function(from, S) {
    st <- raw$steps[[from]]
    ctl_ref <- ctl
    ctl_ref$backward <- FALSE
    ctl_ref$levels <- integer(0)
    ctl_ref$initial_support <- as.integer(S)
    warm <- core_fit(st$log_par, st$mean, st$log_noise, ctl_ref)
    cold <- core_fit(cold_start$log_par, cold_start$mean, cold_start$log_noise, ctl_ref)
    ref <- if (pursuit_map_loglik(cold$steps) > pursuit_map_loglik(warm$steps)) cold else warm
    raw$steps <<- c(raw$steps, ref$steps)
    raw$stage <<- c(raw$stage, "esd")
    raw$factorizations <<- raw$factorizations + warm$factorizations + cold$factorizations
    raw$rank_one_updates <<- raw$rank_one_updates + warm$rank_one_updates + cold$rank_one_updates
    visited <<- c(visited, list(sort(as.integer(S))))
    bic <<- c(bic, bic_of(ref$steps))
    length(raw$steps)
  }
  iterate <- function(cur) {
    for (round in seq_len(rounds + 1L)) {
      S <- esd_search(raw$steps[[cur]], xs, ys, kernel, alpha, kmax)$outliers
      if (identical(S, visited[[cur]])) break
      seen <- which(vapply(visited, identical, logical(1), S))
      if (length(seen)) {
        cur <- seen[which.max(bic[seen])]
        next
      }
      if (round > rounds) break
      cur <- refit(cur, S)
    }
    cur
  }
  best <- which.max(bic)
  if (kmax < 1) {
    raw$selected <- best
    return(raw)
  }
  a <- iterate(best)
  search <- esd_search(raw$steps[[best]], xs, ys, kernel, alpha, kmax)
  half <- refit(best, sort(utils::tail(search$entered, n - floor(n / 2))))
  b <- iterate(half)
  if (b == half) b <- a  # the half fit itself is a start, not a candidate
  empty <- which(size_of(raw$steps) == 0L)
  c0 <- if (length(empty)) iterate(empty[which.max(bic[empty])]) else a
  raw$selected <- esd_choose(unique(c(a, b, c0)), raw$steps, n)
  raw
}

# Choice between the fixed points. Each is self-consistent (its own fit's
# test flags exactly its support), and there can be several: with
# heavy-tailed residuals, trimming the most extreme inliers lowers sigma2,
# which makes the next ones significant (the robust starts end there), while
# the start from the empty support keeps the hyperparameters learned from
# all points. The fixed points are compared by the extended BIC (Chen & Chen
# 2008, gamma = 0.5), whose price for a support of size k,
# 0.5 log(n) k + 0.5 log choose(n, k), counts the supports of that size a
# search could have picked: trimmed tails rarely pay for it, a cluster of
# outliers that a smaller support's kernel explains as signal does. The
# empty support competes only when every start ends there: a fit whose
# hyperparameters were learned with all points can flag nothing because the
# outliers inflated sigma2 (masking), which the robust starts were made to
# avoid.
esd_choose <- function(candidates, steps, n) {
  size <- vapply(steps[candidates], function(s) length(s$support), integer(1))
  if (any(size > 0L)) {
    candidates <- candidates[size > 0L]
    size <- size[size > 0L]
  }
  ebic <- pursuit_scores(pursuit_map_loglik(steps[candidates]), size, n, "ebic", NULL)$score
  candidates[which.max(ebic)]
}
