#' Consensus labels, label quality and annotator quality from several annotators
#'
#' When each item was labelled by several people, `consensus_labels()`
#' estimates each item's true label, how sure that estimate is, and how good
#' each annotator is, from the labels alone or together with a model's
#' out-of-fold predicted probabilities.
#'
#' **Classes.** A Dawid-Skene model (Dawid and Skene 1979) fitted by EM in
#' C++: annotator \eqn{j} gives label \eqn{l} to an item of true class \eqn{k}
#' with probability \eqn{\pi_j[k, l]}. Textbook Dawid-Skene fits
#' \eqn{K(K-1)} free parameters per annotator and overfits annotators with few
#' labels. Here each row \eqn{\pi_j[k, ]} is shrunk toward the crowd's matrix
#' \eqn{\pi_0[k, ]} by the penalty \eqn{-s\,\mathrm{KL}(\pi_0[k, ] \|
#' \pi_j[k, ])} (the log density of a Dirichlet\eqn{(s \pi_0[k, ])} prior in
#' \eqn{\pi_j}), `s = shrinkage` pseudo-labels per row: an annotator with
#' few labels of a class is described by the crowd, one with many by their own
#' counts. \eqn{\pi_0} is estimated with them (the normalised geometric mean of
#' the annotators' rows, which maximises the penalty). Every block of the EM
#' step has a closed form and raises one objective (log marginal likelihood
#' plus penalties), recorded in `objective`.
#'
#' **A model's probabilities.** With `pred_probs`, the prior class
#' probabilities of item \eqn{i} are \eqn{\mathrm{softmax}(b + \gamma \log
#' p_i)}: the model is one more source of evidence, weighted by the learned
#' exponent \eqn{\gamma \ge 0} (`tempering`; 0 = the model is ignored, 1 = its
#' probabilities are taken as calibrated, above 1 = it is more reliable than
#' its probabilities say). \eqn{b} and \eqn{\gamma} maximise the expected log
#' prior at each M-step (a concave problem, damped Newton steps).
#'
#' **Numbers.** \eqn{y_{ij} = \mu_i + \beta_j + \sigma_j \epsilon_{ij}},
#' \eqn{\epsilon} Student-t with `df` degrees of freedom (robust to wild
#' labels; `df = Inf` is Gaussian), annotator biases \eqn{\beta_j} (centred:
#' only differences between annotators are identified) and scales
#' \eqn{\sigma_j} with an inverse-gamma prior of shape `scale_shape` centred on
#' a common \eqn{\sigma_0} (estimated). The consensus value \eqn{\mu_i} comes
#' with a standard error from the Fisher information of its labels and a
#' `level` interval.
#'
#' **Documented behaviour at the edges.** One annotator: the classes model is
#' identified only through the class prior, so the consensus is that
#' annotator's label (no error). Items with one label: their consensus follows
#' that label unless its annotator's confusion matrix (or the model) says
#' otherwise; their `quality` says how much to trust it. An annotator with one
#' label: described by the crowd matrix (classes) or by \eqn{\sigma_0}
#' (numbers). A repeated (item, annotator) pair counts as two labels. `NA` in
#' a long data frame, labels outside `classes`, and `pred_probs` that do not
#' match the items are classed errors.
#'
#' @param annotations The labels, in one of three layouts (see `format`):
#'   a long data frame with columns `item`, `annotator`, `label` (one row per
#'   label); a wide item x annotator matrix or data frame with `NA` for "not
#'   labelled" (row names = items, column names = annotators); or an item x
#'   class matrix of counts when annotators are anonymous (column names =
#'   classes), as in CIFAR-10H. Counts are treated as labels of one anonymous
#'   annotator, so they give the same fit as the long data with that annotator.
#' @param pred_probs Optional item x class matrix of a model's out-of-fold
#'   probabilities (classes only): one row per item in sorted item order, or
#'   rows named by item; columns in the order of the classes, or named by them.
#' @param format `"auto"` (a data frame with columns `item`, `annotator`,
#'   `label` is long, anything else wide), `"long"`, `"wide"` or `"counts"`.
#' @param type `"auto"`, `"classes"` or `"numeric"`. `"auto"` takes numeric
#'   labels as numbers when they are not all whole numbers or have more than
#'   20 distinct values, and as classes otherwise; counts are classes.
#' @param classes The possible classes (classes only; default: the labels
#'   seen, sorted). A label outside them is an error.
#' @param shrinkage Pseudo-labels per row of each annotator's confusion matrix
#'   given to the crowd's (classes); `0` is textbook Dawid-Skene with a small
#'   `smoothing`.
#' @param smoothing Pseudo-count added to every confusion cell (> 0).
#' @param tempering `NULL` (default) learns the model's exponent \eqn{\gamma};
#'   a number >= 0 fixes it.
#' @param df Degrees of freedom of the numeric noise (> 0, `Inf` = Gaussian).
#' @param bias Fit per-annotator biases (numbers)? With `FALSE` the
#'   annotators table still reports each annotator's mean offset from the
#'   consensus as `bias`, but the consensus does not correct for it (on the
#'   emotion dev data, correcting made the consensus worse:
#'   `inst/experiments/consensus/README.md`).
#' @param scale_shape Shape of the inverse-gamma prior on the annotators'
#'   variances (numbers; larger = scales closer to the common one).
#' @param level Level of the consensus value's interval (numbers).
#' @param max_iter,tol EM iterations at most, and the relative change of the
#'   objective that stops them.
#' @param threads Cores the call may use (default
#'   `getOption("noisylabels.threads", 1)`): the OpenMP team of the class
#'   model; see "Threads" in [noisylabels-package].
#' @param verbose Progress bar (`NULL`: the package option, see
#'   [noisylabels-progress]).
#' @param ... Must be empty.
#' @return An object of class `noisylabels_consensus` with
#'   * `items`: `item`, `consensus_label` (or `consensus_value`, `se`,
#'     `lower`, `upper`), `quality` (classes: the posterior probability that
#'     the consensus is right), `agreement` (share of the item's labels equal
#'     to the consensus; numbers: within one scale of it), `n_labels`, and the
#'     posterior per class (`prob_<class>`);
#'   * `annotators`: `annotator`, `quality` (classes: the expected share of
#'     the annotator's labels that are right, mean posterior probability of
#'     the labels given; numbers: \eqn{\sigma_0 / \sigma_j}), `n_labels`,
#'     `agreement` with the consensus, and for numbers `bias`, `scale`;
#'   * `labels`: one row per label in the input's order (`row`: row of the
#'     long data, cell of the wide or counts matrix), with `p_wrong` (classes:
#'     1 minus the posterior probability of the label given);
#'   * `confusion` (K x K x annotators array, rows = true class), `crowd`
#'     (the shared matrix), `class_prior`, `tempering`, `objective`,
#'     `iterations`, `converged`, and the settings.
#'   Methods: [print()], [summary()], [autoplot()], [as.data.frame()],
#'   [label_issues()] and [find_label_issues()] (so [review_report()] works).
#' @references Dawid, A. P. and Skene, A. M. (1979). Maximum likelihood
#'   estimation of observer error-rates using the EM algorithm. *Applied
#'   Statistics* 28(1), 20-28.
#' @examples
#' set.seed(1)
#' truth <- sample(c("a", "b", "c"), 200, replace = TRUE)
#' ann <- expand.grid(item = 1:200, annotator = paste0("r", 1:5))
#' good <- runif(nrow(ann)) < rep(c(0.9, 0.8, 0.7, 0.6, 0.4), each = 200)
#' ann$label <- ifelse(good, truth[ann$item], sample(c("a", "b", "c"), nrow(ann), TRUE))
#' fit <- consensus_labels(ann)
#' fit
#' mean(fit$items$consensus_label == truth)
#' fit$annotators
#' head(label_issues(fit))
#' @export
consensus_labels <- function(annotations, pred_probs = NULL,
                             format = c("auto", "long", "wide", "counts"),
                             type = c("auto", "classes", "numeric"), classes = NULL,
                             shrinkage = 0.5, smoothing = 0.01, tempering = NULL, df = 10,
                             bias = FALSE, scale_shape = 20, level = 0.9, max_iter = 500,
                             tol = 1e-8, threads = getOption("noisylabels.threads", 1L), verbose = NULL, ...) {
  check_dots_empty("consensus_labels", ...)
  format <- match_arg(format)
  type <- match_arg(type)
  check_number(shrinkage, "shrinkage", lower = 0)
  check_number(smoothing, "smoothing", lower = 0, open_lower = TRUE)
  if (!is.null(tempering)) check_number(tempering, "tempering", lower = 0)
  if (!(is.numeric(df) && length(df) == 1L && !is.na(df) && df > 0)) {
    abort_input("{.arg df} must be a single number > 0 (or {.code Inf}).")
  }
  check_flag(bias, "bias")
  check_number(scale_shape, "scale_shape", lower = 0, open_lower = TRUE)
  check_number(level, "level", lower = 0, upper = 1, open_lower = TRUE, open_upper = TRUE)
  max_iter <- check_count(max_iter, "max_iter")
  check_number(tol, "tol", lower = 0)
  threads <- check_threads(threads)
  long <- cons_long(annotations, format)
  type <- cons_type(long, type)
  if (type == "numeric") {
    if (!is.null(pred_probs)) {
      abort_input("{.arg pred_probs} applies to class labels; these labels are numbers.",
                  class = "noisylabels_error_pred_probs")
    }
    return(cons_fit_numeric(long, df, bias, scale_shape, level, max_iter, tol, verbose,
                            match.call()))
  }
  long <- cons_classes(long, classes)
  probs <- cons_pred_probs(pred_probs, long)
  cons_fit_classes(long, probs, shrinkage, smoothing, tempering, max_iter, tol, threads,
                   verbose, match.call())
}

