# Labels of sgd_robust() fits: binary (+-1) and multiclass (0..K-1) coding for
# the core, and row weights from `weights` and `class_weight`.

# Labels for binary or multiclass fits. Binary fits (two classes and
# multiclass = "auto") keep the +-1 coding of sgd_encode_labels(); otherwise
# the classes are coded 0..K-1 for the core. `template` (a previous result)
# fixes the classes, e.g. for validation data.
sgd_labels <- function(y, n, multiclass = "auto", template = NULL, arg = "y",
                       call = parent.frame()) {
  if (!is.null(template) && !template$multi) {
    out <- sgd_encode_labels(y, n, levels = template$levels, arg = arg, call = call)
    return(c(out, list(multi = FALSE, K = 2L, class_names = as.character(template$levels),
                       cls = ifelse(out$y > 0, 2L, 1L))))
  }
  y <- sgd_check_label_vector(y, n, arg, call)
  if (is.numeric(y) && any(!is.finite(y))) abort_input("{.arg {arg}} contains infinite values.", call = call)
  if (is.null(template)) {
    present <- if (is.factor(y)) levels(droplevels(y)) else sort(unique(y))
    if (length(present) < 2) {
      abort_input("{.arg {arg}} has a single class ({.val {as.character(present)}}); two are needed.",
                  call = call)
    }
    if (length(present) == 2L && multiclass == "auto") {
      out <- sgd_encode_labels(y, n, arg = arg, call = call)
      return(c(out, list(multi = FALSE, K = 2L, class_names = as.character(out$levels),
                         cls = ifelse(out$y > 0, 2L, 1L))))
    }
    kind <- if (is.factor(y)) "factor" else if (is.logical(y)) "logical" else if (is.character(y)) "character" else if (is.numeric(y)) "numeric" else "other"
    if (kind == "numeric" && any(y != round(y))) {
      abort_input(c("{.arg {arg}} is numeric with {length(present)} distinct non-integer values; {.fn sgd_robust} is a classifier.",
                    "i" = "Pass class labels (a factor, or whole-number codes); for numeric labels use {.fn gpr_loo} or {.fn find_label_issues}."),
                  class = "noisylabels_error_label_type", call = call)
    }
    if (kind == "other") abort_input("{.arg {arg}} has unsupported type {.cls {class(y)}}.", call = call)
    levels <- present
  } else {
    levels <- template$levels
    kind <- template$kind
  }
  idx <- match(as.character(y), as.character(levels))
  if (anyNA(idx)) {
    bad <- unique(as.character(y)[is.na(idx)])
    abort_input(c("{.arg {arg}} has {cli::qty(length(bad))}label{?s} {.val {bad}} that the fit does not know.",
                  "i" = "The fit's classes are {.val {as.character(levels)}}."),
                class = "noisylabels_error_unknown_class", call = call)
  }
  list(multi = TRUE, K = length(levels), levels = levels, kind = kind,
       class_names = as.character(levels), cls = idx, label = idx - 1L)
}

sgd_set_labels <- function(data, lab) {
  if (lab$multi) {
    data$label <- as.integer(lab$label)
    data$n_classes <- lab$K
    data$y <- NULL
  } else {
    data$y <- lab$y
  }
  data
}

# The automatic step search runs on a binary problem: the data's own labels,
# or for multiclass fits the last class against the rest (for K = 2 exactly
# the binary coding). `train` may be the first chunk of a stream, so its own
# 0-based labels are recoded, not the whole data's classes in `lab`.
sgd_eta_data <- function(train, lab) {
  if (!lab$multi) return(train)
  train$y <- ifelse(train$label + 1L == lab$K, 1, -1)
  train$label <- NULL
  train$weight <- NULL
  train
}

