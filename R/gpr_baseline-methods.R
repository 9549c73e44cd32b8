# tidy(), glance(), augment() and plot() of gpr_baseline fits. The fit keeps
# its underlying gpr_pursuit fit (on the kept points for the trimmed
# methods) and the training data `x`, `y`.

#' Tidy, glance, augment and plot a baseline GP regression
#'
#' `tidy()`: the hyperparameters of the underlying GP (as
#' [tidy.gpr_pursuit()]), with the Yeo-Johnson `lambda` for that method.
#' `glance()`: one row with `method`, `n`, `n_kept` (points the final GP was
#' fitted on), `rounds`, `converged`, `lambda` and the GP's `logLik` and
#' `sigma`. `augment()`: the training inputs (or `data`, the same rows in
#' another form) with `.fitted`, `.sd` (predictive sd, on the transformed
#' scale for Yeo-Johnson) and `.kept`; with the labels (the training labels
#' unless `data` is given without `y`) also `.response`, `.resid` and `.z`
#' (residual over predictive sd, on the transformed scale for Yeo-Johnson). `plot()`: the underlying
#' GP's [plot()] (on the points it was fitted on).
#'
#' @param x A [gpr_baseline()] fit.
#' @param data `NULL` (the training inputs) or the training rows as a
#'   matrix or data frame (e.g. with more columns to keep).
#' @param y Optional training labels (with `data`).
#' @param ... Passed to the underlying [gpr_pursuit()] fit's `plot()`; unused
#'   otherwise.
#' @return Data frames; `plot()` returns `x` invisibly.
#' @name gpr_baseline-methods
#' @examples
#' set.seed(1)
#' s <- sim_friedman(40, corruption = "constant", prob = 0.1)
#' b <- gpr_baseline(s$x, s$y, "trimmed", trim = 0.1)
#' tidy(b); glance(b)
#' head(augment(b))
NULL

#' @rdname gpr_baseline-methods
#' @export
tidy.gpr_baseline <- function(x, ...) {
  check_fit(x, "gpr_baseline")
  out <- tidy(x$fit)
  if (!is.null(x$lambda)) {
    out <- rbind(out, data.frame(term = "yeo_johnson_lambda", estimate = x$lambda,
                                 stringsAsFactors = FALSE))
  }
  out
}

#' @rdname gpr_baseline-methods
#' @export
glance.gpr_baseline <- function(x, ...) {
  check_fit(x, "gpr_baseline")
  g <- glance(x$fit)
  data.frame(method = x$method, n = x$n, n_kept = length(x$kept %||% seq_len(x$n)),
             rounds = x$rounds %||% 0L, converged = isTRUE(x$converged),
             lambda = x$lambda %||% NA_real_, logLik = g$logLik, sigma = g$sigma,
             approx = g$approx, stringsAsFactors = FALSE)
}

#' @rdname gpr_baseline-methods
#' @export
augment.gpr_baseline <- function(x, data = NULL, y = NULL, ...) {
  check_fit(x, "gpr_baseline")
  if (is.null(data)) {
    if (!is.matrix(x$x)) {
      abort_input(c("{.fn augment} needs {.arg data}: this {.cls gpr_baseline} fit keeps no copy of its training inputs.",
                    "i" = "Call {.code augment(fit, data = x, y = y)} with the {x$n} rows given to {.fn gpr_baseline}."))
    }
    data <- x$x
    y <- y %||% x$y
  }
  xm <- check_x_matrix(data, "data")
  if (nrow(xm) != x$n) {
    abort_input("{.arg data} has {nrow(xm)} row{?s}; the fit was made on {x$n}.",
                class = "noisylabels_error_dimension")
  }
  p <- predict(x, xm, se.fit = TRUE)
  out <- as.data.frame(data)
  out$.fitted <- p$fit
  out$.sd <- p$sd
  out$.kept <- seq_len(x$n) %in% (x$kept %||% seq_len(x$n))
  if (!is.null(y)) {
    y <- check_y_numeric(y, x$n)
    out$.response <- y
    out$.resid <- y - p$fit
    out$.z <- if (is.null(x$lambda)) out$.resid / p$sd else (yeo_johnson(y, x$lambda) - p$fit_transformed) / p$sd
  }
  out
}

#' @rdname gpr_baseline-methods
#' @export
plot.gpr_baseline <- function(x, ...) {
  check_fit(x, "gpr_baseline")
  plot(x$fit, ...)
  invisible(x)
}

# ---- the fit contract: held-out predictions and label issues ----------------

