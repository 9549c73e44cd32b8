# The flag contract of fitted models. A fit whose model gives each label a
# probability of being wrong (its `has_p_wrong`, set by new_noisylabels_fit()
# in R/generics.R: gpr_loo, gpr_pursuit, gpr_baseline, gpc_ep) reports it in
# label_issues() as `p_wrong`, with `q_value` (R/issues-fdr.R) and the fix
# the model suggests; find_label_issues(fit) flags q_value <= fdr and adds
# the estimated number of wrong labels with its interval, as it does for
# out-of-fold predictions.
#
# Numeric labels (the GP regressions): the leave-one-out prediction of label
# i is the model's guess of its true value. Standardised by the sd a clean
# label's LOO residual would have, the residuals go through the two-group
# model of R/issues-twogroup.R; with a `tolerance`, p_wrong = P(|y - T| >
# tolerance) with T ~ N(LOO mean, LOO latent variance) instead.
# Binary labels (gpc_ep): the EP posterior probability that the label was
# flipped is p_wrong itself.

# gpr_loo: z_i = sign(e_i) sqrt(chisq_i), the clean-level statistic of
# ?gpr_loo ("Noise scores and flags"); the clean scale sqrt(v_i + s0).
gpr_loo_wrong <- function(object, tolerance = NULL) {
  y <- object$y
  pred <- y - object$loo_residual
  scale <- sqrt(object$loo_sd^2 + object$noise_level)
  z <- sign(object$loo_residual) * sqrt(object$flag_statistic)
  latent <- pmax(object$loo_sd, 0.01 * scale)
  numeric_wrong(y, pred, scale, z = z, latent_sd = latent, tolerance = tolerance)
}

# gpr_pursuit: the leave-one-out predictive of the selected model (noise
# sigma2 + rho_i), computed on the standardised scale by the covariance
# operator the fit used (dense or its Vecchia neighbours). Returns, on the
# label scale, each label, its leave-one-out mean, the sd a clean label's
# residual would have and the latent sd (also used by gpr_baseline's
# label_issues(), whose final fit is a gpr_pursuit fit with an empty support).
gpr_pursuit_loo <- function(object) {
  ys <- object$y
  s2 <- object$y_scale^2
  noise <- (object$sigma2 + object$rho) / s2
  mean_std <- (object$mean - object$y_center) / object$y_scale
  loo <- call_core(.gp_loo(object$x, ys - mean_std, kernel_spec(object$kernel), noise,
                           object$vecchia_neighbors, object$threads %||% 1L))
  latent_var <- pmax(loo$sd^2 - noise, 1e-4 * object$sigma2 / s2)
  scale <- sqrt(latent_var + object$sigma2 / s2) * object$y_scale
  y <- object$y_center + object$y_scale * ys
  pred <- y - loo$residual * object$y_scale
  list(label = y, prediction = pred, scale = scale, latent_sd = sqrt(latent_var) * object$y_scale)
}

gpr_pursuit_wrong <- function(object, tolerance = NULL) {
  loo <- gpr_pursuit_loo(object)
  numeric_wrong(loo$label, loo$prediction, loo$scale, latent_sd = loo$latent_sd,
                tolerance = tolerance)
}

# Binary labels: the suggested class is the most probable true class, the
# other one for a flagged label (believed wrong), with its probability.
binary_wrong_columns <- function(p_wrong, labels, flagged) {
  lv <- levels(labels)
  other <- factor(lv[3L - as.integer(labels)], levels = lv)
  switch_to_other <- flagged | p_wrong > 0.5
  suggested <- labels
  suggested[switch_to_other] <- other[switch_to_other]
  list(p_wrong = p_wrong, q_value = fdr_qvalues(p_wrong), suggested_label = suggested,
       prob_suggested = ifelse(switch_to_other, p_wrong, 1 - p_wrong))
}

# Flags of a fit's label_issues(): q_value <= fdr unless the caller chose the
# method's own rule (`own`, a logical vector or NULL).
fit_flags <- function(q_value, fdr, own = NULL) {
  if (!is.null(own)) return(own)
  check_fdr(fdr)
  q_value <= fdr
}

# Flags of a fit whose scores are probabilities that the label is wrong:
# q_value <= fdr, or score > threshold when the caller gives one.
probability_flags <- function(p_wrong, q_value, fdr, threshold = NULL) {
  if (is.null(threshold)) return(fit_flags(q_value, fdr))
  check_number(threshold, "threshold", 0, 1)
  p_wrong > threshold
}

