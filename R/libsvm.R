#' Read a data set in LIBSVM / svmlight format
#'
#' Each line is `label index:value index:value ...` with 1-based, strictly
#' increasing feature indices; text after `#` is a comment and blank lines are
#' skipped. Files compressed with gzip, bzip2 or xz are read directly (the
#' compression is detected from the file's contents).
#'
#' @param file Path to the file.
#' @param n_features Number of columns of the result; `NULL` uses the largest
#'   index present. Give it when a test file may lack the last features.
#' @return A list with `x`, a sparse `Matrix::dgCMatrix` (one row per example),
#'   and `y`, the numeric labels as written in the file.
#' @examples
#' f <- tempfile()
#' writeLines(c("+1 1:0.5 3:1", "-1 2:2", "+1 1:1 2:1 3:1"), f)
#' d <- read_libsvm(f)
#' d$y
#' as.matrix(d$x)
#' @export
read_libsvm <- function(file, n_features = NULL) {
  if (!is.character(file) || length(file) != 1L || !file.exists(file)) {
    abort_input("{.arg file} must be the path of an existing file.")
  }
  if (!is.null(n_features)) n_features <- check_count(n_features, "n_features")
  con <- file(file, open = "rt")  # file() recognises gzip, bzip2 and xz
  lines <- tryCatch(readLines(con, warn = FALSE), finally = close(con))
  lines <- trimws(sub("#.*$", "", lines))
  line_no <- which(nzchar(lines))
  if (!length(line_no)) abort_input("{.file {file}} contains no data lines.")
  parts <- strsplit(lines[line_no], "[[:space:]]+")
  label_txt <- vapply(parts, `[`, "", 1L)
  y <- suppressWarnings(as.numeric(label_txt))
  bad <- which(is.na(y) | !is.finite(y))
  if (length(bad)) {
    libsvm_malformed(file, line_no[bad[1]], "the label {.val {label_txt[bad[1]]}} is not a number")
  }
  count <- lengths(parts) - 1L
  tokens <- unlist(lapply(parts, `[`, -1L), use.names = FALSE)
  row <- rep.int(seq_along(parts), count)
  ok <- grepl("^[0-9]+:[^:]+$", tokens)
  idx <- suppressWarnings(as.integer(sub(":.*$", "", tokens)))
  val <- suppressWarnings(as.numeric(sub("^[^:]*:", "", tokens)))
  ok <- ok & !is.na(idx) & idx >= 1L & !is.na(val) & is.finite(val)
  if (!all(ok)) {
    k <- which(!ok)[1]
    libsvm_malformed(file, line_no[row[k]], "{.val {tokens[k]}} is not an {.code index:value} pair with a positive integer index and a finite value")
  }
  if (length(idx) > 1L) {
    same_row <- row[-1L] == row[-length(row)]
    not_incr <- which(same_row & idx[-1L] <= idx[-length(idx)])
    if (length(not_incr)) {
      k <- not_incr[1] + 1L
      libsvm_malformed(file, line_no[row[k]], "feature indices are not strictly increasing (index {idx[k]})")
    }
  }
  d <- if (length(idx)) max(idx) else 0L
  if (!is.null(n_features)) {
    if (n_features < d) {
      abort_input("{.arg n_features} = {n_features} but {.file {file}} has feature index {d}.")
    }
    d <- n_features
  }
  x <- Matrix::sparseMatrix(i = row, j = idx, x = val, dims = c(length(parts), d))
  list(x = x, y = y)
}

libsvm_malformed <- function(file, line, what, call = parent.frame(), .envir = parent.frame()) {
  abort_input(c(paste0("Malformed LIBSVM line ", line, " in {.file {file}}: ", what, "."),
                "i" = "Each line must read {.code label index:value index:value ...}."),
              line = line, class = "noisylabels_error_libsvm", call = call, .envir = .envir)
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
