# Confident learning on probabilities read chunk by chunk, for matrices that
# do not fit comfortably in memory. Three passes over the chunks, each chunk
# handed whole to a C++ kernel (src/core/issues/confident_learning.h):
#   1. per-class thresholds (sums of P[i, given] per class, added in row
#      order across chunks, so the sums are the in-memory ones bit for bit);
#   2. the confident joint, each row's confident class and the rows on which
#      the noise model is fitted (cl_fit_rows());
#   3. per-label scores, p_wrong and most probable classes.
# The kernel repeats the in-memory R code's operations in its order, so the
# answer equals the in-memory answer exactly (tests/testthat/
# test-issues-chunked.R compares them). Besides the per-label output, one
# chunk is held at a time: a binary file is read into one buffer reused for
# every chunk and pass, and the result is sorted in place
# (cl_chunked_result()), never copied whole.
#
# Sources (`pred_probs`):
#   - a file path: "*.csv" / "*.txt" is headerless comma-separated text, one
#     row per label; any other name is raw little-endian doubles in row-major
#     order (numpy's `p.astype("<f8").tofile(path)`), the number of classes
#     being the file size / (8 x number of labels);
#   - a function `f(i)` returning the i-th chunk (a numeric matrix or data
#     frame with one column per class; i = 1, 2, ...) or NULL after the last
#     one. It is called once per pass, so it must return the same chunks each
#     time. A matrix in memory is passed as such a function by the user.
# Chunk size for files: getOption("noisylabels.chunk_rows", 1e6).

# The source: list(open, k, colnames), where open() returns a function giving
# the next chunk, list(data, rows) with `data` a double matrix or a row-major
# double vector of at least rows x k values, or NULL after the last.
cl_chunk_source <- function(pred_probs, n, call) {
  chunk_rows <- as.integer(getOption("noisylabels.chunk_rows", 1e6))
  if (is.function(pred_probs)) {
    first <- pred_probs(1L)
    if (!is.matrix(first) && !is.data.frame(first)) {
      abort_input("{.arg pred_probs}(1) must return a numeric matrix (the first chunk), not {.cls {class(first)}}.",
                  class = "noisylabels_error_pred_probs", call = call)
    }
    k <- ncol(first)
    open <- function() {
      i <- 0L
      function() {
        i <<- i + 1L
        cl_as_chunk(pred_probs(i), k, call)
      }
    }
    return(list(open = open, k = k, colnames = colnames(first)))
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
        list(data = x, rows = length(x) %/% k)
      }
    }))
  }
  k <- file.size(path) / (8 * n)
  if (k < 2 || k != round(k)) {
    abort_input(c("The binary file {.file {path}} has {file.size(path)} bytes, not 8 x {n} labels x the number of classes.",
                  "i" = "Write the probabilities as row-major doubles, one row per label, or use a .csv file."),
                class = "noisylabels_error_pred_probs", call = call)
  }
  k <- as.integer(k)
  chunk_rows <- min(chunk_rows, n)
  buffer <- numeric(chunk_rows * k)
  list(k = k, open = function() {
    done <- 0
    function() {
      if (done >= n) return(NULL)
      m <- min(chunk_rows, n - done)
      .cl_read_rows(path, done, m, k, buffer)
      done <<- done + m
      list(data = buffer, rows = m)
    }
  })
}

# A chunk from a user's function: a double matrix with k columns.
cl_as_chunk <- function(x, k, call) {
  if (is.null(x)) return(NULL)
  if (is.data.frame(x)) x <- as.matrix(x)
  if (!is.matrix(x) || !is.numeric(x) || ncol(x) != k) {
    abort_input("Every chunk of {.arg pred_probs} must be a numeric matrix with {k} columns; one is not.",
                class = "noisylabels_error_pred_probs", call = call)
  }
  storage.mode(x) <- "double"
  list(data = x, rows = nrow(x))
}

# One pass: fun(data, rows, offset) for every chunk, offset the number of
# rows before it. `fun` returns FALSE when the chunk fails the probability
# checks; check_prob_block() then says what is wrong with it.
cl_each_chunk <- function(src, n, call, fun) {
  nxt <- src$open()
  done <- 0
  while (!is.null(ch <- nxt())) {
    if (done + ch$rows > n) {
      abort_input("{.arg pred_probs} has more rows than there are labels ({n}).",
                  class = "noisylabels_error_length", call = call)
    }
    if (!fun(ch$data, ch$rows, done)) {
      p <- if (is.matrix(ch$data)) ch$data
           else matrix(ch$data[seq_len(ch$rows * src$k)], ncol = src$k, byrow = TRUE)
      check_prob_block(p, offset = done, call = call)
      abort_numeric("The probability checks in C++ and R disagree on rows {done + 1} to {done + ch$rows}.",
                    call = call)
    }
    done <- done + ch$rows
  }
  if (done != n) {
    abort_input("{.arg pred_probs} has {done} row{?s} but there are {n} labels.",
                class = "noisylabels_error_length", call = call)
  }
}

