# S3 methods for sgd_robust fits (and cv_sgd_robust results).

utils::globalVariables(c("epoch", "value", "series"))

sgd_loss_label <- function(loss) {
  switch(loss$name,
         smooth_ramp = sprintf("smooth ramp (s = %g, alpha = %g, beta = %g)", loss$s, loss$alpha, loss$beta),
         gompertz = sprintf("reversed Gompertz (c = %g)", loss$c),
         ramp = sprintf("ramp (s = %g)", loss$s),
         hinge = "hinge", logistic = "logistic")
}

sgd_method_label <- function(object) {
  switch(object$method,
         sgd = sprintf("SGD, constant step, option %s", object$option),
         asgd = "averaged SGD (eta0 / (1 + lambda eta0 t)^0.75)",
         pegasos = "Pegasos (eta = 1/(lambda t), projection)")
}

# Design matrix for new data in the layout of the training data.
sgd_newx <- function(object, newdata, call = parent.frame()) {
  if (!is.null(object$terms)) return(newdata_design(object, newdata, object$d, call = call))
  x <- newdata
  if (inherits(x, "sparseMatrix")) {
    if (ncol(x) != object$d) abort_input("{.arg newdata} has {ncol(x)} column{?s}; the fit has {object$d}.", call = call)
    return(x)
  }
  x <- check_x_matrix(x, "newdata", max_abs = Inf)
  if (ncol(x) != object$d) abort_input("{.arg newdata} has {ncol(x)} column{?s}; the fit has {object$d}.", call = call)
  x
}

# Labels in the training labels' coding from class indices 1..K.
sgd_classes_from_index <- function(object, idx) {
  lev <- object$levels
  switch(object$label_kind,
         factor = factor(as.character(lev)[idx], levels = as.character(lev)),
         character = as.character(lev)[idx],
         lev[idx])
}

# Decision values f_k(x) of new data (n x K for multiclass fits).
sgd_decision_values <- function(object, x) {
  if (is.null(object$multiclass)) return(as.vector(x %*% object$weights) + object$bias)
  f <- as.matrix(x %*% object$weights) + rep(object$bias, each = nrow(x))
  dimnames(f) <- list(NULL, names(object$bias))
  f
}

# Class probabilities from decision values, for losses with a probability
# reading: logistic (binary: the sigmoid; one-vs-rest: the K sigmoids
# normalised to sum 1; multinomial: the softmax).
sgd_probabilities <- function(object, f) {
  if (object$loss$name != "logistic") {
    abort_input(c("{.code type = \"prob\"} needs a loss with a probability reading: only {.code loss = \"logistic\"} has one.",
                  "i" = "This fit uses the {object$loss$name} loss; use {.code type = \"link\"} for decision values."))
  }
  if (is.null(object$multiclass)) {
    p <- stats::plogis(f)
    out <- cbind(1 - p, p)
    colnames(out) <- as.character(object$levels)
    return(out)
  }
  if (object$multiclass == "multinomial") {
    e <- exp(f - apply(f, 1, max))
  } else {
    e <- stats::plogis(f)
  }
  e / rowSums(e)
}

sgd_classes <- function(object, positive) {
  lev <- object$levels
  out <- ifelse(positive, 2L, 1L)
  switch(object$label_kind,
         factor = factor(lev[out], levels = lev),
         character = lev[out],
         logical = positive,
         lev[out])
}

