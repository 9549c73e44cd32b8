# Pieces of the review page (review_report()): what the page's script needs
# to know (classes, fingerprints, the audit design), the column legend, and
# the columns hidden in a blind audit.

# Columns that show what the model thinks: hidden in a blind audit until
# the row has a verdict.
review_model_columns <- c("flagged", "score", "label_quality", "p_wrong", "q_value",
                          "suggested_label", "prob_suggested", "suggested_value", "suggested_lower",
                          "suggested_upper", "prediction", "sd", "prob_given")

review_column_help <- c(
  row = "Row number in the data the result was computed on.",
  flagged = "TRUE when the result flags this label as wrong.",
  score = "How suspect the label is (1 - label_quality); higher is more suspect.",
  label_quality = "Model's score of the given label, 1 = clearly right, 0 = clearly wrong.",
  p_wrong = "Model's probability that the given label is wrong.",
  q_value = "Expected share of right labels among all labels at least this suspect (flag at q <= fdr).",
  given_label = "The label in the data.",
  suggested_label = "The class the model finds most probable (for a flagged row, the most probable other class).",
  prob_suggested = "Model's probability of the suggested class.",
  suggested_value = "Model's out-of-fold prediction: the suggested value.",
  suggested_lower = "Lower end of the 90% interval of the suggested value.",
  suggested_upper = "Upper end of the 90% interval of the suggested value.",
  prediction = "Model's out-of-fold prediction of the label.",
  sd = "Standard deviation of the prediction (residuals are divided by it).",
  prob_given = "Model's probability of the given label.",
  decision = "Your decision: keep (label right), relabel (wrong, use new_label) or drop (wrong or unusable).",
  new_label = "The label a relabelled row gets: the suggestion unless you choose another.")

review_legend <- function(tab) {
  h <- htmltools::tags
  known <- intersect(names(tab), names(review_column_help))
  h$details(class = "nl-legend", h$summary("Columns"),
            h$dl(lapply(known, function(nm) htmltools::tagList(h$dt(nm), h$dd(review_column_help[[nm]]))),
                 if (length(setdiff(names(tab), known))) {
                   htmltools::tagList(h$dt("other columns"), h$dd("The row's inputs, from the data."))
                 }))
}

# Everything review.js reads from window.NLReviewMeta.
review_meta <- function(result, data, tab, response, audit, blind, title) {
  classes <- if (result$task == "classification") {
    as.character(result$classes %||% sort(unique(as.character(result$label_issues$given_label))))
  }
  help <- vapply(names(tab), function(nm) review_column_help[nm] %|NA|% "Input column from the data.", "")
  fp <- if (!is.null(data)) fingerprint_rows(data, tab$row)
  id <- fingerprint_strings(paste(c(title, result$task, nrow(result$label_issues), tab$row,
                                    fp, if (!is.null(audit)) audit$design[1]), collapse = "|"))
  meta <- list(labelColumn = response %||% "", file = if (is.null(audit)) "decisions.csv" else "audit.csv",
               suggestedCol = match("new_label", names(tab)) - 1L,
               decisionCol = match("decision", names(tab)) - 1L,
               classes = classes, numeric = result$task == "regression",
               columnHelp = unname(help), reportId = id, blind = isTRUE(blind) && !is.null(audit),
               audit = !is.null(audit))
  if (!is.null(fp)) meta$fingerprints <- stats::setNames(as.list(fp), tab$row)
  if (!is.null(audit)) {
    meta$auditFingerprints <- stats::setNames(as.list(as.character(audit$fingerprint)), audit$row)
    meta$design <- as.character(audit$design[1])
  }
  meta
}

# An audit passed to review_report(): from audit_sample() on this result.
check_audit_frame <- function(result, audit, call = parent.frame()) {
  if (!is.data.frame(audit) || !all(c("row", "fingerprint", "design") %in% names(audit))) {
    abort_input("{.arg audit} must be a sample from {.fn audit_sample}.",
                class = "noisylabels_error_audit", call = call)
  }
  li <- result$label_issues
  pos <- match(audit$row, li$row)
  if (anyNA(pos) || !identical(as.character(audit$fingerprint), audit_fingerprint(li, pos))) {
    abort_input("{.arg audit} was not drawn from this result.",
                class = c("noisylabels_error_audit_result", "noisylabels_error_audit"), call = call)
  }
}
