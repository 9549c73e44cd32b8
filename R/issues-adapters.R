#' Find wrong labels from tidymodels, mlr3 or caret resampling results
#'
#' Thin adapters to the model-agnostic path of [find_label_issues()]: each
#' takes the out-of-fold (assessment-set) predictions that the resampling run
#' saved, puts them back into the original row order and calls
#' `find_label_issues(labels = , pred_probs = )` (classes) or
#' `find_label_issues(labels = , predictions = )` (numbers). The result is
#' exactly that of the bare call on the same predictions. A row predicted
#' more than once (repeated cross-validation, bootstrap out-of-bag sets) gets
#' the mean of its predictions; a row never predicted is an error.
#'
#' What has to be saved:
#' * tidymodels: `fit_resamples()` or `tune_grid()` with
#'   `control = control_resamples(save_pred = TRUE)` (or `control_grid()`),
#'   and for classes a model that predicts probabilities. With several
#'   candidate models, choose one by `config` (a `.config` value, e.g.
#'   `tune::select_best(res, metric = "roc_auc")$.config`).
#' * mlr3: `resample()` (predictions are kept by default); for classes the
#'   learner needs `predict_type = "prob"`.
#' * caret: `train()` with `trainControl(savePredictions = "final")` and, for
#'   classes, `classProbs = TRUE`.
#'
#' @param x A tidymodels `tune_results` object, an mlr3 `ResampleResult`, or
#'   a caret `train` object.
#' @param config tidymodels: the `.config` of the candidate model whose
#'   predictions to use (needed when there are several).
#' @param ... Passed to [find_label_issues()] (e.g. `n_issues`, `rank_by`).
#' @return A `find_label_issues` result; `method` says where the predictions
#'   came from.
#' @examplesIf requireNamespace("caret", quietly = TRUE) && requireNamespace("MASS", quietly = TRUE)
#' ctrl <- caret::trainControl(method = "cv", number = 5, savePredictions = "final",
#'                             classProbs = TRUE)
#' fit <- caret::train(Species ~ ., data = iris, method = "lda", trControl = ctrl)
#' find_label_issues(fit)
#' @name find_label_issues-resampling
NULL

#' @rdname find_label_issues-resampling
#' @export
find_label_issues.tune_results <- function(x, ..., config = NULL) {
  require_suggested("tune", "tidymodels resampling results")
  if (!".predictions" %in% names(x)) {
    abort_input(c("These tidymodels results hold no predictions.",
                  "i" = "Resample with {.code control = control_resamples(save_pred = TRUE)} (or {.code control_grid(save_pred = TRUE)})."))
  }
  preds <- tune::collect_predictions(x, summarize = FALSE)
  configs <- unique(preds$.config)
  if (is.null(config)) {
    if (length(configs) > 1L) {
      abort_input(c("The results hold predictions of {length(configs)} candidate models; choose one with {.arg config}.",
                    "i" = "For example {.code config = tune::select_best(x, metric = \"roc_auc\")$.config}.",
                    "i" = "Candidates: {.val {utils::head(configs, 5)}}."))
    }
    config <- configs
  } else if (!config %in% configs) {
    abort_input("{.arg config} {.val {config}} is not among the candidates {.val {utils::head(configs, 5)}}.")
  }
  preds <- preds[preds$.config == config, , drop = FALSE]
  outcome <- attr(x, "outcomes") %||% setdiff(names(preds), c(".row", ".config", "id", "id2"))[1]
  truth <- preds[[outcome]]
  n <- max(preds$.row)
  source <- sprintf("tidymodels resampling (%s)", config)
  if (is.factor(truth)) {
    lev <- levels(truth)
    cols <- paste0(".pred_", lev)
    if (!all(cols %in% names(preds))) {
      abort_input(c("The saved predictions have no class probabilities ({.field {cols[1]}}, ...).",
                    "i" = "Use a model that predicts probabilities, and keep them in the metrics (e.g. {.code metric_set(roc_auc)})."))
    }
    probs <- oof_average(preds$.row, as.matrix(as.data.frame(preds[cols])), n, "tidymodels")
    colnames(probs) <- lev
    labels <- oof_labels(preds$.row, truth, n)
    issues_from_adapter(labels, pred_probs = probs, source = source, ...)
  } else {
    if (!".pred" %in% names(preds)) abort_input("The saved predictions have no {.field .pred} column.")
    pred <- oof_average(preds$.row, matrix(preds$.pred), n, "tidymodels")[, 1]
    issues_from_adapter(oof_labels(preds$.row, truth, n), predictions = pred, source = source, ...)
  }
}

