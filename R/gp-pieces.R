# The Vecchia leave-one-out pass of find_label_issues' GP path in pieces,
# as future jobs, so that plan(multisession) or a cluster plan
# (future.batchtools) spreads it over processes or machines.
#
# Given the kernel, the Vecchia terms of the points are independent: point
# i's conditioning set S = (N(i), i) gives one small Cholesky factor, its
# column of U (Q = U U') and its nll term (src/core/gp/covariance_vecchia.cpp). A
# piece is a block of consecutive points; the main process sends each job
# only the rows its sets touch (the block and its neighbours, re-indexed:
# never x whole), the job runs the operator's own per-point pass on them
# (VecchiaCovariance::set_rows(), one thread) and returns its contributions
# to Q y and diag(Q), and the main process adds them up in block order.
# Block boundaries depend on n and the number of pieces only, so the answer
# is identical() whatever the plan; it equals the in-process pass (OpenMP,
# `threads`) up to the order of the additions (~1e-15 relative).
#
# getOption("noisylabels.vecchia_pieces"): the number of pieces; NULL (the
# default) runs the pass in this process on `threads` threads, as before.

# The number of pieces asked for, or NULL.
vecchia_pieces_option <- function(n, call = parent.frame()) {
  pieces <- getOption("noisylabels.vecchia_pieces")
  if (is.null(pieces)) return(NULL)
  check_count(pieces, "noisylabels.vecchia_pieces", upper = 1e5, call = call)
  as.integer(min(pieces, n))
}

# The local problem of piece b of `pieces` over n points: the block's rows
# and their neighbours (sorted), the neighbour matrix in local numbers
# (points outside the block condition on nothing: their sets are not
# visited), and the block's rows in local numbers (0-based).
vecchia_piece_args <- function(b, pieces, x, y, spec, noise_var, neighbors) {
  n <- nrow(x)
  cuts <- round(seq(0, n, length.out = pieces + 1))
  rows <- seq.int(cuts[b] + 1, length.out = cuts[b + 1] - cuts[b])
  nb <- neighbors[rows, , drop = FALSE]
  points <- sort(unique(c(rows, nb[nb >= 0L] + 1L)))
  local <- matrix(-1L, length(points), ncol(neighbors))
  at <- match(rows, points)
  local[at, ] <- ifelse(nb >= 0L, match(nb + 1L, points) - 1L, -1L)
  list(x = x[points, , drop = FALSE], y = y[points], spec = spec, noise_var = noise_var[points],
       neighbors = local, rows = at - 1L, points = points)
}

# One job: the piece's pass (C++), with the global numbers of its points.
vecchia_piece_job <- function(x, y, spec, noise_var, neighbors, rows, points) {
  part <- call_core(.gp_vecchia_piece(x, y, spec, noise_var, neighbors, rows))
  part$points <- points
  part
}

# Q y and diag(Q) of the Vecchia model from `pieces` future jobs, added in
# piece order; then the leave-one-out residual and sd as .gp_loo() forms them.
vecchia_loo_pieces <- function(x, y, spec, noise_var, neighbors, pieces) {
  n <- nrow(x)
  alpha <- numeric(n)
  q <- numeric(n)
  jitter <- 0
  future_jobs(pieces, function(b) vecchia_piece_args(b, pieces, x, y, spec, noise_var, neighbors),
              vecchia_piece_job, function(b, part) {
    alpha[part$points] <<- alpha[part$points] + part$alpha
    q[part$points] <<- q[part$points] + part$inv_diag
    jitter <<- max(jitter, part$jitter)
  })
  list(residual = alpha / q, sd = sqrt(1 / q), jitter = jitter)
}
