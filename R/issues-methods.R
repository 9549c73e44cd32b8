#' Methods for find_label_issues() results
#'
#' `label_issues()` returns the per-label data frame (sorted by decreasing
#' score; filter on `flagged`), `noise_scores()` the scores in the original
#' row order, `summary()` the estimated number of wrong labels, the flags and
#' (classes) the estimated noise matrix, `plot()` and `autoplot()` the score
#' distribution and the top issues against the model's prediction.
#'
#' @param object,x A `find_label_issues` result.
#' @param n Number of top issues to print or plot.
#' @param which For `plot()`/`autoplot()`: `"scores"` (distribution of
#'   `label_quality`, flagged labels marked) or `"top"` (the `n` labels of
#'   lowest quality: for regression given label against prediction, for
#'   classes the probability of the given label against that of the
#'   suggested one).
#' @param ... Unused.
#' @return `label_issues()`: a `noisylabels_issues` data frame; `summary()`:
#'   an object printed as a short report; `plot()`: `x`, invisibly;
#'   `autoplot()`: a ggplot.
#' @name find_label_issues-methods
NULL

#' @rdname find_label_issues-methods
#' @export
label_issues.find_label_issues <- function(object, ...) {
  check_fit(object, "find_label_issues")
  object$label_issues
}

#' @rdname find_label_issues-methods
#' @export
noise_scores.find_label_issues <- function(object, ...) {
  check_fit(object, "find_label_issues")
  li <- object$label_issues
  li$score[order(li$row)]
}

#' @rdname find_label_issues-methods
#' @export
print.find_label_issues <- function(x, n = 5, ...) {
  check_fit(x, "find_label_issues")
  n <- check_count(n, "n", lower = 0)
  li <- x$label_issues
  est <- if (!is.null(x$wrong_count)) x$wrong_count$estimate else x$estimated_issues
  cli::cat_line(sprintf("Label issues (%s): %d of %d labels flagged, %.0f estimated wrong",
                        x$task, sum(li$flagged), nrow(li), est))
  cli::cat_line("Method: ", x$method)
  cli::cat_line("Ranked by: ", x$rank_by, "; flagged by: ", x$flag_by)
  if (!is.null(x$wrong_count)) {
    cli::cat_line(format_wrong_count(x$wrong_count))
    cli::cat_line(format_flags(sum(li$flagged), x$flag_by, x$fdr, li$q_value))
    for (line in format_decision_notes(x)) cli::cat_line(line)
  }
  cli::cat_line(audit_note(x))
  df <- as.data.frame(unclass(li), stringsAsFactors = FALSE)
  if (n > 0) {
    cli::cat_line(sprintf("Top %d:", min(n, nrow(df))))
    print(utils::head(df, n), row.names = FALSE, digits = 4)
  }
  invisible(x)
}

#' @rdname find_label_issues-methods
#' @export
summary.find_label_issues <- function(object, ...) {
  check_fit(object, "find_label_issues")
  li <- object$label_issues
  out <- list(task = object$task, method = object$method, n = nrow(li),
              flagged = sum(li$flagged), estimated_issues = object$estimated_issues,
              quality = stats::quantile(li$label_quality, c(0, 0.05, 0.25, 0.5, 1), names = TRUE),
              time = object$time, wrong_count = object$wrong_count, fdr = object$fdr,
              flag_by = object$flag_by, q_value = li$q_value,
              notes = format_decision_notes(object))
  if (!is.null(object$confident_learning)) {
    out$noise_matrix <- object$confident_learning$noise_matrix
    out$flags_by_class <- table(given = li$given_label, flagged = li$flagged)
  }
  if (!is.null(object$mixture)) {
    out$mixture <- c(weight = object$mixture$weight, sd_clean = object$mixture$sd_clean,
                     sd_wide = object$mixture$sd_wide, shape = object$mixture$shape %||% NA_real_)
  }
  out$model_choice <- object$model_choice
  out$audit_note <- audit_note(object)
  structure(out, class = "summary.find_label_issues")
}

