#' @rdname audit_sample
#' @param x,object An [audit_sample()] or [estimate_errors()] object.
#' @export
print.noisylabels_audit_estimate <- function(x, ...) {
  wc <- x$wrong_count
  lvl <- sprintf("%g%%", 100 * x$level)
  cli::cat_line(sprintf("Audited count (%s): %d of %d sampled rows found wrong", x$task %||% "labels",
                        as.integer(x$n_wrong), as.integer(x$n_reviewed)))
  cli::cat_line(sprintf("Wrong labels: %.0f (%.1f%%), %s interval %.0f-%.0f (%.1f-%.1f%%)",
                        wc$estimate, 100 * wc$rate, lvl, wc$lower, wc$upper,
                        100 * wc$rate_lower, 100 * wc$rate_upper))
  cli::cat_line(sprintf("  model-assisted (coefficient %.2f on p_wrong); audit alone: %.0f, %.0f-%.0f; model alone: %.0f",
                        wc$coefficient, wc$audit_only$estimate, wc$audit_only$lower,
                        wc$audit_only$upper, wc$model))
  pr <- x$precision
  if (is.finite(pr$estimate)) {
    cli::cat_line(sprintf("Precision of the %d flags: %.3f (%s interval %.3f-%.3f)",
                          as.integer(pr$flagged), pr$estimate, lvl, pr$lower, pr$upper))
  } else {
    cli::cat_line("Precision of the flags: no label is flagged")
  }
  rc <- x$recall
  if (is.finite(rc$estimate)) {
    cli::cat_line(sprintf("Recall of the flags: %.3f (%s interval %.3f-%.3f)", rc$estimate, lvl,
                          rc$lower %|NA|% 0, rc$upper %|NA|% 1))
  }
  cli::cat_line(sprintf("Recalibrated p_wrong: plogis(%.2f + %.2f logit(p_wrong))",
                        x$calibration[["a"]], x$calibration[["b"]]))
  invisible(x)
}

#' @rdname audit_sample
#' @export
summary.noisylabels_audit_estimate <- function(object, ...) {
  structure(list(estimate = object, strata = object$strata), class = "summary.noisylabels_audit_estimate")
}

#' @export
print.summary.noisylabels_audit_estimate <- function(x, ...) {
  print(x$estimate)
  cli::cat_line("Strata:")
  print(x$strata, row.names = FALSE, digits = 3)
  invisible(x)
}

#' @rdname audit_sample
#' @export
print.noisylabels_audit <- function(x, n = 6, ...) {
  done <- sum(!is.na(x$wrong))
  cli::cat_line(sprintf("Audit sample: %d rows in %d strata, %d with a verdict (column `wrong`)",
                        nrow(x), length(unique(x$stratum)), done))
  df <- as.data.frame(unclass(x), stringsAsFactors = FALSE)
  show <- setdiff(names(df), c("fingerprint", "design"))
  print(utils::head(df[show], n), row.names = FALSE, digits = 3)
  if (nrow(x) > n) cli::cat_line(sprintf("... %d more rows", nrow(x) - n))
  invisible(x)
}

`%|NA|%` <- function(a, b) if (is.na(a)) b else a

# The line print() and summary() of a find_label_issues result end with.
audit_note <- function(x) {
  if (!is.null(x$audit)) {
    sprintf("Count verified by an audit of %d rows (audit_sample() + estimate_errors()).",
            as.integer(x$audit$n_reviewed))
  } else {
    "The count is the model's: review audit_sample(result, 200) and estimate_errors() turn it into a verified count."
  }
}

# Labels of points in a base plot, each placed above, below, left or right
# of its point where it does not overlap a label already drawn; a label
# with no free place is left out (its point stays).
text_without_overlap <- function(x, y, labels, cex = 0.7) {
  labels <- as.character(labels)
  w <- graphics::strwidth(labels, cex = cex) * 1.1
  h <- graphics::strheight("0", cex = cex) * 1.4
  placed <- matrix(numeric(), 0, 4)
  gap <- graphics::strwidth("0", cex = cex) * 0.6
  usr <- graphics::par("usr")
  for (i in seq_along(x)) {
    cand <- rbind(c(x[i], y[i] + h), c(x[i], y[i] - h), c(x[i] + w[i] / 2 + gap, y[i]),
                  c(x[i] - w[i] / 2 - gap, y[i]), c(x[i] + w[i] / 2 + gap, y[i] + h),
                  c(x[i] - w[i] / 2 - gap, y[i] - h))
    for (k in seq_len(nrow(cand))) {
      box <- c(cand[k, 1] - w[i] / 2, cand[k, 1] + w[i] / 2, cand[k, 2] - h / 2, cand[k, 2] + h / 2)
      outside <- box[1] < usr[1] || box[2] > usr[2] || box[3] < usr[3] || box[4] > usr[4]
      clash <- outside || nrow(placed) && any(placed[, 1] < box[2] & placed[, 2] > box[1] &
                                   placed[, 3] < box[4] & placed[, 4] > box[3])
      if (!clash) {
        graphics::text(cand[k, 1], cand[k, 2], labels[i], cex = cex)
        placed <- rbind(placed, box)
        break
      }
    }
  }
  invisible(nrow(placed))
}
