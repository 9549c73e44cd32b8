# Methods for gpr_pursuit fits: predict, print, summary, plot.

utils::globalVariables(".data")

# Inputs of new data on the fit's standardised scale.
pursuit_newx <- function(object, newdata) {
  if (is.null(newdata)) return(object$x)
  xn <- newdata_design(object, newdata, length(object$x_center), drop_intercept = FALSE)
  scale_inputs(xn, object$x_center, object$x_scale)
}

# Latent posterior of one trace model on the standardised scale, from the
# covariance operator with the training noise sigma2 + rho. A Vecchia fit
# conditions each new point on its vecchia_predict_neighbors(m) nearest
# training points (in the metric of the model's length-scales).
pursuit_step_predict <- function(object, t, xs) {
  st <- object$steps[[t]]
  spec <- kernel_spec(object$kernel_std, st$log_par)
  nn_new <- NULL
  if (identical(object$approx, "vecchia")) {
    m_pred <- vecchia_predict_neighbors(object$neighbors)
    nn_new <- vecchia_new_neighbors(object$x, xs, kernel_unflatten(object$kernel_std, st$log_par),
                                    m_pred)
  }
  pr <- call_core(.gp_predict(object$x, object$y - st$mean, spec, exp(st$log_noise) + st$rho, xs,
                              TRUE, 0, object$control$backend, nn_new, object$threads %||% 1L))
  list(mean = pr$mean + st$mean, variance = pr$var)
}

# One line on the covariance backend of a pursuit fit.
pursuit_approx_text <- function(x) {
  if (!identical(x$approx, "vecchia")) return("exact (dense Cholesky)")
  sprintf("Vecchia approximation, %d neighbours, %d thread%s%s", x$neighbors, x$threads,
          if (x$threads == 1L) "" else "s",
          if (isTRUE(x$vecchia_pilot)) "; sets chosen after a homoscedastic pilot fit" else "")
}

#' Predictions from a relevance-pursuit GP
#'
#' The exact GP posterior given the training data with covariance
#' `K_f + sigma2 I + diag(rho)`; the outlier variances `rho` act only on the
#' training points, never at test points.
#'
#' @param object A [gpr_pursuit()] fit.
#' @param newdata Data frame (formula fits) or matrix of new inputs; `NULL`
#'   for the training inputs.
#' @param type `"response"` (predictive mean of `y`; identical to the latent
#'   mean) or `"latent"`.
#' @param se.fit Also return standard deviations?
#' @param average Average the trace models with their posterior weights
#'   (Bayesian model averaging)? Defaults to the fit's `average`.
#' @param ... Unused.
#' @return A numeric vector of means, or with `se.fit = TRUE` a data frame
#'   with `fit`, `se.fit` (sd of the latent function) and `sd` (predictive sd
#'   of a new observation, including `sigma2` but no `rho`).
#' @examples
#' set.seed(2)
#' x <- runif(30); y <- cos(5 * x) + rnorm(30, sd = 0.1); y[3] <- 4
#' fit <- gpr_pursuit(x, y, direction = "forward", n_outliers = 0:3)
#' predict(fit, cbind(c(0.2, 0.8)), se.fit = TRUE)
#' @export
predict.gpr_pursuit <- function(object, newdata = NULL, type = c("response", "latent"),
                                se.fit = FALSE, average = object$average, ...) {
  check_fit(object, "gpr_pursuit")
  type <- match_arg(type)
  check_flag(se.fit, "se.fit"); check_flag(average, "average")
  pursuit_predict_std(object, pursuit_newx(object, newdata), se.fit, average)
}

# Predictions at inputs already on the fit's standardised scale (predict()
# and plot(), which draws its grid there and so needs no variable names).
pursuit_predict_std <- function(object, xs, se.fit = FALSE, average = object$average) {
  ids <- if (average) which(object$trace$posterior > 1e-10) else object$selected
  w <- if (average) object$trace$posterior[ids] / sum(object$trace$posterior[ids]) else 1
  mu <- 0; second <- 0; noise <- 0
  for (k in seq_along(ids)) {
    p <- call_core(pursuit_step_predict(object, ids[k], xs))
    mu <- mu + w[k] * p$mean
    second <- second + w[k] * (p$variance + p$mean^2)
    noise <- noise + w[k] * exp(object$steps[[ids[k]]]$log_noise)
  }
  var_f <- pmax(second - mu^2, 0)
  fit <- object$y_center + object$y_scale * mu
  if (!se.fit) return(fit)
  data.frame(fit = fit, se.fit = object$y_scale * sqrt(var_f),
             sd = object$y_scale * sqrt(var_f + noise))
}

#' @export
fitted.gpr_pursuit <- function(object, ...) {
  check_fit(object, "gpr_pursuit")
  predict(object, NULL, average = FALSE)
}

