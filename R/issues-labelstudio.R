#' Review flagged labels in Label Studio
#'
#' `label_studio_export()` writes the flagged rows as Label Studio tasks
#' (JSON): each task's data is the row (its inputs, `row`, `given_label`),
#' and its pre-annotation ("prediction") is the suggested label or value
#' with `score` = the label quality, so sorting the Data Manager by
#' prediction score puts the most doubtful labels first. It also writes the
#' matching labeling configuration (XML) next to it: a table of the row and
#' a choice of classes (or a number for numeric labels), plus a choice to
#' drop the row. `label_studio_import()` reads Label Studio's JSON export of
#' the reviewed tasks back into the decisions that [apply_review()] applies:
#' an answer equal to the given label is `keep`, another label `relabel`,
#' and the drop choice `drop`. Tasks without an annotation are left out.
#'
#' @param result A [find_label_issues()] result.
#' @param data The data the result was computed on, or `NULL`.
#' @param file Path of the tasks JSON file.
#' @param rows `"flagged"` (default), `"all"`, row numbers of `data`, or an
#'   [audit_sample()] of the result (its rows, in its order, with the
#'   model's suggestion left out of the tasks so the review is blind).
#' @param response Name of the label column in `data` (left out of the task
#'   data, which carries it as `given_label`).
#' @param config_file Path of the labeling configuration, or `NULL` for none.
#' @return `label_studio_export()`: the path of the tasks file, invisibly;
#'   `label_studio_import()`: a data frame of decisions (`row`, `decision`,
#'   `new_label`, `label_column`).
#' @examples
#' p <- rbind(c(0.9, 0.1), c(0.8, 0.2), c(0.1, 0.9), c(0.2, 0.8), c(0.95, 0.05), c(0.7, 0.3))
#' colnames(p) <- c("a", "b")
#' d <- data.frame(x = 1:6, y = c("a", "a", "b", "b", "b", "a"))
#' res <- find_label_issues(labels = d$y, pred_probs = p)
#' f <- label_studio_export(res, d, tempfile(fileext = ".json"), rows = "all", response = "y")
#' cat(readLines(sub("\\.json$", "-config.xml", f)), sep = "\n")
#' @export
label_studio_export <- function(result, data = NULL, file = "label-studio-tasks.json",
                                rows = "flagged", response = result$response,
                                config_file = sub("\\.json$", "-config.xml", file)) {
  check_result(result)
  check_output_file(file)
  li <- as.data.frame(unclass(result$label_issues), stringsAsFactors = FALSE)
  li <- li[order(li$label_quality, -li$score), , drop = FALSE]
  audit <- if (is.data.frame(rows)) rows
  if (!is.null(audit)) {
    check_audit_frame(result, audit)
    li <- li[match(audit$row, li$row), , drop = FALSE]
  } else {
    pick <- if (identical(rows, "flagged")) li$flagged else if (identical(rows, "all")) TRUE
            else if (is.numeric(rows)) li$row %in% rows
            else abort_input("{.arg rows} must be {.val flagged}, {.val all}, row numbers or an {.fn audit_sample}.")
    li <- li[pick, , drop = FALSE]
  }
  inputs <- if (is.null(data)) NULL else data_rows_of(result, data, li$row)
  if (!is.null(inputs)) inputs <- inputs[!names(inputs) %in% c(response, paste0("data_", response))]
  numeric_label <- result$task == "regression"
  suggestion <- non_na(li$suggested_label) %||% li$suggested_value %||% li$prediction
  tasks <- lapply(seq_len(nrow(li)), function(i) {
    record <- c(list(row = li$row[i], given_label = li$given_label[i]),
                if (!is.null(inputs)) as.list(inputs[i, , drop = FALSE]))
    record <- lapply(record, function(v) if (is.factor(v)) as.character(v) else v)
    value <- if (numeric_label) list(number = as.numeric(suggestion[i]))
             else list(choices = list(as.character(suggestion[i])))
    task <- list(data = c(record, list(record = record, label_quality = li$label_quality[i])))
    if (!is.null(suggestion) && is.null(audit)) {
      task$predictions <- list(list(
        model_version = "noisylabels", score = li$label_quality[i],
        result = list(list(from_name = "label", to_name = "record",
                           type = if (numeric_label) "number" else "choices", value = value))))
    }
    task
  })
  writeLines(jsonlite::toJSON(tasks, auto_unbox = TRUE, digits = NA, pretty = TRUE, null = "null",
                              na = "null"), file, useBytes = TRUE)
  if (!is.null(config_file)) {
    classes <- if (numeric_label) NULL else result$classes %||% sort(unique(as.character(li$given_label)))
    writeLines(label_studio_config(classes), config_file)
  }
  cli::cli_inform(c("v" = "Wrote {nrow(li)} task{?s} to {.file {file}}{if (!is.null(config_file)) paste0(' and the labeling configuration to ', config_file) else ''}."))
  invisible(file)
}

