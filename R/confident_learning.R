# Confident learning (Northcutt, Jiang & Chuang 2021, JAIR 70) on a matrix of
# out-of-fold class probabilities. Pure R, vectorised over rows: every step is
# O(n K) or a per-class sort, so 50,000 x 10 takes a fraction of a second.
# The functions here take checked input (integer labels in 1..K, a numeric
# n x K matrix whose rows sum to 1); check_pred_probs() does the checking.

# Per-class thresholds t_j: the mean probability of class j over the examples
# labelled j (paper eq. 2).
cl_thresholds <- function(labels, pred_probs) {
  k <- ncol(pred_probs)
  cnt <- tabulate(labels, k)
  # p[i, labels[i]] summed per class, without forming an n x K mask.
  self <- pred_probs[cbind(seq_along(labels), labels)]
  as.numeric(rowsum(self, factor(labels, levels = seq_len(k)), reorder = TRUE)) / cnt
}

# The confident joint C[i, j]: examples labelled i whose probability of class
# j reaches t_j, each counted once under the class (among those reaching their
# threshold) with the largest probability (eq. 1; ties go to the lowest
# column). Examples with no class at its threshold are not counted.
# Returns the K x K count matrix and, per example, its confident class (NA
# when none).
cl_confident_joint <- function(labels, pred_probs, thresholds) {
  k <- ncol(pred_probs)
  above <- pred_probs >= rep(thresholds, each = nrow(pred_probs)) - 1e-12
  masked <- pred_probs
  masked[!above] <- -1
  confident <- max.col(masked, ties.method = "first")
  confident[rowSums(above) == 0L] <- NA_integer_
  ok <- !is.na(confident)
  joint <- matrix(tabulate((confident[ok] - 1L) * k + labels[ok], k * k), k, k)
  list(joint = joint, confident = confident)
}

# Calibrate the confident joint so that row i sums to the number of examples
# labelled i (eq. 3), and divide by n for the joint distribution Q[s, y] of
# given and true label. Rows with no confident count keep their mass on the
# diagonal (no evidence of noise in that class).
cl_calibrate <- function(joint, label_counts) {
  rs <- rowSums(joint)
  cal <- joint
  empty <- rs == 0
  cal[!empty, ] <- joint[!empty, , drop = FALSE] / rs[!empty] * label_counts[!empty]
  if (any(empty)) cal[cbind(which(empty), which(empty))] <- label_counts[empty]
  cal
}

# Everything confident learning estimates from (labels, pred_probs): the
# thresholds, the raw and calibrated confident joint, the joint Q = P(s, y),
# the noise matrix P(s | y) (columns sum to 1), the inverse noise matrix
# P(y | s) (rows sum to 1), and the estimated number of wrong labels: the
# off-diagonal mass of the calibrated joint (`"off_diagonal"`).
cl_estimate <- function(labels, pred_probs, classes) {
  k <- ncol(pred_probs)
  n <- length(labels)
  counts <- tabulate(labels, k)
  thr <- cl_thresholds(labels, pred_probs)
  cj <- cl_confident_joint(labels, pred_probs, thr)
  cal <- cl_calibrate(cj$joint, counts)
  q <- cal / sum(cal)
  dn <- list(given = classes, true = classes)
  dimnames(cj$joint) <- dn
  dimnames(cal) <- dn
  dimnames(q) <- dn
  col_tot <- colSums(q)
  noise <- sweep(q, 2, ifelse(col_tot > 0, col_tot, 1), "/")
  inverse <- q / ifelse(rowSums(q) > 0, rowSums(q), 1)
  off <- sum(cal) - sum(diag(cal))
  list(thresholds = stats::setNames(thr, classes), confident_joint = cj$joint,
       calibrated_joint = cal, joint = q, noise_matrix = noise, inverse_noise_matrix = inverse,
       confident_class = cj$confident, n_issues = as.integer(round(off)))
}

