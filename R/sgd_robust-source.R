# Sources of training rows. A source hands the rows to the trainer in chunks
# in the core's layout, with labels and row weights set; both kinds below
# satisfy the same small interface:
#   src$each_chunk(f)  calls f(chunk, index, rows) for every chunk in order:
#                      `index` numbers the chunk (it seeds the chunk's
#                      shuffle), `rows` are its row numbers in the whole data
#   src$first()        the first chunk (the stand-in for the data in the step
#                      search and the warm start)
#   src$sparse         whether the chunks are CSR

# Rows of a matrix or sparse matrix in memory, in chunks of `chunk_rows`
# (NULL: one chunk of every row). `full`, if given, is the whole of x already
# in the core's layout, handed over as the one chunk instead of a copy.
sgd_memory_source <- function(x, y, lab, weight = NULL, chunk_rows = NULL, full = NULL) {
  n <- NROW(x)
  chunk_rows <- chunk_rows %||% n
  starts <- seq(1L, n, by = chunk_rows)
  chunk <- function(rows) {
    if (!is.null(full) && length(rows) == n) return(full)
    sgd_memory_chunk(x, y, lab, weight, rows)
  }
  list(sparse = inherits(x, "sparseMatrix"),
       first = function() chunk(seq_len(min(n, chunk_rows))),
       each_chunk = function(f) {
         for (k in seq_along(starts)) {
           rows <- starts[k]:min(n, starts[k] + chunk_rows - 1L)
           f(chunk(rows), k, rows)
         }
         invisible(NULL)
       })
}

# Rows `rows` of x in the core's layout, labelled with the classes of `lab`.
sgd_memory_chunk <- function(x, y, lab, weight, rows) {
  ch <- sgd_data(x[rows, , drop = FALSE], "x")
  ch <- sgd_set_labels(ch, sgd_labels(y[rows], length(rows), template = lab))
  if (!is.null(weight)) ch$weight <- weight[rows]
  ch
}

# Rows of LIBSVM files with `d` columns, read in chunks of `chunk_rows` lines
# (see libsvm_each_chunk(); `keep` selects chunks by number). Row numbers
# count the rows read so far, or, with `row_start` (the first row of each
# chunk by number, minus one), come from a first pass over all the files.
sgd_file_source <- function(files, chunk_rows, d, lab, weight = NULL, keep = NULL,
                            row_start = NULL) {
  chunk <- function(raw, rows) {
    ch <- sgd_set_labels(libsvm_core_data(raw, d), sgd_labels(raw$y, raw$n, template = lab))
    if (!is.null(weight)) ch$weight <- weight[rows]
    ch
  }
  list(sparse = TRUE,
       first = function() {
         raw <- libsvm_first_chunk(files, chunk_rows)
         chunk(raw, seq_len(raw$n))
       },
       each_chunk = function(f) {
         offset <- 0
         libsvm_each_chunk(files, chunk_rows, function(raw, index) {
           if (raw$max_index > d) {
             abort_input("{.file {files}} {?has/have} feature index {raw$max_index}; the fit has {d} column{?s}.",
                         call = NULL)
           }
           rows <- if (is.null(row_start)) offset + seq_len(raw$n) else row_start[index] + seq_len(raw$n)
           offset <<- offset + raw$n
           f(chunk(raw, rows), index, rows)
         }, keep = keep)
         invisible(NULL)
       })
}

# Validated data in the layout the core reads: dense -> d x n matrix (rows of
# x contiguous); sparse -> the slots of t(x) as dgCMatrix = CSR arrays of x.
sgd_data <- function(x, arg = "x", call = parent.frame()) {
  if (inherits(x, "sparseMatrix")) {
    if (nrow(x) == 0L || ncol(x) == 0L) {
      abort_input("{.arg {arg}} is an empty sparse matrix ({nrow(x)} x {ncol(x)}).", call = call)
    }
    x <- methods::as(methods::as(x, "CsparseMatrix"), "generalMatrix")
    if (!methods::is(x, "dgCMatrix")) x <- methods::as(x, "dMatrix")
    if (length(x@x) == 0L || all(x@x == 0)) {
      abort_input(c("{.arg {arg}} is an empty sparse matrix: it has no non-zero entries.",
                    "i" = "There is nothing to learn from."), call = call)
    }
    if (anyNA(x@x)) {
      abort_input(c("{.arg {arg}} contains NA/NaN values.", "i" = "Remove or impute them first."),
                  call = call)
    }
    if (any(!is.finite(x@x))) abort_input("{.arg {arg}} contains infinite values.", call = call)
    tx <- Matrix::t(x)
    return(sgd_spec(list(n = nrow(x), d = ncol(x), dense = NULL, p = tx@p, j = tx@i,
                         x = as.double(tx@x), sparse = TRUE)))
  }
  x <- check_x_matrix(x, arg, max_abs = Inf, call = call)
  sgd_spec(list(n = nrow(x), d = ncol(x), dense = t(x), p = NULL, j = NULL, x = NULL, sparse = FALSE))
}

# A data list as the glue reads it: every key present, `label` and
# `n_classes` (multiclass) or `y` (binary) and `weight` NULL where a data
# list has none (`data[k] <- list(NULL)` keeps a key that `$<- NULL` would
# drop). NULL stays NULL (no validation set).
sgd_spec <- function(data) {
  if (is.null(data)) return(NULL)
  for (k in c("y", "label", "n_classes", "weight")) if (!k %in% names(data)) data[k] <- list(NULL)
  data
}