#' @export
print.summary.find_label_issues <- function(x, ...) {
  cli::cat_line(sprintf("find_label_issues (%s), %d labels", x$task, x$n))
  cli::cat_line("Method: ", x$method)
  if (!is.null(x$wrong_count)) {
    cli::cat_line(format_wrong_count(x$wrong_count))
    cli::cat_line(format_flags(x$flagged, x$flag_by, x$fdr, x$q_value))
    for (line in x$notes) cli::cat_line(line)
  } else {
    cli::cat_line(sprintf("Estimated wrong labels: %d (%.1f%%); flagged: %d",
                          x$estimated_issues, 100 * x$estimated_issues / x$n, x$flagged))
  }
  cli::cat_line("label_quality quantiles:")
  print(round(x$quality, 4))
  if (!is.null(x$noise_matrix)) {
    cli::cat_line("Confident-learning noise matrix P(given | true) (calibrated confident joint):")
    print(round(x$noise_matrix, 3))
  }
  if (!is.null(x$mixture)) {
    cli::cat_line(sprintf("Residual mixture: %.1f%% wide component, sd %.3g (clean, shape %.2f) and %.3g (wide), standardised scale",
                          100 * x$mixture[["weight"]], x$mixture[["sd_clean"]], x$mixture[["shape"]],
                          x$mixture[["sd_wide"]]))
  }
  if (!is.null(x$model_choice)) {
    cli::cat_line("Model choice:")
    print(x$model_choice, row.names = FALSE, digits = 4)
  }
  if (!is.null(x$audit_note)) cli::cat_line(x$audit_note)
  if (!is.null(x$time)) cli::cat_line(sprintf("Time: %.2f s", x$time))
  invisible(x)
}

# One line: the estimated number and rate of wrong labels (the sum of the
# labels' p_wrong) with its interval.
format_wrong_count <- function(count) {
  sprintf("Estimated wrong: %.0f (%.1f%%), %g%% interval %d-%d (%.1f-%.1f%%)",
          count$estimate, 100 * count$rate, 100 * count$level, as.integer(count$lower),
          as.integer(count$upper), 100 * count$rate_lower, 100 * count$rate_upper)
}

# What the count rests on and when flags were withheld (classes: the
# bracket of the headline count; every result: the audit that verifies it).
format_decision_notes <- function(x) {
  wc <- x$wrong_count
  out <- character()
  if (!is.null(wc$confident_count)) {
    out <- c(out, sprintf("Count: midpoint of %d confidently in another class and %d not the model's most probable class",
                          as.integer(wc$confident_count), as.integer(wc$disagreement_count)))
  }
  if (identical(x$evidence, FALSE)) {
    out <- c(out, "No flags: fewer than 3 labels are confidently in another class, or a class has fewer than 10 labels, so nothing says any label is wrong; the ranking (score) is the list to review.")
  } else if (identical(x$flags_supported, FALSE)) {
    f <- x$flags_by_model
    out <- c(out, sprintf(paste0("Flags NOT SUPPORTED at this rate: the two clean shapes flag %d and %d, ",
                                 "both only %d (a heavy clean tail looks like errors); the ranking (score) ",
                                 "is the list to review."),
                          f[["generalised_normal"]], f[["student_t"]], f[["both"]]))
  } else if (identical(x$flag_by, "fdr") && identical(x$fdr_supported, FALSE)) {
    out <- c(out, "No flags at this false discovery rate: the two counts differ by more than a factor 2, so the probabilities cannot certify it; the ranking (score) is the list to review.")
  }
  out
}

# One line: how many are flagged and by which rule; when the rule is not the
# q-value one, also how many q <= fdr would flag.
format_flags <- function(flagged, flag_by, fdr, q_value) {
  line <- sprintf("Flagged: %d (%s)", flagged, flag_by %||% "rule of the fit")
  if (!is.null(q_value) && !is.null(fdr) && !identical(flag_by, "fdr") &&
      !startsWith(flag_by %||% "", "q_value")) {
    line <- paste0(line, sprintf("; q-value <= %g would flag %d", fdr, sum(q_value <= fdr)))
  }
  line
}