# Row weights: `weights` times the class weights, rescaled to mean 1 (only
# their ratios matter: weights of 2 on some rows equal those rows twice in
# the data, in expectation). NULL when every row weighs the same.
sgd_case_weights <- function(weights, class_weight, lab, n, call = parent.frame()) {
  w <- rep(1, n)
  if (!is.null(weights)) {
    if (!is.numeric(weights) || length(weights) != n || anyNA(weights) || any(!is.finite(weights))) {
      abort_input("{.arg weights} must be a finite numeric vector with one entry per row ({n}).",
                  class = "noisylabels_error_weights", call = call)
    }
    if (any(weights < 0)) {
      abort_input(c("{.arg weights} must be >= 0.",
                    "x" = "{sum(weights < 0)} weight{?s} {?is/are} negative (e.g. {weights[weights < 0][1]})."),
                  class = "noisylabels_error_weights", call = call)
    }
    w <- as.double(weights)
  }
  cw <- NULL
  if (!is.null(class_weight)) {
    cls <- lab$cls
    counts <- tabulate(cls, nbins = length(lab$class_names))
    if (is.character(class_weight) && length(class_weight) == 1L && is.null(names(class_weight))) {
      if (class_weight != "balanced") {
        abort_input("{.arg class_weight} must be {.val balanced} or a named numeric vector.",
                    class = "noisylabels_error_weights", call = call)
      }
      cw <- ifelse(counts > 0, n / (length(counts) * pmax(counts, 1)), 0)
      names(cw) <- lab$class_names
    } else {
      if (!is.numeric(class_weight) || is.null(names(class_weight)) || anyNA(class_weight) ||
          any(!is.finite(class_weight)) || any(class_weight < 0)) {
        abort_input("{.arg class_weight} must be {.val balanced} or a named vector of finite weights >= 0.",
                    class = "noisylabels_error_weights", call = call)
      }
      unknown <- setdiff(names(class_weight), lab$class_names)
      if (length(unknown)) {
        abort_input(c("{.arg class_weight} names class{?es} {.val {unknown}} that {.arg y} does not have.",
                      "i" = "The classes are {.val {lab$class_names}}."),
                    class = c("noisylabels_error_unknown_class", "noisylabels_error_weights"), call = call)
      }
      cw <- stats::setNames(rep(1, length(lab$class_names)), lab$class_names)
      cw[names(class_weight)] <- class_weight
    }
    w <- w * unname(cw[cls])
  }
  if (!any(w > 0)) {
    abort_input("Every row has weight 0; there is nothing to learn from.",
                class = "noisylabels_error_weights", call = call)
  }
  w <- w / mean(w)
  list(weight = if (all(w == 1)) NULL else w, class_weight = cw)
}

# A label vector of length n without NA (a one-column matrix is dropped to a
# vector); shared by the binary and the multiclass label encoders.
sgd_check_label_vector <- function(y, n, arg, call) {
  if (is.matrix(y) && ncol(y) == 1L) y <- drop(y)
  if (!is.atomic(y) || !is.null(dim(y))) {
    abort_input("{.arg {arg}} must be a vector or factor of labels.", call = call)
  }
  if (length(y) != n) {
    abort_input("{.arg {arg}} has length {length(y)} but the data have {n} row{?s}.", call = call)
  }
  if (anyNA(y)) abort_input("{.arg {arg}} contains NA labels.", call = call)
  y
}

# Labels -> +-1 doubles. `levels` = c(negative, positive) as given by the user.
sgd_encode_labels <- function(y, n, levels = NULL, arg = "y", call = parent.frame()) {
  y <- sgd_check_label_vector(y, n, arg, call)
  kind <- if (is.factor(y)) "factor" else if (is.logical(y)) "logical" else if (is.character(y)) "character" else if (is.numeric(y)) "numeric" else "other"
  if (kind == "other") abort_input("{.arg {arg}} has unsupported type {.cls {class(y)}}.", call = call)
  if (is.null(levels)) {
    if (kind == "numeric") {
      if (any(!is.finite(y))) abort_input("{.arg {arg}} contains infinite values.", call = call)
      u <- sort(unique(y))
      if (all(u %in% c(-1, 1))) levels <- c(-1, 1)
      else if (all(u %in% c(0, 1))) levels <- c(0, 1)
      else {
        abort_input(c("Numeric {.arg {arg}} must hold -1/+1 or 0/1 labels; it has {length(u)} distinct value{?s}.",
                      "i" = if (length(u) > 2) "For more than two classes fit one classifier per class (one-vs-rest)." else "Recode it to -1/+1 or pass a factor."),
                    call = call)
      }
      present <- u
    } else if (kind == "logical") {
      levels <- c(FALSE, TRUE)
      present <- unique(y)
    } else {
      f <- droplevels(as.factor(y))
      present <- levels(f)
      levels <- present
      if (length(levels) > 2) {
        abort_input(c("{.arg {arg}} has {length(levels)} classes; {.fn sgd_robust} is a binary classifier.",
                      "i" = "Fit one classifier per class (one-vs-rest), e.g. {.code sgd_robust(x, y == cls)} for each class."),
                    call = call)
      }
    }
    if (length(present) < 2) {
      abort_input("{.arg {arg}} has a single class ({.val {as.character(present)}}); two are needed.",
                  call = call)
    }
  }
  pos <- if (kind == "factor" || kind == "character") as.character(y) == as.character(levels[2]) else y == levels[2]
  neg <- if (kind == "factor" || kind == "character") as.character(y) == as.character(levels[1]) else y == levels[1]
  if (!all(pos | neg)) {
    abort_input(c("{.arg {arg}} has labels other than {.val {as.character(levels)}}.",
                  "x" = "Unknown: {.val {unique(as.character(y)[!(pos | neg)])}}."),
                class = "noisylabels_error_unknown_class", call = call)
  }
  list(y = ifelse(pos, 1, -1), levels = levels, kind = kind)
}
