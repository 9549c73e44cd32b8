# Numeric labels in find_label_issues(): scores from out-of-fold residuals
# standardised by the given sd or a robust scale, each label's probability of
# being wrong from the two-group model of R/issues-twogroup.R under two clean
# shapes (the smaller of the two; two_group_ensemble()), flags that control
# the false discovery rate (R/issues-fdr.R), the count with an interval that
# spans both shapes' fits, and the model's
# prediction as the suggested value with a 90% interval. With a `tolerance`
# the probability of being wrong comes instead from the model's predictive
# distribution of the true value (tolerance_p_wrong() below).

issues_regression <- function(labels, predictions, sd, n_issues, method, fdr = 0.1,
                              tolerance = NULL, latent_sd = NULL) {
  call <- parent.frame(2)
  if (!is.numeric(labels) || is.factor(labels)) {
    abort_input(c("With {.arg predictions}, {.arg labels} must be numeric.",
                  "i" = "For class labels pass out-of-fold class probabilities as {.arg pred_probs}."),
                call = call)
  }
  n <- length(labels)
  if (!is.numeric(predictions) || length(predictions) != n) {
    abort_input("{.arg predictions} must be numeric with one value per label ({n}), not length {length(predictions)}.",
                class = "noisylabels_error_length", call = call)
  }
  if (anyNA(labels) || anyNA(predictions)) {
    abort_input(c("{.arg labels} and {.arg predictions} must not contain NA.",
                  "i" = "Drop those rows first."), class = "noisylabels_error_na", call = call)
  }
  if (any(!is.finite(labels)) || any(!is.finite(predictions))) {
    abort_input("{.arg labels} and {.arg predictions} must be finite.", call = call)
  }
  check_magnitude(labels, "labels", call = call)
  check_magnitude(predictions, "predictions", call = call)
  if (n < 3L) abort_input("At least 3 labels are needed, got {n}.", call = call)
  resid <- as.numeric(labels) - as.numeric(predictions)
  if (!is.null(sd)) {
    if (!is.numeric(sd) || !length(sd) %in% c(1L, n) || anyNA(sd) || any(!is.finite(sd)) || any(sd <= 0)) {
      abort_input("{.arg sd} must be positive and finite, one number or one per label ({n}).",
                  class = "noisylabels_error_length", call = call)
    }
    sd <- rep_len(as.numeric(sd), n)
    scale <- sd
  } else {
    scale <- rep_len(robust_scale(resid), n)
  }
  ens <- NULL
  if (is.null(tolerance)) {
    ens <- regression_wrong(as.numeric(labels), as.numeric(predictions), scale, fdr)
    w <- ens$wrong
  } else {
    w <- numeric_wrong(as.numeric(labels), as.numeric(predictions), scale,
                       latent_sd = latent_sd %||% scale, tolerance = tolerance)
  }
  z <- w$z
  sel <- fdr_select(w$p_wrong, fdr = fdr, level = 0.9, model_var = w$model_var)
  if (!is.null(ens)) sel$count <- ens$count
  flagged <- if (is.null(n_issues)) sel$flagged else flag_lowest(-abs(z), n_issues)
  li <- do.call(new_label_issues, c(
    list(seq_len(n), abs(z), flagged, label_quality = 1 - w$p_wrong,
         given_label = as.numeric(labels), prediction = as.numeric(predictions),
         residual = resid, sd = if (is.null(sd)) NA_real_ else sd, z = z),
    numeric_wrong_columns(w)))
  tol_txt <- if (is.null(tolerance)) NULL
             else if (length(tolerance) == 1L) format(tolerance) else "per-label tolerance"
  new_find_label_issues(list(
    label_issues = li, estimated_issues = as.integer(round(sel$count$estimate)),
    wrong_count = sel$count, fdr = fdr, task = "regression", method = method,
    rank_by = if (is.null(sd)) "|residual| / robust scale" else "|residual| / sd",
    flag_by = if (!is.null(n_issues)) "rank"
              else if (is.null(tolerance)) regression_flag_by(fdr)
              else sprintf("q_value <= %g (P(|label - truth| > %s))", fdr, tol_txt),
    tolerance = tolerance, latent_sd = if (!is.null(tolerance)) rep_len(latent_sd %||% scale, n),
    predictions = as.numeric(predictions), sd = sd,
    labels = as.numeric(labels), mixture = w$mixture, n = n,
    flags_supported = if (!is.null(ens)) ens$supported,
    flags_by_model = if (!is.null(ens)) ens$flags_by_model))
}