# Data for the "top issues" panel: one row per label among the n of lowest
# quality, with what the label says and what the model says.
top_issue_frame <- function(object, n) {
  li <- object$label_issues
  top <- utils::head(li[order(li$label_quality, -li$score), , drop = FALSE], n)
  if (object$task == "regression" && !is.null(top$prediction)) {
    data.frame(row = top$row, given = top$given_label, model = top$prediction, flagged = top$flagged)
  } else if (!is.null(top$prob_given)) {
    sug <- as.character(top$suggested_label)
    p <- object$pred_probs
    j <- match(sug, object$classes)
    data.frame(row = top$row, given = top$prob_given,
               model = p[cbind(top$row, j)], flagged = top$flagged)
  } else {
    NULL
  }
}

#' @rdname find_label_issues-methods
#' @export
plot.find_label_issues <- function(x, which = c("scores", "top"), n = 20, ...) {
  check_fit(x, "find_label_issues")
  which <- match_arg(which)
  li <- x$label_issues
  if (which == "scores") {
    q <- li$label_quality
    h <- graphics::hist(q, breaks = 40, plot = FALSE)
    graphics::plot(h, main = "Label quality (1 = clean)", xlab = "label_quality",
                   col = "grey85", border = "grey50")
    if (any(li$flagged)) {
      graphics::rug(q[li$flagged], col = "firebrick")
      graphics::legend("topleft", legend = "flagged", col = "firebrick", lty = 1, bty = "n")
    }
  } else {
    top <- top_issue_frame(x, n)
    if (is.null(top)) abort_input("This result has no model predictions to plot against.")
    lab <- if (x$task == "regression") c("given label", "out-of-fold prediction")
           else c("P(given label)", "P(suggested label)")
    rng <- range(c(top$given, top$model))
    rng <- rng + c(-0.08, 0.08) * diff(rng)
    graphics::plot(top$model, top$given, xlim = rng, ylim = rng, pch = 19,
                   col = ifelse(top$flagged, "firebrick", "grey40"),
                   xlab = lab[2], ylab = lab[1], main = sprintf("Top %d issues", nrow(top)))
    graphics::abline(0, 1, lty = 2)
    text_without_overlap(top$model, top$given, top$row, cex = 0.7)
  }
  invisible(x)
}

#' @rdname find_label_issues-methods
#' @exportS3Method ggplot2::autoplot
autoplot.find_label_issues <- function(object, which = c("scores", "top"), n = 20, ...) {
  check_fit(object, "find_label_issues")
  require_ggplot2()
  which <- match_arg(which)
  li <- as.data.frame(unclass(object$label_issues))
  if (which == "scores") {
    li$status <- ifelse(li$flagged, "flagged", "kept")
    ggplot2::ggplot(li, ggplot2::aes(x = .data$label_quality, fill = .data$status)) +
      ggplot2::geom_histogram(bins = 40, position = "stack") +
      ggplot2::scale_fill_manual(values = c(flagged = "firebrick", kept = "grey60")) +
      ggplot2::labs(x = "label_quality (1 = clean)", y = "labels", fill = NULL,
                    title = sprintf("%d of %d labels flagged", sum(li$flagged), nrow(li)))
  } else {
    top <- top_issue_frame(object, n)
    if (is.null(top)) abort_input("This result has no model predictions to plot against.")
    lab <- if (object$task == "regression") c("given label", "out-of-fold prediction")
           else c("P(given label)", "P(suggested label)")
    top$status <- ifelse(top$flagged, "flagged", "kept")
    ggplot2::ggplot(top, ggplot2::aes(x = .data$model, y = .data$given, colour = .data$status)) +
      ggplot2::geom_abline(slope = 1, intercept = 0, linetype = 2) +
      ggplot2::geom_point() +
      ggplot2::geom_text(ggplot2::aes(label = .data$row), vjust = -0.6, size = 3, show.legend = FALSE,
                         check_overlap = TRUE) +
      ggplot2::scale_colour_manual(values = c(flagged = "firebrick", kept = "grey40")) +
      ggplot2::labs(x = lab[2], y = lab[1], colour = NULL, title = sprintf("Top %d issues", nrow(top)))
  }
}