#' Predict with a robust-loss SGD classifier
#'
#' @param object An `sgd_robust` fit.
#' @param newdata Matrix, sparse matrix, (formula fits) data frame, or the
#'   path(s) of LIBSVM files (read in chunks of `chunk_rows` rows, so they
#'   need not fit in memory); `NULL` uses the training data's decision values.
#' @param chunk_rows Rows read at a time from files.
#' @param type `"class"` (labels in the training labels' coding), `"link"`
#'   (the decision value w'x + b; a matrix with one column per class for
#'   multiclass fits) or `"prob"` (a matrix of class probabilities, logistic
#'   loss only).
#' @param ... Unused.
#' @return A vector with one entry per row of `newdata`.
#' @examples
#' set.seed(2)
#' x <- matrix(rnorm(200), 100, 2)
#' y <- factor(ifelse(x[, 1] > 0, "yes", "no"))
#' fit <- sgd_robust(x, y, lambda = 1e-3)
#' table(predict(fit, x), y)
#' head(predict(fit, x, type = "link"))
#' @export
predict.sgd_robust <- function(object, newdata = NULL, type = c("class", "link", "prob"),
                               chunk_rows = 100000L, ...) {
  check_fit(object, "sgd_robust")
  type <- match_arg(type)
  if (is.null(newdata)) {
    f <- fitted(object)
  } else if (is.character(newdata)) {
    f <- sgd_file_decision(object, newdata, chunk_rows)$f
  } else {
    x <- sgd_newx(object, newdata)
    f <- sgd_decision_values(object, x)
  }
  if (type == "link") return(f)
  if (type == "prob") return(sgd_probabilities(object, f))
  if (!is.null(object$multiclass)) return(sgd_classes_from_index(object, max.col(f, ties.method = "first")))
  sgd_classes(object, f > 0)
}

#' @export
fitted.sgd_robust <- function(object, ...) {
  check_fit(object, "sgd_robust")
  if (!is.null(object$multiclass)) return(object$decision)
  object$margins * object$y
}

#' @export
coef.sgd_robust <- function(object, ...) {
  check_fit(object, "sgd_robust")
  object$coefficients
}

#' @export
print.sgd_robust <- function(x, ...) {
  check_fit(x, "sgd_robust")
  cli::cat_line("Robust-loss SGD linear classifier (Han, Tsang & Chen 2016)")
  cli::cat_line("  loss:    ", sgd_loss_label(x$loss))
  cli::cat_line("  method:  ", sgd_method_label(x))
  eta_txt <- if (is.na(x$eta)) "1/(lambda t)" else sprintf("%g%s", x$eta, if (x$eta_auto) " (chosen automatically)" else "")
  cli::cat_line(sprintf("  lambda = %g, eta = %s, bias: %s", x$lambda, eta_txt, x$bias_mode))
  cli::cat_line(sprintf("  data:    %d x %d (%s), classes %s%s", x$n, x$d,
                        if (x$sparse) "sparse" else "dense",
                        paste(as.character(x$levels), collapse = " / "),
                        if (is.null(x$multiclass)) "" else sprintf(" (%s)", if (x$multiclass == "ovr") "one-vs-rest" else "multinomial")))
  if (identical(x$warm_start, "hinge")) cli::cat_line("  warm start: one epoch of the hinge loss")
  if (!is.null(x$penalty) && x$penalty != "l2") {
    nz <- sum(as.matrix(x$weights) != 0)
    cli::cat_line(sprintf("  penalty: %s (lambda_l2 = %g, lambda_l1 = %g); %d of %d weights non-zero",
                          x$penalty, x$lambda_l2, x$lambda_l1, nz, length(x$weights)))
  }
  if (!is.null(x$early_stopping)) {
    es <- x$early_stopping
    cli::cat_line(sprintf("  early stopping: best validation error in epoch %d%s", es$best_epoch,
                          if (isTRUE(es$stopped_early)) sprintf(", stopped after %d", x$iterations) else ""))
  }
  if (NROW(x$step_shrinks)) {
    cli::cat_line(sprintf("  step guard: %d epoch%s rerun with a halved step", nrow(x$step_shrinks),
                          if (nrow(x$step_shrinks) == 1) "" else "s"))
  }
  tr <- x$trace[nrow(x$trace), ]
  cli::cat_line(sprintf("  %d epoch%s, %s; objective %.5g, training error %.4g",
                        x$iterations, if (x$iterations == 1) "" else "s",
                        if (x$converged) "converged" else "not converged",
                        tr$objective, tr$train_error))
  if (!is.na(tr$valid_error)) cli::cat_line(sprintf("  validation error %.4g", tr$valid_error))
  invisible(x)
}