#' @export
residuals.gpr_pursuit <- function(object, ...) {
  check_fit(object, "gpr_pursuit")
  object$y_center + object$y_scale * object$y - stats::fitted(object)
}

#' @export
coef.gpr_pursuit <- function(object, ...) {
  check_fit(object, "gpr_pursuit")
  k <- object$kernel
  kp <- unlist(lapply(names(k$par), function(g) {
    v <- k$par[[g]]
    if (g %in% c("variance", "bias", "nugget")) v <- v * object$y_scale^2
    stats::setNames(v, if (length(v) == 1) g else paste0(g, seq_along(v)))
  }))
  c(mean = object$mean, sigma2 = object$sigma2, kp)
}

#' @export
logLik.gpr_pursuit <- function(object, ...) {
  check_fit(object, "gpr_pursuit")
  ll <- object$trace$loglik[object$selected]
  structure(ll, df = object$n_par + length(object$support), nobs = object$n, class = "logLik")
}

#' @export
nobs.gpr_pursuit <- function(object, ...) {
  check_fit(object, "gpr_pursuit")
  object$n
}

#' @rdname gpr_pursuit
#' @param object A `gpr_pursuit` fit.
#' @export
noise_scores.gpr_pursuit <- function(object, ...) {
  check_fit(object, "gpr_pursuit")
  # rho_star: fitted rho on the support, Lemma-1 optimum elsewhere (fits
  # made before it existed fall back to rho)
  rho <- object$rho_star %||% object$rho
  rho / (rho + object$sigma2)
}

#' @rdname gpr_pursuit
#' @param threshold `NULL` or a number in \[0, 1): flag scores above it.
#' @param fdr,tolerance By default (both `NULL`) the selected support is
#'   flagged. With `fdr` (a false discovery rate) or `tolerance` (label
#'   units), the labels whose q-value is at most `fdr` (0.1 if only
#'   `tolerance` is given) are flagged instead. Every row carries `p_wrong`
#'   and `q_value` from the selected model's leave-one-out residuals
#'   (two-group model, or with `tolerance` the probability that the label is
#'   off from the true value by more than it; see [find_label_issues()],
#'   "Numeric labels") and the leave-one-out prediction as `suggested_value`
#'   with a 90% interval.
#' @export
label_issues.gpr_pursuit <- function(object, threshold = NULL, fdr = NULL, tolerance = NULL, ...) {
  check_fit(object, "gpr_pursuit")
  check_tolerance(tolerance, object$n)
  sc <- noise_scores(object)
  w <- gpr_pursuit_wrong(object, tolerance)
  cols <- numeric_wrong_columns(w)
  flag <- if (!is.null(threshold)) {
    check_number(threshold, "threshold", 0, 1, open_upper = TRUE)
    sc > threshold
  } else if (is.null(fdr) && is.null(tolerance)) {
    seq_len(object$n) %in% object$support
  } else {
    fit_flags(cols$q_value, fdr %||% 0.1)
  }
  li <- do.call(new_label_issues, c(
    list(seq_len(object$n), sc, flag, rho = object$rho,
         s = object$s %||% rep(NA_real_, object$n)), cols))
  attr(li, "model_var") <- w$model_var
  li
}

#' @export
print.gpr_pursuit <- function(x, ...) {
  check_fit(x, "gpr_pursuit")
  cli::cat_line("Robust GP regression by relevance pursuit (", x$direction, ", ",
                x$parameterization, ", selection ", x$selection %||% "botorch",
                if (isTRUE(x$refine)) " + refinement" else "", ")")
  cli::cat_line(sprintf("  n = %d, kernel %s%s", x$n, x$kernel$type, if (x$kernel$ard) " (ARD)" else ""))
  cli::cat_line("  covariance: ", pursuit_approx_text(x))
  cli::cat_line(sprintf("  outliers: %d (posterior %.3f)%s", length(x$support),
                        x$trace$posterior[x$selected],
                        if (length(x$support)) paste0(": rows ", paste(utils::head(x$support, 10), collapse = " "),
                                                      if (length(x$support) > 10) " ..." else "") else ""))
  cli::cat_line(sprintf("  sigma2 = %.4g, mean = %.4g, log-likelihood = %.2f",
                        x$sigma2, x$mean, x$trace$loglik[x$selected]))
  cli::cat_line(sprintf("  support sizes visited: %s%s%s",
                        paste(x$trace$size[x$trace$stage == "pursuit"], collapse = " "),
                        if (any(x$trace$stage == "refine"))
                          paste0("; refined: ", paste(x$trace$size[x$trace$stage == "refine"], collapse = " "))
                        else "",
                        if (any(x$trace$stage == "esd"))
                          paste0("; test refits: ", paste(x$trace$size[x$trace$stage == "esd"], collapse = " "))
                        else ""))
  cli::cat_line(sprintf("  %d %s, %d rank-one updates, %d L-BFGS iterations%s",
                        as.integer(x$factorizations),
                        if (identical(x$approx, "vecchia")) "Vecchia passes" else "factorizations",
                        as.integer(x$rank_one_updates),
                        as.integer(x$iterations), if (x$converged) "" else " (not all converged)"))
  invisible(x)
}

