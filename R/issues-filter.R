# Confident learning, filtering: which labels to flag (prune by noise rate,
# prune by class, or the lowest-quality ones), the classification path of
# find_label_issues() that ties count, rank and filter together, and the
# checks of (labels, pred_probs).

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

# Label scores of a block of rows, each row on its own given the thresholds
# and the ranking's noise matrix: label_quality by `rank_by` (the raw
# ranking, calibrated later in cl_result()), and the model's most probable
# classes.
cl_score_block <- function(lab, p, cl, model, rank_by, adjust) {
  probs <- if (adjust) cl_adjust(p, cl$thresholds) else p
  quality <- if (rank_by == "posterior") cl_posterior(lab, probs, model$noise)
             else cl_quality(lab, probs, rank_by)
  c(list(quality = quality, prob_given = p[cbind(seq_along(lab), lab)]),
    cl_argmax_block(lab, p))
}

# The decision from the raw per-label scores (in memory or gathered chunk by
# chunk; `sc` a list or an environment of equal-length vectors): the count
# bracket, p_wrong calibrated to it, q-values and flags. Returns the
# per-label vectors of the result and the count.
cl_decide <- function(sc, counts, labels_int, cl, flag_by, n_issues, fdr, call = NULL) {
  n <- length(sc$quality)
  count <- cl_count_bracket(sum(cl$confident_joint) - sum(diag(cl$confident_joint)),
                            sum(sc$best != labels_int), n)
  cap <- (counts / (counts + 1))[labels_int]
  p_wrong <- cl_calibrate_pwrong(1 - sc$quality, count$estimate, cap)
  q_value <- fdr_qvalues(p_wrong)
  # No label is flagged on p_wrong when the confident count is consistent
  # with zero (its own interval, c +- z sqrt(c), reaches 0: fewer than three
  # labels at the 90% level) or a class has fewer than cl_min_class_count
  # labels (too few to tell a wrong label from the model's own error;
  # cl_warn_small() says so).
  z <- stats::qnorm(1 - (1 - count$level) / 2)
  evidence <- count$confident_count - z * sqrt(count$confident_count) > 0 &&
    all(counts >= cl_min_class_count)
  fdr_ok <- cl_fdr_supported(count)
  m <- n_issues %||% as.integer(round(count$estimate))
  flagged <- switch(flag_by,
    posterior = evidence & p_wrong > 0.5,
    fdr = if (evidence && fdr_ok) q_value <= fdr else logical(n),
    expected_f1 = if (evidence) flag_expected_f1(p_wrong) else logical(n),
    rank = flag_lowest(1 - p_wrong, m),
    confident_joint = !is.na(cl$confident_class) & cl$confident_class != labels_int,
    NULL)
  if (!is.null(n_issues) && flag_by %in% c("posterior", "fdr", "expected_f1")) {
    flagged <- flag_lowest(1 - p_wrong, n_issues)
  }
  list(p_wrong = p_wrong, q_value = q_value, flagged = flagged, count = count, m = m,
       evidence = evidence, fdr_supported = fdr_ok)
}

# A label believed wrong is suggested the model's most probable other class;
# one distribution gives both probabilities: the given class 1 - p_wrong, the
# other classes p_wrong shared as the model shares its probability among
# them.
cl_suggestion <- function(sc, p_wrong, flagged, labels_int, k) {
  share <- ifelse(sc$p_other > 0, sc$prob_other / sc$p_other, 1 / (k - 1))
  prob_other <- p_wrong * pmin(share, 1)
  use_other <- flagged | prob_other > 1 - p_wrong
  list(suggested = ifelse(use_other, sc$other, labels_int),
       prob_suggested = ifelse(use_other, prob_other, 1 - p_wrong))
}

# The result from per-label scores (in memory). `flagged` is NULL for the
# rules that need only the scores.
cl_result <- function(labels, chk, sc, flagged, cl, model, rank_by, adjust, flag_by, n_issues,
                      fdr, method, pred_probs) {
  n <- length(sc$quality)
  k <- length(chk$classes)
  dec <- cl_decide(sc, chk$counts, chk$labels, cl, flag_by, n_issues, fdr)
  flagged <- flagged %||% dec$flagged
  if (flag_by == "consensus") flagged <- flagged & flag_lowest(1 - dec$p_wrong, dec$m)
  sug <- cl_suggestion(sc, dec$p_wrong, flagged, chk$labels, k)
  as_label <- function(i) {
    if (chk$factor) factor(chk$classes[i], levels = chk$classes) else chk$classes[i]
  }
  li <- new_label_issues(seq_len(n), dec$p_wrong, flagged,
                         given_label = labels, suggested_label = as_label(sug$suggested),
                         p_wrong = dec$p_wrong, q_value = dec$q_value,
                         label_quality = 1 - dec$p_wrong, prob_given = 1 - dec$p_wrong,
                         prob_suggested = sug$prob_suggested, model_prob_given = sc$prob_given)
  cl_warn_small(chk$counts, chk$classes)
  new_find_label_issues(list(
    label_issues = li, estimated_issues = as.integer(round(dec$count$estimate)),
    wrong_count = dec$count, fdr = fdr, fdr_supported = dec$fdr_supported,
    evidence = dec$evidence, task = "classification", method = method, rank_by = rank_by,
    adjust = adjust, flag_by = flag_by, pred_probs = pred_probs, labels = labels,
    classes = chk$classes, confident_learning = cl, noise_model = model, n = n))
}

# Fewer than cl_min_class_count labels of a class: the ranking and the count
# rest on a handful of examples.
cl_min_class_count <- 10L

cl_warn_small <- function(counts, classes) {
  small <- classes[counts < cl_min_class_count]
  if (length(small)) {
    cli::cli_warn(c("{cli::qty(length(small))}Class{?es} {.val {small}} {cli::qty(length(small))}ha{?s/ve} fewer than {cl_min_class_count} labels: too few for the model to say which labels are wrong.",
                 "i" = "p_wrong is capped at n / (n + 1) for a class of n labels; read the ranking, not the flags, and add labelled examples."),
                  class = c("noisylabels_warning_small_sample", "noisylabels_warning_input",
                            "noisylabels_warning"))
  }
}


