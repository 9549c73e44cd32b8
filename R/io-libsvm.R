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
    abort_input("{.arg file} must be the path of an existing file.",
                class = "noisylabels_error_file")
  }
  if (!is.null(n_features)) n_features <- check_count(n_features, "n_features")
  con <- file(file, open = "rt")  # file() recognises gzip, bzip2 and xz
  lines <- tryCatch(readLines(con, warn = FALSE), finally = close(con))
  chunk <- libsvm_parse(lines, file, first_line = 1L)
  if (chunk$n == 0L) abort_input("{.file {file}} contains no data lines.")
  d <- chunk$max_index
  if (!is.null(n_features)) {
    if (n_features < d) {
      abort_input("{.arg n_features} = {n_features} but {.file {file}} has feature index {d}.")
    }
    d <- n_features
  }
  # a sparse column-compressed matrix holds one 4-byte pointer per column
  # (Matrix builds it through a copy or two)
  check_allocation(3 * 4 * (as.double(d) + 1) + 12 * as.double(length(chunk$val)),
                   cli::format_inline("A matrix with {format(d, big.mark = ',')} feature columns"))
  list(x = libsvm_matrix(chunk, d), y = chunk$y)
}

# Parse LIBSVM lines (line numbers in the file start at `first_line`) into
# triplets: y, row (1..n), idx, val, and the largest index. Malformed lines
# are classed errors naming the file and line.
libsvm_parse <- function(lines, file, first_line = 1L, call = parent.frame()) {
  out <- call_core(.libsvm_parse_lines(lines), call = call)
  if (out$bad_line > 0L) {
    line <- out$bad_line + first_line - 1L
    token <- out$bad_token
    what <- switch(out$bad_kind,
                   "the label {.val {token}} is not a number",
                   "{.val {token}} is not an {.code index:value} pair with a positive integer index and a finite value",
                   "feature indices are not strictly increasing (index {out$bad_index})")
    libsvm_malformed(file, line, what, call = call)
  }
  out[c("n", "y", "row", "idx", "val", "max_index")]
}

# A parsed chunk in the SGD core's layout (CSR arrays: row pointers,
# 0-based column indices, values) without building a sparse matrix. Rows
# whose values are all 0 keep their place; a chunk of such rows is data too.
libsvm_core_data <- function(chunk, d) {
  counts <- tabulate(chunk$row, nbins = chunk$n)
  list(n = chunk$n, d = d, dense = NULL, p = c(0L, cumsum(counts)), j = chunk$idx - 1L,
       x = chunk$val, sparse = TRUE)
}

libsvm_matrix <- function(chunk, d) {
  Matrix::sparseMatrix(i = chunk$row, j = chunk$idx, x = chunk$val, dims = c(chunk$n, d))
}

# Read LIBSVM files (a vector of paths, read one after the other) in chunks
# of `chunk_rows` lines; calls fun(chunk, index) for each chunk with data
# lines and returns the results as a list. Only one chunk is in memory at a
# time.
libsvm_each_chunk <- function(files, chunk_rows, fun, keep = NULL, call = parent.frame()) {
  out <- list()
  index <- 0L
  con <- NULL
  on.exit(if (!is.null(con)) close(con))
  for (f in files) {
    con <- file(f, open = "rt")
    line <- 1L
    repeat {
      lines <- readLines(con, n = chunk_rows, warn = FALSE)
      if (!length(lines)) break
      # chunks are numbered by blocks read (a block of comments only keeps
      # its number but calls nothing); `keep(index)` = FALSE skips the parse
      index <- index + 1L
      first <- line
      line <- line + length(lines)
      if (!is.null(keep) && !keep(index)) next
      chunk <- libsvm_parse(lines, f, first_line = first, call = call)
      rm(lines)
      if (chunk$n == 0L) next
      out[[length(out) + 1L]] <- fun(chunk, index)
      # The chunk's text and arrays are garbage now; a minor collection
      # returns them before the next chunk is read, so the peak memory is
      # about one chunk rather than the several R would otherwise let pile
      # up (a 5e6-row file: 612 -> 518 MB without, see inst/bench/sgd).
      rm(chunk)
      gc(verbose = FALSE, full = FALSE)
    }
    close(con)
    con <- NULL
  }
  out
}

# Checks a vector of LIBSVM paths.
check_libsvm_files <- function(files, arg = "x", call = parent.frame()) {
  if (!is.character(files) || !length(files) || anyNA(files)) {
    abort_input("{.arg {arg}} must be a matrix or the path(s) of LIBSVM files.", call = call)
  }
  missing <- files[!file.exists(files) | dir.exists(files)]
  if (length(missing)) {
    abort_input(c("{.arg {arg}} names {cli::qty(length(missing))}{?a file/files} that {?does/do} not exist: {.file {missing}}.",
                  "i" = "Give the path(s) of LIBSVM files (plain, gzip, bzip2 or xz)."),
                class = "noisylabels_error_file", call = call)
  }
  normalizePath(files)
}

libsvm_malformed <- function(file, line, what, call = parent.frame(), .envir = parent.frame()) {
  abort_input(c(paste0("Malformed LIBSVM line ", line, " in {.file {file}}: ", what, "."),
                "i" = "Each line must read {.code label index:value index:value ...}."),
              line = line, class = "noisylabels_error_libsvm", call = call, .envir = .envir)
}

# The first non-empty chunk of LIBSVM files (see libsvm_each_chunk()).
libsvm_first_chunk <- function(files, chunk_rows, call = parent.frame()) {
  for (f in files) {
    con <- file(f, open = "rt")
    on.exit(close(con))
    line <- 1L
    repeat {
      lines <- readLines(con, n = chunk_rows, warn = FALSE)
      if (!length(lines)) break
      chunk <- libsvm_parse(lines, f, first_line = line, call = call)
      line <- line + length(lines)
      if (chunk$n > 0L) return(chunk)
    }
    close(con)
    on.exit()
  }
  NULL
}