# ---- input -------------------------------------------------------------------

# The labels in one long layout: item and annotator factors (levels sorted),
# label (as given), weight, and row (where the label is in the input).
cons_long <- function(annotations, format, call = parent.frame()) {
  cols <- c("item", "annotator", "label")
  if (format == "auto") {
    format <- if (is.data.frame(annotations) && all(cols %in% names(annotations))) "long" else "wide"
  }
  if (format == "long") {
    if (!is.data.frame(annotations) || !all(cols %in% names(annotations))) {
      abort_input("Long {.arg annotations} must be a data frame with columns {.field {cols}}.",
                  class = "noisylabels_error_missing", call = call)
    }
    for (nm in cols) {
      v <- annotations[[nm]]
      if (anyNA(v)) {
        abort_input(c("{.arg annotations} has {sum(is.na(v))} missing value{?s} in {.field {nm}}.",
                      "i" = "Drop the rows without a label; in the long layout every row is one label given."),
                    class = "noisylabels_error_missing", call = call)
      }
    }
    if (nrow(annotations) == 0L) abort_input("{.arg annotations} has no labels.", call = call)
    return(list(item = factor(annotations$item), annotator = factor(annotations$annotator),
                label = annotations$label, weight = rep(1, nrow(annotations)),
                row = seq_len(nrow(annotations)), format = "long"))
  }
  if (!(is.matrix(annotations) || is.data.frame(annotations)) || length(dim(annotations)) != 2L) {
    abort_input("Wide or counts {.arg annotations} must be a matrix or data frame, not {.obj_type_friendly {annotations}}.",
                call = call)
  }
  m <- if (is.data.frame(annotations)) as.matrix(annotations) else annotations
  items <- rownames(m) %||% as.character(seq_len(nrow(m)))
  others <- colnames(m) %||% as.character(seq_len(ncol(m)) - (format == "counts"))
  if (format == "counts") {
    if (!is.numeric(m) || anyNA(m) || any(m < 0) || any(m != round(m))) {
      abort_input("Counts in {.arg annotations} must be whole numbers >= 0 with no {.code NA}.",
                  class = "noisylabels_error_counts", call = call)
    }
    cell <- which(m > 0)
    if (!length(cell)) abort_input("{.arg annotations} has no labels.", call = call)
    ri <- (cell - 1L) %% nrow(m) + 1L
    ci <- (cell - 1L) %/% nrow(m) + 1L
    return(list(item = factor(items[ri], levels = unique(items)),
                annotator = factor(rep("(anonymous)", length(cell))),
                label = factor(others[ci], levels = others), weight = as.numeric(m[cell]),
                row = cell, format = "counts"))
  }
  cell <- which(!is.na(m))
  if (!length(cell)) abort_input("{.arg annotations} has no labels (all {.code NA}).", call = call)
  ri <- (cell - 1L) %% nrow(m) + 1L
  ci <- (cell - 1L) %/% nrow(m) + 1L
  list(item = factor(items[ri], levels = items[sort(unique(ri))]),
       annotator = factor(others[ci], levels = unique(others[ci])), label = m[cell],
       weight = rep(1, length(cell)), row = cell, format = "wide")
}

