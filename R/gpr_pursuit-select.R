# Model selection of gpr_pursuit(): the information criteria over the trace
# and the refinement of their choice (selection = "bic", "ebic", "botorch",
# "paper"), then the sequential outlier test (selection = "esd"). Kept apart
# from R/gpr_pursuit.R so that the selection rule and the pursuit's backends
# can change independently.
#
# Log-prior of a support of size k in units of the total log-likelihood:
# the score of a model is map_loglik + pursuit_log_prior_total(|S|), except
# for "botorch", whose score is that divided by n (see "Model selection" in
# ?gpr_pursuit).
pursuit_log_prior_total <- function(k, n, selection, log_prior) {
  switch(selection,
    ebic = -0.5 * log(n) * k - 0.5 * lchoose(n, k),
    bic = ,
    esd = -0.5 * log(n) * k,
    botorch = n * vapply(k, function(kk) as.numeric(log_prior(kk)), numeric(1)),
    paper = vapply(k, function(kk) as.numeric(log_prior(kk)), numeric(1)))
}

# Scores of the trace models under a selection rule. `map_loglik` is the
# total MAP log-likelihood on the standardised scale (log marginal likelihood
# + log hyperprior), `size` the support sizes, `log_prior` the prior on |S|
# of the "botorch" and "paper" rules. Returns the score and the log-prior
# term of each model (as it enters the score).
pursuit_scores <- function(map_loglik, size, n, selection, log_prior) {
  lp <- pursuit_log_prior_total(size, n, selection, log_prior)
  if (any(is.na(lp))) abort_input("{.arg log_prior} returned NA/NaN.", class = "noisylabels_error_prior")
  if (selection == "botorch") {
    # BoTorch: per-datum MAP likelihood + log-prior of |S|
    lp <- lp / n
    score <- map_loglik / n + lp
  } else {
    score <- map_loglik + lp
  }
  list(score = score, log_prior = lp)
}

# Refinement candidates: with the Lemma-1 gains g (each point's own optimal
# rho, the rest of the model fixed) taken as additive, the support of size k
# that maximises the rule's score is the k points of largest gain, and k
# maximises cumsum(sorted g)[k] + log-prior(k).
pursuit_candidates <- function(gain, n, selection, log_prior) {
  ord <- order(gain, decreasing = TRUE)
  k <- 0:(n - 1)
  total <- c(0, cumsum(gain[ord]))[k + 1] + pursuit_log_prior_total(k, n, selection, log_prior)
  sort(ord[seq_len(k[which.max(total)])])
}

pursuit_map_loglik <- function(steps) {
  vapply(steps, function(s) -s$nll - s$penalty, numeric(1))
}

