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
  if (!is.null(object$terms)) {
    if (!is.data.frame(newdata)) {
      abort_input("{.arg newdata} must be a data frame for a fit from the formula interface.", call = call)
    }
    return(newdata_design(object, newdata, object$d, call = call))
  }
  x <- newdata
  if (inherits(x, "sparseMatrix")) {
    if (ncol(x) != object$d) abort_input("{.arg newdata} has {ncol(x)} column{?s}; the fit has {object$d}.", call = call)
    return(x)
  }
  x <- check_x_matrix(x, "newdata")
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
  if (!is.null(object$multiclass)) return(object$decision)
  object$margins * object$y
}

#' @export
coef.sgd_robust <- function(object, ...) object$coefficients

#' @export
print.sgd_robust <- function(x, ...) {
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
  if (!requireNamespace("ggplot2", quietly = TRUE)) {
    abort_input("{.fn autoplot} needs the {.pkg ggplot2} package.")
  }
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
  tr <- x$trace[nrow(x$trace), ]
  data.frame(loss = x$loss$name, method = x$method, lambda = x$lambda, eta = x$eta,
             epochs = x$iterations, objective = tr$objective, train_error = tr$train_error,
             valid_error = tr$valid_error, converged = x$converged, n = x$n, d = x$d,
             stringsAsFactors = FALSE)
}

