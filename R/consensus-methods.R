# Methods for consensus_labels() results (class noisylabels_consensus).

#' @export
print.noisylabels_consensus <- function(x, ...) {
  check_consensus(x)
  it <- x$items
  cli::cat_line(sprintf("Consensus of %s labels on %d items from %d annotators (%s, %s)",
                        format(x$n_labels, big.mark = ","), nrow(it), nrow(x$annotators),
                        x$type, x$format))
  if (x$type == "classes") {
    cli::cat_line(sprintf("Classes: %s", paste(x$classes, collapse = ", ")))
    cli::cat_line(sprintf("Mean item quality %.3f; %d items below 0.9; mean agreement %.3f",
                          mean(it$quality), sum(it$quality < 0.9), mean(it$agreement, na.rm = TRUE)))
    if (isTRUE(x$has_pred_probs)) {
      cli::cat_line(sprintf("Model probabilities used with tempering exponent %.3f", x$tempering))
    }
  } else {
    cli::cat_line(sprintf("Median interval half-width %.4g; common annotator scale %.4g",
                          stats::median((it$upper - it$lower) / 2), x$scale0))
  }
  cli::cat_line(sprintf("EM: %d iterations, %s", x$iterations,
                        if (x$converged) "converged" else "not converged"))
  an <- x$annotators[order(x$annotators$quality), , drop = FALSE]
  cli::cat_line("Lowest-quality annotators:")
  print(utils::head(an, 5), row.names = FALSE, digits = 3)
  invisible(x)
}

#' @export
summary.noisylabels_consensus <- function(object, ...) {
  check_consensus(object)
  q <- object$annotators$quality
  out <- list(type = object$type, n_items = nrow(object$items),
              n_annotators = nrow(object$annotators), n_labels = object$n_labels,
              labels_per_item = stats::quantile(object$items$n_labels, c(0, 0.5, 1)),
              annotator_quality = stats::quantile(q, c(0, 0.25, 0.5, 0.75, 1), na.rm = TRUE),
              iterations = object$iterations, converged = object$converged)
  if (object$type == "classes") {
    out$item_quality <- stats::quantile(object$items$quality, c(0, 0.25, 0.5, 0.75, 1))
    out$consensus_table <- table(object$items$consensus_label)
    out$expected_wrong_labels <- sum(object$labels$weight * object$labels$p_wrong)
    out$tempering <- object$tempering
  } else {
    out$interval_width <- stats::quantile(object$items$upper - object$items$lower, c(0, 0.5, 1))
  }
  structure(out, class = "summary.noisylabels_consensus")
}

#' @export
print.summary.noisylabels_consensus <- function(x, ...) {
  cli::cat_line(sprintf("Consensus (%s): %d items, %d annotators, %s labels; EM %d iterations (%s)",
                        x$type, x$n_items, x$n_annotators, format(x$n_labels, big.mark = ","),
                        x$iterations, if (x$converged) "converged" else "not converged"))
  cli::cat_line("Labels per item (min, median, max): ", paste(format(x$labels_per_item), collapse = ", "))
  cli::cat_line("Annotator quality quartiles: ", paste(sprintf("%.3f", x$annotator_quality), collapse = ", "))
  if (x$type == "classes") {
    cli::cat_line("Item quality quartiles: ", paste(sprintf("%.3f", x$item_quality), collapse = ", "))
    cli::cat_line(sprintf("Expected number of wrong labels: %.1f", x$expected_wrong_labels))
    if (!is.null(x$tempering)) cli::cat_line(sprintf("Model tempering exponent: %.3f", x$tempering))
    cli::cat_line("Consensus labels:")
    print(x$consensus_table)
  } else {
    cli::cat_line("Interval width (min, median, max): ", paste(sprintf("%.4g", x$interval_width), collapse = ", "))
  }
  invisible(x)
}

#' @rdname consensus_labels
#' @param x,object A `consensus_labels()` result.
#' @param what Which table: `"items"`, `"annotators"` or `"labels"`.
#' @param row.names,optional Ignored (for the generic).
#' @export
as.data.frame.noisylabels_consensus <- function(x, row.names = NULL, optional = FALSE,
                                                what = c("items", "annotators", "labels"), ...) {
  check_consensus(x)
  what <- match_arg(what)
  x[[what]]
}

