#' Review flagged labels in the browser, then apply the decisions
#'
#' `review_report()` writes one self-contained HTML file (no server, no
#' network: the table library, the plots and the data are inside it) for a
#' person to go through the flags: the estimated number and rate of wrong
#' labels (with its interval when the result has one), the score plots, and a
#' table of all rows, flagged first, each with its inputs, the given label,
#' the suggested label or value (with its interval when there is one) and
#' its score. The table sorts by any column and filters by a search box and
#' per-column filters. The reviewer marks rows `keep`, `relabel` or `drop`
#' (the `new_label` cell holds the suggestion and can be edited) and
#' downloads the decisions as a CSV file, which `apply_review()` applies to
#' the data.
#'
#' The page keeps the decisions in the browser's storage for that report, so
#' a reload or a closed tab does not lose them. Keyboard: the up and down
#' arrows move the current row, `k` keeps it, `r` relabels it to the
#' new_label shown, `d` drops it, `1`-`9` relabel it to that class, `0`
#' clears it. The new label is chosen from the label's classes (a number
#' for numeric labels). Every column header has a tooltip, and a legend
#' lists them all.
#'
#' The decisions file has one line per marked row: `row` (the row number in
#' `data`), `decision` (`keep`, `relabel` or `drop`), `new_label` (for
#' `relabel`), `label_column` (the name of the label column in `data`,
#' when known) and `row_fingerprint` (a hash of the row of `data` the
#' decision was made on, with `data`; `apply_review()` checks it).
#'
#' @param result A [find_label_issues()] result.
#' @param data The data the result was computed on (same rows, same order;
#'   for the formula interface the data frame passed to it), or `NULL` for a
#'   table without inputs.
#' @param file Path of the HTML file to write.
#' @param response Name of the label column in `data` (taken from the formula
#'   when there was one); it is left out of the inputs shown and written into
#'   the decisions file.
#' @param title Page title.
#' @param page_length Rows per table page.
#' @param audit Optional: an [audit_sample()] of `result`. The page then
#'   lists only the sampled rows (in the sample's random order) and its
#'   download holds every sampled row with its verdict (`wrong`: keep =
#'   `FALSE`, relabel or drop = `TRUE`, `NA` where none was given) for
#'   [estimate_errors()], besides the decisions for [apply_review()].
#' @param blind With `audit`: hide the model's columns (flag, scores,
#'   suggestion) of a row until it has a verdict, so the reviewer judges the
#'   label first.
#' @return `review_report()`: the path of the file, invisibly, with its size
#'   in bytes as attribute `"size"`. `apply_review()`: `data` with the
#'   relabelled values replaced and the dropped rows removed; attributes
#'   `"dropped_rows"` and `"relabelled_rows"` hold the affected row numbers.
#' @seealso [clean_data()] to drop or relabel every flagged row without
#'   review; [label_studio_export()] to review in Label Studio instead.
#' @examplesIf requireNamespace("DT", quietly = TRUE)
#' p <- rbind(c(0.9, 0.1), c(0.8, 0.2), c(0.1, 0.9), c(0.2, 0.8), c(0.95, 0.05), c(0.7, 0.3))
#' colnames(p) <- c("a", "b")
#' d <- data.frame(x = 1:6, y = c("a", "a", "b", "b", "b", "a"))
#' res <- find_label_issues(labels = d$y, pred_probs = p)
#' f <- review_report(res, d, tempfile(fileext = ".html"), response = "y")
#' # ... the reviewer downloads decisions.csv; here one made by hand:
#' dec <- data.frame(row = c(5, 6), decision = c("relabel", "drop"), new_label = c("a", ""))
#' apply_review(d, dec, response = "y")
#' @export
review_report <- function(result, data = NULL, file = "label-review.html",
                          response = result$response, title = "Label review", page_length = 25,
                          audit = NULL, blind = FALSE) {
  # A consensus_labels() result is reviewed through its label-level issues.
  if (inherits(result, "noisylabels_consensus")) result <- find_label_issues(result)
  check_result(result)
  check_output_file(file)
  require_suggested("DT", "the review report")
  page_length <- check_count(page_length, "page_length")
  check_flag(blind, "blind")
  if (!is.null(audit)) check_audit_frame(result, audit)
  tab <- review_table(result, data, response, audit)
  widget <- review_widget(tab, page_length, blind && !is.null(audit))
  header <- review_header(result, tab, title, audit)
  meta <- review_meta(result, data, tab, response, audit, blind, title)
  page <- htmltools::tagList(
    htmltools::tags$style(htmltools::HTML(read_review_asset("review.css"))),
    header, review_legend(tab), widget)
  scripts <- c(sprintf("window.NLReviewMeta = %s;", jsonlite::toJSON(meta, auto_unbox = TRUE)),
               read_review_asset("review.js"))
  write_self_contained(page, file, title = title, scripts = scripts)
  size <- file.size(file)
  cli::cli_inform(c("v" = "Wrote {.file {file}} ({format_bytes(size)}, {nrow(tab)} rows)."))
  invisible(structure(file, size = size))
}