# Threshold-adjusted probabilities (cleanlab's adjust_pred_probs): subtract
# each class's threshold, shift each row to be non-negative and renormalise.
# Under class imbalance the plain probabilities are smaller for minority
# classes whatever the label quality; subtracting t_j puts every class on the
# scale "how far above what a correct label of this class usually gets".
cl_adjust <- function(pred_probs, thresholds) {
  a <- pred_probs - rep(thresholds, each = nrow(pred_probs))
  a <- a - pmin(apply(a, 1L, min), 0)
  s <- rowSums(a)
  s[s <= 0] <- 1
  a / s
}

# Posterior probability that each given label is correct under confident
# learning's own model of class-conditional noise: with T = P(given | true)
# and the predicted probabilities read as P(true | x),
#   P(true = s_i | x_i, s_i) = T[s_i, s_i] p_i,s_i / sum_j T[s_i, j] p_ij.
# T comes from the calibrated joint with every off-diagonal cell of column j
# raised by the mean off-diagonal count of that column (a Dirichlet
# pseudo-count, empirical Bayes): cells estimated from few examples are shrunk
# toward uniform flips. Without it, sampling noise in a 10 x 10 matrix
# reorders labels under uniform noise, where the exact T would not change the
# self-confidence ranking; with it, simulated uniform noise keeps the
# self-confidence AUROC (within 5e-4) and class-conditional noise raises it
# (0.976 -> 0.990 with 10 classes; tests/testthat/test-find_label_issues.R).
# Returns the posterior of the given label, the most probable true class and
# the n x K matrix of posteriors P(true = j | x_i, s_i).
cl_posterior <- function(labels, pred_probs, calibrated) {
  k <- ncol(pred_probs)
  n <- length(labels)
  cs <- calibrated
  for (j in seq_len(k)) {
    off <- seq_len(k)[-j]
    cs[off, j] <- cs[off, j] + mean(calibrated[off, j])
  }
  tot <- colSums(cs)
  tm <- sweep(cs, 2, ifelse(tot > 0, tot, 1), "/")
  joint <- tm[labels, , drop = FALSE] * pred_probs
  den <- rowSums(joint)
  post <- joint / ifelse(den > 0, den, 1)
  list(quality = pmin(pmax(post[cbind(seq_len(n), labels)], 0), 1),
       suggested = max.col(post, ties.method = "first"), matrix = post)
}

# Label quality scores in [0, 1] (1 = clean) for the given labels.
# self_confidence: p[given]; normalized_margin: (p[given] - max_{j != given}
# p[j] + 1) / 2.
cl_quality <- function(labels, probs, rank_by) {
  n <- length(labels)
  self <- probs[cbind(seq_len(n), labels)]
  if (rank_by == "self_confidence") return(self)
  other <- probs
  other[cbind(seq_len(n), labels)] <- -Inf
  (self - apply(other, 1L, max) + 1) / 2
}

# Prune by noise rate (paper section 3.2, "PBNR"): for every off-diagonal cell
# (given i, true j) of the calibrated joint, flag the round(C[i, j]) examples
# labelled i with the largest margin p[j] - p[i]. At most count_i - 1
# examples of class i are flagged in total, so no class is emptied.
cl_prune_by_noise_rate <- function(labels, pred_probs, calibrated) {
  n <- length(labels)
  k <- ncol(pred_probs)
  flagged <- logical(n)
  for (i in seq_len(k)) {
    rows <- which(labels == i)
    if (length(rows) < 2L) next
    want <- round(calibrated[i, ])
    want[i] <- 0
    total <- sum(want)
    if (total == 0) next
    if (total > length(rows) - 1L) want <- floor(want * (length(rows) - 1L) / total)
    for (j in which(want > 0)) {
      margin <- pred_probs[rows, j] - pred_probs[rows, i]
      take <- rows[order(-margin, rows)[seq_len(min(want[j], length(rows)))]]
      flagged[take] <- TRUE
    }
  }
  flagged
}

