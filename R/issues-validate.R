# Input checks of the label-issue paths, the bottom layer of the issues
# family: every path (in memory, chunked, fitted models) validates through
# these before anything is allocated.

# Check (labels, pred_probs) for the classification path and return labels
# as integers 1..K, the probabilities as a double matrix, and the class names.
# Labels are matched to the column names when the matrix has them (factor or
# character labels), else they must be 1..K or 0..K-1 (cleanlab's coding),
# or the levels of a factor in order.
check_pred_probs <- function(labels, pred_probs, tol = 1e-3, call = parent.frame()) {
  if (is.data.frame(pred_probs)) pred_probs <- as.matrix(pred_probs)
  if (!is.matrix(pred_probs) || !is.numeric(pred_probs)) {
    abort_input(c("{.arg pred_probs} must be a numeric matrix with one column per class, not {.cls {class(pred_probs)}}.",
                  "i" = "For two classes with a vector of P(class 2), use {.code cbind(1 - p, p)}."),
                class = "noisylabels_error_pred_probs", call = call)
  }
  n <- nrow(pred_probs)
  k <- ncol(pred_probs)
  if (k < 2L) {
    abort_input("{.arg pred_probs} has {k} column{?s}; it needs one per class (at least 2).",
                class = "noisylabels_error_pred_probs", call = call)
  }
  if (is.null(labels) || (!is.atomic(labels) && !is.factor(labels))) {
    abort_input("{.arg labels} must be a vector or factor of class labels.", call = call)
  }
  if (length(labels) != n) {
    abort_input(c("{.arg labels} has length {length(labels)} but {.arg pred_probs} has {n} row{?s}.",
                  "i" = "Give one row of probabilities per labelled example, in the same order."),
                class = "noisylabels_error_length", call = call)
  }
  if (anyNA(labels)) {
    abort_input(c("{.arg labels} contains {sum(is.na(labels))} NA value{?s} (first at position {which(is.na(labels))[1]}).",
                  "i" = "Drop the unlabelled examples (and their rows of {.arg pred_probs}) first."),
                class = "noisylabels_error_na", call = call)
  }
  pred_probs <- check_prob_block(pred_probs, tol = tol, call = call)
  cn <- colnames(pred_probs)
  # Logical labels name their classes "FALSE" and "TRUE": matched to column
  # names when there are any, else FALSE is the first column and TRUE the
  # second, which only two columns allow.
  if (is.logical(labels)) {
    if (!is.null(cn)) {
      labels <- as.character(labels)
    } else if (k != 2L) {
      abort_input(c("Logical {.arg labels} need {.arg pred_probs} with two columns (FALSE, TRUE), not {k}.",
                    "i" = "Or name the columns {.val FALSE} and {.val TRUE}."),
                  class = "noisylabels_error_label_range", call = call)
    }
  }
  if (is.factor(labels) || is.character(labels)) {
    lab_chr <- as.character(labels)
    if (!is.null(cn)) {
      idx <- match(lab_chr, cn)
      classes <- cn
    } else if (is.factor(labels) && nlevels(labels) == k) {
      idx <- as.integer(labels)
      classes <- levels(labels)
    } else {
      abort_input(c("{.arg labels} are names but {.arg pred_probs} has no column names to match them to.",
                    "i" = "Set {.code colnames(pred_probs)} to the class names, or pass a factor whose levels are the columns in order."),
                  class = "noisylabels_error_label_range", call = call)
    }
    if (anyNA(idx)) {
      bad <- unique(lab_chr[is.na(idx)])
      abort_input(c("{cli::qty(length(bad))}Label{?s} {.val {bad}} {cli::qty(length(bad))}{?is/are} not among the columns of {.arg pred_probs} ({.val {classes}}).",
                    "i" = "Give {.arg pred_probs} one column per class, named by class."),
                  class = "noisylabels_error_label_range", call = call)
    }
  } else if (is.numeric(labels) || is.logical(labels)) {
    lab <- as.numeric(labels)
    if (any(lab != round(lab))) {
      abort_input(c("{.arg labels} must be class labels; found non-integer values.",
                    "i" = "For numeric labels (regression) pass {.arg predictions} instead of {.arg pred_probs}."),
                  class = "noisylabels_error_label_range", call = call)
    }
    base <- if (min(lab) == 0) 0 else 1
    idx <- as.integer(lab - base + 1)
    if (any(idx < 1L | idx > k)) {
      bad <- unique(lab[idx < 1L | idx > k])
      abort_input(c("{cli::qty(length(bad))}Label{?s} {.val {bad}} {cli::qty(length(bad))}{?is/are} outside the {k} column{?s} of {.arg pred_probs}.",
                    "i" = "Integer labels must be 1..{k} (or 0..{k - 1}), the column of their class."),
                  class = "noisylabels_error_label_range", call = call)
    }
    classes <- cn %||% as.character(seq_len(k) - 1 + base)
  } else {
    abort_input("{.arg labels} must be a factor, character, integer or logical vector, not {.cls {class(labels)}}.",
                call = call)
  }
  counts <- tabulate(idx, k)
  if (any(counts == 0L)) {
    empty <- classes[counts == 0L]
    abort_input(c("{cli::qty(length(empty))}Class{?es} {.val {empty}} {cli::qty(length(empty))}ha{?s/ve} no labelled example{?s}.",
                  "i" = "Drop the {cli::qty(length(empty))}column{?s} of {.arg pred_probs} for classes that never occur (and renormalise the rows), or add examples."),
                class = "noisylabels_error_empty_class", call = call)
  }
  list(labels = idx, pred_probs = pred_probs, classes = classes, counts = counts,
       factor = is.factor(labels), levels = if (is.factor(labels)) levels(labels) else NULL)
}

