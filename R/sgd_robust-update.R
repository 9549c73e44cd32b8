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
  check_fit(object, "sgd_robust")
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
    if (!is.null(object$centre) || !is.null(object$scale)) {
      abort_input(c("This fit standardised its columns in memory; {.fn update} cannot stream raw rows from files into it.",
                    "i" = "Read the file with {.fn read_libsvm}, or fit with {.code standardize = FALSE}."))
    }
    files <- check_libsvm_files(x)
    if (!is.null(y)) abort_input("{.arg y} must be {.code NULL} when {.arg x} names LIBSVM files.")
    chunk_rows <- check_count(chunk_rows %||% 100000L, "chunk_rows")
    if (!is.null(weights)) abort_input("{.arg weights} are not supported for files in {.fn update}.")
    src <- sgd_file_source(files, chunk_rows, d, lab)
    n <- NA_real_
  } else {
    if (is.null(y)) abort_input("{.arg y} is missing: give one label per row of {.arg x}.")
    if (!inherits(x, "sparseMatrix")) x <- check_x_matrix(x, "x", max_abs = Inf)
    if (ncol(x) != d) {
      abort_input("{.arg x} has {ncol(x)} column{?s}; the fit has {d}.",
                  class = "noisylabels_error_dimension")
    }
    if (!is.null(object$centre) && inherits(x, "sparseMatrix")) {
      abort_input("The fit centred its columns; give dense {.arg x}.")
    }
    x <- sgd_apply_standardize(x, object$centre, object$scale)
    n <- nrow(x)
    new_lab <- sgd_labels(y, n, template = lab)
    case_w <- sgd_case_weights(weights, NULL, new_lab, n)
    chunk_rows <- if (is.null(chunk_rows)) n else check_count(chunk_rows, "chunk_rows")
    src <- sgd_memory_source(x, y, lab, case_w$weight, chunk_rows = chunk_rows)
  }
  start <- sgd_start(stats::coef(object), d, object$bias_mode, object$centre, n_models,
                     scale = object$scale)
  opts <- sgd_core_options(sgd_fit_settings(object),
                           eta = if (object$method == "pegasos") 1 else object$eta, epochs = 1L,
                           seed = seed, multinomial = identical(object$multiclass, "multinomial"),
                           t_init = object$t_final %||% 0, w_init = start$w, b_init = start$b)
  res <- sgd_fit_chunks(src, opts, seed, epochs, n_models, d)
  if (from_file) {
    n <- 0
    src$each_chunk(function(ch, index, rows) n <<- n + ch$n)
  }
  train <- sgd_stream_margins(src, res, n_models, multi, n, d)
  res$margins <- train$margins
  res$decision <- train$decision
  nm <- names(object$weights) %||% rownames(object$weights)
  xnames <- matrix(0, 0, d, dimnames = list(NULL, nm))
  old_trace <- object$trace
  fit <- suppressWarnings(sgd_build_fit(
    res, train, c(lab, list(levels = object$levels)), opts, call = match.call(), x = xnames,
    centre = object$centre, scale = object$scale,
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