cons_type <- function(long, type) {
  if (type != "auto") {
    if (type == "numeric" && !is.numeric(long$label)) {
      abort_input("{.code type = \"numeric\"} needs numeric labels, not {.cls {class(long$label)[1]}}.",
                  class = "noisylabels_error_label_type", call = parent.frame(2))
    }
    if (type == "numeric" && long$format == "counts") {
      abort_input("Counts are class labels; use {.code type = \"classes\"}.",
                  class = "noisylabels_error_label_type", call = parent.frame(2))
    }
    return(type)
  }
  y <- long$label
  if (long$format != "counts" && is.numeric(y) && !is.factor(y) &&
      (any(y != round(y)) || length(unique(y)) > 20L)) "numeric" else "classes"
}

# Class codes 0..K-1 with a classed error for labels outside `classes`.
cons_classes <- function(long, classes, call = parent.frame()) {
  seen <- if (is.factor(long$label)) levels(droplevels(long$label)) else sort(unique(long$label))
  if (is.null(classes)) {
    classes <- if (is.factor(long$label)) levels(long$label) else seen
  }
  classes <- as.character(classes)
  if (anyNA(classes) || anyDuplicated(classes)) {
    abort_input("{.arg classes} must be distinct and not {.code NA}.", call = call)
  }
  code <- match(as.character(long$label), classes)
  if (anyNA(code)) {
    bad <- unique(as.character(long$label)[is.na(code)])
    abort_input(c("{length(bad)} label value{?s} {?is/are} not among {.arg classes}: {.val {utils::head(bad, 5)}}.",
                  "i" = "Classes: {.val {classes}}."),
                class = "noisylabels_error_label_class", call = call)
  }
  if (length(classes) < 2L) {
    abort_input("Class labels need at least two classes; only {.val {classes}} {?is/are} possible.",
                class = "noisylabels_error_label_class", call = call)
  }
  long$code <- code
  long$classes <- classes
  long
}