# One row per label, flagged first then by decreasing score, with the
# columns a reviewer reads: result columns, the suggestion as the editable
# default of `new_label`, then the inputs.
review_table <- function(result, data, response, audit = NULL) {
  li <- as.data.frame(unclass(result$label_issues), stringsAsFactors = FALSE)
  li <- if (is.null(audit)) li[order(!li$flagged, -li$score, li$row), , drop = FALSE]
        else li[match(audit$row, li$row), , drop = FALSE]
  suggestion <- non_na(li$suggested_label) %||% li$suggested_value %||% li$prediction
  keep <- intersect(c("row", "flagged", "score", "label_quality", "p_wrong", "q_value",
                      "given_label", "suggested_label", "prob_suggested", "suggested_value",
                      "suggested_lower", "suggested_upper", "prediction", "sd", "prob_given"),
                    names(li))
  out <- li[keep]
  for (nm in names(out)) if (is.double(out[[nm]])) out[[nm]] <- signif(out[[nm]], 4)
  out$decision <- ""
  out$new_label <- if (is.null(suggestion)) "" else
    if (is.double(suggestion)) as.character(signif(suggestion, 6)) else as.character(suggestion)
  if (!is.null(data)) {
    inputs <- data_rows_of(result, data, li$row)
    drop <- names(inputs) %in% c(response, paste0("data_", response))
    if (any(!drop)) out <- cbind(out, inputs[!drop])
  }
  rownames(out) <- NULL
  out
}

review_widget <- function(tab, page_length, blind = FALSE) {
  js <- function(x) htmlwidgets::JS(x)
  col <- function(nm) match(nm, names(tab)) - 1L
  numeric <- which(vapply(tab, is.numeric, logical(1))) - 1L
  hidden <- if (blind) as.list(stats::na.omit(col(review_model_columns))) else list()
  DT::datatable(
    tab, rownames = FALSE, filter = "none", elementId = "nl-review-table",
    # The two editable columns are escaped by their renderers in review.js.
    escape = setdiff(names(tab), c("decision", "new_label")),
    selection = "none", callback = js("NLReview.init(table);"),
    options = list(
      pageLength = page_length, deferRender = TRUE, order = list(), autoWidth = FALSE,
      # No DT search box and no DT search cache: review.js filters (see
      # there). Column types are given so that DT does not detect them by
      # reading every cell.
      dom = "lrtip",
      columnDefs = list(
        list(targets = hidden, render = js("NLReview.renderBlind")),
        list(targets = as.list(numeric), className = "dt-right nl-num"),
        list(targets = col("decision"), render = js("NLReview.renderDecision")),
        list(targets = col("new_label"), render = js("NLReview.renderValue")),
        list(targets = as.list(numeric), type = "num", searchable = FALSE),
        list(targets = as.list(setdiff(seq_along(tab) - 1L, numeric)), type = "string",
             searchable = FALSE))))
}