#' @export
summary.gpr_pursuit <- function(object, ...) {
  check_fit(object, "gpr_pursuit")
  structure(list(call = object$call, n = object$n, direction = object$direction,
                 parameterization = object$parameterization, coef = coef(object),
                 trace = object$trace, selected = object$selected, support = object$support,
                 prior_mean = object$prior_mean, selection = object$selection %||% "botorch",
                 refine = isTRUE(object$refine), factorizations = object$factorizations,
                 converged = object$converged, approx_text = pursuit_approx_text(object)),
            class = "summary.gpr_pursuit")
}

#' @export
print.summary.gpr_pursuit <- function(x, ...) {
  cli::cat_line("Robust GP regression by relevance pursuit")
  if (!is.null(x$call)) cli::cat_line("Call: ", paste(deparse(x$call), collapse = " "))
  cli::cat_line(sprintf("%s pursuit, %s parameterisation, n = %d, selection %s%s",
                        x$direction, x$parameterization, x$n, x$selection,
                        if (isTRUE(x$refine)) " + refinement" else ""))
  if (!is.null(x$approx_text)) cli::cat_line("Covariance: ", x$approx_text)
  if (x$selection %in% c("botorch", "paper")) {
    cli::cat_line(sprintf("prior mean of |S| = %s", format(x$prior_mean)))
  }
  cli::cat_line("\nHyperparameters (response scale; length-scales on standardised inputs):")
  print(signif(x$coef, 4))
  cli::cat_line("\nPosterior over the support size (* = selected):")
  tr <- x$trace[, c("stage", "size", "loglik", "log_prior", "score", "posterior", "iterations", "converged")]
  tr$sel <- ifelse(seq_len(nrow(tr)) == x$selected, "*", "")
  print(format(tr, digits = 4), row.names = FALSE)
  cli::cat_line(sprintf("\nOutliers (%d): %s", length(x$support),
                        if (length(x$support)) paste(x$support, collapse = " ") else "none"))
  invisible(x)
}

#' Plot a relevance-pursuit fit
#'
#' Left: the data with the selected outliers marked (against the input for
#' one-dimensional inputs, with the posterior mean and a 95% band; fitted
#' against observed otherwise). Right: the posterior over the support sizes.
#'
#' @param x A [gpr_pursuit()] fit.
#' @param which Panels to draw: 1 (data), 2 (posterior over `|S|`).
#' @param ... Passed to [graphics::plot()].
#' @return `x`, invisibly.
#' @examples
#' set.seed(3)
#' x <- runif(30); y <- sin(6 * x) + rnorm(30, sd = 0.1); y[1:2] <- 3
#' plot(gpr_pursuit(x, y, direction = "forward", n_outliers = 0:4))
#' @export
plot.gpr_pursuit <- function(x, which = 1:2, ...) {
  check_fit(x, "gpr_pursuit")
  if (!is.numeric(which) || !length(which) || anyNA(which) || !all(which %in% 1:2)) {
    abort_input("{.arg which} must pick panels 1 (the fit) and/or 2 (the residuals), not {.val {format(which)}}.",
                class = "noisylabels_error_choice")
  }
  if (length(which) > 1) {
    op <- graphics::par(mfrow = c(1, length(which)))
    on.exit(graphics::par(op))
  }
  out <- seq_len(x$n) %in% x$support
  yy <- x$y_center + x$y_scale * x$y
  col <- ifelse(out, "firebrick", "grey30")
  if (1 %in% which) {
    if (ncol(x$x) == 1L) {
      xr <- x$x[, 1] * x$x_scale + x$x_center
      grid <- seq(min(xr), max(xr), length.out = 200)
      # the grid goes in on the standardised scale: a formula fit's predict()
      # would want a data frame with the formula's variable names
      p <- pursuit_predict_std(x, matrix((grid - x$x_center) / x$x_scale), se.fit = TRUE,
                               average = x$average)
      graphics::plot(xr, yy, col = col, pch = ifelse(out, 4, 16), xlab = colnames(x$x)[1],
                     ylab = "y", ...)
      graphics::polygon(c(grid, rev(grid)), c(p$fit - 2 * p$sd, rev(p$fit + 2 * p$sd)),
                        col = grDevices::adjustcolor("steelblue", 0.2), border = NA)
      graphics::lines(grid, p$fit, col = "steelblue", lwd = 2)
    } else {
      graphics::plot(stats::fitted(x), yy, col = col, pch = ifelse(out, 4, 16),
                     xlab = "fitted", ylab = "observed", ...)
      graphics::abline(0, 1, lty = 2)
    }
    graphics::legend("topleft", c("inlier", "outlier"), pch = c(16, 4),
                     col = c("grey30", "firebrick"), bty = "n")
  }
  if (2 %in% which) {
    graphics::plot(x$trace$size, x$trace$posterior, type = "h", lwd = 3,
                   xlab = "support size |S|", ylab = "posterior",
                   col = ifelse(seq_len(nrow(x$trace)) == x$selected, "firebrick", "grey40"))
  }
  invisible(x)
}

