# Two-group model for standardised residuals of numeric labels.
#
# z = residual / scale. Clean labels: z ~ GN(0, a, b), the generalised
# normal with density b / (2 a Gamma(1/b)) exp(-(|z| / a)^b), whose shape b
# is fitted (b = 2 Gaussian, b > 2 lighter tails, b < 2 heavier; b in
# [0.5, 8]). Wrong labels: a symmetric ring 0.5 N(mu, tau^2) + 0.5 N(-mu,
# tau^2) with mu >= 0 and tau at least the clean group's robust sd (median
# |z| / 0.6745; a shifted label keeps its own noise); mu = 0 is the usual
# wide zero-mean component. The weight w of the wrong group has a
# Beta(1, 19) prior (mean 5%). Both groups are symmetric, so the fit is a
# function of |z|: maximum likelihood (BFGS from three starts) on a
# 1024-bin histogram of |z| (exact values when there are fewer distinct
# ones; values beyond 12 upper quartiles count one by one). Each label's
# posterior probability of the wrong group is computed at its own z and made
# nondecreasing in |z|.
#
# The standard error of w comes from the observed information with every
# parameter free, so it is wide when the null's shape can absorb the wrong
# group (overlapping groups, weak rankings).
#
# Why this form (inst/experiments/find_label_issues/calibration/README.md):
# a Gaussian null over-flags when the model misfits (heavy-tailed clean
# residuals) and a zero-mean wide alternative overstates the count when
# wrong labels are shifted away from zero. Against a Gaussian scale mixture,
# an Efron-style null fitted on the centre of |z|, a Student-t null, a model
# average of both nulls and a null truncated at a fitted edge, this one met
# the most targets; the README has the numbers.

gn_logdens <- function(z, a, b) log(b) - log(2 * a) - lgamma(1 / b) - (abs(z) / a)^b

gn_sd <- function(a, b) a * sqrt(gamma(3 / b) / gamma(1 / b))

# sd-equivalent of the clean group from its median |z|.
gn_rsd <- function(a, b) a * stats::qgamma(0.5, 1 / b)^(1 / b) / stats::qnorm(0.75)

lse2 <- function(l1, l2) {
  m <- pmax(l1, l2)
  m + log(exp(l1 - m) + exp(l2 - m))
}

# Log densities of both groups (weights included) at z for parameters `par`.
two_group_logdens <- function(z, par) {
  l0 <- log1p(-par$w) + gn_logdens(z, par$a, par$b)
  l1 <- log(par$w) + log(0.5) + lse2(stats::dnorm(z, par$mu, par$tau, log = TRUE),
                                     stats::dnorm(z, -par$mu, par$tau, log = TRUE))
  list(clean = l0, wrong = l1)
}

# Posterior probability of the wrong group, nondecreasing in |z|.
two_group_posterior <- function(z, par) {
  l <- two_group_logdens(z, par)
  p <- exp(l$wrong - lse2(l$clean, l$wrong))
  o <- order(abs(z))
  p[o] <- cummax(p[o])
  p
}

# Unconstrained parameters: logit(2 w), log a, logit of b in b_range, log mu,
# log(tau / robust sd - 1).
two_group_unpack <- function(th, b_range) {
  par <- list(w = 0.5 * stats::plogis(th[1]), a = exp(th[2]),
              b = b_range[1] + diff(b_range) * stats::plogis(th[3]), mu = exp(th[4]))
  par$tau <- gn_rsd(par$a, par$b) * (1 + exp(th[5]))
  par
}

two_group_pack <- function(par, b_range) {
  clamp <- function(v, lo, hi) min(max(v, lo), hi)
  c(stats::qlogis(clamp(2 * par$w, 1e-6, 1 - 1e-6)), log(par$a),
    stats::qlogis(clamp((par$b - b_range[1]) / diff(b_range), 1e-4, 1 - 1e-4)),
    log(max(par$mu, 1e-4)), log(max(par$tau / gn_rsd(par$a, par$b) - 1, 1e-4)))
}

# Histogram of |z|: counts at bin midpoints, far values one by one.
abs_bins <- function(z, nbins = 1024L) {
  az <- abs(z)
  if (length(unique(az)) <= nbins) {
    x <- sort(unique(az))
    return(list(x = x, cnt = tabulate(match(az, x), length(x))))
  }
  top <- min(max(az), 12 * stats::quantile(az, 0.75, names = FALSE))
  br <- seq(0, top, length.out = nbins + 1L)
  inb <- az <= top
  cnt <- c(tabulate(findInterval(az[inb], br, rightmost.closed = TRUE, all.inside = TRUE), nbins),
           rep(1L, sum(!inb)))
  x <- c((br[-1] + br[-length(br)]) / 2, sort(az[!inb]))
  list(x = x[cnt > 0], cnt = cnt[cnt > 0])
}

