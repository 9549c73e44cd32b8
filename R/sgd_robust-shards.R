# Training across workers by iterative parameter mixing (shards > 1).

# Iterative parameter mixing (McDonald, Hall and Mann 2010): every epoch,
# each of the k shards runs one epoch of the core from the current mixed
# model on its own rows (as a future, under the session's future::plan()),
# and the new model is the average of the k results weighted by shard size.
# `inputs[[s]]` is what sgd_shard_run() needs for shard s (its rows in the
# core's layout, or a description of its chunks of LIBSVM files, see
# sgd_memory_shard_inputs() and sgd_file_shard_inputs()); each future
# receives only its own shard. Trace values are progressive, as in
# sgd_fit_chunks().
sgd_fit_shards <- function(inputs, sizes, opts, seed, epochs, n_models, d, valid_eval = NULL,
                           progress = NULL) {
  k <- length(inputs)
  state <- list(w_init = opts$w_init, b_init = opts$b_init, t = opts$t_init %||% 0,
                eta = opts$eta)
  objective <- train_error <- valid_error <- epoch_seconds <- numeric(0)
  shrinks <- list()
  objective_start <- NA_real_
  wts <- sizes / sum(sizes)
  secs <- cpu <- 0
  # The function each future runs; its environment is the namespace, so no
  # local data travel with it.
  run <- function(input, seed, copts) {
    copts$seed <- seed
    sgd_shard_run(input, copts)
  }
  environment(run) <- asNamespace("noisylabels")
  for (e in seq_len(epochs)) {
    t0 <- proc.time()[["elapsed"]]
    copts <- opts
    copts$epochs <- 1L
    copts$t_init <- state$t
    copts$eta <- state$eta
    # `[<-` with a list keeps the keys when the state has no weights yet
    copts[c("w_init", "b_init")] <- list(state$w_init, state$b_init %||% numeric(0))
    seeds <- vapply(seq_len(k), function(s) as.double(sgd_chunk_seed(seed, e, s)), 0)
    results <- future.apply::future_mapply(run, inputs, seeds, MoreArgs = list(copts = copts),
                                           SIMPLIFY = FALSE, future.seed = NULL,
                                           future.packages = "noisylabels",
                                           future.chunk.size = 1)
    W <- Reduce(`+`, Map(function(r, w) w * sgd_core_init(r, d, opts$bias, n_models), results, wts))
    state$w_init <- W
    state$b_init <- if (opts$bias == "separate") {
      Reduce(`+`, Map(function(r, w) w * r$biases, results, wts))
    } else numeric(0)
    state$t <- sum(vapply(results, function(r) as.double(r$t_final), 0) * wts)
    state$eta <- min(vapply(results, function(r) r$eta_final, 0))
    if (is.na(objective_start)) {
      objective_start <- sum(vapply(results, function(r) r$objective_start, 0) * wts)
    }
    objective <- c(objective, sum(vapply(results, function(r) r$objective[length(r$objective)], 0) * wts))
    train_error <- c(train_error,
                     sum(vapply(results, function(r) r$train_error[length(r$train_error)], 0) * wts))
    for (s in seq_len(k)) {
      sh <- as.data.frame(results[[s]]$shrinks)
      if (nrow(sh)) { sh$epoch <- e; sh$shard <- s; shrinks[[length(shrinks) + 1L]] <- sh }
    }
    secs <- secs + sum(vapply(results, function(r) r$seconds_train, 0))
    cpu <- cpu + sum(vapply(results, function(r) r$cpu_seconds_train, 0))
    mixed <- sgd_mixed_result(state, d, opts$bias, n_models)
    if (!is.null(valid_eval)) valid_error <- c(valid_error, valid_eval(mixed))
    epoch_seconds <- c(epoch_seconds, proc.time()[["elapsed"]] - t0)
    if (!is.null(progress)) progress(e, epochs)
  }
  mixed <- sgd_mixed_result(state, d, opts$bias, n_models)
  c(mixed, list(objective = objective, train_error = train_error, valid_error = valid_error,
                objective_start = objective_start, epochs_run = epochs,
                shrinks = if (length(shrinks)) do.call(rbind, shrinks) else as.data.frame(results[[1]]$shrinks),
                eta_final = state$eta, t_final = state$t, renormalisations = NA_real_,
                seconds_train = secs, cpu_seconds_train = cpu,
                seconds_evaluate = NA_real_, cpu_seconds_evaluate = NA_real_,
                epoch_seconds = epoch_seconds, shard_rows = sizes))
}

