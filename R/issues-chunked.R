# Confident learning on probabilities read chunk by chunk, for matrices that
# do not fit comfortably in memory. Three passes over the chunks, each chunk
# handed whole to a C++ kernel (src/core/issues/confident_learning.h) as one
# job (cl_chunk_job()), whose part the main process combines in row order:
#   1. per-class thresholds (P[i, given] per row from each chunk, added per
#      class in row order, so the sums are the in-memory ones bit for bit);
#   2. the confident joint, each row's confident class and the rows on which
#      the ranking's noise matrix is chosen (cl_fit_rows());
#   3. per-label scores and the model's most probable classes.
# The decision (count, p_wrong, flags) and the result are then built by the
# in-memory path's own cl_result().
# The kernel repeats the in-memory R code's operations in its order, so the
# answer equals the in-memory answer exactly (tests/testthat/
# test-issues-chunked.R compares them). Chunks of a file are future jobs
# that read their own rows (R/issues-chunked-jobs.R), so any plan() spreads
# them and the answer does not depend on it. Besides the per-label output,
# one chunk and its part are held at a time under the default sequential
# plan.
#
# Sources (`pred_probs`):
#   - a file path: "*.csv" / "*.txt" is headerless comma-separated text, one
#     row per label; any other name is raw little-endian doubles in row-major
#     order (numpy's `p.astype("<f8").tofile(path)`), the number of classes
#     being the file size / (8 x number of labels);
#   - a function `f(i)` returning the i-th chunk (a numeric matrix or data
#     frame with one column per class; i = 1, 2, ...) or NULL after the last
#     one. It is called once per pass, so it must return the same chunks each
#     time; it is a generator, so its chunks are processed in this process,
#     one after the other. A matrix in memory is passed as such a function by
#     the user.
# Chunk size for files: getOption("noisylabels.chunk_rows", 1e6).

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
  # Pass 1: thresholds. Every pass hands each chunk's part to a combining
  # step, which adds it up or assigns it into its rows: the per-label
  # vectors are fresh and referenced by one name only, so R assigns the rows
  # in place and never copies a whole vector per chunk.
  sums <- numeric(k)
  cl_each_chunk(src, n, call, "given", lab, NULL, function(part, offset, rows) {
    sums <<- call_core(.cl_add_sums(part$given, lab, offset, sums), call = call)
  })
  counts <- tabulate(lab, k)
  chk$counts <- counts
  thr <- sums / counts
  # Pass 2: confident joint (integer counts: the order of the chunks does not
  # matter) and the rows of the noise-model fit.
  joint <- matrix(0L, k, k)
  confident <- integer(n)
  fit <- cl_fit_rows(n)
  p_fit <- matrix(0, length(fit), k)
  cl_each_chunk(src, n, call, "joint", lab, list(thresholds = thr), fit = fit,
                function(part, offset, rows) {
    joint <<- joint + part$joint
    confident[offset + seq_len(rows)] <<- part$confident
    at <- which(fit > offset & fit <= offset + rows)
    if (length(at)) p_fit[at, ] <<- part$p_fit
  })
  cl <- cl_estimate_from(thr, joint, confident, counts, chk$classes)
  rm(confident)
  model <- cl_rank_model(lab[fit], p_fit, cl$calibrated_joint)
  # Pass 3: per-label scores: the ranking's posterior under model$noise and
  # the model's own most probable classes.
  score_model <- list(rank_by = rank_by, adjust = adjust, thresholds = thr,
                      rank_noise = model$noise)
  sc <- list(quality = numeric(n), prob_given = numeric(n), best = integer(n),
             other = integer(n), prob_other = numeric(n))
  cl_each_chunk(src, n, call, "scores", lab, score_model,
                function(part, offset, rows) {
    at <- offset + seq_len(rows)
    for (v in names(sc)) sc[[v]][at] <<- part$out[[v]]
  })
  rm(src)
  sc$p_other <- pmin(pmax(1 - sc$prob_given, 0), 1)
  cl_result(labels, chk, sc, NULL, cl, model, rank_by, adjust, flag_by, n_issues, fdr, method,
            pred_probs = NULL)
}