# p_wrong, count and support of numeric labels without a tolerance: both
# clean shapes of two_group_ensemble() (R/issues-twogroup.R). The suggested
# value's 90% interval is the central 90% of the generalised-normal fit's
# clean group at each label's scale.
regression_wrong <- function(labels, predictions, scale, fdr) {
  z <- (labels - predictions) / scale
  e <- two_group_ensemble(z, fdr = fdr, level = 0.9)
  gn <- e$gn
  wrong <- list(z = z, prediction = predictions, p_wrong = e$p_wrong, model_var = 0,
                half = scale * gn$a * stats::qgamma(0.9, 1 / gn$b)^(1 / gn$b),
                mixture = c(two_group_summary(gn), list(t_df = e$t$nu, t_weight = e$t$w)))
  list(wrong = wrong, count = e$count, supported = e$supported,
       flags_by_model = c(generalised_normal = e$flags_each[1], student_t = e$flags_each[2],
                          both = e$flags_agreed))
}

# The flag rule as print() shows it (the note when the two clean shapes
# disagree is format_decision_notes()'s, R/issues-methods.R).
regression_flag_by <- function(fdr) {
  sprintf("q_value <= %g (two-group model, wrong under both clean shapes)", fdr)
}

# The user's `tolerance`: positive, one number or one per label; Inf allowed.
check_tolerance <- function(tolerance, n = NULL, call = parent.frame()) {
  if (is.null(tolerance)) return(invisible(NULL))
  ok <- is.numeric(tolerance) && length(tolerance) >= 1L && !anyNA(tolerance) &&
    all(tolerance > 0) && (is.null(n) || length(tolerance) %in% c(1L, n))
  if (!ok) {
    abort_input(c("{.arg tolerance} must be positive (label units), one number or one per label.",
                  "i" = "A label is called wrong when it is off from the true value by more than {.arg tolerance}."),
                class = "noisylabels_error_tolerance", call = call)
  }
  invisible(as.numeric(tolerance))
}

# Sd of the true value under a GP's leave-one-out predictive distribution:
# the LOO variance minus the label-noise variance, floored at 1e-4 of the
# LOO variance (a latent sd of at least 1% of the predictive sd).
gp_latent_sd <- function(sd, noise_var) sqrt(pmax(sd^2 - noise_var, 1e-4 * sd^2))

# The earlier count model (kept as a baseline for the calibration study):
# two-component zero-mean Gaussian scale mixture on standardised residuals,
# fitted by EM: clean labels N(0, s1^2) with weight 1 - w, wrong labels
# N(0, s2^2) with weight w, s2 >= s1. A Beta(1, 19) prior on w (mean 5%)
# keeps the wide component from taking over when the residuals are merely
# heavy-tailed, and s1 is started from the MAD. Returns the weight, scales,
# the posterior probability of the clean component per label (monotone
# decreasing in |z|) and the expected number in the wide one.
scale_mixture <- function(z, max_iter = 500L, tol = 1e-10, prior = c(1, 19)) {
  n <- length(z)
  z2 <- z^2
  s1 <- max(stats::mad(z), 1e-8)
  s2 <- max(3 * s1, sqrt(max(z2)) / 2, 1e-8)
  w <- 0.05
  ll_old <- -Inf
  for (it in seq_len(max_iter)) {
    l1 <- log1p(-w) + stats::dnorm(z, 0, s1, log = TRUE)
    l2 <- log(w) + stats::dnorm(z, 0, s2, log = TRUE)
    mx <- pmax(l1, l2)
    lse <- mx + log(exp(l1 - mx) + exp(l2 - mx))
    post_wide <- exp(l2 - lse)
    ll <- sum(lse) + (prior[1] - 1) * log(w) + (prior[2] - 1) * log1p(-w)
    if (abs(ll - ll_old) <= tol * (1 + abs(ll))) break
    ll_old <- ll
    nw <- sum(post_wide)
    w <- min(max((nw + prior[1] - 1) / (n + sum(prior) - 2), 1e-6), 0.5)
    s1 <- max(sqrt(sum((1 - post_wide) * z2) / max(n - nw, 1e-8)), 1e-8)
    s2 <- max(sqrt(sum(post_wide * z2) / max(nw, 1e-8)), s1)
  }
  list(weight = w, sd_clean = s1, sd_wide = s2, clean_prob = 1 - post_wide,
       n_wide = sum(post_wide), loglik = ll, iterations = it)
}

# Out-of-fold means (and sds) for numeric labels.
