# From the core's result to the fitted object, and between the user's
# coefficients and the core's starting weights.

# Assemble the fitted object from the core's result.
sgd_build_fit <- function(res, train, lab, opts, call, x, centre, extra, scale = NULL) {
  multi <- lab$multi
  K <- if (multi) lab$K else 1L
  d <- train$d
  nm <- colnames(x) %||% paste0("x", seq_len(d))
  obj <- res$objective
  k <- length(obj)
  prev <- if (k >= 2) obj[k - 1] else res$objective_start
  rel_change <- if (k >= 1) abs(obj[k] - prev) / max(1, abs(obj[k])) else NA_real_
  err_move <- sgd_error_move(res$train_error)
  err_tol <- max(0.01, 2 / train$n, extra$tol)
  obj_settled <- isTRUE(rel_change <= extra$tol)
  err_settled <- is.na(err_move) || err_move <= err_tol
  # a flat error at the constant classifier's (SGD crawling on raw columns
  # of very different scales, or stuck in a bounded loss's flat region) is
  # not what a user reads as converged
  err_const <- sgd_constant_error(train, multi)
  err_last <- if (k >= 1) res$train_error[k] else NA_real_
  constant <- k >= 2 && isTRUE(err_const > 0 && err_last >= err_const - 1e-12)
  converged <- obj_settled && err_settled && !constant
  if (obj_settled && err_settled && constant) {
    warn_convergence(c("SGD did not converge in {k} epoch{?s}: its training error {format(err_last, digits = 3)} is no better than predicting the most frequent class.",
                       "i" = "Raise {.arg epochs} or {.arg eta}; with raw inputs on different scales use {.code standardize = TRUE}."))
  } else if (!obj_settled) {
    warn_convergence(c("SGD did not converge in {k} epoch{?s}: the objective changed by {format(rel_change, digits = 3)} (relative) in the last epoch.",
                       "i" = "Raise {.arg epochs}, lower {.arg eta}, or raise {.arg tol} (was {extra$tol})."))
  } else if (!err_settled) {
    warn_convergence(c("SGD did not converge in {k} epoch{?s}: the training error still moved by {format(err_move, digits = 3)} over the last {min(k, 3)} epochs, though the objective changed by only {format(rel_change, digits = 3)} (relative).",
                       "i" = "Raise {.arg epochs} or lower {.arg eta}; with raw inputs on different scales use {.code standardize = TRUE}."))
  }
  shrinks <- as.data.frame(res$shrinks)
  if (nrow(shrinks)) {
    cli::cli_inform(c("i" = "SGD step guard: {nrow(shrinks)} epoch{?s} ended with a much worse objective and {?was/were} rerun with a halved step (eta {format(shrinks$eta_from[1], digits = 3)} -> {format(res$eta_final, digits = 3)}); see {.code fit$step_shrinks}."),
                    class = "noisylabels_message_step_guard")
  }
  trace <- data.frame(epoch = seq_len(k), objective = obj, train_error = res$train_error,
                      valid_error = if (length(res$valid_error)) res$valid_error else NA_real_)
  W <- matrix(res$weights, d, K, dimnames = list(nm, if (multi) lab$class_names else NULL))
  b <- res$biases
  # Standardised fit: w'((x - m) / s) + b = (w / s)'x + (b - (w / s)'m);
  # report the weights and the bias on the user's columns.
  if (!is.null(scale)) W <- W / scale
  if (!is.null(centre)) b <- b - colSums(W * centre)
  fit <- list(loss = opts$loss, method = opts$method, lambda = opts$lambda,
              eta = if (opts$method == "pegasos") NA_real_ else res$eta_final,
              centre = centre, scale = scale, trace = trace, converged = converged,
              iterations = res$epochs_run, rel_change = rel_change,
              objective_start = res$objective_start, step_shrinks = shrinks,
              seconds = res$seconds_train, cpu_seconds = res$cpu_seconds_train,
              eval_seconds = res$seconds_evaluate, eval_cpu_seconds = res$cpu_seconds_evaluate,
              renormalisations = res$renormalisations,
              levels = lab$levels, label_kind = lab$kind, n = train$n, d = d,
              sparse = train$sparse, call = call)
  fit[names(extra)] <- extra
  if (!multi) {
    fit$weights <- stats::setNames(W[, 1], nm)
    fit$bias <- b[1]
    fit$coefficients <- c("(Intercept)" = fit$bias, fit$weights)
    fit$margins <- res$margins
    fit$y <- train$y
  } else {
    fit$multiclass <- if (isTRUE(opts$multinomial)) "multinomial" else "ovr"
    fit$n_classes <- K
    fit$weights <- W
    fit$bias <- stats::setNames(b, lab$class_names)
    fit$coefficients <- rbind("(Intercept)" = fit$bias, W)
    dec <- matrix(res$decision, train$n, K, dimnames = list(NULL, lab$class_names))
    fit$decision <- dec
    fit$class_index <- train$label + 1L
    fit$margins <- dec[cbind(seq_len(train$n), fit$class_index)]
  }
  if (isTRUE(extra$record_iterates)) {
    it <- matrix(res$iterates, nrow = length(res$iterates) / (k * train$n))
    fit$visit_order <- it[1, ] + 1
    fit$iterates <- it[-1, , drop = FALSE]
  }
  new_sgd_robust(fit)
}

