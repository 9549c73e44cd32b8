# Noise scores and label issues of sgd_robust() fits, on their training rows
# or on other labelled rows (a matrix or LIBSVM files).

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
  check_fit(object, "sgd_robust")
  if (!is.null(newdata)) object <- sgd_with_new_rows(object, newdata, y, chunk_rows)
  z0 <- object$loss_flat_start %||% call_core(.sgd_loss_eval(object$loss, 0))$flat_start
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
  check_fit(object, "sgd_robust")
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
      -call_core(.sgd_loss_eval(object$loss, object$margins))$deriv
    }
    return(new_label_issues(object$row_index %||% seq_len(object$n), score, score > threshold,
                            margin = object$margins, margin_vs_best = vs$margin,
                            loss_weight = weight,
                            label = sgd_classes_from_index(object, object$class_index),
                            best_other = sgd_classes_from_index(object, vs$best)))
  }
  ev <- call_core(.sgd_loss_eval(object$loss, object$margins))
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

# Decision values of the rows of LIBSVM files, streamed in chunks, and their
# labels as written in the files.
sgd_file_decision <- function(object, files, chunk_rows = 100000L, call = parent.frame()) {
  files <- check_libsvm_files(files, "newdata", call = call)
  chunk_rows <- check_count(chunk_rows, "chunk_rows", call = call)
  # the weights and bias are on the user's columns also for a standardised fit
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
