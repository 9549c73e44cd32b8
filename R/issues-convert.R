#' A find_label_issues() result as a data frame or tibble
#'
#' One row per label with every per-label column of the result (`row`,
#' `score`, `flagged`, `label_quality`, the given and suggested label or
#' value, and whatever else the path computed, e.g. `p_wrong` and
#' `q_value`), optionally followed by the columns of the data the result was
#' computed on, so that a flagged row can be read next to its inputs.
#'
#' @param x A [find_label_issues()] result.
#' @param row.names,optional Ignored (part of the [as.data.frame()] generic).
#' @param data Optional: the data the result was computed on (same rows, same
#'   order; for the formula interface the data frame passed to it). Its
#'   columns are appended; a column whose name is already taken is prefixed
#'   by `data_`.
#' @param order `"score"` (default: decreasing score, as [label_issues()]) or
#'   `"row"` (the original row order).
#' @param ... Unused.
#' @return A data frame (`as.data.frame()`) or a tibble (`as_tibble()`).
#' @examples
#' p <- rbind(c(0.9, 0.1), c(0.8, 0.2), c(0.1, 0.9), c(0.2, 0.8), c(0.95, 0.05), c(0.7, 0.3))
#' colnames(p) <- c("a", "b")
#' d <- data.frame(x = 1:6, y = c("a", "a", "b", "b", "b", "a"))
#' res <- find_label_issues(labels = d$y, pred_probs = p)
#' as.data.frame(res)
#' as.data.frame(res, data = d, order = "row")
#' @name find_label_issues-convert
NULL

#' @rdname find_label_issues-convert
#' @export
as.data.frame.find_label_issues <- function(x, row.names = NULL, optional = FALSE, ...,
                                            data = NULL, order = c("score", "row")) {
  check_fit(x, "find_label_issues")
  order <- match_arg(order)
  df <- as.data.frame(unclass(x$label_issues), stringsAsFactors = FALSE)
  if (order == "row") df <- df[order(df$row), , drop = FALSE]
  if (!is.null(data)) df <- cbind(df, data_rows_of(x, data, df$row))
  rownames(df) <- NULL
  df
}

#' @rdname find_label_issues-convert
#' @exportS3Method tibble::as_tibble
as_tibble.find_label_issues <- function(x, ..., data = NULL, order = c("score", "row")) {
  check_fit(x, "find_label_issues")
  if (!requireNamespace("tibble", quietly = TRUE)) {
    abort_input("{.fn as_tibble} needs the {.pkg tibble} package; use {.fn as.data.frame} instead.",
                class = "noisylabels_error_missing_package")
  }
  tibble::as_tibble(as.data.frame.find_label_issues(x, data = data, order = order))
}

# The rows `rows` of `data` (a data frame, matrix or vector) as a data frame
# whose names do not clash with the result's columns. Checks that `data` has
# as many rows as the result was computed on.
data_rows_of <- function(result, data, rows, call = parent.frame()) {
  n_data <- if (is.data.frame(data) || is.matrix(data)) nrow(data) else length(data)
  expected <- result$n_data %||% result$n %||% nrow(result$label_issues)
  if (n_data != expected) {
    abort_input(c("{.arg data} has {n_data} row{?s} but the result was computed on {expected}.",
                  "i" = "Pass the same data, in the same order, that {.fn find_label_issues} saw."),
                class = "noisylabels_error_length", call = call)
  }
  if (is.data.frame(data) || is.matrix(data)) {
    out <- as.data.frame(data, stringsAsFactors = FALSE)[rows, , drop = FALSE]
    if (is.null(colnames(data))) names(out) <- paste0("x", seq_len(ncol(out)))
  } else {
    out <- data.frame(value = data[rows], stringsAsFactors = FALSE)
  }
  taken <- names(out) %in% names(result$label_issues)
  names(out)[taken] <- paste0("data_", names(out)[taken])
  rownames(out) <- NULL
  out
}

# The estimated number of wrong labels with its interval, from the result's
# `wrong_count` (`estimate`, `lower`, `upper`, `rate`, `rate_lower`,
# `rate_upper`, `level`). Results without one (a fitted model's own flags)
# fall back to `estimated_issues` with no interval.
issue_count <- function(result) {
  n <- nrow(result$label_issues)
  el <- result$wrong_count
  if (is.list(el) && all(c("estimate", "lower", "upper") %in% names(el))) {
    return(list(estimate = el$estimate, lower = el$lower, upper = el$upper,
                rate = el$rate %||% (el$estimate / n), rate_lower = el$rate_lower %||% (el$lower / n),
                rate_upper = el$rate_upper %||% (el$upper / n), level = el$level %||% NA_real_,
                interval = TRUE))
  }
  est <- result$estimated_issues %||% sum(result$label_issues$flagged)
  list(estimate = est, lower = NA_real_, upper = NA_real_, rate = est / n,
       rate_lower = NA_real_, rate_upper = NA_real_, level = NA_real_, interval = FALSE)
}