# Label Studio labeling configuration: the row as a table, then the label.
label_studio_config <- function(classes = NULL) {
  esc <- function(x) htmltools::htmlEscape(x, attribute = TRUE)
  answer <- if (is.null(classes)) {
    c('  <Number name="label" toName="record" />',
      '  <Choices name="action" toName="record" choice="single" showInline="true">',
      sprintf('    <Choice value="%s" />', label_studio_drop), '  </Choices>')
  } else {
    c('  <Choices name="label" toName="record" choice="single" showInline="true">',
      sprintf('    <Choice value="%s" />', esc(c(classes, label_studio_drop))), '  </Choices>')
  }
  c("<View>", '  <Header value="Row $row: given label $given_label" />',
    '  <Table name="record" value="$record" />', answer, "</View>")
}

label_studio_drop <- "(drop this row)"

#' @rdname label_studio_export
#' @param label_column For `label_studio_import()`: the label column name
#'   to write into the decisions (as [review_report()] does), or `""`.
#' @param audit For `label_studio_import()`: the [audit_sample()] the tasks
#'   were exported from; the verdicts then go into its `wrong` column (keep
#'   = `FALSE`, relabel or drop = `TRUE`, `NA` where a task has no
#'   annotation), ready for [estimate_errors()].
#' @export
label_studio_import <- function(file, label_column = "", audit = NULL) {
  if (!is.null(audit)) {
    dec <- label_studio_import(file, label_column)
    hit <- match(audit$row, dec$row)
    audit$wrong <- ifelse(is.na(hit), NA, dec$decision[hit] != "keep")
    if (!is.null(audit$true_label) || result_has_classes(audit)) {
      audit$true_label <- ifelse(is.na(hit), NA, ifelse(dec$decision[hit] == "relabel", dec$new_label[hit],
                                                        ifelse(dec$decision[hit] == "keep",
                                                               as.character(audit$given_label), NA)))
    }
    return(audit)
  }
  tasks <- tryCatch(jsonlite::read_json(file, simplifyVector = FALSE),
                    error = function(e) abort_input(c("Could not read {.file {file}} as JSON.",
                                                      "x" = conditionMessage(e))))
  if (!is.null(tasks$data)) tasks <- list(tasks)
  out <- lapply(tasks, function(t) {
    ann <- Filter(function(a) !isTRUE(a$was_cancelled) && length(a$result), t$annotations %||% list())
    if (!length(ann) || is.null(t$data$row)) return(NULL)
    res <- ann[[length(ann)]]$result
    answer <- NULL
    for (r in res) {
      v <- r$value
      if (!is.null(v$choices) && identical(unlist(v$choices)[1], label_studio_drop)) {
        return(data.frame(row = t$data$row, decision = "drop", new_label = "", stringsAsFactors = FALSE))
      }
      if (identical(r$from_name, "label")) answer <- v$number %||% unlist(v$choices)[1]
    }
    if (is.null(answer)) return(NULL)
    given <- t$data$given_label
    same <- if (is.numeric(answer) && is.numeric(given)) isTRUE(all.equal(answer, given))
            else identical(as.character(answer), as.character(given))
    data.frame(row = t$data$row, decision = if (same) "keep" else "relabel",
               new_label = if (same) "" else as.character(answer), stringsAsFactors = FALSE)
  })
  out <- do.call(rbind, Filter(Negate(is.null), out))
  if (is.null(out)) out <- data.frame(row = integer(), decision = character(), new_label = character())
  out$row <- as.integer(out$row)
  out$label_column <- rep(label_column, nrow(out))
  out <- out[order(out$row), , drop = FALSE]
  rownames(out) <- NULL
  out
}

result_has_classes <- function(audit) !is.null(audit$suggested_label)