# Refinement of the selection: the pursuit visits only a few support sizes,
# and its best level can hold inliers (backward pursuit drops points in
# blocks) or miss outliers. From each of the `starts` best models (by BIC),
# the candidate support is the one that maximises the rule's score with the
# Lemma-1 gains taken as additive (pursuit_candidates()); the model is
# refitted there from a warm and a cold start, the better refit joins the
# trace, and the step is repeated from it while its score improves on the
# model it came from (at most `rounds` times), stopping at a support already
# fitted. The caller selects the best-scoring model of the whole trace.
pursuit_refine <- function(raw, xs, ys, kernel, selection, log_prior, ctl, core_fit, backend,
                           cold_start, starts = 3L, rounds = 3L, cold = TRUE) {
  n <- length(ys)
  size_of <- function(steps) vapply(steps, function(s) length(s$support), integer(1))
  score_of <- function(steps) {
    pursuit_scores(pursuit_map_loglik(steps), size_of(steps), n, selection, log_prior)$score
  }
  score <- score_of(raw$steps)
  visited <- lapply(raw$steps, function(s) sort(s$support))
  # Starts: the best pursuit models under the mildest price (BIC), so that a
  # level which overshoots the outlier set (backward pursuit drops points in
  # blocks) is among them even when the rule's own price would rank it low.
  bic <- pursuit_scores(pursuit_map_loglik(raw$steps), size_of(raw$steps), n, "bic", NULL)$score
  for (t0 in utils::head(order(bic, decreasing = TRUE), starts)) {
    cur <- t0
    for (round in seq_len(rounds)) {
      st <- raw$steps[[cur]]
      gain <- call_core(.gpr_pursuit_gain(xs, ys, kernel_spec(kernel, st$log_par), st$mean,
                                          exp(st$log_noise), st$rho, backend, ctl$neighbors,
                                          ctl$threads %||% 1L))
      cand <- pursuit_candidates(gain, n, selection, log_prior)
      if (length(cand) >= n || any(vapply(visited, identical, logical(1), cand))) break
      visited <- c(visited, list(cand))
      ctl_ref <- ctl
      ctl_ref$backward <- FALSE
      ctl_ref$levels <- integer(0)
      ctl_ref$initial_support <- as.integer(cand)
      # Two starts: warm (this model's hyperparameters) and cold (the
      # pursuit's initial values). With a clean support the cold start can
      # leave a poor basin that the backward pursuit fell into at full
      # support (e.g. a relevant input given a huge length-scale).
      warm <- core_fit(st$log_par, st$mean, st$log_noise, ctl_ref)
      cold_fit <- if (cold) core_fit(cold_start$log_par, cold_start$mean, cold_start$log_noise, ctl_ref)
      ref <- if (!is.null(cold_fit) && score_of(cold_fit$steps) > score_of(warm$steps)) cold_fit else warm
      raw$steps <- c(raw$steps, ref$steps)
      raw$stage <- c(raw$stage, "refine")
      raw$factorizations <- raw$factorizations + warm$factorizations + (cold_fit$factorizations %||% 0)
      raw$rank_one_updates <- raw$rank_one_updates + warm$rank_one_updates +
        (cold_fit$rank_one_updates %||% 0)
      score <- c(score, score_of(ref$steps))
      if (score[length(score)] <= score[cur]) break
      cur <- length(score)
    }
  }
  raw
}

# Rosner's (1983) generalised extreme studentised deviate (ESD) test, carried
# over to a GP: under the model y ~ N(m, C), C = K_f + sigma2 I, a point's
# standardised residual given the others is N(0, 1), and the test compares
# the statistic for k outliers with a Bonferroni critical value; without
# outliers and with the right hyperparameters, P(k > 0) <= alpha up to the t
# approximation. The statistics come from a forward search (below).

# Forward search (Atkinson & Riani) of a Gaussian model N(0, C),
# C = K + noise_var I formed in C++ from the inputs and the kernel, for the
# residuals r: starting from an empty clean set, the point with the smallest
# |z_j| = |r_j - mu_j| / sqrt(P_jj) joins it, mu and P the conditional mean
# and covariance of the points given the clean set (updated by one
# conditioning step, O(n^2)). M_m, the smallest |z| outside a clean set of
# m points, is the generalised ESD statistic for k = n - m outliers computed
# from a fit that no outlier has touched (a greedy removal path, which
# removes the largest |z| and conditions on the points left, lets an
# outlier swamp its inlier neighbours when sigma2 is small). The test flags
# the k = n - m points outside the smallest clean set (m >= n - kmax) whose
# M_m exceeds lambda = qt(1 - alpha / (2 (m + 1)), df = m).
# `kernel` is a resolved kernel, evaluated at the log-parameters `log_par`.
forward_search <- function(x, kernel, noise_var, r, kmax, alpha,
                           log_par = kernel_flatten(kernel)$log_par) {
  n <- length(r)
  kmax <- min(as.integer(kmax), n - 3L)
  fs <- call_core(.gp_forward_search(x, kernel_spec(kernel, log_par), noise_var, r))
  m <- 0:(n - 1L)
  crit <- stats::qt(1 - alpha / (2 * (m + 1)), df = pmax(m, 1))
  over <- which(fs$statistic > crit & m >= n - kmax)
  k <- if (length(over)) n - m[min(over)] else 0L
  list(entered = fs$entered, statistic = fs$statistic, critical = crit, k = k,
       outliers = sort(utils::tail(fs$entered, k)))
}

# The forward search of one fitted pursuit model: its kernel, mean and
# sigma2, every point tested (the support's included).
esd_search <- function(step, xs, ys, kernel, alpha, kmax) {
  forward_search(xs, kernel, exp(step$log_noise), ys - step$mean, kmax, alpha,
                 log_par = step$log_par)
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
