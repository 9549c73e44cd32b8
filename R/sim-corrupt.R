#' Corrupt a known fraction of labels
#'
#' For a numeric `y` (regression) this follows Tang, Zhu & de Jong (2021, §5):
#' a random `rate` fraction of the labels receives additive noise drawn from
#' N(0, (level * sd(y))^2), where `sd(y)` is the standard deviation of the
#' pristine labels. For a factor, logical or +-1 `y` (classification) a random
#' `rate` fraction of labels is flipped: to the other class when there are two,
#' to a uniformly chosen other class otherwise.
#'
#' @param y Pristine labels: numeric (regression) or factor / logical /
#'   +-1 numeric with `type = "flip"` (classification).
#' @param rate Fraction of labels to corrupt, in \[0, 1\]; `round(rate * n)` are.
#' @param level Noise standard deviation relative to `sd(y)` (regression only).
#' @param type `"gaussian"` (additive noise) or `"flip"`; the default picks
#'   `"flip"` for factors and logicals and `"gaussian"` for numbers.
#' @return A list: `y` (the corrupted labels, same type as the input),
#'   `corrupted` (sorted integer indices), `is_corrupted` (logical vector) and,
#'   for regression, `noise` (the added noise, 0 for clean labels).
#' @examples
#' set.seed(1)
#' cl <- corrupt_labels(rnorm(20), rate = 0.3, level = 1)
#' cl$corrupted
#' corrupt_labels(factor(c("a", "b", "a", "b")), rate = 0.5)$y
#' @export
corrupt_labels <- function(y, rate, level = 1, type = NULL) {
  check_number(rate, "rate", 0, 1)
  if (!is.atomic(y) || !is.null(dim(y))) {
    abort_input("{.arg y} must be a vector of labels (numeric, factor, character or logical), not {.cls {class(y)}}.")
  }
  n <- length(y)
  if (n < 1) abort_input("{.arg y} is empty.")
  if (anyNA(y)) abort_input("{.arg y} contains NA.")
  type <- type %||% if (is.factor(y) || is.logical(y) || is.character(y)) "flip" else "gaussian"
  type <- match_arg(type, c("gaussian", "flip"))
  k <- round(rate * n)
  idx <- sort(sample.int(n, k))
  is_bad <- logical(n); is_bad[idx] <- TRUE
  if (type == "gaussian") {
    if (!is.numeric(y)) abort_input("Gaussian corruption needs numeric {.arg y}.")
    check_number(level, "level", 0)
    noise <- numeric(n)
    noise[idx] <- stats::rnorm(k, 0, level * stats::sd(y))
    return(list(y = y + noise, corrupted = idx, is_corrupted = is_bad, noise = noise))
  }
  ynew <- y
  if (is.logical(y)) {
    ynew[idx] <- !y[idx]
  } else if (is.numeric(y)) {
    if (!all(y %in% c(-1, 1)) && !all(y %in% c(0, 1))) {
      abort_input("Numeric labels for flipping must be -1/+1 or 0/1.")
    }
    ynew[idx] <- if (all(y %in% c(0, 1))) 1 - y[idx] else -y[idx]
  } else {
    f <- factor(y)
    lev <- levels(f)
    if (length(lev) < 2) abort_input("Flipping needs at least two classes in {.arg y}.")
    cur <- as.integer(f)
    new <- cur
    for (i in idx) {
      others <- setdiff(seq_along(lev), cur[i])
      new[i] <- if (length(others) == 1L) others else others[sample.int(length(others), 1L)]
    }
    ynew <- factor(lev[new], levels = lev)
    if (is.character(y)) ynew <- as.character(ynew)
  }
  list(y = ynew, corrupted = idx, is_corrupted = is_bad)
}

#' Flip a fraction of binary labels at random
#'
#' Picks exactly `round(rate * n)` labels uniformly without replacement and
#' flips them to the other class (the protocol of Han, Tsang & Chen 2016,
#' following Natarajan et al. 2013). A thin wrapper of
#' [corrupt_labels()] with `type = "flip"`.
#'
#' @param y Binary labels: factor, logical, or numeric -1/+1 or 0/1.
#' @param rate Fraction of labels to flip, in \[0, 1\].
#' @return A list: `y` (the noisy labels, same type as the input), `flipped`
#'   (logical, which labels were flipped) and `index` (their sorted indices).
#' @examples
#' set.seed(1)
#' flip_labels(c(-1, 1, 1, -1, 1), 0.4)
#' @export
flip_labels <- function(y, rate) {
  if (!is.factor(y) && !is.logical(y) && !is.numeric(y) && !is.character(y)) {
    abort_input("{.arg y} must be a factor, logical or numeric vector of binary labels.")
  }
  if (length(unique(y)) > 2L) {
    abort_input("{.arg y} has {length(unique(y))} classes; {.fn flip_labels} is for binary labels.")
  }
  cl <- corrupt_labels(y, rate, type = "flip")
  list(y = cl$y, flipped = cl$is_corrupted, index = cl$corrupted)
}