# find_label_issues() on a fitted model: the arguments its label_issues()
# gets, from what the fit recorded (new_noisylabels_fit()): a fit with
# p_wrong is flagged at q_value <= fdr, and with numeric labels it also takes
# a `tolerance`; the others keep their own rule.
fit_issue_args <- function(fit, fdr, tolerance, call) {
  numeric_p <- fit$task == "regression" && fit$has_p_wrong
  if (!is.null(tolerance) && !numeric_p) {
    why <- if (fit$task != "regression") "has class labels" else "gives no probability that a label is wrong"
    abort_input(c("{.arg tolerance} applies to numeric labels; a {.cls {class(fit)[1]}} fit {why}.",
                  "i" = "Leave {.arg tolerance} at {.code NULL}."),
                class = "noisylabels_error_tolerance", call = call)
  }
  if (numeric_p) return(list(fdr = fdr, tolerance = tolerance))
  if (fit$has_p_wrong) return(list(fdr = fdr))
  list()
}

# The flagged column of a label_issues() result in row order.
flags_by_row <- function(li) {
  out <- logical(nrow(li))
  out[li$row] <- li$flagged
  out
}

# ---- a fitted model of this package ---------------------------------------

# Put a fit's own noise scores into the result contract. label_quality maps
# the scores to [0, 1]: scores that already are probabilities of a wrong
# label (gpc_ep, gpr_pursuit, label_dist_vb instances) give 1 - score; others
# (gpr_loo's noise variances, sgd_robust's loss-flatness gap) give
# 1 / (1 + max(score, 0) / median(|score|)). Fits whose label_issues() carry
# p_wrong (recorded as `has_p_wrong` by new_noisylabels_fit(): gpr_loo,
# gpr_pursuit, gpr_baseline, gpc_ep) are flagged at q_value <= fdr with the
# estimated count; the others keep their own rule.
issues_from_fit <- function(fit, n_issues = NULL, fdr = 0.1, tolerance = NULL, call = NULL) {
  check_fdr(fdr)
  li <- do.call(label_issues, c(list(fit), fit_issue_args(fit, fdr, tolerance, call)))
  s <- li$score
  # Every label_issues() has a p_wrong column; it is NA for fits without a
  # per-label probability of being wrong (sgd_robust, label_dist_vb).
  has_p <- !all(is.na(li$p_wrong))
  quality <- if (has_p) 1 - li$p_wrong
             else if (all(s >= 0 & s <= 1)) 1 - s
             else {
               med <- stats::median(abs(s))
               1 / (1 + pmax(s, 0) / if (med > 0) med else 1)
             }
  flagged <- li$flagged
  if (!is.null(n_issues)) {
    flagged <- seq_len(nrow(li)) <= n_issues
  }
  count <- if (has_p) wrong_count(li$p_wrong, 0.9, attr(li, "model_var") %||% 0)
  extra <- as.list(li)[setdiff(names(li), c("row", "score", "flagged"))]
  out <- do.call(new_label_issues, c(list(.row = li$row, .score = s, .flagged = flagged,
                                          label_quality = quality), extra))
  task <- fit$task
  own <- is.null(count)
  new_find_label_issues(list(
    label_issues = out,
    estimated_issues = if (own) sum(li$flagged) else as.integer(round(count$estimate)),
    wrong_count = count, fdr = if (!own) fdr, task = task,
    method = sprintf("fitted %s (its own noise scores)", class(fit)[1]),
    rank_by = "noise_scores()",
    flag_by = if (!is.null(n_issues)) "rank"
              else if (own) "the model's rule"
              else if (is.null(tolerance)) sprintf("q_value <= %g (p_wrong of the fitted model)", fdr)
              else sprintf("q_value <= %g (P(|label - truth| > %s))", fdr, format(tolerance[1])),
    tolerance = tolerance, fit = fit, n = nrow(li), time = 0, call = call))
}

# Whether `object` has its own method of `generic` (not only the parent's
# or the default): find_label_issues() needs the fit's label_issues().
has_own_method <- function(generic, object) {
  own <- setdiff(class(object), "noisylabels_fit")
  any(vapply(own, function(cl) !is.null(utils::getS3method(generic, cl, optional = TRUE)), TRUE))
}

#' @rdname find_label_issues
#' @export
find_label_issues.noisylabels_fit <- function(x, n_issues = NULL, fdr = 0.1, tolerance = NULL, ...) {
  call <- match.call()
  check_dots_empty("find_label_issues", ...)
  if (!is.null(n_issues)) n_issues <- check_count(n_issues, "n_issues", lower = 0)
  issues_from_given_fit(x, n_issues, fdr, tolerance, arg = "x", call = call, frame = environment())
}

# find_label_issues() of a fit the user gave (as `x` or as `method`): the
# parent class's check, a fit with its own label_issues(), then its issues.
# `frame`: what errors name.
issues_from_given_fit <- function(fit, n_issues, fdr, tolerance, arg, call, frame) {
  check_fit(fit, "noisylabels_fit", arg = arg, call = frame)
  if (!has_own_method("label_issues", fit)) abort_no_method("find_label_issues", fit, call = frame)
  issues_from_fit(fit, n_issues = n_issues, fdr = fdr, tolerance = tolerance, call = call)
}