# Negative log posterior (binned likelihood plus the Beta prior on w).
two_group_nll <- function(th, bins, prior, b_range) {
  par <- two_group_unpack(th, b_range)
  l <- two_group_logdens(bins$x, par)
  v <- -(sum(bins$cnt * lse2(l$clean, l$wrong)) + (prior[1] - 1) * log(par$w) +
           (prior[2] - 1) * log1p(-par$w))
  if (is.finite(v)) v else 1e100
}

two_group_fit <- function(z, prior = c(1, 19), b_range = c(0.5, 8)) {
  bins <- abs_bins(z)
  s <- robust_scale(z)
  az <- abs(z)
  best <- NULL
  # Starts: a few wrong labels far out, fewer further out, many close in.
  for (v in list(c(0.02, 0.98), c(0.05, 0.995), c(0.2, 0.9))) {
    start <- list(w = v[1], a = sqrt(2) * s, b = 2, tau = 1.2 * s,
                  mu = max(stats::quantile(az, v[2], names = FALSE), 2 * s))
    o <- stats::optim(two_group_pack(start, b_range), two_group_nll, bins = bins, prior = prior,
                      b_range = b_range, method = "BFGS", control = list(maxit = 500))
    if (is.null(best) || o$value < best$value) best <- o
  }
  par <- two_group_unpack(best$par, b_range)
  # Standard error of w from the full observed information (delta method).
  h <- stats::optimHess(best$par, two_group_nll, bins = bins, prior = prior, b_range = b_range)
  v <- tryCatch(solve(h)[1, 1], error = function(e) NA_real_)
  if (!is.finite(v) || v < 0) v <- 0
  weight_se <- 0.5 * stats::dlogis(best$par[1]) * sqrt(v)
  p_wrong <- two_group_posterior(z, par)
  c(par, list(sd_clean = gn_sd(par$a, par$b), weight_se = weight_se, p_wrong = p_wrong,
              n_wrong = sum(p_wrong), loglik = -best$value, iterations = best$counts[[1]]))
}

# The same two-group model with a Student t clean group: z ~ s t_nu, nu in
# [1, 200]. Where the model misfits, clean residuals have a smooth heavy tail
# that the generalised normal cannot follow and that its wrong group then
# takes; the t follows it. Both fits are defensible and the data often
# cannot tell them apart, so find_label_issues() uses both
# (two_group_ensemble()).
t_rsd <- function(s, nu) s * stats::qt(0.75, nu) / stats::qnorm(0.75)

two_group_t_unpack <- function(th) {
  par <- list(w = 0.5 * stats::plogis(th[1]), s = exp(th[2]), nu = 1 + 199 * stats::plogis(th[3]),
              mu = exp(th[4]))
  par$tau <- t_rsd(par$s, par$nu) * (1 + exp(th[5]))
  par
}

two_group_t_logdens <- function(z, par) {
  list(clean = log1p(-par$w) + stats::dt(z / par$s, par$nu, log = TRUE) - log(par$s),
       wrong = log(par$w) + log(0.5) + lse2(stats::dnorm(z, par$mu, par$tau, log = TRUE),
                                            stats::dnorm(z, -par$mu, par$tau, log = TRUE)))
}

two_group_t_nll <- function(th, bins, prior) {
  par <- two_group_t_unpack(th)
  l <- two_group_t_logdens(bins$x, par)
  v <- -(sum(bins$cnt * lse2(l$clean, l$wrong)) + (prior[1] - 1) * log(par$w) +
           (prior[2] - 1) * log1p(-par$w))
  if (is.finite(v)) v else 1e100
}

two_group_fit_t <- function(z, prior = c(1, 19)) {
  bins <- abs_bins(z)
  s <- robust_scale(z)
  az <- abs(z)
  best <- NULL
  for (v in list(c(0.02, 0.98), c(0.05, 0.995), c(0.2, 0.9))) {
    for (nu in c(4, 30)) {
      th <- c(stats::qlogis(2 * v[1]), log(s), stats::qlogis((nu - 1) / 199),
              log(max(stats::quantile(az, v[2], names = FALSE), 2 * s)), log(0.2))
      o <- stats::optim(th, two_group_t_nll, bins = bins, prior = prior, method = "BFGS",
                        control = list(maxit = 500))
      if (is.null(best) || o$value < best$value) best <- o
    }
  }
  par <- two_group_t_unpack(best$par)
  h <- stats::optimHess(best$par, two_group_t_nll, bins = bins, prior = prior)
  v <- tryCatch(solve(h)[1, 1], error = function(e) NA_real_)
  if (!is.finite(v) || v < 0) v <- 0
  l <- two_group_t_logdens(z, par)
  p <- exp(l$wrong - lse2(l$clean, l$wrong))
  o <- order(abs(z))
  p[o] <- cummax(p[o])
  c(par, list(weight_se = 0.5 * stats::dlogis(best$par[1]) * sqrt(v), p_wrong = p,
              n_wrong = sum(p), loglik = -best$value, iterations = best$counts[[1]]))
}

