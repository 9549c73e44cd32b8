# Training on a stream of chunks (out of core, or update() of a fit): the
# epochs over a source's chunks, the seeds of the chunks' shuffles, and the
# margins of every row afterwards.

# Seed of the shuffle of chunk `chunk` in epoch `epoch` of a chunked fit.
# Chunk 1 of epoch 1 uses the fit's seed, so a fit on the first chunk alone
# starts exactly like the chunked fit.
sgd_chunk_seed <- function(seed, epoch, chunk) {
  as.integer((as.double(seed) + 7919 * (chunk - 1) + 104723 * (epoch - 1)) %% .Machine$integer.max)
}

# Training in chunks: every epoch visits the chunks in order and runs one
# epoch of the core over each (its rows shuffled within the chunk, i.e. a
# shuffle buffer of the chunk's size), continuing the model, the step counter
# and the step. `src` is a source of rows (sgd_memory_source(),
# sgd_file_source()). Returns a list shaped like the core's result; `objective` and
# `train_error` per epoch are progressive (each chunk's value after its own
# pass, averaged over the rows).
sgd_fit_chunks <- function(src, opts, seed, epochs, n_models, d, valid = NULL,
                           valid_eval = NULL, progress = NULL) {
  state <- list(w_init = opts$w_init, b_init = opts$b_init, t = opts$t_init %||% 0,
                eta = opts$eta)
  objective <- train_error <- valid_error <- numeric(0)
  shrinks <- list()
  secs <- cpu <- esecs <- ecpu <- renorm <- 0
  objective_start <- NA_real_
  last <- NULL
  epoch_seconds <- numeric(0)
  for (e in seq_len(epochs)) {
    t_epoch <- proc.time()[["elapsed"]]
    acc_obj <- acc_err <- acc_n <- 0
    src$each_chunk(function(train, index, rows) {
      copts <- opts
      copts$epochs <- 1L
      copts$seed <- as.double(sgd_chunk_seed(seed, e, index))
      copts$t_init <- state$t
      copts$eta <- state$eta
      # `[<-` with a list keeps the keys when the state has no weights yet
      copts[c("w_init", "b_init")] <- list(state$w_init, state$b_init %||% numeric(0))
      res <- call_core(.sgd_fit(sgd_spec(train), NULL, copts))
      if (is.na(objective_start)) objective_start <<- res$objective_start
      state$w_init <<- sgd_core_init(res, d, opts$bias, n_models)
      state$b_init <<- if (opts$bias == "separate") res$biases else numeric(0)
      state$t <<- res$t_final
      state$eta <<- res$eta_final
      if (nrow(as.data.frame(res$shrinks))) {
        sh <- as.data.frame(res$shrinks)
        sh$epoch <- e
        sh$chunk <- index
        shrinks[[length(shrinks) + 1L]] <<- sh
      }
      acc_obj <<- acc_obj + res$objective * train$n
      acc_err <<- acc_err + res$train_error * train$n
      acc_n <<- acc_n + train$n
      secs <<- secs + res$seconds_train
      cpu <<- cpu + res$cpu_seconds_train
      esecs <<- esecs + res$seconds_evaluate
      ecpu <<- ecpu + res$cpu_seconds_evaluate
      renorm <<- renorm + res$renormalisations
      last <<- res
      NULL
    })
    objective <- c(objective, acc_obj / acc_n)
    train_error <- c(train_error, acc_err / acc_n)
    if (!is.null(valid_eval)) valid_error <- c(valid_error, valid_eval(last))
    epoch_seconds <- c(epoch_seconds, proc.time()[["elapsed"]] - t_epoch)
    if (!is.null(progress)) progress(e, epochs)
  }
  shrinks <- if (length(shrinks)) do.call(rbind, shrinks) else as.data.frame(last$shrinks)
  list(weights = last$weights, biases = last$biases, bias = last$biases[1],
       objective = objective, train_error = train_error, valid_error = valid_error,
       objective_start = objective_start, epochs_run = epochs, shrinks = shrinks,
       eta_final = state$eta, t_final = state$t, renormalisations = renorm,
       seconds_train = secs, cpu_seconds_train = cpu, seconds_evaluate = esecs,
       cpu_seconds_evaluate = ecpu, epoch_seconds = epoch_seconds)
}

# Margins (binary) or decision values (multiclass) of every row of a source
# (sgd_memory_source(), sgd_file_source()), with the labels, in the shape
# sgd_build_fit() reads as `train`.
sgd_stream_margins <- function(src, res, n_models, multi, n, d) {
  # filled in place, chunk by chunk: one n-vector each, no list of parts
  if (multi) {
    decision <- matrix(0, n, n_models)
    label <- integer(n)
  } else {
    margins <- numeric(n)
    y <- numeric(n)
  }
  offset <- 0
  src$each_chunk(function(ch, index, rows) {
    f <- sgd_res_decision(res, ch, n_models)
    at <- offset + seq_len(ch$n)
    offset <<- offset + ch$n
    if (multi) {
      decision[at, ] <<- f
      label[at] <<- ch$label
    } else {
      margins[at] <<- ch$y * f[, 1]
      y[at] <<- ch$y
    }
    NULL
  })
  out <- list(n = n, d = d, sparse = src$sparse)
  if (multi) {
    out$decision <- as.double(decision)
    out$label <- label
  } else {
    out$margins <- margins
    out$y <- y
  }
  out
}

# Decision values (n x K) of the core-space model in `res` on data in the
# core's layout.
sgd_res_decision <- function(res, data, n_models) {
  call_core(.sgd_decision(sgd_spec(data), as.double(res$weights), as.double(res$biases)))
}

# Error of the model in `res` on labelled data in the core's layout.
sgd_res_error <- function(res, data, n_models) {
  f <- sgd_res_decision(res, data, n_models)
  if (n_models == 1L) return(mean(data$y * f[, 1] <= 0))
  mean(max.col(f, ties.method = "first") != data$label + 1L)
}