#' @rdname find_label_issues-resampling
#' @export
find_label_issues.ResampleResult <- function(x, ...) {
  require_suggested("mlr3", "mlr3 resampling results")
  pred <- x$prediction()
  if (is.null(pred) || length(pred$row_ids) == 0L) {
    abort_input(c("This mlr3 resampling result holds no predictions.",
                  "i" = "Run {.fn mlr3::resample} again without discarding predictions."))
  }
  task <- x$task
  # Task row ids need not be 1..n: map them to positions in the task's order.
  pos <- match(pred$row_ids, task$row_ids)
  n <- task$nrow
  truth_all <- task$truth()
  source <- sprintf("mlr3 resample (%s, %s)", x$learner$id, x$resampling$id)
  if (inherits(task, "TaskClassif")) {
    if (is.null(pred$prob) || !length(pred$prob)) {
      abort_input(c("The mlr3 predictions have no class probabilities.",
                    "i" = "Set {.code learner$predict_type = \"prob\"} before {.fn resample}."))
    }
    probs <- oof_average(pos, pred$prob, n, "mlr3")
    colnames(probs) <- colnames(pred$prob)
    issues_from_adapter(truth_all, pred_probs = probs, source = source, ...)
  } else {
    pr <- oof_average(pos, matrix(pred$response), n, "mlr3")[, 1]
    issues_from_adapter(truth_all, predictions = pr, source = source, ...)
  }
}

#' @rdname find_label_issues-resampling
#' @export
find_label_issues.train <- function(x, ...) {
  pred <- x$pred
  if (is.null(pred) || !nrow(pred)) {
    abort_input(c("This caret model holds no resampling predictions.",
                  "i" = "Train with {.code trainControl(savePredictions = \"final\")}."))
  }
  # savePredictions = "all" keeps every tuning candidate: use the chosen one.
  for (p in names(x$bestTune)) {
    if (p %in% names(pred)) pred <- pred[pred[[p]] == x$bestTune[[p]], , drop = FALSE]
  }
  outcome <- x$trainingData$.outcome
  n <- if (is.null(outcome)) max(pred$rowIndex) else length(outcome)
  if (is.null(outcome)) outcome <- oof_labels(pred$rowIndex, pred$obs, n)
  source <- sprintf("caret train (%s, %s)", x$method, x$control$method)
  if (identical(x$modelType, "Classification")) {
    lev <- as.character(x$levels %||% levels(pred$obs))
    if (!all(lev %in% names(pred))) {
      abort_input(c("The caret predictions have no class probabilities.",
                    "i" = "Train with {.code trainControl(classProbs = TRUE, savePredictions = \"final\")}."))
    }
    probs <- oof_average(pred$rowIndex, as.matrix(pred[lev]), n, "caret")
    colnames(probs) <- lev
    labels <- factor(outcome, levels = lev)
    issues_from_adapter(labels, pred_probs = probs, source = source, ...)
  } else {
    pr <- oof_average(pred$rowIndex, matrix(pred$pred), n, "caret")[, 1]
    issues_from_adapter(outcome, predictions = pr, source = source, ...)
  }
}

# Mean of the predictions of each row (rows 1..n), in the original order.
oof_average <- function(rows, values, n, who, call = parent.frame()) {
  values <- as.matrix(values)
  storage.mode(values) <- "double"
  counts <- tabulate(rows, nbins = n)
  if (any(counts == 0L)) {
    miss <- which(counts == 0L)
    abort_input(c("{sum(counts == 0L)} row{?s} {?was/were} never in an assessment set of the {who} resampling (e.g. row{?s} {utils::head(miss, 5)}).",
                  "i" = "Use cross-validation (every row is predicted out of fold once) or more resamples."),
                call = call)
  }
  if (all(counts == 1L)) {
    out <- matrix(0, n, ncol(values))
    out[rows, ] <- values
    return(out)
  }
  sums <- rowsum(values, rows, reorder = TRUE)
  sums / as.vector(counts)
}

# The observed label of each row from the (possibly repeated) prediction rows.
oof_labels <- function(rows, truth, n) {
  first <- match(seq_len(n), rows)
  truth[first]
}

issues_from_adapter <- function(labels, pred_probs = NULL, predictions = NULL, source, ...) {
  res <- if (!is.null(pred_probs)) find_label_issues(labels = labels, pred_probs = pred_probs, ...)
         else find_label_issues(labels = labels, predictions = predictions, ...)
  res$method <- sprintf("%s, out-of-fold %s", source,
                        if (!is.null(pred_probs)) "probabilities" else "predictions")
  res
}