# pred_probs as an items x K matrix in item order, floored at 1e-8 and
# renormalised (the log enters the model).
cons_pred_probs <- function(pred_probs, long, call = parent.frame()) {
  if (is.null(pred_probs)) return(NULL)
  p <- if (is.data.frame(pred_probs)) as.matrix(pred_probs) else pred_probs
  items <- levels(long$item)
  K <- length(long$classes)
  if (!is.matrix(p) || !is.numeric(p) || anyNA(p) || any(!is.finite(p)) || any(p < 0)) {
    abort_input("{.arg pred_probs} must be a numeric matrix of probabilities (finite, >= 0, no {.code NA}).",
                class = "noisylabels_error_pred_probs", call = call)
  }
  if (ncol(p) != K) {
    abort_input("{.arg pred_probs} has {ncol(p)} column{?s} but there are {K} classes.",
                class = "noisylabels_error_pred_probs", call = call)
  }
  if (!is.null(colnames(p))) {
    j <- match(long$classes, colnames(p))
    if (anyNA(j)) {
      abort_input("Column names of {.arg pred_probs} must be the classes {.val {long$classes}}.",
                  class = "noisylabels_error_pred_probs", call = call)
    }
    p <- p[, j, drop = FALSE]
  }
  if (!is.null(rownames(p))) {
    i <- match(items, rownames(p))
    if (anyNA(i)) {
      abort_input("{sum(is.na(i))} item{?s} with labels {?has/have} no row in {.arg pred_probs} (rows are matched by name).",
                  class = "noisylabels_error_pred_probs", call = call)
    }
    p <- p[i, , drop = FALSE]
  } else if (nrow(p) != length(items)) {
    abort_input("{.arg pred_probs} has {nrow(p)} row{?s} but there are {length(items)} items with labels.",
                class = "noisylabels_error_pred_probs", call = call)
  }
  s <- rowSums(p)
  if (any(abs(s - 1) > 1e-3)) {
    abort_input("Rows of {.arg pred_probs} must sum to 1 ({sum(abs(s - 1) > 1e-3)} do not).",
                class = "noisylabels_error_pred_probs", call = call)
  }
  p <- pmax(p, 1e-8)
  unname(p / rowSums(p))
}

