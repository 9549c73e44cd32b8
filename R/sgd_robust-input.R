# The training input of sgd_robust(): data in memory or LIBSVM files, the
# centring, the held-out rows of early stopping, the labels and row weights,
# the validation data, and the source that hands the rows to the trainer.
# Each step takes and returns `inp`, a list that grows along the way.

# x and y as given: files or data in memory (standardised if asked).
sgd_input <- function(x, y, weights, x_valid, y_valid, chunk_rows, n_features, cfg,
                      call = parent.frame()) {
  from_file <- is.character(x)
  files <- NULL
  if (from_file) {
    files <- check_libsvm_files(x, call = call)
    if (!is.null(y)) {
      abort_input("{.arg y} must be {.code NULL} when {.arg x} names LIBSVM files: the labels are read from the files.",
                  call = call)
    }
    if (cfg$record_iterates) abort_input("{.arg record_iterates} needs the data in memory.", call = call)
    chunk_rows <- check_count(chunk_rows %||% 100000L, "chunk_rows", call = call)
  } else if (!is.null(chunk_rows)) {
    chunk_rows <- check_count(chunk_rows, "chunk_rows", call = call)
    if (cfg$record_iterates) {
      abort_input("{.arg record_iterates} does not work with {.arg chunk_rows}.", call = call)
    }
  }
  if (is.null(y) && !from_file) {
    abort_input("{.arg y} is missing: give one label per row of {.arg x}.", call = call)
  }
  if (!is.null(n_features)) n_features <- check_count(n_features, "n_features", call = call)
  std <- if (cfg$standardize && !from_file) sgd_standardize(x, x_valid, call = call)
  if (!is.null(std)) {
    x <- std$x
    x_valid <- std$x_valid
  }
  list(x = x, y = y, weights = weights, x_valid = x_valid, y_valid = y_valid, files = files,
       from_file = from_file, chunk_rows = chunk_rows, n_features = n_features, centre = std$centre,
       scale = std$scale, row_index = NULL, patience = 0L)
}

# Standardised columns (R/utils-standardize.R): dense x centred and scaled,
# sparse x only scaled (its zeros stay zero); x_valid transformed alike.
sgd_standardize <- function(x, x_valid, call = parent.frame()) {
  if (inherits(x, "sparseMatrix")) {
    n <- nrow(x)
    m <- Matrix::colMeans(x)
    v <- if (n > 1L) pmax(Matrix::colSums(x^2) - n * m^2, 0) / (n - 1) else rep(0, ncol(x))
    sc <- sqrt(v)
    sc[!is.finite(sc) | sc == 0] <- 1
    centre <- NULL
    x <- x %*% Matrix::Diagonal(x = 1 / sc)
  } else {
    x <- check_x_matrix(x, "x", max_abs = Inf, call = call)
    s <- standardize_columns(x)
    centre <- s$center
    sc <- s$scale
    x <- s$x
  }
  if (!is.null(x_valid)) x_valid <- sgd_apply_standardize(x_valid, centre, sc, call = call)
  list(x = x, x_valid = x_valid, centre = centre, scale = sc)
}

# New data on the scale of a fit's standardisation (centre NULL: scale only).
sgd_apply_standardize <- function(x, centre, scale, call = parent.frame()) {
  if (is.null(scale) && is.null(centre)) return(x)
  scale <- scale %||% rep(1, length(centre))
  if (inherits(x, "sparseMatrix")) {
    if (ncol(x) != length(scale)) return(x)  # the dimension check downstream says so
    if (!is.null(centre) && any(centre != 0)) x <- as.matrix(x)
    else return(x %*% Matrix::Diagonal(x = 1 / scale))
  }
  x <- check_x_matrix(x, "x_valid", max_abs = Inf, call = call)
  if (ncol(x) != length(scale)) return(x)
  scale_inputs(x, centre %||% rep(0, length(scale)), scale)
}

sgd_check_shards <- function(shards, inp, cfg, validation_fraction, n_iter_no_change,
                             call = parent.frame()) {
  shards <- check_count(shards, "shards", call = call)
  if (shards == 1L) return(shards)
  if (!requireNamespace("future.apply", quietly = TRUE)) {
    abort_input("{.arg shards} > 1 needs the {.pkg future.apply} package.", call = call)
  }
  if (!is.null(n_iter_no_change) || !is.null(validation_fraction) || cfg$record_iterates) {
    abort_input("{.arg shards} > 1 does not combine with early stopping or {.arg record_iterates}.",
                call = call)
  }
  if (!inp$from_file && !is.null(inp$chunk_rows)) {
    abort_input("Give {.arg shards} or {.arg chunk_rows} for data in memory, not both.", call = call)
  }
  shards
}

