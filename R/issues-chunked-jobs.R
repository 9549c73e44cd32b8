# Where the chunks of the chunked confident-learning path come from, and how
# one pass runs over them (R/issues-chunked.R holds the passes themselves).
#
# A file is cut into chunks of getOption("noisylabels.chunk_rows", 1e6) rows
# before the first pass, and each chunk's pass is one future job that reads
# its own rows from the file (cl_read_chunk()): under plan(multisession) or
# a cluster plan (future.batchtools) the chunks run on the workers and only
# the chunk's labels go out, never the probabilities; the file must be
# readable at the same path there. Each job returns its chunk's part
# (cl_chunk_job()), and the parts are combined in the main process in row
# order, so the answer is the same bit for bit whatever the plan.
#
# A function that yields chunks is a generator: f(i) may depend on the calls
# before it (a database cursor, a stream), so its chunks are read and
# processed one after the other in this process, whatever the plan.

# The source: list(k, colnames, chunks, spec, open).
#   Files: `spec` (type, path, k) is all a job needs to read rows;
#     `chunks` a list of list(offset = rows before the chunk, rows, at =
#     byte offset of its first row in a text file).
#   A function: `open()` returns a function giving the next chunk,
#     list(data, rows) with `data` a double matrix, or NULL after the last.
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
  path <- normalizePath(path)
  if (grepl("\\.(csv|txt)$", path, ignore.case = TRUE)) {
    k <- length(strsplit(readLines(path, n = 1L), ",", fixed = TRUE)[[1]])
    at <- call_core(.cl_text_chunks(path, chunk_rows), call = call)
    cl_check_rows(at$rows, n, call)
    offset <- (seq_along(at$start) - 1) * chunk_rows
    rows <- pmin(chunk_rows, at$rows - offset)
    return(list(k = k, spec = list(type = "text", path = path, k = k),
                chunks = cl_chunk_list(offset, rows, at$start)))
  }
  k <- file.size(path) / (8 * n)
  if (k < 2 || k != round(k)) {
    abort_input(c("The binary file {.file {path}} has {file.size(path)} bytes, not 8 x {n} labels x the number of classes.",
                  "i" = "Write the probabilities as row-major doubles, one row per label, or use a .csv file."),
                class = "noisylabels_error_pred_probs", call = call)
  }
  k <- as.integer(k)
  offset <- seq(0, n - 1, by = chunk_rows)
  list(k = k, spec = list(type = "binary", path = path, k = k),
       chunks = cl_chunk_list(offset, pmin(chunk_rows, n - offset), rep(NA_real_, length(offset))))
}

cl_chunk_list <- function(offset, rows, at) {
  .mapply(function(offset, rows, at) list(offset = offset, rows = rows, at = at),
          list(offset, rows, at), NULL)
}

cl_check_rows <- function(rows, n, call) {
  if (rows != n) {
    abort_input("{.arg pred_probs} has {rows} row{?s} but there are {n} labels.",
                class = "noisylabels_error_length", call = call)
  }
}