#' @rdname consensus_labels
#' @param which What to draw: `"annotators"` (quality against number of
#'   labels) or `"confusion"` (the crowd matrix and those of the `n` annotators
#'   with the most labels; classes only).
#' @param n Number of annotators' confusion matrices to draw.
#' @exportS3Method ggplot2::autoplot
autoplot.noisylabels_consensus <- function(object, which = c("annotators", "confusion"), n = 5, ...) {
  check_consensus(object)
  require_ggplot2()
  which <- match_arg(which)
  if (which == "annotators") {
    df <- object$annotators
    return(ggplot2::ggplot(df, ggplot2::aes(.data$n_labels, .data$quality)) +
             ggplot2::geom_point(alpha = 0.6) + ggplot2::scale_x_log10() +
             ggplot2::labs(x = "labels given (log scale)", y = "estimated quality",
                           title = "Annotator quality"))
  }
  if (object$type != "classes") {
    abort_input("Confusion matrices exist for class labels only; use {.code which = \"annotators\"}.",
                class = "noisylabels_error_choice")
  }
  check_count(n, "n", lower = 0)
  top <- utils::head(object$annotators$annotator[order(-object$annotators$n_labels)], n)
  mats <- c(list(crowd = object$crowd), lapply(top, function(a) object$confusion[, , a]))
  names(mats) <- c("crowd", as.character(top))
  df <- do.call(rbind, lapply(names(mats), function(nm) {
    m <- mats[[nm]]
    data.frame(panel = nm, true = rep(rownames(m), ncol(m)), given = rep(colnames(m), each = nrow(m)),
               estimate = as.vector(m), stringsAsFactors = FALSE)
  }))
  df$panel <- factor(df$panel, levels = names(mats))
  df$true <- factor(df$true, levels = rev(object$classes))
  df$given <- factor(df$given, levels = object$classes)
  ggplot2::ggplot(df, ggplot2::aes(.data$given, .data$true, fill = .data$estimate)) +
    ggplot2::geom_tile() + ggplot2::facet_wrap(~panel) +
    ggplot2::geom_text(ggplot2::aes(label = sprintf("%.2f", .data$estimate)), size = 3) +
    ggplot2::scale_fill_gradient(low = "white", high = "steelblue", limits = c(0, 1)) +
    ggplot2::labs(x = "label given", y = "true class", fill = "P", title = "Confusion matrices")
}

#' Doubtful labels and doubtful consensus labels
#'
#' `label_issues()` of a [consensus_labels()] result ranks, at `level =
#' "labels"`, the individual labels that are likely wrong and, at `level =
#' "items"`, the items whose consensus is doubtful, in the package's
#' label-issue format: `row`, `score` (= `p_wrong`), `flagged` (`q_value <=
#' fdr`), `given_label`, `suggested_label`, `p_wrong`, `q_value`, then `item`,
#' `annotator` (labels), `weight` (labels; the count of identical labels
#' with counts input), `n_labels` and `agreement` (items).
#'
#' For class labels, `p_wrong` of a label is 1 minus the posterior
#' probability of the class given (the suggested label is the consensus) and
#' that of an item 1 minus its `quality` (its given label is the weighted
#' majority vote). For numbers, a label's standardised residual \eqn{(y -
#' \mu_i - \beta_j) / \sigma_j} goes through the two-group model of the
#' numeric label-issue path, and the suggestion is the consensus value plus
#' the annotator's bias (`suggested_value`, with the consensus interval).
#' `find_label_issues()` adds the estimated number of wrong labels with its
#' interval (with counts input, labels are counted with their weights) and
#' makes a result that [review_report()] accepts.
#'
#' @param object,x A [consensus_labels()] result.
#' @param level `"labels"` or `"items"` (classes only).
#' @param fdr Flag labels with `q_value <= fdr`.
#' @param ... Unused.
#' @return `label_issues()`: a `noisylabels_issues` data frame sorted by
#'   decreasing score. `find_label_issues()`: a `find_label_issues` result.
#' @examples
#' set.seed(3)
#' truth <- sample(1:3, 150, replace = TRUE)
#' ann <- expand.grid(item = 1:150, annotator = 1:4)
#' ann$label <- ifelse(runif(600) < 0.8, truth[ann$item], sample(1:3, 600, TRUE))
#' fit <- consensus_labels(ann)
#' head(label_issues(fit))
#' head(label_issues(fit, level = "items"))
#' res <- find_label_issues(fit)
#' res$wrong_count$estimate
#' @export
label_issues.noisylabels_consensus <- function(object, level = c("labels", "items"), fdr = 0.1, ...) {
  check_consensus(object)
  level <- match_arg(level)
  check_fdr(fdr)
  if (object$type == "numeric") {
    if (level == "items") {
      abort_input(c("Numeric consensus values have intervals, not probabilities of being wrong.",
                    "i" = "Use {.code level = \"labels\"}, or rank {.code fit$items} by {.field se}."),
                  class = "noisylabels_error_choice")
    }
    return(cons_numeric_issues(object, fdr))
  }
  if (level == "items") {
    it <- object$items
    lab <- object$labels
    votes <- tapply(lab$weight, list(factor(lab$item, levels = it$item), lab$label), sum)
    votes[is.na(votes)] <- 0
    majority <- factor(object$classes[max.col(votes, ties.method = "first")], levels = object$classes)
    p <- 1 - it$quality
    q <- fdr_qvalues(p)
    return(new_label_issues(seq_len(nrow(it)), p, q <= fdr, given_label = majority,
                            suggested_label = it$consensus_label, p_wrong = p, q_value = q,
                            item = it$item, n_labels = it$n_labels, agreement = it$agreement))
  }
  lab <- object$labels
  p <- lab$p_wrong
  q <- cons_weighted_qvalues(p, lab$weight)
  cons <- object$items$consensus_label[match(as.character(lab$item), object$items$item)]
  new_label_issues(lab$row, p, q <= fdr, given_label = lab$label, suggested_label = cons,
                   p_wrong = p, q_value = q, item = lab$item, annotator = lab$annotator,
                   weight = lab$weight)
}