# Early stopping: validation data are x_valid/y_valid, or a random
# validation_fraction of the rows held out from training.
sgd_hold_out <- function(inp, cfg, validation_fraction, n_iter_no_change, call = parent.frame()) {
  if (is.null(validation_fraction) && is.null(n_iter_no_change)) return(inp)
  inp$patience <- check_count(n_iter_no_change %||% 5L, "n_iter_no_change", call = call)
  if (inp$from_file || !is.null(inp$chunk_rows)) {
    abort_input("Early stopping needs the data in memory without {.arg chunk_rows}.", call = call)
  }
  if (cfg$record_iterates) {
    abort_input("{.arg record_iterates} does not combine with early stopping.", call = call)
  }
  if (!is.null(inp$x_valid)) {
    if (!is.null(validation_fraction)) {
      abort_input("Give {.arg validation_fraction} or {.arg x_valid}, not both.", call = call)
    }
    return(inp)
  }
  validation_fraction <- validation_fraction %||% 0.1
  check_number(validation_fraction, "validation_fraction", lower = 0, upper = 1,
               open_lower = TRUE, open_upper = TRUE, call = call)
  n_all <- NROW(inp$x)
  n_hold <- max(1L, round(validation_fraction * n_all))
  if (n_all - n_hold < 2L) {
    abort_input("{.arg validation_fraction} leaves fewer than 2 training rows.", call = call)
  }
  hold <- sgd_holdout_rows(n_all, n_hold, cfg$seed)
  keep <- setdiff(seq_len(n_all), hold)
  inp$row_index <- keep
  inp$x_valid <- inp$x[hold, , drop = FALSE]
  inp$y_valid <- inp$y[hold]
  inp$x <- inp$x[keep, , drop = FALSE]
  inp$y <- inp$y[keep]
  if (!is.null(inp$weights)) inp$weights <- inp$weights[keep]
  inp
}

# Rows held out for early stopping: a uniform sample drawn from `seed`
# without touching the session's random numbers.
sgd_holdout_rows <- function(n, m, seed) sort(sgd_seeded_sample(n, m, seed))

# sample.int(n, m) drawn from `seed`, leaving the session's RNG state as it was.
sgd_seeded_sample <- function(n, m, seed) {
  if (exists(".Random.seed", envir = globalenv())) {
    old <- get(".Random.seed", envir = globalenv())
    on.exit(assign(".Random.seed", old, envir = globalenv()))
  } else {
    on.exit(rm(".Random.seed", envir = globalenv()))
  }
  set.seed(seed)
  sample.int(n, m)
}