# The rows of one chunk of a file, read by the job itself: a binary chunk as
# row-major doubles, a text chunk from its byte offset on.
cl_read_chunk <- function(spec, chunk) {
  m <- chunk$rows * spec$k
  if (spec$type == "binary") {
    return(call_core(.cl_read_rows(spec$path, chunk$offset, chunk$rows, spec$k)))
  }
  con <- file(spec$path, "rb")
  on.exit(close(con))
  seek(con, chunk$at)
  x <- scan(con, what = double(), sep = ",", nmax = m, quiet = TRUE)
  if (length(x) != m) {
    abort_input("The rows {chunk$offset + 1} to {chunk$offset + chunk$rows} of {.file {spec$path}} do not hold {spec$k} values each.",
                class = "noisylabels_error_pred_probs")
  }
  x
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

# One pass of a file job: read the chunk, then its part.
cl_file_job <- function(spec, chunk, pass, lab, model, tol, offset = 0) {
  cl_chunk_job(cl_read_chunk(spec, chunk), chunk$rows, spec$k, pass, lab, model, tol, offset)
}

# One pass over every chunk: fun(part, offset, rows) in row order, `part`
# the chunk's result of cl_chunk_job() for `pass` (`model` what the pass
# reads, `fit` the global rows whose probabilities pass "joint" keeps).
cl_each_chunk <- function(src, n, call, pass, lab, model, fun, fit = integer(), tol = 1e-3) {
  k <- src$k
  here <- is.null(src$chunks) || jobs_in_process()
  # Jobs in this process read the whole labels at their chunk's offset; jobs
  # elsewhere get their chunk's labels alone (offset 0).
  labels_of <- function(offset, rows) if (here) lab else lab[offset + seq_len(rows)]
  job_model <- function(offset, rows) {
    if (pass == "joint") model$fit <- fit[fit > offset & fit <= offset + rows] - offset
    model
  }
  failed <- function(data, rows, offset) {
    p <- if (is.matrix(data)) data else matrix(data[seq_len(rows * k)], ncol = k, byrow = TRUE)
    check_prob_block(p, offset = offset, call = call)
    abort_numeric("The probability checks in C++ and R disagree on rows {offset + 1} to {offset + rows}.",
                  call = call)
  }
  if (is.null(src$chunks)) {
    nxt <- src$open()
    done <- 0
    while (!is.null(ch <- nxt())) {
      if (done + ch$rows > n) {
        abort_input("{.arg pred_probs} has more rows than there are labels ({n}).",
                    class = "noisylabels_error_length", call = call)
      }
      part <- cl_chunk_job(ch$data, ch$rows, k, pass, labels_of(done, ch$rows),
                           job_model(done, ch$rows), tol, done)
      if (!part$ok) failed(ch$data, ch$rows, done)
      fun(part, done, ch$rows)
      done <- done + ch$rows
    }
    cl_check_rows(done, n, call)
    return(invisible(NULL))
  }
  job <- function(i) {
    ch <- src$chunks[[i]]
    list(spec = src$spec, chunk = ch, pass = pass, lab = labels_of(ch$offset, ch$rows),
         model = job_model(ch$offset, ch$rows), tol = tol,
         offset = if (here) ch$offset else 0)
  }
  future_jobs(length(src$chunks), job, cl_file_job, function(i, part) {
    ch <- src$chunks[[i]]
    if (!part$ok) failed(cl_read_chunk(src$spec, ch), ch$rows, ch$offset)
    fun(part, ch$offset, ch$rows)
  })
}

# fun(<job(i)>) for i = 1..n_jobs (job(i) gives the arguments, as a list) as
# future jobs under the current plan, handing each value to consume(i,
# value) in the order of i. At most as many jobs as the plan has workers are
# unfinished or unconsumed at a time. Under the default sequential plan, or
# without the future package, the jobs run in this process, in order.
future_jobs <- function(n_jobs, job, fun, consume) {
  direct <- jobs_in_process()
  run <- function(i) {
    if (direct) return(list(value = do.call(fun, job(i))))
    future::future(do.call(fun, args), substitute = TRUE, globals = list(fun = fun, args = job(i)),
                   packages = "noisylabels", seed = FALSE)
  }
  width <- if (direct) 1 else min(n_jobs, future::nbrOfWorkers())
  pending <- vector("list", n_jobs)
  launched <- 0L
  for (i in seq_len(n_jobs)) {
    while (launched < n_jobs && launched < i - 1L + width) {
      launched <- launched + 1L
      pending[[launched]] <- run(launched)
    }
    f <- pending[[i]]
    pending[i] <- list(NULL)
    consume(i, if (inherits(f, "Future")) future::value(f) else f$value)
    rm(f)
  }
  invisible(NULL)
}

# TRUE when future jobs run in this process, one after the other: under the
# sequential plan (a future would evaluate the job here anyway; calling it
# directly saves the future's bookkeeping and its hold on the value) or
# without the future package.
jobs_in_process <- function() {
  !requireNamespace("future", quietly = TRUE) || inherits(future::plan(), "sequential")
}

# One chunk's part of a pass, from its rows alone (`data`: a double matrix
# or row-major doubles, `rows` rows, their coded labels lab[offset + 1 ...]
# (a job elsewhere gets its chunk's labels alone, offset 0), `model` what
# the pass reads). FALSE in `ok` when the chunk fails the probability
# checks. The parts are combined in row order by the caller.
#   "given":  P[i, label_i] per row (pass 1; the caller adds them per class);
#   "joint":  the chunk's confident joint, each row's confident class, and
#             the probabilities of the rows model$fit (chunk row numbers);
#   "scores": the five per-label vectors of pass 3 for the chunk's rows.
cl_chunk_job <- function(data, rows, k, pass, lab, model, tol, offset = 0) {
  switch(pass,
    given = {
      given <- call_core(.cl_pass_given(data, rows, k, lab, offset, tol))
      list(ok = !is.null(given), given = given)
    },
    joint = {
      part <- call_core(.cl_pass_joint(data, rows, k, lab, offset, model$thresholds, tol))
      ok <- !is.null(part)
      list(ok = ok, joint = part$joint, confident = part$confident,
           p_fit = if (ok) cl_chunk_rows_at(data, model$fit, 0, k))
    },
    scores = {
      out <- call_core(.cl_pass_scores(data, rows, k, lab, offset, model, tol))
      list(ok = !is.null(out), out = out)
    })
}

# Rows `rows` (global numbers) of a chunk starting after `offset`, clamped
# to [0, 1] as in memory.
cl_chunk_rows_at <- function(data, rows, offset, k) {
  local <- rows - offset
  p <- if (is.matrix(data)) data[local, , drop = FALSE]
       else matrix(data[rep((local - 1) * k, each = k) + seq_len(k)], ncol = k, byrow = TRUE)
  pmin(pmax(p, 0), 1)
}