# Rows `rows` (global numbers) of a chunk starting after `offset`, clamped
# to [0, 1] as in memory.
cl_chunk_rows_at <- function(data, rows, offset, k) {
  local <- rows - offset
  p <- if (is.matrix(data)) data[local, , drop = FALSE]
       else matrix(data[rep((local - 1) * k, each = k) + seq_len(k)], ncol = k, byrow = TRUE)
  pmin(pmax(p, 0), 1)
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
  tol <- 1e-3
  # Pass 1: thresholds. The kernels add into `sums`, `joint` and the per-label
  # vectors in place: each is a fresh vector referenced by one name only.
  sums <- numeric(k)
  cl_each_chunk(src, n, call, function(data, rows, offset) {
    .cl_pass_sums(data, rows, k, lab, offset, sums, tol)
  })
  counts <- tabulate(lab, k)
  thr <- sums / counts
  # Pass 2: confident joint and the rows of the noise-model fit.
  joint <- matrix(0L, k, k)
  confident <- integer(n)
  fit <- cl_fit_rows(n)
  p_fit <- matrix(0, length(fit), k)
  cl_each_chunk(src, n, call, function(data, rows, offset) {
    ok <- .cl_pass_joint(data, rows, k, lab, offset, thr, joint, confident, tol)
    at <- which(fit > offset & fit <= offset + rows)
    if (ok && length(at)) p_fit[at, ] <<- cl_chunk_rows_at(data, fit[at], offset, k)
    ok
  })
  cl <- cl_estimate_from(thr, joint, confident, counts, chk$classes)
  rm(confident)
  model <- cl_fit_noise_model(lab[fit], p_fit, cl$calibrated_joint)
  # Pass 3: per-label scores.
  score_model <- list(rank_by = rank_by, adjust = adjust, thresholds = thr,
                      rank_noise = cl_shrunk_noise(cl$calibrated_joint), temper = model$a,
                      noise = model$noise, unmix_noise = model$unmix_noise %||% numeric(),
                      unmix = model$unmix %||% numeric())
  # The per-label vectors live in an environment, so that the result can drop
  # the ones it no longer needs while this frame is still alive.
  sc <- list2env(list(quality = numeric(n), prob_given = numeric(n), p_wrong = numeric(n),
                      best = integer(n), prob_best = numeric(n), other = integer(n),
                      prob_other = numeric(n)), parent = emptyenv())
  cl_each_chunk(src, n, call, function(data, rows, offset) {
    call_core(.cl_pass_scores(data, rows, k, lab, offset, score_model, as.list(sc), tol))
  })
  # The read buffer and the coded labels go before the result is built.
  rm(src, lab)
  if (flag_by != "confident_joint") chk$labels <- NULL
  cl_chunked_result(labels, chk, sc, cl, model, rank_by, adjust, flag_by,
                    n_issues %||% cl$n_issues, fdr, method)
}

# The result of the chunked path, equal to cl_result()'s but built without
# copying per-label vectors: flags and suggestions are merged into the
# kernel's vectors (the environment `sc`), which are then sorted in place by
# .cl_sort_columns(); explicit collections return each dropped vector before
# the next is allocated.
cl_chunked_result <- function(labels, chk, sc, cl, model, rank_by, adjust, flag_by, m, fdr,
                              method) {
  n <- length(labels)
  gc(FALSE)
  count <- wrong_count(sc$p_wrong)
  gc(FALSE)
  q_value <- .cl_qvalues(sc$p_wrong)
  flagged <- switch(flag_by,
    fdr = q_value <= fdr,
    expected_f1 = flag_expected_f1(sc$p_wrong),
    rank = flag_lowest(sc$quality, m),
    confident_joint = !is.na(cl$confident_class) & cl$confident_class != chk$labels)
  # A flagged label is believed wrong: its suggestion is the most probable
  # other class (as in cl_result()).
  .cl_suggest(flagged, sc$best, sc$other, sc$prob_best, sc$prob_other)
  rm("other", "prob_other", envir = sc)
  gc(FALSE)
  score <- 1 - sc$quality
  row <- .cl_sort_columns(score, c(list(score, flagged, q_value), as.list(sc)))
  gc(FALSE)
  suggested <- if (chk$factor) structure(sc$best, levels = chk$classes, class = "factor")
               else chk$classes[sc$best]
  rm("best", envir = sc)
  gc(FALSE)
  li <- structure(
    list(row = row, score = score, flagged = flagged, label_quality = sc$quality,
         given_label = labels[row], suggested_label = suggested, prob_given = sc$prob_given,
         p_wrong = sc$p_wrong, q_value = q_value, prob_suggested = sc$prob_best),
    row.names = c(NA_integer_, -n), class = c("noisylabels_issues", "data.frame"))
  new_find_label_issues(list(
    label_issues = li, estimated_issues = cl$n_issues, wrong_count = count, fdr = fdr,
    task = "classification", method = method, rank_by = rank_by, adjust = adjust,
    flag_by = flag_by, pred_probs = NULL, labels = labels, classes = chk$classes,
    confident_learning = cl, noise_model = model, n = n))
}
