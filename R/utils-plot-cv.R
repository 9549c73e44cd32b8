# What cv_gpr_loo() and cv_sgd_robust() results share (class
# "noisylabels_cv"): the refitted model answers predict(), fitted(),
# noise_scores() and label_issues(); tidy() is the grid with the choice
# marked; plot() and autoplot() draw the CV curve.

#' Methods shared by cross-validation results
#'
#' [cv_gpr_loo()] and [cv_sgd_robust()] results carry the model refitted with
#' the chosen setting (`fit`), which answers `predict()`, `fitted()`,
#' `noise_scores()` and `label_issues()`. `tidy()` returns the grid of
#' settings with a `chosen` column. `plot()` and `autoplot()` draw the
#' held-out error against `lambda` (one line per ramp parameter `s` for
#' `cv_sgd_robust()`), with bars of one standard error over folds and the
#' chosen setting circled; `which = "fit"` gives the refitted model's plot
#' instead.
#'
#' @param x,object A `cv_gpr_loo` or `cv_sgd_robust` result.
#' @param which `"cv"` (the cross-validation curve) or `"fit"` (the refitted
#'   model's `plot()` / `autoplot()`).
#' @param ... For `plot()`: graphical parameters (they override the
#'   defaults); for the others, passed to the refitted model's method.
#' @return `plot()` returns the plotted values invisibly, `autoplot()` a
#'   ggplot object; the others as for the refitted model.
#' @name cv-methods
#' @examples
#' set.seed(1)
#' d <- sim_tang1d()
#' cv <- cv_gpr_loo(d$data["x"], d$data$y, lambda = c(0, 3), folds = 4, restarts = 2)
#' plot(cv)
#' tidy(cv)
NULL

#' @rdname cv-methods
#' @export
plot.noisylabels_cv <- function(x, which = c("cv", "fit"), ...) {
  check_fit(x, "noisylabels_cv")
  which <- match_arg(which)
  if (which == "fit") return(plot(x$fit, ...))
  plot_cv(x, ...)
}

#' @rdname cv-methods
#' @exportS3Method ggplot2::autoplot
autoplot.noisylabels_cv <- function(object, which = c("cv", "fit"), ...) {
  check_fit(object, "noisylabels_cv")
  which <- match_arg(which)
  if (which == "fit") return(ggplot2::autoplot(object$fit, ...))
  autoplot_cv(object)
}

#' @rdname cv-methods
#' @export
predict.noisylabels_cv <- function(object, ...) {
  check_fit(object, "noisylabels_cv")
  predict(object$fit, ...)
}

#' @rdname cv-methods
#' @export
fitted.noisylabels_cv <- function(object, ...) {
  check_fit(object, "noisylabels_cv")
  fitted(object$fit, ...)
}

#' @rdname cv-methods
#' @export
noise_scores.noisylabels_cv <- function(object, ...) {
  check_fit(object, "noisylabels_cv")
  noise_scores(object$fit, ...)
}

#' @rdname cv-methods
#' @export
label_issues.noisylabels_cv <- function(object, ...) {
  check_fit(object, "noisylabels_cv")
  label_issues(object$fit, ...)
}

#' @rdname cv-methods
#' @param data For `augment()`: passed to the refitted model's `augment()`.
#' @export
augment.noisylabels_cv <- function(x, data = NULL, ...) {
  check_fit(x, "noisylabels_cv")
  augment(x$fit, data = data, ...)
}

#' @rdname cv-methods
#' @export
tidy.noisylabels_cv <- function(x, ...) {
  check_fit(x, "noisylabels_cv")
  cbind(x$results, chosen = cv_chosen(x))
}

