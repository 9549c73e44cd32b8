#' Methods for gpr_loo fits
#'
#' `predict()` returns the posterior mean of f at `newdata` (the training
#' inputs by default); with `se.fit = TRUE` a list with `fit`, `se.fit` (sd of
#' f) and `se.obs` (sd of a new observation: f plus the homoscedastic noise
#' level `noise_level`, since a new point's own noise variance is unknown).
#'
#' @param object,x A `gpr_loo` fit.
#' @param newdata Data frame (formula fits) or matrix of new inputs.
#' @param type Only `"response"`.
#' @param se.fit Return standard errors too?
#' @param neighbors For a Vecchia fit, how many training labels each block of
#'   new points conditions on (default `max(25 m, 1000)`, m the fit's
#'   `neighbors`): the new points are split into blocks of at most 128 nearby
#'   points, and each block conditions on the union of its members' m nearest
#'   training labels, filled up with the labels nearest to the block's centre
#'   (one factorisation per block). Ignored by dense fits.
#' @param alpha Tail probability of the flag rule (see [gpr_loo()]).
#' @param threshold Optional absolute threshold on `noise_var` that replaces
#'   the default flag rule.
#' @param data Original data for `augment()` (defaults to the fitted inputs).
#' @param which For `plot()`: `"fit"` (1-D inputs: data, band, flagged
#'   points), `"scores"` (sorted noise scores) or `"trace"` (objective against
#'   factorisations).
#' @param ... Unused.
#' @return See each generic.
#' @name gpr_loo-methods
#' @examples
#' set.seed(2)
#' d <- sim_tang1d()
#' fit <- gpr_loo(d$data["x"], d$data$y, restarts = 2)
#' predict(fit, data.frame(x = c(-0.5, 0, 0.5)), se.fit = TRUE)
#' summary(fit)
#' glance(fit)
#' plot(fit)
NULL

#' @rdname gpr_loo-methods
#' @export
predict.gpr_loo <- function(object, newdata = NULL, type = c("response"), se.fit = FALSE,
                            neighbors = NULL, ...) {
  check_fit(object, "gpr_loo")
  type <- match_arg(type)
  xnew <- gp_newdata_matrix(object, newdata)
  noise_std <- pmax(object$noise_var / object$y_scale^2, object$control$sigma_floor)
  ys <- (object$y - object$y_center) / object$y_scale
  nn_new <- NULL
  if (identical(object$approx, "vecchia")) {
    # The Vecchia optimum gives many clean labels variances near zero, and a
    # new point conditioned on a few such neighbours interpolates their noise
    # (n = 3,000 Friedman-5: test RMSE 0.68 against the dense fit's 0.36);
    # predictions floor every variance at the clean labels' level.
    noise_std <- pmax(noise_std, object$noise_level / object$y_scale^2)
    m_pred <- neighbors %||% vecchia_predict_neighbors(object$neighbors)
    check_count(m_pred, "neighbors")
    sets <- vecchia_predict_sets(object$x, xnew, object$kernel, m_pred, object$neighbors)
    nn_new <- sets$neighbors
    xnew <- xnew[sets$order, , drop = FALSE]
  }
  pr <- call_core(.gp_predict(object$x, ys, kernel_spec(object$kernel), noise_std, xnew,
                              isTRUE(se.fit), object$control$jitter, object$control$backend,
                              nn_new, object$threads %||% 1L, if (!is.null(nn_new)) sets$start))
  if (!is.null(nn_new)) {
    back <- order(sets$order)
    pr$mean <- pr$mean[back]
    if (!is.null(pr$var)) pr$var <- pr$var[back]
  }
  fit <- object$y_center + object$y_scale * pr$mean
  if (!isTRUE(se.fit)) return(fit)
  se_f <- sqrt(pr$var) * object$y_scale
  list(fit = fit, se.fit = se_f, se.obs = sqrt(se_f^2 + object$noise_level))
}

#' @rdname gpr_loo-methods
#' @export
fitted.gpr_loo <- function(object, ...) {
  check_fit(object, "gpr_loo")
  object$fitted.values
}

#' @rdname gpr_loo-methods
#' @export
residuals.gpr_loo <- function(object, ...) {
  check_fit(object, "gpr_loo")
  object$residuals
}

#' @rdname gpr_loo-methods
#' @export
coef.gpr_loo <- function(object, ...) {
  check_fit(object, "gpr_loo")
  tk <- kernel_tidy(object$kernel)
  stats::setNames(tk$estimate, tk$term)
}

