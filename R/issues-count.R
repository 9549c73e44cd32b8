# Confident learning, counting (Northcutt, Jiang & Chuang 2021, JAIR 70): per-class
# thresholds, the confident joint and its calibration, from a matrix of out-of-fold
# class probabilities. Pure R, vectorised over rows: every step is O(n K) or a
# per-class sort, so 50,000 x 10 takes a fraction of a second. The functions take
# checked input (integer labels in 1..K, a numeric n x K matrix whose rows sum to
# 1); check_pred_probs() in issues-filter.R does the checking.


# Per-class thresholds t_j: the mean probability of class j over the examples
# labelled j (paper eq. 2).
cl_thresholds <- function(labels, pred_probs) {
  k <- ncol(pred_probs)
  cnt <- tabulate(labels, k)
  # p[i, labels[i]] summed per class, without forming an n x K mask; one
  # zero per class appended so that a class absent from the rows (a subsample
  # of cl_rank_weight()) gets threshold 1: nothing is confidently of it.
  self <- pred_probs[cbind(seq_along(labels), labels)]
  s <- as.numeric(rowsum(c(self, numeric(k)), factor(c(labels, seq_len(k)), levels = seq_len(k)),
                         reorder = TRUE))
  ifelse(cnt > 0, s / pmax(cnt, 1), 1)
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
  thr <- cl_thresholds(labels, pred_probs)
  cj <- cl_confident_joint(labels, pred_probs, thr)
  cl_estimate_from(thr, cj$joint, cj$confident, tabulate(labels, ncol(pred_probs)), classes)
}

# The same from the per-class thresholds, the confident joint and the
# per-example confident classes (computed in memory or chunk by chunk).
cl_estimate_from <- function(thr, joint, confident, counts, classes) {
  cal <- cl_calibrate(joint, counts)
  q <- cal / sum(cal)
  dn <- list(given = classes, true = classes)
  dimnames(joint) <- dn
  dimnames(cal) <- dn
  dimnames(q) <- dn
  col_tot <- colSums(q)
  noise <- sweep(q, 2, ifelse(col_tot > 0, col_tot, 1), "/")
  inverse <- q / ifelse(rowSums(q) > 0, rowSums(q), 1)
  off <- sum(cal) - sum(diag(cal))
  list(thresholds = stats::setNames(thr, classes), confident_joint = joint,
       calibrated_joint = cal, joint = q, noise_matrix = noise, inverse_noise_matrix = inverse,
       confident_class = confident, n_issues = as.integer(round(off)))
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