# Held-out error against a cross-validation grid: one line per group (the
# ramp parameter s of cv_sgd_robust(); a single group for cv_gpr_loo()), bars
# of one standard error, the chosen setting circled. The grid is plotted at
# equal spacing (it is log-spaced in practice and may hold 0). Graphical
# parameters in `...` go to plot() and override the defaults. Returns the
# plotted values invisibly.
plot_cv_curve <- function(lambda, error, se, group, chosen, default_ylab, default_main, ...) {
  grid <- sort(unique(lambda))
  pos <- match(lambda, grid)
  groups <- unique(group)
  lower <- error - se
  upper <- error + se
  yl <- range(c(error, lower, upper), finite = TRUE)
  # The user's graphical parameters (main, ylab, ylim, ...) win over ours.
  args <- utils::modifyList(list(x = range(pos), y = yl, type = "n", xaxt = "n", xlab = "lambda",
                                 ylab = default_ylab, main = default_main), list(...))
  do.call(graphics::plot, args)
  graphics::axis(1, at = seq_along(grid), labels = signif(grid, 3))
  for (k in seq_along(groups)) {
    rows <- which(group == groups[k])
    rows <- rows[order(pos[rows])]
    graphics::lines(pos[rows], error[rows], type = "b", pch = 19, col = k)
    bars <- rows[is.finite(se[rows]) & se[rows] > 0]
    if (length(bars)) {
      graphics::arrows(pos[bars], lower[bars], pos[bars], upper[bars], angle = 90, code = 3,
                       length = 0.03, col = k)
    }
  }
  graphics::points(pos[chosen], error[chosen], cex = 2.2, lwd = 2, col = "red")
  if (length(groups) > 1) {
    graphics::legend("topleft", legend = paste("s =", groups), col = seq_along(groups), lty = 1,
                     pch = 19, bty = "n")
  }
  invisible(data.frame(lambda = lambda, group = group, error = error, lower = lower,
                       upper = upper, chosen = seq_along(lambda) == chosen))
}

# Which rows of a cross-validation result's grid hold the chosen setting:
# cv_gpr_loo() chooses a lambda, cv_sgd_robust() a (lambda, s) pair.
cv_chosen <- function(x, call = parent.frame()) {
  r <- x$results
  ch <- if (is.list(x$best)) r$lambda == x$best$lambda & r$s == x$best$s else r$lambda == x$best
  if (!is.logical(ch) || length(ch) != NROW(r) || anyNA(ch) || !any(ch)) {
    abort_input(c("The cross-validation result's {.field best} does not name one setting of its grid.",
                  "i" = "Refit with {.fn cv_gpr_loo} or {.fn cv_sgd_robust} instead of editing the result."),
                class = "noisylabels_error_object", call = call)
  }
  ch
}

# The CV curve of a cv_gpr_loo() or cv_sgd_robust() result in one layout for
# plot() and autoplot(): lambda, group (s or 1), error, se, chosen, and labels.
cv_curve_data <- function(x) {
  r <- x$results
  if (inherits(x, "cv_sgd_robust")) {
    se <- r$sd_error / sqrt(pmax(max(x$folds) - r$failed, 1))
    list(df = data.frame(lambda = r$lambda, group = r$s, error = r$mean_error, se = se,
                         chosen = cv_chosen(x)),
         ylab = "held-out error rate",
         main = sprintf("%d-fold CV of sgd_robust(loss = \"%s\")", max(x$folds), x$loss))
  } else {
    list(df = data.frame(lambda = r$lambda, group = rep(1, nrow(r)), error = r$mean_abs_error,
                         se = r$se, chosen = cv_chosen(x)),
         ylab = "held-out mean absolute error",
         main = sprintf("%d-fold CV of the l1 penalty", max(x$folds)))
  }
}

plot_cv <- function(x, ...) {
  cd <- cv_curve_data(x)
  d <- cd$df
  plot_cv_curve(d$lambda, d$error, d$se, group = d$group, chosen = which(d$chosen),
                default_ylab = cd$ylab, default_main = cd$main, ...)
}

# ggplot2 version of plot_cv_curve(): lambda as equally spaced categories,
# one line per group, bars of one standard error, the choice circled.
autoplot_cv <- function(x, call = parent.frame()) {
  require_ggplot2(call = call)
  cd <- cv_curve_data(x)
  d <- cd$df
  d$lambda_f <- factor(signif(d$lambda, 3), levels = signif(sort(unique(d$lambda)), 3))
  d$group_f <- factor(d$group)
  d$lower <- d$error - ifelse(is.finite(d$se), d$se, 0)
  d$upper <- d$error + ifelse(is.finite(d$se), d$se, 0)
  several <- length(unique(d$group)) > 1
  aes_line <- if (several) ggplot2::aes(colour = .data$group_f, group = .data$group_f)
              else ggplot2::aes(group = .data$group_f)
  ggplot2::ggplot(d, ggplot2::aes(.data$lambda_f, .data$error)) +
    ggplot2::geom_errorbar(ggplot2::aes(ymin = .data$lower, ymax = .data$upper, colour = if (several) .data$group_f),
                           width = 0.15) +
    ggplot2::geom_line(aes_line) +
    ggplot2::geom_point(aes_line) +
    ggplot2::geom_point(data = d[d$chosen, , drop = FALSE], shape = 21, size = 5, stroke = 1.2,
                        colour = "red", fill = NA) +
    ggplot2::labs(x = "lambda", y = cd$ylab, title = cd$main, colour = if (several) "s") +
    ggplot2::theme_minimal()
}
