# Confident learning on probabilities read chunk by chunk, for matrices that
# do not fit comfortably in memory. Three passes over the chunks:
#   1. per-class thresholds (sums of P[i, given] per class, added in row
#      order across chunks, so the sums are the in-memory ones bit for bit);
#   2. the confident joint, each row's confident class and the rows on which
#      the noise model is fitted (cl_fit_rows());
#   3. per-label scores, p_wrong and suggested classes.
# Every per-row step is the in-memory one, so the answer equals the
# in-memory answer exactly. Only one chunk (and, within it, blocks of at most
# 65,536 rows) is held at a time besides the per-label output.
#
# Sources (`pred_probs`):
#   - a matrix (read in row slices);
#   - a file path: "*.csv" / "*.txt" is headerless comma-separated text, one
#     row per label; any other name is raw little-endian doubles in row-major
#     order (numpy's `p.astype("<f8").tofile(path)`), the number of classes
#     being the file size / (8 x number of labels);
#   - a function `f(i)` returning the i-th chunk (a numeric matrix with one
#     column per class; i = 1, 2, ...) or NULL after the last one. It is
#     called once per pass, so it must return the same chunks each time.
# Chunk size for matrices and files: getOption("noisylabels.chunk_rows", 1e6).

cl_block_rows <- 65536L

# The source: list(open, k, colnames), where open() returns a function giving
# the next chunk (a matrix, or a row-major vector with attribute "k") or NULL.
cl_chunk_source <- function(pred_probs, n, call) {
  chunk_rows <- as.integer(getOption("noisylabels.chunk_rows", 1e6))
  if (is.function(pred_probs)) {
    first <- pred_probs(1L)
    if (!is.matrix(first) && !is.data.frame(first)) {
      abort_input("{.arg pred_probs}(1) must return a numeric matrix (the first chunk), not {.cls {class(first)}}.",
                  class = "noisylabels_error_pred_probs", call = call)
    }
    open <- function() { i <- 0L; function() { i <<- i + 1L; pred_probs(i) } }
    return(list(open = open, k = ncol(first), colnames = colnames(first)))
  }
  path <- pred_probs
  if (length(path) != 1L || !file.exists(path)) {
    abort_input("{.arg pred_probs} is a character string but not an existing file: {.file {path}}.",
                class = "noisylabels_error_pred_probs", call = call)
  }
  if (grepl("\\.(csv|txt)$", path, ignore.case = TRUE)) {
    k <- length(strsplit(readLines(path, n = 1L), ",", fixed = TRUE)[[1]])
    return(list(k = k, open = function() {
      con <- file(path, "r")
      function() {
        x <- scan(con, what = double(), sep = ",", nlines = chunk_rows, quiet = TRUE)
        if (!length(x)) { close(con); return(NULL) }
        structure(x, k = k)
      }
    }))
  }
  k <- file.size(path) / (8 * n)
  if (k < 2 || k != round(k)) {
    abort_input(c("The binary file {.file {path}} has {file.size(path)} bytes, not 8 x {n} labels x the number of classes.",
                  "i" = "Write the probabilities as row-major doubles, one row per label, or use a .csv file."),
                class = "noisylabels_error_pred_probs", call = call)
  }
  list(k = as.integer(k), open = function() {
    con <- file(path, "rb")
    function() {
      x <- readBin(con, "double", chunk_rows * k, size = 8L, endian = "little")
      if (!length(x)) { close(con); return(NULL) }
      structure(x, k = as.integer(k))
    }
  })
}

# Rows (r1..r2 of a chunk) as a matrix.
cl_chunk_rows <- function(chunk, r1, r2) {
  if (is.matrix(chunk)) return(chunk[r1:r2, , drop = FALSE])
  k <- attr(chunk, "k")
  matrix(chunk[((r1 - 1L) * k + 1L):(r2 * k)], ncol = k, byrow = TRUE)
}

cl_chunk_nrow <- function(chunk) {
  if (is.matrix(chunk) || is.data.frame(chunk)) nrow(chunk) else length(chunk) %/% attr(chunk, "k")
}