#' Summarise a robust-loss SGD fit
#'
#' @param object An `sgd_robust` fit.
#' @param ... Unused.
#' @return An object of class `summary.sgd_robust` with the settings, the
#'   per-epoch trace, the largest coefficients and the number of flagged
#'   training labels.
#' @examples
#' set.seed(3)
#' x <- matrix(rnorm(300), 100, 3)
#' y <- ifelse(x[, 1] - x[, 2] > 0, 1, -1)
#' summary(sgd_robust(x, y, loss = "gompertz", lambda = 1e-3))
#' @export
summary.sgd_robust <- function(object, ...) {
  check_fit(object, "sgd_robust")
  w <- object$coefficients
  if (is.matrix(w)) {
    w <- stats::setNames(as.vector(w), paste0(rownames(w)[row(w)], ":", colnames(w)[col(w)]))
  }
  top <- w[order(-abs(w))][seq_len(min(10L, length(w)))]
  out <- list(call = object$call, loss = sgd_loss_label(object$loss),
              method = sgd_method_label(object), lambda = object$lambda, eta = object$eta,
              n = object$n, d = object$d, trace = object$trace, converged = object$converged,
              rel_change = object$rel_change, coefficients = top,
              flagged = sum(noise_scores(object) > 0), seconds = object$seconds)
  class(out) <- "summary.sgd_robust"
  out
}

#' @export
print.summary.sgd_robust <- function(x, ...) {
  cli::cat_line("Robust-loss SGD linear classifier")
  cli::cat_line("Loss: ", x$loss, "; ", x$method)
  cli::cat_line(sprintf("lambda = %g, eta = %s; n = %d, d = %d", x$lambda,
                        if (is.na(x$eta)) "1/(lambda t)" else format(x$eta), x$n, x$d))
  cli::cat_line(sprintf("%s after %d epochs (relative objective change %.3g)",
                        if (x$converged) "Converged" else "Not converged", nrow(x$trace), x$rel_change))
  cli::cat_line("Per-epoch trace:")
  tr <- x$trace
  if (all(is.na(tr$valid_error))) tr$valid_error <- NULL
  print(tr, row.names = FALSE, digits = 4)
  cli::cat_line("Largest coefficients:")
  print(signif(x$coefficients, 4))
  cli::cat_line(sprintf("Training labels in the loss's flat region (flagged): %d", x$flagged))
  invisible(x)
}

#' Plot the training trace of a robust-loss SGD fit
#'
#' Two panels: the primal objective and the error (training, and validation
#' when given) by epoch.
#'
#' @param x An `sgd_robust` fit.
#' @param ... Passed to [graphics::plot()].
#' @return `x`, invisibly.
#' @examples
#' set.seed(4)
#' x <- matrix(rnorm(400), 200, 2)
#' y <- ifelse(x[, 1] > 0, 1, -1)
#' plot(sgd_robust(x, y, lambda = 1e-3, x_valid = x, y_valid = y))
#' @export
plot.sgd_robust <- function(x, ...) {
  check_fit(x, "sgd_robust")
  tr <- x$trace
  op <- graphics::par(mfrow = c(1, 2))
  on.exit(graphics::par(op))
  graphics::plot(tr$epoch, tr$objective, type = "b", pch = 19, xlab = "epoch",
                 ylab = "primal objective", main = "Objective", ...)
  has_valid <- !all(is.na(tr$valid_error))
  yl <- range(c(tr$train_error, if (has_valid) tr$valid_error), na.rm = TRUE)
  graphics::plot(tr$epoch, tr$train_error, type = "b", pch = 19, ylim = yl, xlab = "epoch",
                 ylab = "error rate", main = "Error", ...)
  if (has_valid) {
    graphics::lines(tr$epoch, tr$valid_error, type = "b", pch = 17, col = 2)
    graphics::legend("topright", c("training", "validation"), col = 1:2, pch = c(19, 17), bty = "n")
  }
  invisible(x)
}