# Prune by class (PBC): in each class i, flag the round(sum_{j != i} C[i, j])
# examples with the lowest self-confidence.
cl_prune_by_class <- function(labels, pred_probs, calibrated) {
  n <- length(labels)
  flagged <- logical(n)
  self <- pred_probs[cbind(seq_len(n), labels)]
  for (i in seq_len(ncol(pred_probs))) {
    rows <- which(labels == i)
    m <- min(round(sum(calibrated[i, -i])), length(rows) - 1L)
    if (m <= 0) next
    flagged[rows[order(self[rows], rows)[seq_len(m)]]] <- TRUE
  }
  flagged
}

# Flags by the ranking: the `m` examples of lowest quality (ties by row).
flag_lowest <- function(quality, m) {
  flagged <- logical(length(quality))
  if (m > 0) flagged[order(quality, seq_along(quality))[seq_len(min(m, length(quality)))]] <- TRUE
  flagged
}

#' Confident learning estimates from out-of-fold class probabilities
#'
#' The quantities of confident learning (Northcutt, Jiang and Chuang 2021) for
#' given labels and out-of-fold predicted probabilities: per-class thresholds
#' `t_j` (the mean predicted probability of class `j` over the examples
#' labelled `j`), the confident joint (examples labelled `i` whose probability
#' of class `j` reaches `t_j`, counted under the most probable such class),
#' its calibration to the class counts, the joint distribution of given and
#' true label, the noise matrix and its inverse.
#'
#' @inheritParams find_label_issues
#' @return A list: `thresholds`; `confident_joint` (counts, rows = given
#'   label, columns = true label); `calibrated_joint` (rows sum to the class
#'   counts); `joint` (`calibrated_joint / n`, an estimate of P(given, true));
#'   `noise_matrix` (P(given | true), columns sum to 1); `inverse_noise_matrix`
#'   (P(true | given), rows sum to 1); `n_issues` (off-diagonal sum of the
#'   calibrated joint, rounded); `confident_class` (per example, the class it
#'   was counted under, `NA` if none reached its threshold).
#' @references Northcutt, C., Jiang, L. and Chuang, I. (2021). Confident
#'   learning: estimating uncertainty in dataset labels. Journal of Artificial
#'   Intelligence Research 70, 1373-1411. \doi{10.1613/jair.1.12125}
#' @examples
#' p <- rbind(c(0.9, 0.1), c(0.8, 0.2), c(0.3, 0.7), c(0.2, 0.8), c(0.85, 0.15))
#' confident_joint(labels = c(1, 1, 2, 2, 2), pred_probs = p)$confident_joint
#' @export
confident_joint <- function(labels, pred_probs) {
  chk <- check_pred_probs(labels, pred_probs)
  cl_estimate(chk$labels, chk$pred_probs, chk$classes)
}

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
  if (anyNA(pred_probs) || any(!is.finite(pred_probs))) {
    bad <- which(!is.finite(pred_probs), arr.ind = TRUE)[1, ]
    abort_input(c("{.arg pred_probs} contains NA, NaN or infinite values (first at row {bad[1]}, column {bad[2]}).",
                  "i" = "Check the model that produced them; drop those rows or refit."),
                class = "noisylabels_error_na", call = call)
  }
  if (any(pred_probs < -tol) || any(pred_probs > 1 + tol)) {
    abort_input(c("{.arg pred_probs} must be probabilities in [0, 1]; found values from {signif(min(pred_probs), 3)} to {signif(max(pred_probs), 3)}.",
                  "i" = "Pass probabilities, not logits or scores (apply the softmax first)."),
                class = "noisylabels_error_pred_probs", call = call)
  }
  rs <- rowSums(pred_probs)
  off <- which(abs(rs - 1) > tol)
  if (length(off)) {
    abort_input(c("Rows of {.arg pred_probs} must sum to 1; {length(off)} row{?s} do{?es/} not (row {off[1]} sums to {signif(rs[off[1]], 4)}).",
                  "i" = "Pass a full matrix of class probabilities (one column per class), or normalise with {.code p / rowSums(p)}."),
                class = "noisylabels_error_pred_probs", call = call)
  }
  pred_probs <- pmin(pmax(pred_probs, 0), 1)
  storage.mode(pred_probs) <- "double"
  cn <- colnames(pred_probs)
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