#' @rdname plot.gpr_pursuit
#' @param object A [gpr_pursuit()] fit.
#' @param type `"data"` or `"posterior"`.
#' @return `autoplot()`: a ggplot object.
#' @exportS3Method ggplot2::autoplot
autoplot.gpr_pursuit <- function(object, type = c("data", "posterior"), ...) {
  check_fit(object, "gpr_pursuit")
  if (!requireNamespace("ggplot2", quietly = TRUE)) {
    abort_input("Package {.pkg ggplot2} is needed for {.fn autoplot}.")
  }
  type <- match_arg(type)
  if (type == "posterior") {
    df <- object$trace
    df$selected <- seq_len(nrow(df)) == object$selected
    return(ggplot2::ggplot(df, ggplot2::aes(x = .data$size, y = .data$posterior, fill = .data$selected)) +
             ggplot2::geom_col() + ggplot2::labs(x = "support size |S|", y = "posterior"))
  }
  df <- augment(object)
  df$outlier <- df$.outlier
  if (ncol(object$x) == 1L) {
    df$input <- object$x[, 1] * object$x_scale + object$x_center
    ggplot2::ggplot(df, ggplot2::aes(x = .data$input, y = .data$.response, colour = .data$outlier)) +
      ggplot2::geom_point() + ggplot2::geom_line(ggplot2::aes(y = .data$.fitted), colour = "steelblue") +
      ggplot2::labs(x = colnames(object$x)[1], y = "y")
  } else {
    ggplot2::ggplot(df, ggplot2::aes(x = .data$.fitted, y = .data$.response, colour = .data$outlier)) +
      ggplot2::geom_point() + ggplot2::geom_abline(linetype = 2) +
      ggplot2::labs(x = "fitted", y = "observed")
  }
}

#' Tidy summaries of a relevance-pursuit fit
#'
#' @param x A [gpr_pursuit()] fit.
#' @param data Original data for `augment()` (optional; columns are kept).
#' @param ... Unused.
#' @return `tidy()`: one row per hyperparameter (`term`, `estimate`);
#'   `glance()`: one row (`n`, `n_outliers`, `logLik`, `sigma`, `posterior`,
#'   `factorizations`, `converged`, `approx`); `augment()`: one row per observation with
#'   `.response`, `.fitted`, `.resid`, `.rho`, `.score`, `.outlier`.
#' @name tidy.gpr_pursuit
#' @examples
#' set.seed(4)
#' x <- runif(25); y <- x^2 + rnorm(25, sd = 0.05); y[7] <- 2
#' fit <- gpr_pursuit(x, y, direction = "forward", n_outliers = 0:3)
#' tidy(fit); glance(fit); head(augment(fit))
NULL

#' @rdname tidy.gpr_pursuit
#' @export
tidy.gpr_pursuit <- function(x, ...) {
  check_fit(x, "gpr_pursuit")
  cf <- coef(x)
  data.frame(term = names(cf), estimate = unname(cf), stringsAsFactors = FALSE)
}

#' @rdname tidy.gpr_pursuit
#' @export
glance.gpr_pursuit <- function(x, ...) {
  check_fit(x, "gpr_pursuit")
  data.frame(n = x$n, n_outliers = length(x$support), logLik = as.numeric(logLik(x)),
             sigma = sqrt(x$sigma2), posterior = x$trace$posterior[x$selected],
             factorizations = x$factorizations, converged = x$converged,
             approx = x$approx %||% "dense", stringsAsFactors = FALSE)
}

#' @rdname tidy.gpr_pursuit
#' @export
augment.gpr_pursuit <- function(x, data = NULL, ...) {
  check_fit(x, "gpr_pursuit")
  out <- data.frame(.response = x$y_center + x$y_scale * x$y)
  out$.fitted <- stats::fitted(x)
  out$.resid <- out$.response - out$.fitted
  out$.rho <- x$rho
  out$.score <- noise_scores(x)
  out$.outlier <- seq_len(x$n) %in% x$support
  if (!is.null(data)) out <- cbind(as.data.frame(data), out)
  out
}