#' @rdname gpr_loo-methods
#' @export
logLik.gpr_loo <- function(object, ...) {
  check_fit(object, "gpr_loo")
  df <- object$n_free + switch(object$noise, full = length(object$y), uniform = 1L, none = 0L)
  structure(object$loglik, df = df, nobs = length(object$y), class = "logLik")
}

#' @rdname gpr_loo-methods
#' @export
nobs.gpr_loo <- function(object, ...) {
  check_fit(object, "gpr_loo")
  length(object$y)
}

#' @rdname gpr_loo-methods
#' @export
noise_scores.gpr_loo <- function(object, ...) {
  check_fit(object, "gpr_loo")
  object$noise_var
}

# Flags of the documented rule (see ?gpr_loo, "Noise scores and flags").
gpr_loo_flags <- function(object, alpha = 0.01, threshold = NULL) {
  if (!is.null(threshold)) {
    check_number(threshold, "threshold", 0)
    return(object$noise_var > threshold)
  }
  check_number(alpha, "alpha", 0, 1, open_lower = TRUE, open_upper = TRUE)
  if (object$noise == "none") return(rep(FALSE, length(object$y)))
  object$flag_statistic > stats::qchisq(1 - alpha, df = 1)
}

#' @rdname gpr_loo-methods
#' @param fdr Flag the labels whose q-value (see [find_label_issues()]) is at
#'   most this false discovery rate (default).
#' @param tolerance `NULL` or a positive number (label units): call a label
#'   wrong when it is off from the true value by more than this, using the
#'   leave-one-out predictive distribution of the true value (see
#'   [find_label_issues()], "Numeric labels").
#' @export
label_issues.gpr_loo <- function(object, fdr = 0.1, alpha = NULL, threshold = NULL,
                                 tolerance = NULL, ...) {
  check_fit(object, "gpr_loo")
  check_tolerance(tolerance, length(object$y))
  w <- gpr_loo_wrong(object, tolerance)
  cols <- numeric_wrong_columns(w)
  own <- if (!is.null(alpha) || !is.null(threshold)) gpr_loo_flags(object, alpha %||% 0.01, threshold)
  li <- do.call(new_label_issues, c(
    list(seq_along(object$y), object$noise_var, fit_flags(cols$q_value, fdr, own),
         y = object$y, fitted = object$fitted.values, loo_residual = object$loo_residual,
         loo_sd = object$loo_sd, chisq = object$flag_statistic), cols))
  attr(li, "model_var") <- w$model_var
  li
}

# One line on the covariance backend a GP fit used (print and summary).
gp_approx_text <- function(x) {
  if (!identical(x$approx, "vecchia")) return("exact (dense Cholesky)")
  sprintf("Vecchia approximation, %d neighbours, %d thread%s%s", x$neighbors, x$threads,
          if (x$threads == 1) "" else "s",
          if (isTRUE(x$vecchia_pilot > 0)) sprintf("; kernel learned on a dense pilot of %d labels", x$vecchia_pilot) else "")
}

#' @rdname gpr_loo-methods
#' @export
print.gpr_loo <- function(x, ...) {
  check_fit(x, "gpr_loo")
  n_flag <- sum(label_issues(x)$flagged)
  n <- length(x$y)
  cli::cat_line(sprintf("GP regression with %s noise (gpr_loo), n = %d", switch(x$noise,
    full = "per-label", uniform = "uniform", none = "no"), n))
  cli::cat_line(sprintf("  kernel: %s; %s%s", x$kernel$type,
                        paste(sprintf("%s = %s", names(coef(x)), format(signif(coef(x), 4))), collapse = ", "),
                        if (identical(x$kernel_fit, "uniform")) " (learned under uniform noise)" else ""))
  if (identical(x$penalty, "lp")) cli::cat_line("  penalty: ", gpr_loo_penalty_text(x))
  cli::cat_line("  covariance: ", gp_approx_text(x))
  cli::cat_line(sprintf("  log-likelihood %.4g; noise level %.4g; %d label%s flagged",
                        x$loglik, x$noise_level, n_flag, if (n_flag == 1) "" else "s"))
  cli::cat_line(sprintf("  %s after %d round%s, %d sweeps, %d %s (solver: %s)",
                        if (x$converged) "converged" else "NOT converged", x$outer_iterations,
                        if (x$outer_iterations == 1) "" else "s", x$sweeps, x$factorizations,
                        if (identical(x$approx, "vecchia")) "evaluations" else "factorisations", x$solver))
  if (x$jitter > 0) cli::cat_line(sprintf("  jitter added: %.3g", x$jitter))
  invisible(x)
}