#' Predictions, likelihood and label issues of a baseline GP regression
#'
#' A [gpr_baseline()] fit is a full fit of the package (class
#' `c("gpr_baseline", "noisylabels_fit")`), so [find_label_issues()] accepts
#' it. `fitted()`: the predictions at the training inputs (for Yeo-Johnson
#' the back-transformed predictive median), `residuals()`: the labels minus
#' them. `logLik()`: the log marginal likelihood of the final GP where it is
#' a density of the given labels: `"standard"`; `"yeo_johnson"` with the
#' Jacobian of the transform (so it is comparable with `"standard"` on the
#' same labels; one more degree of freedom, `lambda`); `"trimmed"` and
#' `"trimmed_mll"` for the kept labels (`nobs` is their number). A
#' `"winsorize"` fit modelled clipped labels, not the given ones: its
#' `logLik()` is an error of class `noisylabels_error_no_method`.
#'
#' Label issues: every label is compared with the final GP's held-out
#' prediction of it: the leave-one-out mean for the labels the GP was
#' fitted on (from the labels it saw: clipped for `"winsorize"`), the plain
#' prediction for the trimmed ones. The residual, standardised by the sd a
#' clean label's residual would have (latent sd and `sigma2`), is `z`, the
#' noise score is `|z|`, and `p_wrong` comes from the two-group model of
#' [find_label_issues()] ("Regression"), or with `tolerance` is
#' `P(|y - T| > tolerance)` under the GP's predictive of the true value `T`.
#' For `"yeo_johnson"` this is done on the transformed scale (the suggested
#' value and its 90% interval are transformed back) and a `tolerance`, which
#' is in label units, is an error of class `noisylabels_error_tolerance`.
#' Labels with `q_value <= fdr` are flagged.
#'
#' @param object A [gpr_baseline()] fit.
#' @param fdr Flag the labels whose q-value is at most this (default 0.1).
#' @param tolerance `NULL` or a tolerance in label units (one number or one
#'   per label), as in [find_label_issues()].
#' @param ... Unused.
#' @return `fitted()`, `residuals()`, `noise_scores()`: one number per
#'   training label; `logLik()`: a `logLik` object; `summary()`: a
#'   `summary.gpr_baseline` list (method, sizes, trimming, hyperparameters,
#'   flagged count); `label_issues()`: the shared columns (see
#'   [label_issues()]) with `y`, `z`, `kept` (the final GP was fitted on the
#'   label) and `suggested_value`, `suggested_lower`, `suggested_upper`.
#' @name gpr_baseline-fit
#' @examples
#' set.seed(1)
#' s <- sim_friedman(60, corruption = "constant", prob = 0.1)
#' b <- gpr_baseline(s$x, s$y, "trimmed", trim = 0.1)
#' head(label_issues(b))
#' logLik(b)
#' find_label_issues(b)
NULL

#' @rdname gpr_baseline-fit
#' @export
fitted.gpr_baseline <- function(object, ...) {
  check_fit(object, "gpr_baseline")
  stats::predict(object, object$x)
}

#' @rdname gpr_baseline-fit
#' @export
residuals.gpr_baseline <- function(object, ...) {
  check_fit(object, "gpr_baseline")
  object$y - stats::fitted(object)
}

#' @export
nobs.gpr_baseline <- function(object, ...) {
  check_fit(object, "gpr_baseline")
  object$n
}

#' @rdname gpr_baseline-fit
#' @export
logLik.gpr_baseline <- function(object, ...) {
  check_fit(object, "gpr_baseline")
  if (object$method == "winsorize") {
    abort_input(c("A {.val winsorize} baseline modelled clipped labels: its likelihood is not a density of the given labels.",
                  "i" = "Compare {.fn predictive_loglik} on test labels instead."),
                class = "noisylabels_error_no_method")
  }
  ll <- stats::logLik(object$fit)
  if (is.null(object$lambda)) return(ll)
  y <- object$y
  jac <- sum((object$lambda - 1) * sign(y) * log1p(abs(y)))
  structure(as.numeric(ll) + jac, df = attr(ll, "df") + 1, nobs = attr(ll, "nobs"),
            class = "logLik")
}

# Each label against the final GP's held-out prediction of it, on the scale
# the GP modelled (transformed labels for Yeo-Johnson): leave-one-out for
# the labels it was fitted on, the predictive at the inputs for the trimmed
# ones; `scale` is the sd of a clean label's residual, `latent_sd` that of
# the true value.
gpr_baseline_heldout <- function(object) {
  inner <- object$fit
  n <- object$n
  kept <- object$kept %||% seq_len(n)
  label <- if (is.null(object$lambda)) object$y else yeo_johnson(object$y, object$lambda)
  pred <- scale <- latent <- numeric(n)
  loo <- gpr_pursuit_loo(inner)
  pred[kept] <- loo$prediction
  scale[kept] <- loo$scale
  latent[kept] <- loo$latent_sd
  out <- setdiff(seq_len(n), kept)
  if (length(out)) {
    p <- stats::predict(inner, object$x[out, , drop = FALSE], se.fit = TRUE)
    # the floor of the leave-one-out latent variance, 1e-4 sigma2
    lat <- pmax(p$se.fit, 0.01 * sqrt(inner$sigma2))
    pred[out] <- if (is.null(object$lambda)) p$fit else p$fit_transformed
    latent[out] <- lat
    scale[out] <- sqrt(lat^2 + inner$sigma2)
  }
  list(label = label, prediction = pred, scale = scale, latent_sd = latent,
       z = (label - pred) / scale, kept = seq_len(n) %in% kept)
}