# The numeric checks of a block of probabilities (rows `offset + 1, ...` of
# the whole): finite, within [0, 1] up to `tol`, rows summing to 1. Returns
# the block clamped to [0, 1] as doubles.
check_prob_block <- function(pred_probs, tol = 1e-3, offset = 0L, call = parent.frame()) {
  r <- range(pred_probs)
  if (!all(is.finite(r))) {
    bad <- which(!is.finite(pred_probs), arr.ind = TRUE)[1, ]
    abort_input(c("{.arg pred_probs} contains NA, NaN or infinite values (first at row {bad[1] + offset}, column {bad[2]}).",
                  "i" = "Check the model that produced them; drop those rows or refit."),
                class = "noisylabels_error_na", call = call)
  }
  if (r[1] < -tol || r[2] > 1 + tol) {
    abort_input(c("{.arg pred_probs} must be probabilities in [0, 1]; found values from {signif(r[1], 3)} to {signif(r[2], 3)}.",
                  "i" = "Pass probabilities, not logits or scores (apply the softmax first)."),
                class = "noisylabels_error_pred_probs", call = call)
  }
  rs <- rowSums(pred_probs)
  off <- which(abs(rs - 1) > tol)
  if (length(off)) {
    abort_input(c("Rows of {.arg pred_probs} must sum to 1; {length(off)} row{?s} do{?es/} not (row {off[1] + offset} sums to {signif(rs[off[1]], 4)}).",
                  "i" = "Pass a full matrix of class probabilities (one column per class), or normalise with {.code p / rowSums(p)}."),
                class = "noisylabels_error_pred_probs", call = call)
  }
  if (r[1] < 0 || r[2] > 1) pred_probs <- pmin(pmax(pred_probs, 0), 1)
  storage.mode(pred_probs) <- "double"
  pred_probs
}

# The user's `fdr` argument: one number in (0, 1].
check_fdr <- function(fdr, call = parent.frame()) {
  check_number(fdr, "fdr", lower = 0, upper = 1, open_lower = TRUE, call = call)
}

check_result <- function(result, call = parent.frame()) {
  if (!inherits(result, "find_label_issues")) {
    abort_input("{.arg result} must come from {.fn find_label_issues}, not {.cls {class(result)}}.",
                call = call)
  }
}

require_suggested <- function(pkg, what, call = parent.frame()) {
  if (!requireNamespace(pkg, quietly = TRUE)) {
    abort_input("Reading {what} needs the {.pkg {pkg}} package.",
                class = "noisylabels_error_missing_package", call = call)
  }
}
