# The flag contract of fitted models. A fit whose model gives each label a
# probability of being wrong (gpr_loo, gpr_pursuit, gpc_ep) reports it in
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
# operator the fit used (dense or its Vecchia neighbours).
gpr_pursuit_wrong <- function(object, tolerance = NULL) {
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
  numeric_wrong(y, pred, scale, latent_sd = sqrt(latent_var) * object$y_scale,
                tolerance = tolerance)
}

# Columns of label_issues() for numeric labels from numeric_wrong().
numeric_wrong_columns <- function(w) {
  predictions <- w$prediction
  list(p_wrong = w$p_wrong, q_value = fdr_qvalues(w$p_wrong),
       suggested_value = predictions, suggested_lower = predictions - w$half,
       suggested_upper = predictions + w$half)
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

# find_label_issues() on a fitted model: its label_issues() with the count
# of wrong labels and the flag rule. `tolerance` applies to the GP
# regressions only.
fit_issue_args <- function(fit, fdr, tolerance, call) {
  if (!is.null(tolerance) && !inherits(fit, c("gpr_loo", "gpr_pursuit"))) {
    abort_input(c("{.arg tolerance} applies to numeric labels; a {.cls {class(fit)[1]}} fit has class labels.",
                  "i" = "Leave {.arg tolerance} at {.code NULL}."),
                class = "noisylabels_error_tolerance", call = call)
  }
  if (inherits(fit, c("gpr_loo", "gpr_pursuit"))) return(list(fdr = fdr, tolerance = tolerance))
  if (inherits(fit, c("gpc_ep", "gpc_ep_ovr"))) return(list(fdr = fdr))
  list()
}

# The flagged column of a label_issues() result in row order.
flags_by_row <- function(li) {
  out <- logical(nrow(li))
  out[li$row] <- li$flagged
  out
}