# Size, classes and row weights of the training data, and the validation
# data. Files: one pass learns the size, the classes and their counts.
sgd_training_labels <- function(inp, cfg, class_weight, call = parent.frame()) {
  multiclass <- cfg$multiclass
  if (inp$from_file) {
    scan <- sgd_scan_files(inp$files, inp$chunk_rows, call = call)
    n_total <- sum(vapply(scan, function(z) as.double(z$n), 0))
    shards <- min(cfg$shards, n_total)
    if (shards > max(length(scan), length(inp$files))) {
      # Fewer chunks than shards (and too few files to give one each):
      # smaller chunks, so that every shard reads some rows.
      inp$chunk_rows <- as.integer(ceiling(n_total / shards))
      scan <- sgd_scan_files(inp$files, inp$chunk_rows, call = call)
    }
    inp$scan <- scan
    inp$n_total <- n_total
    if (!inp$n_total) {
      abort_input("{.file {inp$files}} contain{?s/} no data lines.", class = "noisylabels_error_file",
                  call = call)
    }
    d_file <- max(vapply(scan, function(z) as.integer(z$max_index), 0L))
    n_features <- inp$n_features
    if (!is.null(n_features) && n_features < d_file) {
      abort_input("{.arg n_features} = {n_features} but the files have feature index {d_file}.",
                  call = call)
    }
    inp$d_total <- n_features %||% d_file
    all_counts <- unlist(lapply(scan, `[[`, "labels"))
    counts <- tapply(all_counts, names(all_counts), sum)
    classes <- sort(as.numeric(names(counts)))
    lab <- sgd_labels(classes, length(classes), multiclass = multiclass, call = call)
    lab_counts <- as.vector(counts[as.character(classes)])
  } else {
    train <- sgd_data(inp$x, "x", call = call)
    lab <- sgd_labels(inp$y, train$n, multiclass = multiclass, call = call)
    inp$n_total <- train$n
    inp$d_total <- train$d
  }
  if (lab$multi && multiclass == "multinomial" && cfg$loss != "logistic") {
    abort_input(c("{.code multiclass = \"multinomial\"} needs {.code loss = \"logistic\"} (softmax regression).",
                  "i" = "Use {.code multiclass = \"ovr\"} for the other losses."), call = call)
  }
  if (lab$multi && multiclass == "multinomial" && cfg$method == "pegasos") {
    abort_input("Pegasos has no multinomial form; use {.code multiclass = \"ovr\"}.", call = call)
  }
  if (lab$multi && cfg$record_iterates) {
    abort_input("{.arg record_iterates} is for binary fits only.", call = call)
  }
  if (inp$from_file) {
    # class weights from the counts of the first pass; row weights as given
    inp$case_w <- sgd_case_weights(inp$weights, class_weight,
                                   c(lab[setdiff(names(lab), "cls")],
                                     list(cls = rep(seq_along(lab_counts), lab_counts))),
                                   inp$n_total, call = call)
  } else {
    train <- sgd_set_labels(train, lab)
    inp$case_w <- sgd_case_weights(inp$weights, class_weight, lab, train$n, call = call)
    train$weight <- inp$case_w$weight
    inp$train <- train
  }
  inp$lab <- lab
  inp$n_models <- if (lab$multi) lab$K else 1L
  inp$valid <- sgd_validation_data(inp, multiclass, call = call)
  if (cfg$record_iterates && (inp$d_total + 3) * as.double(inp$n_total) * cfg$epochs > 5e7) {
    abort_input("{.arg record_iterates} would store {format((inp$d_total + 3) * as.double(inp$n_total) * cfg$epochs)} numbers; it is meant for tiny test problems.",
                call = call)
  }
  # Chunked training: files, or chunk_rows for data in memory.
  inp$chunked <- inp$from_file || (!is.null(inp$chunk_rows) && inp$chunk_rows < inp$n_total)
  inp
}

# Per chunk of a first pass over LIBSVM files: its size, largest index, file,
# number within that file's stream and label counts.
sgd_scan_files <- function(files, chunk_rows, call = parent.frame()) {
  scan <- list()
  for (fi in seq_along(files)) {
    scan <- c(scan, libsvm_each_chunk(files[fi], chunk_rows, function(chunk, index) {
      tb <- table(chunk$y)
      list(n = chunk$n, max_index = chunk$max_index, file = fi, index = index,
           labels = stats::setNames(as.vector(tb), names(tb)))
    }, call = call))
  }
  scan
}

sgd_validation_data <- function(inp, multiclass, call = parent.frame()) {
  if (is.null(inp$x_valid) && is.null(inp$y_valid)) return(NULL)
  if (is.null(inp$x_valid) || is.null(inp$y_valid)) {
    abort_input("Give both {.arg x_valid} and {.arg y_valid}, or neither.", call = call)
  }
  valid <- sgd_data(inp$x_valid, "x_valid", call = call)
  if (valid$d != inp$d_total) {
    abort_input("{.arg x_valid} has {valid$d} column{?s} but {.arg x} has {inp$d_total}.", call = call)
  }
  sgd_set_labels(valid, sgd_labels(inp$y_valid, valid$n, multiclass = multiclass,
                                   template = inp$lab, arg = "y_valid", call = call))
}

# The source of the training rows (see sgd_memory_source()).
sgd_input_source <- function(inp) {
  if (inp$from_file) {
    return(sgd_file_source(inp$files, inp$chunk_rows, inp$d_total, inp$lab, inp$case_w$weight))
  }
  sgd_memory_source(inp$x, inp$y, inp$lab, inp$case_w$weight,
                    chunk_rows = if (inp$chunked) inp$chunk_rows, full = inp$train)
}