# One pass: a function giving the next block, list(rows, p) with rows the
# global row numbers and p checked as in memory, or NULL after the last.
cl_block_reader <- function(src, n, call) {
  nxt <- src$open()
  chunk <- NULL
  m <- 0L
  done <- 0L
  r1 <- 1L
  function() {
    if (r1 > m) {
      done <<- done + m
      chunk <<- nxt()
      if (is.null(chunk)) {
        if (done != n) {
          abort_input("{.arg pred_probs} has {done} row{?s} but there are {n} labels.",
                      class = "noisylabels_error_length", call = call)
        }
        return(NULL)
      }
      if (is.data.frame(chunk)) chunk <<- as.matrix(chunk)
      m <<- cl_chunk_nrow(chunk)
      r1 <<- 1L
      if (done + m > n) {
        abort_input("{.arg pred_probs} has more rows than there are labels ({n}).",
                    class = "noisylabels_error_length", call = call)
      }
    }
    r2 <- min(m, r1 + cl_block_rows - 1L)
    p <- check_prob_block(cl_chunk_rows(chunk, r1, r2), offset = done + r1 - 1L, call = call)
    out <- list(rows = done + r1:r2, p = p)
    r1 <<- r2 + 1L
    out
  }
}

issues_classification_chunked <- function(labels, pred_probs, rank_by, adjust, flag_by, n_issues,
                                          method, fdr, call) {
  if (flag_by %in% c("consensus", "prune_by_noise_rate", "prune_by_class", "both")) {
    abort_input(c("{.code flag_by = \"{flag_by}\"} needs all probabilities in memory.",
                  "i" = "With a file or a function as {.arg pred_probs}, use {.code flag_by = \"fdr\"}, {.val expected_f1}, {.val rank} or {.val confident_joint}."),
                class = "noisylabels_error_choice", call = call)
  }
  n <- length(labels)
  src <- cl_chunk_source(pred_probs, n, call)
  k <- src$k
  # The labels, checked and coded as in memory on one row per distinct label.
  u <- unique(labels)
  chk <- check_pred_probs(u, matrix(1 / k, length(u), k, dimnames = list(NULL, src$colnames)),
                          call = call)
  lab <- chk$labels[match(labels, u)]
  chk$labels <- lab
  # Pass 1: thresholds.
  sums <- numeric(k)
  nxt <- cl_block_reader(src, n, call)
  while (!is.null(b <- nxt())) {
    if (ncol(b$p) != k) {
      abort_input("Every chunk of {.arg pred_probs} needs {k} columns; one has {ncol(b$p)}.",
                  class = "noisylabels_error_pred_probs", call = call)
    }
    l <- lab[b$rows]
    sums <- as.numeric(rowsum(c(sums, b$p[cbind(seq_along(l), l)]),
                              factor(c(seq_len(k), l), levels = seq_len(k)), reorder = TRUE))
  }
  counts <- tabulate(lab, k)
  thr <- sums / counts
  # Pass 2: confident joint and the rows of the noise-model fit.
  joint <- matrix(0L, k, k)
  confident <- integer(n)
  fit <- cl_fit_rows(n)
  p_fit <- matrix(0, length(fit), k)
  nxt <- cl_block_reader(src, n, call)
  while (!is.null(b <- nxt())) {
    cj <- cl_confident_joint(lab[b$rows], b$p, thr)
    joint <- joint + cj$joint
    confident[b$rows] <- cj$confident
    at <- match(b$rows, fit, nomatch = 0L)
    p_fit[at[at > 0L], ] <- b$p[at > 0L, , drop = FALSE]
  }
  cl <- cl_estimate_from(thr, joint, confident, counts, chk$classes)
  model <- cl_fit_noise_model(lab[fit], p_fit, cl$calibrated_joint)
  # Pass 3: per-label scores.
  quality <- prob_given <- p_wrong <- prob_best <- prob_other <- numeric(n)
  best <- other <- integer(n)
  nxt <- cl_block_reader(src, n, call)
  while (!is.null(b <- nxt())) {
    s <- cl_score_block(lab[b$rows], b$p, cl, model, rank_by, adjust)
    quality[b$rows] <- s$quality
    prob_given[b$rows] <- s$prob_given
    p_wrong[b$rows] <- s$p_wrong
    best[b$rows] <- s$best
    prob_best[b$rows] <- s$prob_best
    other[b$rows] <- s$other
    prob_other[b$rows] <- s$prob_other
  }
  sc <- list(quality = quality, prob_given = prob_given, p_wrong = p_wrong, best = best,
             prob_best = prob_best, other = other, prob_other = prob_other)
  rm(quality, prob_given, p_wrong, best, prob_best, other, prob_other)
  m <- n_issues %||% cl$n_issues
  cl_result(labels, chk, sc, NULL, cl, model, rank_by, adjust, flag_by, m, fdr, method,
            pred_probs = NULL)
}
