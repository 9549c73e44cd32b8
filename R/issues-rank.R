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

# Posterior probability that each given label is correct under a model of
# class-conditional noise: with T = P(given | true) (`noise`, columns sum to
# 1) and the predicted probabilities read as P(true | x),
#   P(true = s_i | x_i, s_i) = T[s_i, s_i] p_i,s_i / sum_j T[s_i, j] p_ij.
# The noise matrix comes from cl_rank_model() (R/issues-pwrong.R).
cl_posterior <- function(labels, pred_probs, noise) {
  n <- length(labels)
  joint <- noise[labels, , drop = FALSE] * pred_probs
  den <- rowSums(joint)
  den[den <= 0] <- 1
  pmin(pmax(joint[cbind(seq_len(n), labels)] / den, 0), 1)
}

# The model's most probable class and most probable other class per row,
# with that class's probability and the probability the model gives to the
# classes other than the given one (as the chunked kernel cl_score_rows()
# forms them).
cl_argmax_block <- function(labels, pred_probs) {
  n <- length(labels)
  own <- cbind(seq_len(n), labels)
  best <- max.col(pred_probs, ties.method = "first")
  p_other <- pmin(pmax(1 - pred_probs[own], 0), 1)
  pred_probs[own] <- -Inf
  other <- max.col(pred_probs, ties.method = "first")
  list(best = best, other = other, prob_other = pred_probs[cbind(seq_len(n), other)],
       p_other = p_other)
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
