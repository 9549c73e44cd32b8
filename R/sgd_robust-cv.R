#' Choose lambda and s for a robust-loss SGD classifier by cross-validation
#'
#' k-fold cross-validation over a grid of `lambda` and (for the ramp and
#' smooth-ramp losses) `s`, as in Han, Tsang & Chen (2016, section 5.1:
#' lambda in \{1e-6, ..., 10\}, s among the three published tuples). The
#' folds run in parallel through [future.apply::future_lapply()] when the
#' `future.apply` package is installed (set a plan, e.g.
#' `future::plan("multisession")`); otherwise sequentially. The best setting
#' (lowest mean held-out error; ties go to the larger lambda) is refitted on
#' all data.
#'
#' @inheritParams sgd_robust
#' @param x A numeric matrix, data frame of numeric columns or sparse
#'   matrix (with `y`), a formula `label ~ predictors` (with `data`), or the
#'   path(s) of LIBSVM files (labels in the files; `y` stays `NULL`). Files
#'   are read into one sparse matrix, since the folds pick rows by number.
#' @param weights Optional case weights, one per row: each fold's fit gets
#'   the weights of its training rows, its held-out error is the weighted
#'   error rate of its test rows, and the refit gets them all.
#' @param lambda Candidate penalties.
#' @param s Candidate ramp parameters (ignored for other losses).
#' @param folds Number of folds.
#' @param ... Further arguments of [sgd_robust()] (e.g. `epochs`, or
#'   `control = sgd_robust_control(method = "asgd")`). The formula method passes them, with the grid, to the default
#'   method.
#' @return An object of class `cv_sgd_robust` (and `noisylabels_cv`, see
#'   [cv-methods]): `results` (data frame of
#'   lambda, s, mean_error, sd_error, failed fits), `best` (list of lambda and
#'   s), `fit` (the refitted `sgd_robust` model), `folds` (fold of each row).
#'   `predict()`, `coef()`, `fitted()`, `noise_scores()` and `label_issues()`
#'   use `fit`; `plot()` and `autoplot()` show the cross-validation curve (or,
#'   with `which = "fit"`, the refitted model); `tidy()` returns
#'   `results` with a `chosen` column, `glance()` one row (`n`, `folds`,
#'   `loss`, `lambda`, `s`, `mean_error`, `failed`).
#' @examples
#' set.seed(7)
#' x <- matrix(rnorm(600), 300, 2)
#' y <- ifelse(x[, 1] + 0.5 * x[, 2] > 0, 1, -1)
#' cv <- cv_sgd_robust(x, flip_labels(y, 0.2)$y, loss = "smooth_ramp",
#'                     lambda = c(1e-4, 1e-2), folds = 3, epochs = 5)
#' cv
#' cv <- cv_sgd_robust(label ~ ., data = data.frame(x, label = factor(y)),
#'                     loss = "hinge", lambda = c(1e-4, 1e-2), folds = 3, epochs = 5)
#' head(predict(cv, data.frame(x)))
#' plot(cv)
#' @export
cv_sgd_robust <- function(x, ...) UseMethod("cv_sgd_robust")

#' @rdname cv_sgd_robust
#' @export
cv_sgd_robust.formula <- function(x, data, ...) {
  design <- formula_design(x, data, stats::na.fail)
  cv <- cv_sgd_robust.default(design$x, design$y, ...)
  cv$fit <- attach_formula(cv$fit, design, cv$fit$call)
  cv$call <- match.call()
  cv
}

