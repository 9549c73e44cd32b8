# Confident learning, ranking: class-adjusted probabilities, the posterior
# that the given label is the true one, and label quality scores in [0, 1].

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
  n <- length(labels)
  tm <- cl_shrunk_noise(calibrated)
  joint <- tm[labels, , drop = FALSE] * pred_probs
  den <- rowSums(joint)
  den[den <= 0] <- 1
  post <- joint / den
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