# Item-sorted CSR arrays of the labels (0-based codes for the core).
cons_csr <- function(long) {
  o <- order(as.integer(long$item), seq_along(long$item))
  list(order = o, ptr = c(0L, cumsum(tabulate(as.integer(long$item), nlevels(long$item)))),
       annotator = as.integer(long$annotator)[o] - 1L)
}

# ---- fits --------------------------------------------------------------------

cons_fit_classes <- function(long, probs, shrinkage, smoothing, tempering, max_iter, tol,
                             threads, verbose, call) {
  K <- length(long$classes)
  csr <- cons_csr(long)
  bar <- progress_bar("Consensus (EM)", total = max_iter, verbose = verbose)
  opts <- list(shrinkage = shrinkage, smoothing = smoothing, prior_count = 1,
               fit_tempering = is.null(tempering), tempering = tempering %||% 1,
               max_iter = max_iter, tol = tol, threads = threads)
  fit <- call_core(.consensus_classes_fit(csr$ptr, csr$annotator, long$code[csr$order] - 1L,
                                          long$weight[csr$order], nlevels(long$item),
                                          nlevels(long$annotator), K, probs, opts, bar))
  progress_done(bar)
  if (!fit$converged) {
    warn_convergence("The EM did not converge in {max_iter} iterations; raise {.arg max_iter}.")
  }
  new_consensus_classes(long, probs, fit, list(shrinkage = shrinkage, smoothing = smoothing,
                                               tempering = tempering, max_iter = max_iter,
                                               tol = tol, threads = threads), call)
}

new_consensus_classes <- function(long, probs, fit, settings, call) {
  classes <- long$classes
  K <- length(classes)
  items <- levels(long$item)
  annotators <- levels(long$annotator)
  post <- fit$posterior
  dimnames(post) <- list(items, classes)
  ii <- as.integer(long$item)
  jj <- as.integer(long$annotator)
  w <- long$weight
  cons <- max.col(post, ties.method = "first")
  p_label <- post[cbind(ii, long$code)]
  agree <- long$code == cons[ii]
  wsum <- function(x, g, n) { out <- numeric(n); s <- rowsum(x, g); out[as.integer(rownames(s))] <- s; out }
  n_item <- wsum(w, ii, length(items))
  n_ann <- wsum(w, jj, length(annotators))
  item_df <- data.frame(item = items, consensus_label = factor(classes[cons], levels = classes),
                        quality = post[cbind(seq_along(items), cons)],
                        agreement = wsum(w * agree, ii, length(items)) / pmax(n_item, 1e-300),
                        n_labels = n_item, stringsAsFactors = FALSE)
  item_df$agreement[n_item == 0] <- NA
  for (k in seq_len(K)) item_df[[paste0("prob_", classes[k])]] <- post[, k]
  ann_df <- data.frame(annotator = annotators,
                       quality = wsum(w * p_label, jj, length(annotators)) / n_ann,
                       n_labels = n_ann, agreement = wsum(w * agree, jj, length(annotators)) / n_ann,
                       stringsAsFactors = FALSE)
  confusion <- exp(fit$log_confusion)
  dimnames(confusion) <- list(true = classes, given = classes, annotator = annotators)
  crowd <- fit$crowd
  dimnames(crowd) <- list(true = classes, given = classes)
  lab_df <- data.frame(row = long$row, item = long$item, annotator = long$annotator,
                       label = factor(classes[long$code], levels = classes), weight = w,
                       p_wrong = 1 - p_label, stringsAsFactors = FALSE)
  lab_df <- lab_df[order(lab_df$row), , drop = FALSE]
  rownames(lab_df) <- NULL
  prior <- exp(fit$prior_b - max(fit$prior_b))
  structure(list(
    type = "classes", format = long$format, classes = classes, items = item_df,
    annotators = ann_df, labels = lab_df, confusion = confusion, crowd = crowd,
    class_prior = stats::setNames(prior / sum(prior), classes),
    tempering = if (!is.null(probs)) fit$tempering, has_pred_probs = !is.null(probs),
    objective = fit$objective, iterations = fit$iterations, converged = fit$converged,
    settings = settings, n_labels = sum(w), call = call),
    class = "noisylabels_consensus")
}