# q-values of rows that stand for `weight` identical labels each: those of
# the expanded labels, which are equal within a row.
cons_weighted_qvalues <- function(p, weight) {
  if (all(weight == 1)) return(fdr_qvalues(p))
  reps <- rep(seq_along(p), weight)
  q <- fdr_qvalues(p[reps])
  q[match(seq_along(p), reps)]
}

cons_numeric_issues <- function(object, fdr) {
  lab <- object$labels
  fit <- two_group_fit(lab$residual)
  p <- fit$p_wrong
  q <- fdr_qvalues(p)
  it <- object$items[match(as.character(lab$item), object$items$item), , drop = FALSE]
  out <- new_label_issues(lab$row, p, q <= fdr, given_label = lab$label,
                          suggested_label = lab$fitted, p_wrong = p, q_value = q,
                          item = lab$item, annotator = lab$annotator,
                          suggested_value = lab$fitted, consensus_value = it$consensus_value,
                          consensus_lower = it$lower, consensus_upper = it$upper,
                          residual = lab$residual)
  attr(out, "model_var") <- (length(p) * fit$weight_se)^2
  out
}

#' @rdname label_issues.noisylabels_consensus
#' @export
find_label_issues.noisylabels_consensus <- function(x, level = c("labels", "items"), fdr = 0.1, ...) {
  check_consensus(x)
  check_dots_empty("find_label_issues", ...)
  level <- match_arg(level)
  li <- label_issues(x, level = level, fdr = fdr)
  w <- if (level == "labels") li$weight else rep(1, nrow(li))
  count <- wrong_count(rep(li$p_wrong, w), 0.9, attr(li, "model_var") %||% 0)
  extra <- as.list(li)[setdiff(names(li), c("row", "score", "flagged"))]
  out <- do.call(new_label_issues, c(list(.row = li$row, .score = li$score, .flagged = li$flagged,
                                          label_quality = 1 - li$p_wrong), extra))
  what <- if (x$type == "classes") "Dawid-Skene, annotators shrunk toward the crowd" else
    "numeric consensus with annotator bias and scale"
  new_find_label_issues(list(
    label_issues = out, estimated_issues = as.integer(round(count$estimate)),
    wrong_count = count, fdr = fdr,
    task = if (x$type == "classes") "classification" else "regression",
    method = sprintf("consensus_labels() (%s%s), %s", what,
                     if (isTRUE(x$has_pred_probs)) " and model probabilities" else "", level),
    rank_by = "p_wrong", flag_by = sprintf("q_value <= %g (p_wrong of the consensus model)", fdr),
    fit = x, n = nrow(out), time = 0, call = match.call()))
}