review_header <- function(result, tab, title, audit = NULL) {
  h <- htmltools::tags
  cnt <- issue_count(result)
  n <- nrow(result$label_issues)
  flagged <- sum(result$label_issues$flagged)
  est <- sprintf("%s of %d labels (%.1f%%)", format_count(cnt$estimate), n, 100 * cnt$rate)
  if (isTRUE(cnt$interval)) {
    lvl <- if (is.finite(cnt$level)) sprintf("%g%% interval", 100 * cnt$level) else "interval"
    est <- sprintf("%s; %s %s to %s (%.1f%% to %.1f%%)", est, lvl, format_count(cnt$lower),
                   format_count(cnt$upper), 100 * cnt$rate_lower, 100 * cnt$rate_upper)
  }
  fdr <- if (!is.null(result$fdr)) sprintf(" (false discovery rate %g)", result$fdr) else ""
  plots <- Filter(Negate(is.null), lapply(c("scores", "top"), function(w) plot_data_uri(result, w)))
  h$header(
    h$h1(title),
    h$dl(class = "nl-summary",
         h$dt("Estimated wrong labels"), h$dd(id = "nl-estimate", est),
         h$dt("Flagged for review"), h$dd(id = "nl-flagged", sprintf("%d%s", flagged, fdr)),
         h$dt("Task"), h$dd(result$task),
         h$dt("Predictions"), h$dd(result$method),
         h$dt("Ranked by"), h$dd(sprintf("%s; flagged by %s", result$rank_by %||% "score",
                                         result$flag_by %||% "the method's rule"))),
    h$div(class = "nl-plots", lapply(plots, function(u) h$img(src = u, alt = "label quality plot"))),
    if (!is.null(audit)) h$p(class = "nl-help nl-audit",
        sprintf("Audit mode: %d sampled rows. Give every row a verdict (keep = the label is right;", nrow(tab)),
        "relabel or drop = it is wrong), download, and run",
        h$code("estimate_errors(result, read.csv(\"decisions.csv\"))"), "in R for the verified count."),
    h$p(class = "nl-help",
        "Mark rows keep, relabel or drop in the decision column, or with the keyboard: the arrow keys move,",
        h$kbd("k"), "keep,", h$kbd("r"), "relabel to the suggestion,", h$kbd("d"), "drop,",
        h$kbd("1"), "...", h$kbd("9"), "relabel to that class,", h$kbd("0"), "clear.",
        "Decisions are saved in this browser for this report and come back on reload.",
        "Then download the decisions and run", h$code("apply_review(data, \"decisions.csv\")"),
        "in R."),
    h$div(class = "nl-actions",
          h$input(id = "nl-search", type = "search", placeholder = "Search all columns",
                  `aria-label` = "search all columns"),
          h$button(id = "nl-download", type = "button",
                   if (is.null(audit)) "Download decisions (CSV)" else "Download audit (CSV)"),
          h$button(id = "nl-clear", type = "button", "Clear decisions"),
          h$span(id = "nl-count", "0 rows marked")))
}

# A base plot of the result as a PNG data URI, or NULL when this result has
# nothing to draw for `which`.
plot_data_uri <- function(result, which) {
  f <- tempfile(fileext = ".png")
  on.exit(unlink(f))
  grDevices::png(f, width = 640, height = 420, res = 96)
  ok <- tryCatch({ graphics::plot(result, which = which); TRUE }, error = function(e) FALSE)
  grDevices::dev.off()
  if (!ok || !file.exists(f)) return(NULL)
  paste0("data:image/png;base64,", jsonlite::base64_enc(readBin(f, "raw", file.size(f))))
}

#' @rdname review_report
#' @param new_classes `apply_review()`: allow a relabelled row to take a
#'   class the label column does not have (a new factor level). By default
#'   that is an error, as is a decided row whose data differ from the row
#'   the decision was made on (the page writes each row's fingerprint); in
#'   both cases nothing is applied.
#' @param decisions The decisions: a path to the CSV downloaded from the
#'   report (or made by [label_studio_import()]), or a data frame with columns
#'   `row`, `decision` and (for `relabel`) `new_label`.
#' @export
apply_review <- function(data, decisions, response = NULL, new_classes = FALSE) {
  check_flag(new_classes, "new_classes")
  dec <- read_decisions(decisions)
  n <- if (is.data.frame(data) || is.matrix(data)) nrow(data) else length(data)
  if (any(dec$row > n)) {
    abort_input("{.arg decisions} names row {max(dec$row)} but {.arg data} has {n} row{?s}.",
                class = "noisylabels_error_length")
  }
  check_decided_rows(data, dec)
  rel <- dec[dec$decision == "relabel", , drop = FALSE]
  if (nrow(rel)) {
    if (any(is.na(rel$new_label) | rel$new_label == "")) {
      abort_input(c("Relabelled row{?s} {rel$row[is.na(rel$new_label) | rel$new_label == \"\"]} {?has/have} no {.field new_label}.",
                    "i" = "Give the new label, or mark the row {.val keep} or {.val drop}."))
    }
    if (is.data.frame(data)) {
      response <- response %||% unique(stats::na.omit(dec$label_column[dec$label_column != ""]))[1]
      if (length(response) != 1L || is.na(response) || !response %in% names(data)) {
        abort_input(c("Which column of {.arg data} holds the labels? Name it with {.arg response}.",
                      "i" = "Columns: {.field {utils::head(names(data), 8)}}."))
      }
      data[[response]] <- set_labels(data[[response]], rel$row, rel$new_label, new_classes)
    } else if (is.matrix(data)) {
      abort_input("Relabelling needs a data frame or a label vector, not a matrix.")
    } else {
      data <- set_labels(data, rel$row, rel$new_label, new_classes)
    }
  }
  dropped <- sort(dec$row[dec$decision == "drop"])
  if (length(dropped)) {
    data <- if (is.data.frame(data) || is.matrix(data)) data[-dropped, , drop = FALSE] else data[-dropped]
  }
  attr(data, "dropped_rows") <- dropped
  attr(data, "relabelled_rows") <- sort(rel$row)
  data
}