cons_fit_numeric <- function(long, df, bias, scale_shape, level, max_iter, tol, verbose, call) {
  csr <- cons_csr(long)
  y <- as.numeric(long$label)
  if (any(!is.finite(y))) {
    abort_input("Numeric labels must be finite ({sum(!is.finite(y))} {?is/are} not).",
                class = "noisylabels_error_missing", call = call)
  }
  bar <- progress_bar("Consensus (ECM)", total = max_iter, verbose = verbose)
  opts <- list(df = df, scale_shape = scale_shape, bias_prior_sd = 0, bias = bias,
               max_iter = max_iter, tol = tol)
  fit <- call_core(.consensus_numeric_fit(csr$ptr, csr$annotator, y[csr$order],
                                          long$weight[csr$order], nlevels(long$item),
                                          nlevels(long$annotator), opts, bar))
  progress_done(bar)
  if (!fit$converged) {
    warn_convergence("The ECM did not converge in {max_iter} iterations; raise {.arg max_iter}.")
  }
  items <- levels(long$item)
  annotators <- levels(long$annotator)
  ii <- as.integer(long$item)
  jj <- as.integer(long$annotator)
  resid <- numeric(length(y))
  resid[csr$order] <- fit$residual
  tw <- numeric(length(y))
  tw[csr$order] <- fit$weight
  z <- stats::qnorm(1 - (1 - level) / 2)
  close <- abs(resid) <= 1
  n_item <- tabulate(ii, length(items))
  n_ann <- tabulate(jj, length(annotators))
  item_df <- data.frame(item = items, consensus_value = fit$mu, se = fit$mu_se,
                        lower = fit$mu - z * fit$mu_se, upper = fit$mu + z * fit$mu_se,
                        agreement = tabulate(ii[close], length(items)) / n_item,
                        n_labels = n_item, stringsAsFactors = FALSE)
  offset <- if (bias) fit$bias else {
    o <- numeric(length(annotators))
    s <- rowsum(y - fit$mu[ii], jj)
    o[as.integer(rownames(s))] <- s / n_ann[as.integer(rownames(s))]
    o
  }
  ann_df <- data.frame(annotator = annotators, quality = fit$scale0 / fit$scale, n_labels = n_ann,
                       agreement = tabulate(jj[close], length(annotators)) / n_ann,
                       bias = offset, scale = fit$scale, stringsAsFactors = FALSE)
  lab_df <- data.frame(row = long$row, item = long$item, annotator = long$annotator, label = y,
                       fitted = fit$mu[ii] + fit$bias[jj], residual = resid, t_weight = tw,
                       stringsAsFactors = FALSE)
  lab_df <- lab_df[order(lab_df$row), , drop = FALSE]
  rownames(lab_df) <- NULL
  structure(list(
    type = "numeric", format = long$format, items = item_df, annotators = ann_df,
    labels = lab_df, scale0 = fit$scale0, objective = fit$objective,
    iterations = fit$iterations, converged = fit$converged,
    settings = list(df = df, bias = bias, scale_shape = scale_shape, level = level,
                    max_iter = max_iter, tol = tol),
    has_pred_probs = FALSE, n_labels = length(y), call = call),
    class = "noisylabels_consensus")
}

# The parts every method reads; a hand-made or edited object fails here.
check_consensus <- function(object, arg = deparse(substitute(object)), call = parent.frame()) {
  parts <- c("type", "items", "annotators", "labels", "objective")
  if (!inherits(object, "noisylabels_consensus") || !is.list(object) ||
      !all(parts %in% names(object)) || !is.data.frame(object$items) ||
      !is.data.frame(object$labels) || !object$type %in% c("classes", "numeric")) {
    abort_input(c("{.arg {arg}} must be a {.cls noisylabels_consensus} object made by {.fn consensus_labels}.",
                  "i" = "Refit with {.fn consensus_labels} instead of building or editing the object."),
                class = "noisylabels_error_object", call = call)
  }
  invisible(object)
}