#' ggplot2 version of the training trace
#'
#' @param object An `sgd_robust` fit.
#' @param ... Unused.
#' @return A ggplot object (objective and error by epoch, faceted).
#' @examplesIf requireNamespace("ggplot2", quietly = TRUE)
#' set.seed(4)
#' x <- matrix(rnorm(400), 200, 2)
#' y <- ifelse(x[, 1] > 0, 1, -1)
#' ggplot2::autoplot(sgd_robust(x, y, lambda = 1e-3))
#' @exportS3Method ggplot2::autoplot
autoplot.sgd_robust <- function(object, ...) {
  check_fit(object, "sgd_robust")
  require_ggplot2()
  tr <- object$trace
  long <- rbind(
    data.frame(epoch = tr$epoch, value = tr$objective, panel = "objective", series = "training"),
    data.frame(epoch = tr$epoch, value = tr$train_error, panel = "error", series = "training"))
  if (!all(is.na(tr$valid_error))) {
    long <- rbind(long, data.frame(epoch = tr$epoch, value = tr$valid_error, panel = "error",
                                   series = "validation"))
  }
  ggplot2::ggplot(long, ggplot2::aes(x = epoch, y = value, colour = series)) +
    ggplot2::geom_line() + ggplot2::geom_point() +
    ggplot2::facet_wrap(~panel, scales = "free_y") +
    ggplot2::labs(x = "epoch", y = NULL, colour = NULL,
                  title = paste("SGD,", sgd_loss_label(object$loss)))
}

#' Tidy, glance and augment a robust-loss SGD fit
#'
#' @param x An `sgd_robust` fit.
#' @param data Optional data frame of the training rows to bind the
#'   per-observation columns to (augment).
#' @param ... Unused.
#' @return `tidy()`: a data frame with `term` and `estimate`. `glance()`: one
#'   row with loss, method, lambda, eta, epochs, final objective, training and
#'   validation error, converged, n, d. `augment()`: `data` (or a data frame
#'   with `.row`) plus `.fitted` (decision value), `.class`, `.margin`,
#'   `.noise_score` and `.flagged`.
#' @examples
#' set.seed(5)
#' x <- matrix(rnorm(200), 100, 2)
#' y <- ifelse(x[, 2] > 0, 1, -1)
#' fit <- sgd_robust(x, y, lambda = 1e-3)
#' tidy(fit)
#' glance(fit)
#' head(augment(fit))
#' @name sgd_robust_tidiers
NULL

#' @rdname sgd_robust_tidiers
#' @export
tidy.sgd_robust <- function(x, ...) {
  check_fit(x, "sgd_robust")
  cf <- x$coefficients
  if (is.matrix(cf)) {
    return(data.frame(class = colnames(cf)[col(cf)], term = rownames(cf)[row(cf)],
                      estimate = as.vector(cf), stringsAsFactors = FALSE))
  }
  data.frame(term = names(cf), estimate = unname(cf), stringsAsFactors = FALSE)
}

#' @rdname sgd_robust_tidiers
#' @export
glance.sgd_robust <- function(x, ...) {
  check_fit(x, "sgd_robust")
  tr <- x$trace[nrow(x$trace), ]
  data.frame(loss = x$loss$name, method = x$method, lambda = x$lambda, eta = x$eta,
             epochs = x$iterations, objective = tr$objective, train_error = tr$train_error,
             valid_error = tr$valid_error, converged = x$converged, n = x$n, d = x$d,
             stringsAsFactors = FALSE)
}

#' @rdname sgd_robust_tidiers
#' @export
augment.sgd_robust <- function(x, data = NULL, ...) {
  check_fit(x, "sgd_robust")
  f <- fitted(x)
  out <- if (is.null(data)) data.frame(.row = seq_len(x$n)) else as.data.frame(data)
  if (nrow(out) != x$n) abort_input("{.arg data} has {nrow(out)} rows; the fit has {x$n}.")
  score <- noise_scores(x)
  if (is.matrix(f)) {
    out$.fitted <- f[cbind(seq_len(x$n), x$class_index)]
    out$.class <- sgd_classes_from_index(x, max.col(f, ties.method = "first"))
  } else {
    out$.fitted <- f
    out$.class <- sgd_classes(x, f > 0)
  }
  out$.margin <- x$margins
  out$.noise_score <- score
  out$.flagged <- score > 0
  out
}
