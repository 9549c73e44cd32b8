# augment() of find_label_issues() results: the data in their own row order
# with the per-label columns appended (broom's convention: "."-prefixed).

#' Augment data with the label issues found in them
#'
#' The rows of `data` (the data [find_label_issues()] was computed on, for
#' the formula interface the data frame given to it) in their order, with the
#' result's per-label columns appended under "."-prefixed names (`.score`,
#' `.flagged`, `.label_quality`, the given and suggested label, ...). Rows the
#' formula interface dropped (a missing label or input) get `NA`. Without
#' `data`: one row per label, in row order, with `.row` and the same columns.
#'
#' @param x A [find_label_issues()] result.
#' @param data Optional: the data the result was computed on.
#' @param ... Unused.
#' @return A data frame.
#' @examples
#' p <- rbind(c(0.9, 0.1), c(0.8, 0.2), c(0.1, 0.9), c(0.2, 0.8), c(0.95, 0.05), c(0.7, 0.3))
#' colnames(p) <- c("a", "b")
#' d <- data.frame(x = 1:6, y = c("a", "a", "b", "b", "b", "a"))
#' res <- find_label_issues(labels = d$y, pred_probs = p)
#' augment(res, d)
#' @export
augment.find_label_issues <- function(x, data = NULL, ...) {
  check_fit(x, "find_label_issues")
  check_dots_empty("augment", ...)
  li <- as.data.frame(unclass(x$label_issues), stringsAsFactors = FALSE)
  li <- li[order(li$row), , drop = FALSE]
  cols <- setdiff(names(li), "row")
  if (is.null(data)) {
    out <- li
    names(out) <- paste0(".", names(out))
    rownames(out) <- NULL
    return(out)
  }
  n <- if (is.data.frame(data) || is.matrix(data)) nrow(data) else length(data)
  base <- data_rows_of(x, data, seq_len(n))
  # data_rows_of() renames data columns that clash with the result's; here
  # the result's columns carry a "." prefix, so the data keep their names
  base <- if (is.data.frame(data) || is.matrix(data)) {
    stats::setNames(base, colnames(data) %||% names(base))
  } else base
  at <- match(seq_len(n), li$row)
  for (nm in cols) base[[paste0(".", nm)]] <- li[[nm]][at]
  base
}
