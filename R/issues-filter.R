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

# Flags by the ranking: the `m` examples of lowest quality (ties by row).
flag_lowest <- function(quality, m) {
  flagged <- logical(length(quality))
  if (m > 0) flagged[order(quality, seq_along(quality))[seq_len(min(m, length(quality)))]] <- TRUE
  flagged
}

issues_classification <- function(labels, pred_probs, rank_by, adjust, flag_by, n_issues,
                                  method, fdr = 0.1) {
  if (is.character(pred_probs) || is.function(pred_probs)) {
    return(issues_classification_chunked(labels, pred_probs, rank_by, adjust, flag_by,
                                         n_issues, method, fdr, call = parent.frame(2)))
  }
  chk <- check_pred_probs(labels, pred_probs, call = parent.frame(2))
  lab <- chk$labels
  p <- chk$pred_probs
  cl <- cl_estimate(lab, p, chk$classes)
  fit <- cl_fit_rows(length(lab))
  model <- cl_rank_model(lab[fit], p[fit, , drop = FALSE], cl$calibrated_joint)
  sc <- cl_score_block(lab, p, cl, model, rank_by, adjust)
  flagged <- switch(flag_by,
    consensus = cl_prune_by_noise_rate(lab, p, cl$calibrated_joint),
    prune_by_noise_rate = cl_prune_by_noise_rate(lab, p, cl$calibrated_joint),
    prune_by_class = cl_prune_by_class(lab, p, cl$calibrated_joint),
    both = cl_prune_by_noise_rate(lab, p, cl$calibrated_joint) &
      cl_prune_by_class(lab, p, cl$calibrated_joint),
    NULL)
  cl_result(labels, chk, sc, flagged, cl, model, rank_by, adjust, flag_by, n_issues, fdr,
            method, pred_probs = p)
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
  # No label is flagged on p_wrong when the count's interval reaches 0
  # (nothing then says that any label is wrong) or a class has fewer than
  # cl_min_class_count labels (too few to tell a wrong label from the model's
  # own error; cl_warn_small() says so).
  evidence <- count$lower > 0 && all(counts >= cl_min_class_count)
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
                         label_quality = 1 - dec$p_wrong, given_label = labels,
                         suggested_label = as_label(sug$suggested),
                         prob_given = 1 - dec$p_wrong, p_wrong = dec$p_wrong,
                         q_value = dec$q_value, prob_suggested = sug$prob_suggested,
                         model_prob_given = sc$prob_given)
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

# Out-of-fold class probabilities from the package's own or a suggested model.

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
