#' How well do noise scores find the corrupted labels?
#'
#' The detection quantities reported by the papers: ROC AUC of the scores as a
#' classifier of corrupted labels, precision at given recall levels, and
#' (when the inferred and actual noise are given) the coefficient of
#' determination between them as in Tang et al., Table 1.
#'
#' Precision at recall r is read off the ranking by decreasing score: the
#' precision of the shortest prefix that holds at least a fraction r of the
#' corrupted labels (ties are broken by the original order).
#' R-squared is `1 - SS_res/SS_tot` (it can be negative), not a squared
#' correlation.
#'
#' @param scores Numeric scores, larger = more likely corrupted.
#' @param truth Logical (or 0/1) vector, `TRUE` for corrupted labels, or an
#'   integer vector of the corrupted indices.
#' @param recall Recall levels at which to report precision.
#' @param inferred,actual Optional inferred and actual noise (e.g. the fitted
#'   noise variance and the squared injected noise) for `r_squared`.
#' @return A one-row data frame: `auc`, `precision_at_<r>` columns, `r_squared`
#'   (NA unless `inferred` and `actual` are given), `n`, `n_corrupted`.
#' @examples
#' truth <- c(TRUE, FALSE, FALSE, TRUE, FALSE)
#' detection_metrics(c(0.9, 0.1, 0.3, 0.8, 0.2), truth)
#' @export
detection_metrics <- function(scores, truth, recall = c(0.7, 0.95), inferred = NULL,
                              actual = NULL) {
  if (!is.numeric(scores) || anyNA(scores)) abort_input("{.arg scores} must be numeric without NA.")
  n <- length(scores)
  if (!(is.logical(truth) || is.numeric(truth)) || !is.null(dim(truth))) {
    abort_input("{.arg truth} must be a logical vector (one entry per score) or the indices of the corrupted labels.")
  }
  if (is.numeric(truth) && anyNA(truth)) abort_input("{.arg truth} contains NA.")
  if (!is.numeric(recall) || !length(recall) || anyNA(recall) || any(recall <= 0 | recall > 1)) {
    abort_input("{.arg recall} must be numbers in (0, 1].")
  }
  for (a in c("inferred", "actual")) {
    v <- get(a)
    if (!is.null(v) && (!is.numeric(v) || any(!is.finite(v)))) {
      abort_input("{.arg {a}} must be a vector of finite numbers.")
    }
  }
  if (is.numeric(truth) && !all(truth %in% c(0, 1)) || (is.numeric(truth) && length(truth) != n)) {
    if (any(truth < 1 | truth > n | truth != round(truth))) {
      abort_input("Indices in {.arg truth} must lie in 1..{n}.")
    }
    lab <- logical(n); lab[truth] <- TRUE
  } else {
    lab <- as.logical(truth)
  }
  if (length(lab) != n) abort_input("{.arg truth} must have one entry per score ({n}).")
  if (anyNA(lab)) abort_input("{.arg truth} contains NA.")
  # Counts as doubles: npos * nneg overflows R's integers from about 5e4 x 5e4.
  npos <- as.numeric(sum(lab)); nneg <- n - npos
  auc <- if (npos == 0 || nneg == 0) NA_real_ else {
    r <- rank(scores)
    (sum(r[lab]) - npos * (npos + 1) / 2) / (npos * nneg)
  }
  ord <- order(-scores, seq_len(n))
  hits <- cumsum(lab[ord])
  prec <- vapply(recall, function(rr) {
    if (npos == 0) return(NA_real_)
    k <- which(hits >= rr * npos - 1e-12)[1]
    hits[k] / k
  }, numeric(1))
  out <- data.frame(auc = auc)
  for (i in seq_along(recall)) out[[sprintf("precision_at_%g", 100 * recall[i])]] <- prec[i]
  out$r_squared <- NA_real_
  if (!is.null(inferred) || !is.null(actual)) {
    if (length(inferred) != length(actual)) abort_input("{.arg inferred} and {.arg actual} must have equal lengths.")
    out$r_squared <- 1 - sum((actual - inferred)^2) / sum((actual - mean(actual))^2)
  }
  out$n <- n
  out$n_corrupted <- npos
  out
}