#' @rdname gpr_loo-methods
#' @export
summary.gpr_loo <- function(object, ...) {
  check_fit(object, "gpr_loo")
  li <- label_issues(object)
  structure(list(
    call = object$call, n = length(object$y), noise = object$noise, solver = object$solver,
    kernel = kernel_tidy(object$kernel), loglik = object$loglik, noise_level = object$noise_level,
    noise_var = stats::quantile(object$noise_var, c(0, 0.25, 0.5, 0.75, 1)),
    top = utils::head(as.data.frame(unclass(li)), 5), n_flagged = sum(li$flagged),
    converged = object$converged, outer_iterations = object$outer_iterations,
    sweeps = object$sweeps, factorizations = object$factorizations,
    fallbacks = object$fallbacks, jitter = object$jitter,
    kernel_fit = object$kernel_fit, penalty = object$penalty, lambda = object$lambda,
    p = object$p, lambda_rule = object$lambda_rule, approx_text = gp_approx_text(object)
  ), class = "summary.gpr_loo")
}

#' @export
print.summary.gpr_loo <- function(x, ...) {
  cli::cat_line("GP regression with per-label noise (Tang, Zhu & de Jong)")
  cli::cat_line(sprintf("n = %d, noise model: %s, solver: %s", x$n, x$noise, x$solver))
  if (!is.null(x$approx_text)) cli::cat_line("Covariance: ", x$approx_text)
  if (identical(x$penalty, "lp")) cli::cat_line("Penalty: ", gpr_loo_penalty_text(x))
  cli::cat_line(if (identical(x$kernel_fit, "uniform")) "\nKernel hyperparameters (learned under uniform noise):"
                else "\nKernel hyperparameters:")
  print(x$kernel, row.names = FALSE, digits = 4)
  cli::cat_line(sprintf("\nLog-likelihood: %.6g   homoscedastic noise level: %.4g", x$loglik, x$noise_level))
  cli::cat_line("Noise variance quantiles:")
  print(signif(x$noise_var, 4))
  cli::cat_line(sprintf("\n%d label%s flagged; highest scores:", x$n_flagged, if (x$n_flagged == 1) "" else "s"))
  print(x$top, row.names = FALSE, digits = 4)
  cli::cat_line(sprintf("\n%s: %d rounds, %d sweeps, %d factorisations, %d rejected steps, jitter %.3g",
                        if (x$converged) "Converged" else "Not converged", x$outer_iterations,
                        x$sweeps, x$factorizations, x$fallbacks, x$jitter))
  invisible(x)
}

#' @rdname gpr_loo-methods
#' @export
tidy.gpr_loo <- function(x, ...) {
  check_fit(x, "gpr_loo")
  out <- kernel_tidy(x$kernel)
  rbind(out, data.frame(term = "noise_level", estimate = x$noise_level, fixed = FALSE))
}

#' @rdname gpr_loo-methods
#' @export
glance.gpr_loo <- function(x, ...) {
  check_fit(x, "gpr_loo")
  data.frame(nobs = length(x$y), logLik = x$loglik, AIC = stats::AIC(logLik(x)),
             noise = x$noise, lambda = x$lambda, noise_level = x$noise_level, n_flagged = sum(label_issues(x)$flagged),
             converged = x$converged, rounds = x$outer_iterations, sweeps = x$sweeps,
             factorizations = x$factorizations, jitter = x$jitter,
             approx = x$approx %||% "dense", stringsAsFactors = FALSE)
}

#' @rdname gpr_loo-methods
#' @export
augment.gpr_loo <- function(x, data = NULL, ...) {
  check_fit(x, "gpr_loo")
  base <- if (is.null(data)) as.data.frame(x$x) else as.data.frame(data)
  if (nrow(base) != length(x$y)) abort_input("{.arg data} must have the {length(x$y)} training rows.")
  base$.response <- x$y
  base$.fitted <- x$fitted.values
  base$.resid <- x$residuals
  base$.noise_var <- x$noise_var
  base$.loo_resid <- x$loo_residual
  base$.loo_sd <- x$loo_sd
  base$.flagged <- flags_by_row(label_issues(x))
  base
}