# A core-like result (weights d x K, biases) from core-layout starting values.
sgd_mixed_result <- function(state, d, bias, n_models) {
  dim_k <- d + (bias == "feature")
  W <- matrix(state$w_init, dim_k, n_models)
  biases <- if (bias == "feature") W[d + 1L, ] else if (bias == "separate") state$b_init else rep(0, n_models)
  list(weights = as.double(W[seq_len(d), , drop = FALSE]), biases = biases, bias = biases[1])
}

# One shard's epoch (runs on a worker): rows in memory in the core's layout,
# or the chunks of LIBSVM files that belong to the shard (the worker reads
# the files itself).
sgd_shard_run <- function(input, copts) {
  if (identical(input$kind, "memory")) return(call_core(.sgd_fit(sgd_spec(input$data), NULL, copts)))
  # The shard's rows: whole files when there are at least k files (file f
  # goes to shard (f - 1) %% k + 1, so a worker reads only its own files),
  # otherwise every k-th chunk. Row numbers (for weights) come from the
  # chunk sizes of the first pass.
  by_chunk <- length(input$files) < input$k
  mine <- if (by_chunk) rep(TRUE, length(input$files)) else {
    (seq_along(input$files) - 1L) %% input$k + 1L == input$shard
  }
  keep <- if (by_chunk) function(index) (index - 1L) %% input$k + 1L == input$shard
  src <- sgd_file_source(input$files[mine], input$chunk_rows, input$d, input$lab,
                         weight = input$weight, keep = keep, row_start = input$row_start)
  n_models <- if (input$lab$multi) input$lab$K else 1L
  sgd_fit_chunks(src, copts, copts$seed, 1L, n_models, input$d)
}

# Shards of rows in memory: a seeded random partition into `shards` blocks,
# each in the core's layout.
sgd_memory_shard_inputs <- function(x, y, lab, weight, shards, seed) {
  n <- NROW(x)
  part <- sgd_seeded_sample(n, n, seed)
  blocks <- split(part, cut(seq_len(n), shards, labels = FALSE))
  inputs <- lapply(blocks, function(rows) {
    list(kind = "memory", data = sgd_memory_chunk(x, y, lab, weight, sort(rows)))
  })
  list(inputs = unname(inputs), sizes = vapply(blocks, function(b) as.double(length(b)), 0))
}

# Shards of LIBSVM files: whole files per shard when there are at least as
# many files as shards, otherwise every k-th chunk. `scan` is the first
# pass over the files (sgd_scan_files()): per chunk its file, its number
# within that file's stream and its size, from which each shard's reader
# learns the first row of every chunk it reads (for the row weights).
sgd_file_shard_inputs <- function(scan, files, shards, chunk_rows, d, lab, weight) {
  chunk_n <- vapply(scan, function(z) as.double(z$n), 0)
  chunk_file <- vapply(scan, function(z) z$file, 0L)
  chunk_index <- vapply(scan, function(z) z$index, 0L)
  chunk_start <- cumsum(c(0, chunk_n))[seq_along(chunk_n)]
  by_file <- length(files) >= shards
  # blocks per file = the largest block number seen in it; a reader of
  # all files numbers blocks consecutively across them
  per_file <- vapply(seq_along(files), function(f) max(c(0L, chunk_index[chunk_file == f])), 0L)
  chunk_global <- cumsum(c(0L, per_file))[chunk_file] + chunk_index
  shard_of <- if (by_file) (chunk_file - 1L) %% shards + 1L else (chunk_global - 1L) %% shards + 1L
  row_start <- function(s) {
    # index of a chunk as the shard's reader numbers it -> first row
    own <- which(shard_of == s)
    idx <- if (by_file) sgd_reader_index(chunk_file[own], chunk_index[own], files, shards, s)
           else chunk_global[own]
    out <- rep(NA_real_, max(c(idx, 0L)))
    out[idx] <- chunk_start[own]
    out
  }
  inputs <- lapply(seq_len(shards), function(s) {
    list(kind = "file", files = files, chunk_rows = chunk_rows, d = d, lab = lab,
         weight = weight, row_start = if (is.null(weight)) NULL else row_start(s),
         shard = s, k = shards)
  })
  list(inputs = inputs, sizes = vapply(seq_len(shards), function(s) sum(chunk_n[shard_of == s]), 0))
}

# The number a shard's reader gives a chunk (it reads its own files one after
# the other and numbers their chunks consecutively) from the chunk's file
# and its number within that file.
sgd_reader_index <- function(chunk_file, chunk_index, files, shards, s) {
  own_files <- which((seq_along(files) - 1L) %% shards + 1L == s)
  # chunks per own file = the largest index seen in it (numbered blocks)
  per_file <- vapply(own_files, function(f) max(c(0L, chunk_index[chunk_file == f])), 0L)
  offset <- stats::setNames(cumsum(c(0L, per_file))[seq_along(own_files)], own_files)
  offset[as.character(chunk_file)] + chunk_index
}