#' @rdname cv_sgd_robust
#' @export
cv_sgd_robust.default <- function(x, y, loss = c("smooth_ramp", "gompertz", "hinge", "logistic", "ramp"),
                          lambda = 10^(-6:1), s = c(-0.7, -1, -2), folds = 10L, seed = NULL,
                          weights = NULL, ...) {
  call <- match.call()
  loss <- match_arg(loss)
  if (!is.numeric(lambda) || !length(lambda) || anyNA(lambda) || any(lambda < 0) ||
      any(!is.finite(lambda))) {
    abort_input("{.arg lambda} must be a vector of finite numbers >= 0.")
  }
  folds <- check_count(folds, "folds", lower = 2)
  if (!is.numeric(s) || !length(s) || anyNA(s) || any(!is.finite(s))) {
    abort_input("{.arg s} must be a vector of finite numbers (the ramp parameters to try).")
  }
  if (!loss %in% c("ramp", "smooth_ramp")) {
    if (!missing(s)) warn_unused_loss_params(loss, s = s[1], alpha = NULL, beta = NULL, c = 2)
    s <- -1
  }
  if (is.character(x)) {
    # LIBSVM files: the folds need rows by number, so the files are read
    # into one sparse matrix (read_libsvm() checks the memory it needs).
    if (!missing(y) && !is.null(y)) {
      abort_input("{.arg y} must be {.code NULL} when {.arg x} names LIBSVM files: the labels are in the files.")
    }
    data <- cv_sgd_read_files(check_libsvm_files(x))
    x <- data$x
    y <- data$y
  } else if (missing(y)) {
    abort_input("{.arg y} is missing: give the labels, or the path of LIBSVM files as {.arg x}.")
  }
  n <- if (inherits(x, "sparseMatrix") || is.matrix(x) || is.data.frame(x)) nrow(x) else length(x)
  if (length(y) != n) abort_input("{.arg y} has length {length(y)} but {.arg x} has {n} row{?s}.")
  if (folds > n) abort_input("{.arg folds} = {folds} exceeds the number of rows ({n}).")
  if (!is.null(weights) && (!is.numeric(weights) || length(weights) != n || anyNA(weights) ||
                            any(!is.finite(weights)) || any(weights < 0))) {
    abort_input("{.arg weights} must be a vector of {n} finite numbers >= 0, one per row.",
                class = "noisylabels_error_weights")
  }
  grid <- expand.grid(lambda = lambda, s = s)
  fold_id <- sample(rep_len(seq_len(folds), n))
  seeds <- vapply(seq_len(folds), function(k) draw_seed(), integer(1))
  if (is.null(seed)) seed <- draw_seed()
  one_fold <- function(k) {
    test <- fold_id == k
    xtr <- x[!test, , drop = FALSE]
    xte <- x[test, , drop = FALSE]
    vapply(seq_len(nrow(grid)), function(g) {
      fit <- tryCatch(
        withCallingHandlers(
          sgd_robust.default(xtr, y[!test], loss = loss, lambda = grid$lambda[g], s = grid$s[g],
                             seed = seeds[k], weights = weights[!test], ...),
          noisylabels_warning_convergence = function(w) invokeRestart("muffleWarning")),
        noisylabels_error_numeric = function(e) NULL)
      if (is.null(fit)) return(NA_real_)
      wrong <- as.character(predict(fit, xte)) != as.character(y[test])
      # case weights weigh the held-out errors as they weigh the training loss
      if (is.null(weights)) mean(wrong) else stats::weighted.mean(wrong, weights[test])
    }, numeric(1))
  }
  errs <- lapply_folds(folds, one_fold)
  err <- do.call(cbind, errs)
  grid$mean_error <- rowMeans(err, na.rm = TRUE)
  grid$sd_error <- apply(err, 1, stats::sd, na.rm = TRUE)
  grid$failed <- rowSums(is.na(err))
  ok <- which(is.finite(grid$mean_error))
  if (!length(ok)) abort_numeric("Every cross-validation fit diverged; give a smaller {.arg eta}.")
  cand <- grid[ok, ]
  cand <- cand[order(cand$mean_error, -cand$lambda), ]
  best <- list(lambda = cand$lambda[1], s = cand$s[1])
  fit <- sgd_robust.default(x, y, loss = loss, lambda = best$lambda, s = best$s, seed = seed,
                            weights = weights, ...)
  structure(list(results = grid, best = best, fit = fit, folds = fold_id, loss = loss, call = call),
            class = c("cv_sgd_robust", "noisylabels_cv"))
}

#' @export
print.cv_sgd_robust <- function(x, ...) {
  check_fit(x, "cv_sgd_robust")
  cli::cat_line(sprintf("%d-fold cross-validation of sgd_robust(loss = \"%s\")",
                        max(x$folds), x$loss))
  print(x$results, row.names = FALSE, digits = 4)
  cli::cat_line(sprintf("Best: lambda = %g%s", x$best$lambda,
                        if (x$loss %in% c("ramp", "smooth_ramp")) sprintf(", s = %g", x$best$s) else ""))
  invisible(x)
}

#' @export
coef.cv_sgd_robust <- function(object, ...) {
  check_fit(object, "cv_sgd_robust")
  coef(object$fit)
}

#' @export
glance.cv_sgd_robust <- function(x, ...) {
  check_fit(x, "cv_sgd_robust")
  r <- x$results[cv_chosen(x), ]
  data.frame(n = length(x$folds), folds = max(x$folds), loss = x$loss, lambda = x$best$lambda,
             s = x$best$s, mean_error = r$mean_error, failed = sum(x$results$failed))
}

# LIBSVM files as one sparse matrix and their labels, with a common number of
# columns (the largest feature index over the files).
cv_sgd_read_files <- function(files) {
  parts <- lapply(files, read_libsvm)
  d <- max(vapply(parts, function(p) ncol(p$x), 0L))
  x <- do.call(rbind, lapply(parts, function(p) {
    if (ncol(p$x) < d) p$x <- cbind(p$x, Matrix::Matrix(0, nrow(p$x), d - ncol(p$x), sparse = TRUE))
    p$x
  }))
  list(x = x, y = unlist(lapply(parts, `[[`, "y")))
}