#' @rdname gpr_loo-methods
#' @export
plot.gpr_loo <- function(x, which = c("fit", "scores", "trace"), ...) {
  check_fit(x, "gpr_loo")
  which <- match_arg(which)
  if (which == "fit" && ncol(x$x) != 1) which <- "scores"
  flag <- flags_by_row(label_issues(x))
  if (which == "fit") {
    xs <- x$x[, 1]
    grid <- seq(min(xs), max(xs), length.out = 200)
    pr <- predict(x, if (is.null(x$terms)) matrix(grid) else stats::setNames(data.frame(grid), colnames(x$x)),
                  se.fit = TRUE)
    yl <- range(c(x$y, pr$fit - 2 * pr$se.obs, pr$fit + 2 * pr$se.obs))
    graphics::plot(xs, x$y, pch = ifelse(flag, 4, 16), col = ifelse(flag, "firebrick", "grey30"),
                   ylim = yl, xlab = colnames(x$x)[1] %||% "x", ylab = "y",
                   main = "gpr_loo: fit and flagged labels")
    graphics::polygon(c(grid, rev(grid)), c(pr$fit - 2 * pr$se.obs, rev(pr$fit + 2 * pr$se.obs)),
                      col = grDevices::adjustcolor("steelblue", 0.2), border = NA)
    graphics::lines(grid, pr$fit, col = "steelblue", lwd = 2)
    graphics::legend("topleft", c("label", "flagged", "mean +- 2 sd (obs.)"), pch = c(16, 4, NA),
                     lty = c(NA, NA, 1), col = c("grey30", "firebrick", "steelblue"), bty = "n")
  } else if (which == "scores") {
    o <- order(x$noise_var, decreasing = TRUE)
    graphics::plot(seq_along(o), x$noise_var[o], type = "h", col = ifelse(flag[o], "firebrick", "grey40"),
                   xlab = "labels, by decreasing score", ylab = "noise variance",
                   main = "gpr_loo: per-label noise variances")
  } else {
    graphics::plot(x$trace_factorizations, x$trace, type = "l", xlab = "factorisations",
                   ylab = "objective J", main = "gpr_loo: objective trace")
  }
  invisible(x)
}

#' @rdname gpr_loo-methods
#' @exportS3Method ggplot2::autoplot
autoplot.gpr_loo <- function(object, ...) {
  check_fit(object, "gpr_loo")
  if (!requireNamespace("ggplot2", quietly = TRUE)) abort_input("{.fn autoplot} needs the ggplot2 package.")
  df <- augment(object)
  if (ncol(object$x) == 1) {
    df$x <- object$x[, 1]
    grid <- seq(min(df$x), max(df$x), length.out = 200)
    nd <- if (is.null(object$terms)) matrix(grid) else stats::setNames(data.frame(grid), colnames(object$x))
    pr <- predict(object, nd, se.fit = TRUE)
    band <- data.frame(x = grid, fit = pr$fit, lo = pr$fit - 2 * pr$se.obs, hi = pr$fit + 2 * pr$se.obs)
    ggplot2::ggplot(df, ggplot2::aes(x = .data$x, y = .data$.response)) +
      ggplot2::geom_ribbon(data = band, ggplot2::aes(x = .data$x, ymin = .data$lo, ymax = .data$hi),
                           inherit.aes = FALSE, fill = "steelblue", alpha = 0.2) +
      ggplot2::geom_line(data = band, ggplot2::aes(x = .data$x, y = .data$fit), colour = "steelblue") +
      ggplot2::geom_point(ggplot2::aes(colour = .data$.flagged, size = .data$.noise_var)) +
      ggplot2::scale_colour_manual(values = c(`FALSE` = "grey30", `TRUE` = "firebrick")) +
      ggplot2::labs(x = colnames(object$x)[1] %||% "x", y = "y", colour = "flagged", size = "noise var")
  } else {
    df$rank <- rank(-df$.noise_var, ties.method = "first")
    ggplot2::ggplot(df, ggplot2::aes(x = .data$rank, y = .data$.noise_var, colour = .data$.flagged)) +
      ggplot2::geom_point() +
      ggplot2::scale_colour_manual(values = c(`FALSE` = "grey30", `TRUE` = "firebrick")) +
      ggplot2::labs(x = "label rank", y = "noise variance", colour = "flagged")
  }
}

# The penalty as print() and summary() show it (fit or summary object).
gpr_loo_penalty_text <- function(x) {
  sprintf("lambda = %s, p = %s%s", format(signif(x$lambda, 4)), format(x$p),
          if (identical(x$lambda_rule, "auto")) " (\"auto\": prior mean from the unpenalised fit)" else "")
}