# Training error of the constant classifier (the most frequent class), or
# NA when the labels are not at hand (streamed chunks).
sgd_constant_error <- function(train, multi) {
  lab <- if (multi) train$label else train$y
  if (is.null(lab) || !length(lab)) return(NA_real_)
  1 - max(table(lab)) / length(lab)
}

# Largest move of the training error over the last three epochs (NA for a
# single epoch or an error not traced).
sgd_error_move <- function(err) {
  err <- err[is.finite(err)]
  k <- length(err)
  if (k < 2L) return(NA_real_)
  last <- err[max(1L, k - 2L):k]
  max(last) - min(last)
}

new_sgd_robust <- function(fit) {
  stopifnot(is.list(fit), is.numeric(fit$weights), is.numeric(fit$margins))
  new_noisylabels_fit(fit, "sgd_robust", task = "classification", p_wrong = FALSE)
}

# Starting weights for the core from `init` (coefficients with the intercept
# first, as coef() returns them, the weights alone, or a fitted sgd_robust
# model), on the scale of the (possibly standardised) training columns.
sgd_start <- function(init, d, bias, centre, n_models = 1L, scale = NULL) {
  if (inherits(init, "sgd_robust")) init <- stats::coef(init)
  if (n_models > 1L) {
    ok <- is.numeric(init) && is.matrix(init) && ncol(init) == n_models &&
      nrow(init) %in% c(d, d + 1L) && all(is.finite(init))
    if (!ok) {
      abort_input(c("{.arg init} for a fit of {n_models} classes must be a fitted multiclass {.cls sgd_robust} model or a finite matrix with {n_models} columns and {d} rows (weights) or {d + 1} (intercept first).",
                    "x" = "Got {if (is.matrix(init)) paste(nrow(init), 'x', ncol(init), 'matrix') else class(init)[1]}."))
    }
    b <- if (nrow(init) == d + 1L) init[1, ] else rep(0, n_models)
    W <- if (nrow(init) == d + 1L) init[-1, , drop = FALSE] else init
    storage.mode(W) <- "double"
    if (!is.null(centre)) b <- b + colSums(W * centre)
    if (!is.null(scale)) W <- W * scale
    if (bias == "none" && any(b != 0)) {
      abort_input("{.arg init} has intercepts but {.code bias = \"none\"} fits none.")
    }
    return(list(w = as.double(if (bias == "feature") rbind(W, b) else W),
                b = if (bias == "separate") as.double(b) else numeric(0)))
  }
  if (is.matrix(init) && ncol(init) == 1L) init <- init[, 1]
  if (!is.numeric(init) || is.matrix(init) || !(length(init) %in% c(d, d + 1L)) || any(!is.finite(init))) {
    abort_input(c("{.arg init} must be a fitted {.cls sgd_robust} model or a finite numeric vector of {d} weights, or {d + 1} coefficients with the intercept first.",
                  "x" = "Got {if (is.numeric(init)) paste(length(init), 'number(s)') else class(init)[1]}."))
  }
  b <- if (length(init) == d + 1L) init[[1]] else 0
  w <- as.double(if (length(init) == d + 1L) init[-1] else init)
  # w'x + b = w'(x - m) + (b + w'm) on centred columns.
  if (!is.null(centre)) b <- b + sum(w * centre)
  # and (w / s)'x = w'(x / s): the standardised columns' weights are w * s.
  if (!is.null(scale)) w <- w * scale
  if (bias == "none" && b != 0) {
    abort_input("{.arg init} has an intercept but {.code bias = \"none\"} fits none.")
  }
  list(w = if (bias == "feature") c(w, b) else w, b = if (bias == "separate") b else numeric(0))
}

# Starting weights for the core, in its layout (per model: d weights, plus the
# bias feature's weight), from a core result.
sgd_core_init <- function(res, d, bias, n_models) {
  W <- matrix(res$weights, d, n_models)
  if (bias == "feature") W <- rbind(W, res$biases)
  as.double(W)
}

# What the fit records besides the model: the settings as used and the
# bookkeeping of the run.
sgd_fit_record <- function(res, opts, cfg, inp, warm) {
  early_stop <- inp$patience > 0L
  list(eta_initial = if (cfg$method == "pegasos") NA_real_ else opts$eta,
       eta_auto = is.null(cfg$eta) && cfg$method != "pegasos", tol = cfg$tol, seed = cfg$seed,
       option = cfg$option, bias_mode = cfg$bias, bias_step = cfg$bias_step,
       epochs = cfg$epochs, warm_start = if (warm) "hinge" else "none",
       step_guard = cfg$guard, case_weights = inp$case_w$weight,
       class_weight = inp$case_w$class_weight, record_iterates = cfg$record_iterates,
       t_final = res$t_final, lambda = cfg$lambda, penalty = cfg$penalty,
       lambda_l2 = cfg$lambda_l2, lambda_l1 = cfg$lambda_l1,
       l1_ratio = if (cfg$penalty == "elasticnet") cfg$l1_ratio else NULL,
       row_index = inp$row_index,
       early_stopping = if (early_stop) list(
         n_iter_no_change = inp$patience, best_epoch = res$best_epoch,
         stopped_early = res$stopped_early,
         validation_rows = if (!is.null(inp$row_index)) {
           setdiff(seq_len(inp$n_total + length(inp$y_valid)), inp$row_index)
         }) else NULL,
       chunk_rows = if (inp$chunked) inp$chunk_rows else NULL,
       shards = cfg$shards, shard_rows = res$shard_rows, epoch_seconds = res$epoch_seconds,
       source = if (inp$from_file) inp$files else NULL)
}