#' @rdname sgd_robust_tidiers
#' @export
augment.sgd_robust <- function(x, data = NULL, ...) {
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

#' Noise scores and label issues of a robust-loss SGD fit
#'
#' The score of training row i is \eqn{z_0 - z_i}: how far its margin
#' \eqn{z_i = y_i f(x_i)} lies inside the flat region of the loss, which
#' starts at \eqn{z_0} (see [sgd_robust()], section "Noise scores"). Rows
#' with score > `threshold` are flagged.
#'
#' @param object An `sgd_robust` fit.
#' @param threshold Flag rows whose score exceeds this (default 0: the margin
#'   is past the start of the flat region).
#' @param newdata,y Optional other labelled rows to score instead of the
#'   training rows: a matrix (with labels `y`) or the path(s) of LIBSVM files
#'   (labels read from the files, streamed in chunks of `chunk_rows`).
#' @param chunk_rows Rows read at a time from files.
#' @param ... Unused.
#' @return `noise_scores()`: numeric vector, one per training row.
#'   `label_issues()`: the shared data frame (row, score, flagged) plus
#'   `margin`, `loss_weight` (\eqn{-r'(z_i)}, the weight of the row in the
#'   gradient; near 0 in the flat region) and `label` (the given label).
#' @examples
#' set.seed(6)
#' x <- matrix(rnorm(400), 200, 2)
#' y <- ifelse(x[, 1] > 0, 1, -1)
#' noisy <- flip_labels(y, 0.1)
#' fit <- sgd_robust(x, noisy$y, loss = "gompertz", lambda = 1e-3)
#' iss <- label_issues(fit)
#' head(iss)
#' detection_metrics(noise_scores(fit), noisy$flipped)
#' @name sgd_robust_noise
NULL

#' @rdname sgd_robust_noise
#' @export
noise_scores.sgd_robust <- function(object, newdata = NULL, y = NULL, chunk_rows = 100000L, ...) {
  if (!is.null(newdata)) object <- sgd_with_new_rows(object, newdata, y, chunk_rows)
  z0 <- object$loss_flat_start %||% .sgd_loss_eval(object$loss, 0)$flat_start
  if (!is.null(object$multiclass)) {
    if (object$multiclass == "multinomial") z0 <- 0
    return(z0 - pmin(object$margins, sgd_margin_vs_best(object)$margin))
  }
  z0 - object$margins
}

# Multiclass fits: half the gap between the given class's decision value and
# the best other class's, (f_y - max_{k != y} f_k) / 2, and that class. For K
# = 2 one-vs-rest models (f_2 = -f_1) this is the binary margin y f.
sgd_margin_vs_best <- function(object) {
  f <- object$decision
  n <- nrow(f)
  own <- f[cbind(seq_len(n), object$class_index)]
  other <- f
  other[cbind(seq_len(n), object$class_index)] <- -Inf
  best <- max.col(other, ties.method = "first")
  list(margin = (own - other[cbind(seq_len(n), best)]) / 2, best = best)
}

#' @rdname sgd_robust_noise
#' @export
label_issues.sgd_robust <- function(object, threshold = 0, newdata = NULL, y = NULL,
                                    chunk_rows = 100000L, ...) {
  check_number(threshold, "threshold")
  if (!is.null(newdata)) object <- sgd_with_new_rows(object, newdata, y, chunk_rows)
  score <- noise_scores(object)
  if (!is.null(object$multiclass)) {
    vs <- sgd_margin_vs_best(object)
    weight <- if (object$multiclass == "multinomial") {
      f <- object$decision
      e <- exp(f - apply(f, 1, max))
      1 - (e / rowSums(e))[cbind(seq_len(object$n), object$class_index)]
    } else {
      -.sgd_loss_eval(object$loss, object$margins)$deriv
    }
    return(new_label_issues(object$row_index %||% seq_len(object$n), score, score > threshold,
                            margin = object$margins, margin_vs_best = vs$margin,
                            loss_weight = weight,
                            label = sgd_classes_from_index(object, object$class_index),
                            best_other = sgd_classes_from_index(object, vs$best)))
  }
  ev <- .sgd_loss_eval(object$loss, object$margins)
  new_label_issues(object$row_index %||% seq_len(object$n), score, score > threshold,
                   margin = object$margins, loss_weight = -ev$deriv,
                   label = sgd_classes(object, object$y > 0))
}

# The label coding of a fit, as sgd_labels() returns it, for new labels.
sgd_label_template <- function(object) {
  multi <- !is.null(object$multiclass)
  list(multi = multi, levels = object$levels, kind = object$label_kind,
       K = length(object$levels), class_names = as.character(object$levels))
}

#' Continue training a robust-loss SGD fit on new rows
#'
#' The streaming counterpart of scikit-learn's `partial_fit()`: training goes
#' on from the fitted model on the rows of `x` (a matrix, sparse matrix, or
#' the path(s) of LIBSVM files), with the fit's loss, penalty, method,
#' option and bias, its current step `eta` (after any halving by the step
#' guard) and its step counter (so the ASGD and Pegasos schedules continue).
#' There is no warm start and no new step search. Each epoch is one pass
#' over the new rows (shuffled; in chunks of `chunk_rows` if given), exactly
#' as one chunk of a chunked fit: `update()` of a fit on the first half of
#' the rows with the second half gives the same model as
#' `sgd_robust(..., chunk_rows = )` over both halves (with the chunk's seed).
#'
#' The new rows must have the fit's columns and only classes the fit knows
#' (a chunk may lack some classes); anything else is an error of class
#' `noisylabels_error_input`. Weights of the new rows are rescaled to mean 1
#' within the update. The returned fit describes the new rows: `margins`,
#' [noise_scores()] and [label_issues()] refer to them; `trace` continues the
#' old one; `n_seen` counts all rows trained on.
#'
#' @param object An `sgd_robust` fit (not from the formula interface).
#' @param x New rows: matrix, sparse matrix, or LIBSVM file path(s).
#' @param y Their labels (`NULL` for files).
#' @param epochs Passes over the new rows.
#' @param weights Optional row weights of the new rows.
#' @param seed Seed of the shuffles; `NULL` draws one from R's RNG.
#' @param chunk_rows Rows per chunk (files: default 100000).
#' @param ... Unused.
#' @return An `sgd_robust` fit.
#' @importFrom stats update
#' @examples
#' set.seed(1)
#' x <- matrix(rnorm(800), 400, 2)
#' y <- ifelse(x[, 1] - x[, 2] > 0, 1, -1)
#' fit <- sgd_robust(x[1:200, ], y[1:200], loss = "gompertz", epochs = 3)
#' fit2 <- update(fit, x[201:400, ], y[201:400])
#' mean(predict(fit2, x) == y)
#' @export
update.sgd_robust <- function(object, x, y = NULL, epochs = 1L, weights = NULL, seed = NULL,
                              chunk_rows = NULL, ...) {
  check_dots_empty("update", ...)
  if (!is.null(object$terms)) {
    abort_input(c("{.fn update} takes matrices or files; this fit came from the formula interface.",
                  "i" = "Refit with {.code sgd_robust(x, y)} to continue training it."))
  }
  epochs <- check_count(epochs, "epochs")
  if (is.null(seed)) seed <- draw_seed()
  seed <- check_count(seed, "seed", lower = 0)
  d <- object$d
  lab <- sgd_label_template(object)
  multi <- lab$multi
  n_models <- if (multi) length(object$levels) else 1L
  from_file <- is.character(x)
  if (from_file) {
    files <- check_libsvm_files(x)
    if (!is.null(y)) abort_input("{.arg y} must be {.code NULL} when {.arg x} names LIBSVM files.")
    chunk_rows <- check_count(chunk_rows %||% 100000L, "chunk_rows")
    if (!is.null(weights)) abort_input("{.arg weights} are not supported for files in {.fn update}.")
    each_chunk <- function(f) {
      offset <- 0
      libsvm_each_chunk(files, chunk_rows, function(chunk, index) {
        if (chunk$max_index > d) {
          abort_input("{.file {files}} {?has/have} feature index {chunk$max_index}; the fit has {d} column{?s}.",
                      call = NULL)
        }
        rows <- offset + seq_len(chunk$n)
        offset <<- offset + chunk$n
        ch <- libsvm_core_data(chunk, d)
        f(sgd_set_labels(ch, sgd_labels(chunk$y, chunk$n, template = lab)), index, rows)
      })
      invisible(NULL)
    }
    n <- NA_real_
    sparse <- TRUE
  } else {
    if (is.null(y)) abort_input("{.arg y} is missing: give one label per row of {.arg x}.")
    if (!inherits(x, "sparseMatrix")) x <- check_x_matrix(x, "x")
    if (ncol(x) != d) {
      abort_input("{.arg x} has {ncol(x)} column{?s}; the fit has {d}.",
                  class = "noisylabels_error_dimension")
    }
    if (!is.null(object$centre)) {
      if (inherits(x, "sparseMatrix")) abort_input("The fit centred its columns; give dense {.arg x}.")
      x <- x - rep(object$centre, each = nrow(x))
    }
    n <- nrow(x)
    new_lab <- sgd_labels(y, n, template = lab)
    case_w <- sgd_case_weights(weights, NULL, new_lab, n)
    rows_all <- seq_len(n)
    chunk_rows <- if (is.null(chunk_rows)) n else check_count(chunk_rows, "chunk_rows")
    starts <- seq(1L, n, by = chunk_rows)
    each_chunk <- function(f) {
      for (k in seq_along(starts)) {
        rows <- starts[k]:min(n, starts[k] + chunk_rows - 1L)
        ch <- sgd_data(x[rows, , drop = FALSE], "x")
        ch <- sgd_set_labels(ch, sgd_labels(y[rows], length(rows), template = lab))
        if (!is.null(case_w$weight)) ch$weight <- case_w$weight[rows]
        f(ch, k, rows)
      }
      invisible(NULL)
    }
    sparse <- inherits(x, "sparseMatrix")
  }
  start <- sgd_start(stats::coef(object), d, object$bias_mode, object$centre, n_models)
  opts <- list(method = object$method, loss = object$loss,
               lambda = object$lambda_l2 %||% object$lambda, lambda_l1 = object$lambda_l1 %||% 0,
               eta = if (object$method == "pegasos") 1 else object$eta, epochs = 1L,
               average = object$option == "B", bias = object$bias_mode,
               bias_step = object$bias_step, record_iterates = FALSE, seed = as.double(seed),
               multinomial = identical(object$multiclass, "multinomial"),
               guard = as.double(object$step_guard %||% 0.25), guard_max_shrinks = 20L,
               t_init = as.double(object$t_final %||% 0), w_init = start$w, b_init = start$b)
  res <- sgd_fit_chunks(each_chunk, opts, seed, epochs, n_models, d)
  if (from_file) {
    n <- 0
    each_chunk(function(ch, index, rows) n <<- n + ch$n)
  }
  train <- sgd_stream_margins(each_chunk, res, n_models, multi, n, d, sparse = sparse)
  res$margins <- train$margins
  res$decision <- train$decision
  nm <- names(object$weights) %||% rownames(object$weights)
  xnames <- matrix(0, 0, d, dimnames = list(NULL, nm))
  old_trace <- object$trace
  fit <- suppressWarnings(sgd_build_fit(
    res, train, c(lab, list(levels = object$levels)), opts, call = match.call(), x = xnames,
    centre = object$centre,
    extra = list(eta_initial = object$eta_initial, eta_auto = object$eta_auto, tol = object$tol,
                 seed = seed, option = object$option, bias_mode = object$bias_mode,
                 bias_step = object$bias_step, epochs = epochs, warm_start = "none",
                 step_guard = object$step_guard, case_weights = NULL,
                 class_weight = object$class_weight, record_iterates = FALSE,
                 t_final = res$t_final, chunk_rows = chunk_rows, lambda = object$lambda,
                 penalty = object$penalty, lambda_l2 = object$lambda_l2,
                 lambda_l1 = object$lambda_l1, l1_ratio = object$l1_ratio,
                 source = if (from_file) files else NULL)))
  tr <- fit$trace
  tr$epoch <- tr$epoch + nrow(old_trace)
  fit$trace <- rbind(old_trace, tr)
  fit$n_seen <- (object$n_seen %||% object$n) + n
  fit
}

# Decision values of the rows of LIBSVM files, streamed in chunks, and their
# labels as written in the files.
sgd_file_decision <- function(object, files, chunk_rows = 100000L, call = parent.frame()) {
  files <- check_libsvm_files(files, "newdata", call = call)
  chunk_rows <- check_count(chunk_rows, "chunk_rows", call = call)
  if (!is.null(object$centre)) abort_input("This fit centred its columns; read the file with {.fn read_libsvm} and give a dense matrix.", call = call)
  d <- object$d
  parts <- libsvm_each_chunk(files, chunk_rows, function(chunk, index) {
    if (chunk$max_index > d) {
      abort_input("{.file {files}} {?has/have} feature index {chunk$max_index}; the fit has {d} column{?s}.",
                  call = call)
    }
    list(f = sgd_decision_values(object, libsvm_matrix(chunk, d)), y = chunk$y)
  }, call = call)
  f <- lapply(parts, `[[`, "f")
  list(f = if (is.null(object$multiclass)) unlist(f) else do.call(rbind, f),
       y = unlist(lapply(parts, `[[`, "y")))
}

# The fit with its training rows replaced by other labelled rows (their
# margins / decision values), for noise_scores() and label_issues().
sgd_with_new_rows <- function(object, newdata, y, chunk_rows, call = parent.frame()) {
  if (is.character(newdata)) {
    if (!is.null(y)) abort_input("{.arg y} must be {.code NULL} for files: the labels are read from them.", call = call)
    fd <- sgd_file_decision(object, newdata, chunk_rows, call = call)
    f <- fd$f
    y <- fd$y
  } else {
    if (is.null(y)) abort_input("{.arg y} is missing: give the labels of {.arg newdata}.", call = call)
    f <- sgd_decision_values(object, sgd_newx(object, newdata, call = call))
  }
  n <- NROW(f)
  lab <- sgd_labels(y, n, template = sgd_label_template(object), arg = "y", call = call)
  object$n <- n
  object$row_index <- NULL
  if (is.null(object$multiclass)) {
    object$y <- lab$y
    object$margins <- lab$y * f
  } else {
    object$decision <- f
    object$class_index <- lab$cls
    object$margins <- f[cbind(seq_len(n), lab$cls)]
  }
  object
}
