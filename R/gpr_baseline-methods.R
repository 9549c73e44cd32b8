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