#' Data without its wrong labels
#'
#' Remove the flagged rows of a [find_label_issues()] result from the data,
#' or replace their labels by the suggested ones (classes: the suggested
#' class; numbers: the model's prediction).
#'
#' @param result A [find_label_issues()] result.
#' @param data The data the result was computed on (same rows, same order;
#'   for the formula interface the data frame passed to it).
#' @param action `"remove"` (drop flagged rows) or `"relabel"` (replace the
#'   flagged labels by `suggested_label` for classes or `suggested_value`,
#'   the model's prediction, for numeric labels).
#' @param response For `"relabel"`: the name of the label column in `data`
#'   (taken from the formula when there was one), or `NULL` when `data` is the
#'   label vector itself.
#' @return `data` without the flagged rows (data frame or matrix rows, vector
#'   elements), or with the flagged labels replaced. The attribute
#'   `"removed_rows"` or `"relabelled_rows"` holds the affected row numbers.
#' @examples
#' p <- rbind(c(0.9, 0.1), c(0.8, 0.2), c(0.1, 0.9), c(0.2, 0.8), c(0.95, 0.05), c(0.7, 0.3))
#' d <- data.frame(x = 1:6, y = c("a", "a", "b", "b", "b", "a"))
#' colnames(p) <- c("a", "b")
#' res <- find_label_issues(labels = d$y, pred_probs = p)
#' clean_data(res, d)
#' clean_data(res, d, action = "relabel", response = "y")
#' @export
clean_data <- function(result, data, action = c("remove", "relabel"), response = result$response) {
  if (!inherits(result, "find_label_issues")) {
    abort_input("{.arg result} must come from {.fn find_label_issues}, not {.cls {class(result)}}.")
  }
  action <- match_arg(action)
  li <- result$label_issues
  n_data <- if (is.data.frame(data) || is.matrix(data)) nrow(data) else length(data)
  expected <- result$n_data %||% result$n
  if (n_data != expected) {
    abort_input(c("{.arg data} has {n_data} row{?s} but the result was computed on {expected}.",
                  "i" = "Pass the same data, in the same order, that {.fn find_label_issues} saw."),
                class = "noisylabels_error_length")
  }
  rows <- sort(li$row[li$flagged])
  if (action == "remove") {
    out <- if (is.data.frame(data) || is.matrix(data)) data[-rows, , drop = FALSE] else data[-rows]
    if (length(rows) == 0L) out <- data
    attr(out, "removed_rows") <- rows
    return(out)
  }
  suggested <- non_na(li$suggested_label) %||% li$suggested_value
  if (is.null(suggested)) {
    abort_input(c("{.code action = \"relabel\"} needs suggested labels or values, and this result has none.",
                  "i" = "Use {.code action = \"remove\"}."))
  }
  new <- suggested[li$flagged][order(li$row[li$flagged])]
  if (is.data.frame(data)) {
    if (is.null(response) || !response %in% names(data)) {
      abort_input("{.arg response} must name the label column of {.arg data}.")
    }
    col <- data[[response]]
    data[[response]] <- replace_labels(col, rows, new)
  } else {
    data <- replace_labels(data, rows, new)
  }
  attr(data, "relabelled_rows") <- rows
  data
}

replace_labels <- function(col, rows, new) {
  if (is.numeric(new) && is.numeric(col) && !is.factor(col)) {
    col[rows] <- new
  } else if (is.factor(col)) {
    col[rows] <- as.character(new)
  } else if (is.numeric(col)) {
    col[rows] <- methods::as(as.character(new), class(col)[1])
  } else if (is.logical(col)) {
    col[rows] <- as.logical(as.character(new))
  } else {
    col[rows] <- as.character(new)
  }
  col
}

#' @rdname find_label_issues-methods
#' @return `tidy()`: the per-label data frame as a plain data frame (sorted by
#'   decreasing score); `glance()`: one row with `task`, `method`, `n`,
#'   `flagged`, `estimated_issues` and `time`.
#' @export
tidy.find_label_issues <- function(x, ...) {
  check_fit(x, "find_label_issues")
  as.data.frame(unclass(x$label_issues), stringsAsFactors = FALSE)
}

#' @rdname find_label_issues-methods
#' @export
glance.find_label_issues <- function(x, ...) {
  check_fit(x, "find_label_issues")
  data.frame(task = x$task, method = x$method, n = x$n, flagged = sum(x$label_issues$flagged),
             estimated_issues = x$estimated_issues, time = x$time %||% NA_real_,
             stringsAsFactors = FALSE)
}