# Both clean shapes at once: the flags, the count and whether the data
# support flags at the asked rate.
# - p_wrong is the smaller of the two fits' posteriors, so a label is flagged
#   only when both clean shapes call it wrong (the q-values of
#   R/issues-fdr.R on it keep the FDR under either model).
# - The count is the mean of the two fits' expected counts; its interval runs
#   from the lower to the upper end of the two fits' own intervals (each the
#   Poisson-binomial spread plus n^2 var(w) from the fit's observed
#   information), so it carries the spread between the estimators.
# - `supported` is FALSE when, at this fdr, the fit that flags more flags at
#   least twice as many labels (plus 5) as both agree on: the ranking then
#   does not separate wrong labels from a heavy clean tail, and the result
#   says to review the ranking instead.
two_group_ensemble <- function(z, fdr = 0.1, level = 0.9) {
  gn <- two_group_fit(z)
  tt <- two_group_fit_t(z)
  n <- length(z)
  p <- pmin(gn$p_wrong, tt$p_wrong)
  counts <- lapply(list(gn, tt), function(f) wrong_count(f$p_wrong, level, (n * f$weight_se)^2))
  est <- mean(c(gn$n_wrong, tt$n_wrong))
  lo <- min(counts[[1]]$lower, counts[[2]]$lower)
  hi <- max(counts[[1]]$upper, counts[[2]]$upper)
  count <- list(estimate = est, lower = lo, upper = hi, rate = est / n, rate_lower = lo / n,
                rate_upper = hi / n, level = level,
                estimators = c(generalised_normal = gn$n_wrong, student_t = tt$n_wrong))
  n_flag <- c(sum(fdr_qvalues(gn$p_wrong) <= fdr), sum(fdr_qvalues(tt$p_wrong) <= fdr))
  agreed <- sum(fdr_qvalues(p) <= fdr)
  list(p_wrong = p, count = count, gn = gn, t = tt, flags_each = n_flag, flags_agreed = agreed,
       supported = max(n_flag) < 2 * agreed + 5)
}

# A scale that ignores a minority of gross errors: the MAD, or the mean
# absolute deviation when more than half the residuals are identical.
robust_scale <- function(r) {
  s <- stats::mad(r)
  if (!is.finite(s) || s <= 0) s <- mean(abs(r - stats::median(r)))
  if (!is.finite(s) || s <= 0) s <- 1
  s
}

# What print/summary show of the fitted two-group model.
two_group_summary <- function(fit) {
  list(weight = fit$w, sd_clean = fit$sd_clean, shape = fit$b, shift = fit$mu, sd_wide = fit$tau,
       weight_se = fit$weight_se, loglik = fit$loglik, iterations = fit$iterations)
}

# The user's notion of wrong: |label - truth| > tolerance. With T ~ N(m, v)
# the model's predictive distribution of the true value,
#   p_wrong = P(|y - T| > tol) = Phi((y - m - tol) / sqrt(v)) + Phi((m - y - tol) / sqrt(v)),
# which is 1 as tol -> 0 and 0 as tol -> Inf. No share of wrong labels is
# fitted, so the count's interval is the Poisson-binomial one alone.
tolerance_p_wrong <- function(labels, mean, latent_sd, tolerance) {
  r <- labels - mean
  stats::pnorm((r - tolerance) / latent_sd) + stats::pnorm((-r - tolerance) / latent_sd)
}

# p_wrong of numeric labels with the 90% half-width of the suggested value's
# interval. `z` defaults to residual / scale; `latent_sd` is needed with a
# tolerance only.
numeric_wrong <- function(labels, predictions, scale, z = NULL, latent_sd = NULL,
                          tolerance = NULL) {
  n <- length(labels)
  z <- z %||% ((labels - predictions) / scale)
  if (!is.null(tolerance)) {
    latent_sd <- rep_len(latent_sd, n)
    return(list(z = z, prediction = predictions,
                p_wrong = tolerance_p_wrong(labels, predictions, latent_sd, rep_len(tolerance, n)),
                model_var = 0, half = stats::qnorm(0.95) * latent_sd, mixture = NULL))
  }
  fit <- two_group_fit(z)
  # The central 90% of the fitted clean residual distribution at each
  # label's own scale.
  list(z = z, prediction = predictions, p_wrong = fit$p_wrong, model_var = (n * fit$weight_se)^2,
       half = scale * fit$a * stats::qgamma(0.9, 1 / fit$b)^(1 / fit$b),
       mixture = two_group_summary(fit))
}

# Columns of label_issues() for numeric labels from numeric_wrong().
numeric_wrong_columns <- function(w) {
  predictions <- w$prediction
  list(p_wrong = w$p_wrong, q_value = fdr_qvalues(w$p_wrong),
       suggested_value = predictions, suggested_lower = predictions - w$half,
       suggested_upper = predictions + w$half)
}