# Decisions carry the fingerprint of the row they were made on (the page
# writes it): data whose rows were shifted, reordered or edited since are
# refused before anything is applied.
check_decided_rows <- function(data, dec, call = parent.frame()) {
  fp <- dec$row_fingerprint
  if (is.null(fp) || !any(nzchar(fp))) return(invisible())
  on <- nzchar(fp)
  now <- fingerprint_rows(data, dec$row[on])
  bad <- dec$row[on][now != fp[on]]
  if (length(bad)) {
    abort_input(c("{length(bad)} decided row{?s} of {.arg data} differ{?s/} from the row{?s} the decisions were made on (row{?s} {utils::head(bad, 5)}).",
                  "i" = "Pass the data the report was made from, in the same order and unedited; nothing was applied."),
                class = "noisylabels_error_review_rows", call = call)
  }
  invisible()
}

# Replace labels, keeping the column's type. A class the label column does
# not have (not a level of a factor, not a value of a character or logical
# column) is an error, as is a value that does not convert.
set_labels <- function(col, rows, new, new_classes = FALSE, call = parent.frame()) {
  if (!new_classes && (is.factor(col) || is.character(col) || is.logical(col))) {
    have <- if (is.factor(col)) levels(col) else unique(as.character(col))
    unknown <- setdiff(unique(new), have)
    if (length(unknown)) {
      abort_input(c("Relabelled to {?a class/classes} the label does not have: {.val {unknown}}; nothing was applied.",
                    "i" = "Classes: {.val {utils::head(have, 12)}}."),
                  class = "noisylabels_error_review_label", call = call)
    }
  }
  if (is.factor(col)) {
    levels(col) <- union(levels(col), unique(new))
    col[rows] <- new
    return(col)
  }
  conv <- if (is.numeric(col)) suppressWarnings(as.numeric(new))
          else if (is.logical(col)) as.logical(new) else new
  if (anyNA(conv)) {
    bad <- new[is.na(conv)]
    kind <- class(col)[1]
    abort_input("Not a valid {.cls {kind}} label: {.val {bad}}.",
                call = call)
  }
  if (is.integer(col) && all(conv == round(conv))) conv <- as.integer(conv)
  col[rows] <- conv
  col
}

read_decisions <- function(decisions, call = parent.frame()) {
  if (is.character(decisions) && length(decisions) == 1L) {
    if (!file.exists(decisions)) abort_input("Decisions file {.file {decisions}} not found.", call = call)
    decisions <- utils::read.csv(decisions, colClasses = "character", na.strings = character(),
                                 check.names = FALSE)
  }
  if (!is.data.frame(decisions) || !all(c("row", "decision") %in% names(decisions))) {
    abort_input("{.arg decisions} must be a CSV path or a data frame with columns {.field row} and {.field decision}.",
                call = call)
  }
  dec <- data.frame(row = suppressWarnings(as.integer(decisions$row)),
                    decision = trimws(tolower(as.character(decisions$decision))),
                    new_label = as.character(decisions$new_label %||% rep("", nrow(decisions))),
                    label_column = as.character(decisions$label_column %||% rep("", nrow(decisions))),
                    row_fingerprint = as.character(decisions$row_fingerprint %||% rep("", nrow(decisions))),
                    stringsAsFactors = FALSE)
  dec$row_fingerprint[is.na(dec$row_fingerprint)] <- ""
  dec$decision[is.na(dec$decision)] <- ""
  dec <- dec[dec$decision != "", , drop = FALSE]
  if (anyNA(dec$row) || any(dec$row < 1L)) abort_input("{.field row} must hold row numbers (1, 2, ...).", call = call)
  bad <- setdiff(dec$decision, c("keep", "relabel", "drop"))
  if (length(bad)) {
    abort_input("Unknown decision{?s} {.val {bad}}: use {.val keep}, {.val relabel} or {.val drop}.", call = call)
  }
  if (anyDuplicated(dec$row)) {
    abort_input("Row{?s} {unique(dec$row[duplicated(dec$row)])} {?has/have} more than one decision.", call = call)
  }
  dec
}

format_count <- function(x) if (abs(x - round(x)) < 1e-9) format(round(x)) else sprintf("%.1f", x)