#' @rdname gpr_baseline-fit
#' @export
noise_scores.gpr_baseline <- function(object, ...) {
  check_fit(object, "gpr_baseline")
  abs(gpr_baseline_heldout(object)$z)
}

#' @rdname gpr_baseline-fit
#' @export
label_issues.gpr_baseline <- function(object, fdr = 0.1, tolerance = NULL, ...) {
  check_fit(object, "gpr_baseline")
  check_tolerance(tolerance, object$n)
  if (!is.null(tolerance) && !is.null(object$lambda)) {
    abort_input(c("A {.val yeo_johnson} baseline's predictive is Gaussian on the transformed scale; {.arg tolerance} is in label units.",
                  "i" = "Leave {.arg tolerance} at {.code NULL}, or use another {.arg method}."),
                class = "noisylabels_error_tolerance")
  }
  h <- gpr_baseline_heldout(object)
  w <- numeric_wrong(h$label, h$prediction, h$scale, z = h$z, latent_sd = h$latent_sd,
                     tolerance = tolerance)
  cols <- numeric_wrong_columns(w)
  if (!is.null(object$lambda)) {
    for (nm in c("suggested_value", "suggested_lower", "suggested_upper")) {
      cols[[nm]] <- yeo_johnson_inverse(cols[[nm]], object$lambda)
    }
  }
  li <- do.call(new_label_issues, c(
    list(seq_len(object$n), abs(h$z), fit_flags(cols$q_value, fdr), y = object$y, z = h$z,
         kept = h$kept), cols))
  attr(li, "model_var") <- w$model_var
  li
}

#' @rdname gpr_baseline-fit
#' @export
summary.gpr_baseline <- function(object, ...) {
  check_fit(object, "gpr_baseline")
  li <- label_issues(object)
  structure(list(method = object$method, n = object$n, n_kept = length(object$kept),
                 rounds = object$rounds, converged = object$converged, lambda = object$lambda,
                 coef = stats::coef(object$fit), approx_text = pursuit_approx_text(object$fit),
                 n_flagged = sum(li$flagged), top = utils::head(as.data.frame(unclass(li)), 5)),
            class = "summary.gpr_baseline")
}

#' @export
print.summary.gpr_baseline <- function(x, ...) {
  cli::cat_line("Baseline GP regression: ", x$method,
                if (!is.null(x$lambda)) sprintf(" (Yeo-Johnson lambda = %.3f)", x$lambda) else "")
  cli::cat_line(sprintf("n = %d, final GP fitted on %d label%s%s", x$n, x$n_kept,
                        if (x$n_kept == 1) "" else "s",
                        if (x$method %in% c("trimmed", "trimmed_mll"))
                          sprintf(" after %d trimming round%s%s", x$rounds, if (x$rounds == 1) "" else "s",
                                  if (x$converged) "" else " (not settled)") else ""))
  cli::cat_line("Covariance: ", x$approx_text)
  cli::cat_line("\nHyperparameters (response scale; length-scales on standardised inputs):")
  print(signif(x$coef, 4))
  cli::cat_line(sprintf("\n%d label%s flagged (q_value <= 0.1); highest scores:", x$n_flagged,
                        if (x$n_flagged == 1) "" else "s"))
  print(x$top, row.names = FALSE, digits = 4)
  invisible(x)
}

# ---- predictive_loglik() methods ----------------------------------------------

# The Gaussian predictive of a new observation (latent variance plus
# sigma2), for a gpr_pursuit fit and for a baseline's final GP (with the
# Jacobian of Yeo-Johnson). The gpr_pursuit method lives here, with the
# baselines it is compared to, because the generic came from this file.

#' @export
predictive_loglik.gpr_baseline <- function(object, newdata, y, ...) {
  check_fit(object, "gpr_baseline")
  y <- check_y_numeric(y, NROW(check_x_matrix(newdata, "newdata")))
  p <- stats::predict(object, newdata, se.fit = TRUE)
  if (is.null(object$lambda)) return(mean(stats::dnorm(y, p$fit, p$sd, log = TRUE)))
  z <- yeo_johnson(y, object$lambda)
  # log dT/dy: (lambda - 1) log(1 + y) for y >= 0, (1 - lambda) log(1 - y) otherwise
  jac <- (object$lambda - 1) * sign(y) * log1p(abs(y))
  mean(stats::dnorm(z, p$fit_transformed, p$sd, log = TRUE) + jac)
}

#' @export
predictive_loglik.gpr_pursuit <- function(object, newdata, y, ...) {
  check_fit(object, "gpr_pursuit")
  y <- check_y_numeric(y, NROW(check_x_matrix(newdata, "newdata")))
  p <- stats::predict(object, newdata, se.fit = TRUE)
  mean(stats::dnorm(y, p$fit, p$sd, log = TRUE))
}
