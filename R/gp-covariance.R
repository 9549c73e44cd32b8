# The covariance-operator layer seen from R (src/core/gp/covariance.h): which backend a GP
# fit uses, and the Vecchia ordering and conditioning sets it needs. The C++
# operators live in src/core/gp/ (covariance.h, covariance_dense.cpp,
# covariance_vecchia.cpp).

# The one resolver of approx = "auto" for every GP path. The thresholds
# differ because the work differs, and each was measured for its path:
#   "fit"      gpr_loo(), gpr_pursuit(), gpr_baseline(): a fit runs hundreds
#              to thousands of passes over the operator, so Vecchia pays off
#              early (above vecchia_auto_n labels);
#   "loo"      find_label_issues()'s leave-one-out pass at fixed
#              hyperparameters: one pass, so the exact GP stays affordable
#              much longer (while its three n x n matrices fit
#              `noisylabels.max_gb` and n <= gp_loo_dense_max);
#   "classify" gpc_ep(): EP needs the posterior covariance, whose
#              approximation is FITC ("sparse"), not Vecchia (above
#              gpc_ep_auto_sparse_n labels, or whenever inducing inputs are
#              given).
gp_backend <- function(purpose = c("fit", "loo", "classify"), n, inducing = NULL,
                       limit_gb = getOption("noisylabels.max_gb", 8)) {
  purpose <- match.arg(purpose)
  switch(purpose,
         fit = if (n > vecchia_auto_n) "vecchia" else "dense",
         loo = {
           fits <- 3 * 8 * as.double(n)^2 / 2^30 <= limit_gb
           if (fits && n <= getOption("noisylabels.gp_loo_dense_max", gp_loo_dense_max)) "dense"
           else "vecchia"
         },
         classify = if (!is.null(inducing) || n > gpc_ep_auto_sparse_n) "sparse" else "dense")
}

# "fit": above this many labels approx = "auto" uses Vecchia. Measured on Friedman-5
# with 10% corrupted labels (2 cores, loaded): at n = 3,000 the dense default
# took 821 s and the Vecchia fit 58-100 s with noise-score AUC 0.9996 against
# 1.0000; at n <= 1,000 a Vecchia fit's dense pilot (vecchia_pilot = 1,000) is
# the whole data set, so it cannot be faster there. 2,000 lies between.
vecchia_auto_n <- 2000L

# "loo": which leave-one-out GP find_label_issues() runs at n rows: the exact dense
# one while its three n x n matrices (24 n^2 bytes) fit
# getOption("noisylabels.max_gb", 8) and n <= gp_loo_dense_max (option
# noisylabels.gp_loo_dense_max), the Vecchia operator with
# gp_loo_neighbors neighbours above. 15,000: the dense pass is O(n^3) and
# took 31 s at 10^4 rows on 2 cores (about 3.4x that, near 105 s, at
# 1.5 x 10^4); on the telomere table (10^4 rows, 2 inputs) the exact pass
# gave AUPRC 0.994 against 0.94 with 40 Vecchia neighbours
# (inst/experiments/find_label_issues/real-numbers.R). Vecchia uses 150
# neighbours, not 40: a label's response-Vecchia conditional mean averages
# at most m noisy neighbours where the exact GP averages every label within
# a length-scale, so under heavy noise the approximation improves with m.
# Telomere, 10^4 rows, the same hyperparameters (2 cores, loaded): AUPRC
# 0.934 / 0.953 / 0.968 / 0.975 / 0.986 with 40 / 60 / 100 / 150 / 250
# neighbours in 0.3 / 0.6 / 1.2 / 2.2 / 20 s, exact 0.997 in 33-41 s.
gp_loo_dense_max <- 15000L
gp_loo_neighbors <- 150L


# "classify": gpc_ep(approx = "auto") uses the sparse path above this many training labels. Measured in
# inst/bench/gpc_ep/bench_sparse.R (README there, one run, CPU seconds): with
# the default m = 100 the sparse fit's flip-detection AUC was within 0.0005
# of dense EP's and its test error within 0.15 points at n = 500, 1000 and
# 2000, while dense took 15, 62 and 78 s against 3, 7 and 4 s and grows as
# n^3 (memory 4 n^2 doubles). Up to 1000 labels the exact model costs at
# most about a minute, so it is kept there.
gpc_ep_auto_sparse_n <- 1000L

# Resolve approx / neighbors / threads into list(approx, m, threads).
resolve_approx <- function(approx, n, neighbors, threads, call = parent.frame()) {
  approx <- match_arg(approx, c("auto", "dense", "vecchia"), call = call)
  check_count(neighbors, "neighbors", call = call)
  threads <- check_threads(threads, call = call)
  if (approx == "auto") approx <- gp_backend("fit", n)
  # option noisylabels.vecchia_exact_check = TRUE keeps Vecchia with every
  # earlier label conditioned on (m = n - 1): the exact GP computed by the
  # Vecchia code, for checking it against the dense backend (tests).
  if (approx == "vecchia" && neighbors >= n - 1L &&
      isTRUE(getOption("noisylabels.vecchia_exact_check"))) {
    neighbors <- n - 1L
  } else if (approx == "vecchia" && neighbors >= n - 1L) {
    cli::cli_inform(c("i" = "{.arg neighbors} = {neighbors} conditions every label on all others (n = {n}): using the exact dense GP."),
                    class = "noisylabels_message_dense")
    approx <- "dense"
  }
  list(approx = approx, m = as.integer(neighbors), threads = as.integer(threads))
}

# Inputs in the metric the conditioning sets are chosen in: divided by the
# kernel's length-scales (stationary kernels), times the square root of the
# mixed kernel's precisions, or standardised columns (linear kernel).
vecchia_inputs <- function(x, kernel) {
  par <- kernel$par
  d <- ncol(x)
  if (!is.null(par$lengthscale)) {
    return(sweep(x, 2, rep_len(par$lengthscale, d), "/"))
  }
  if (!is.null(par$precision)) {
    return(sweep(x, 2, sqrt(rep_len(par$precision, d)), "*"))
  }
  standardize_columns(x, center = FALSE)$x
}

# Ordered nearest neighbours: for point i (in the order of the rows of u), the
# m nearest among rows 1..i-1, by kd-tree (RANN). Rows are processed in blocks
# [lo, 2(lo - 1)]: one tree on the rows up to the end of the block, a query of
# k > m candidates filtered to the earlier rows, and a wider query for the few
# rows that kept fewer than m. Exact (not a restriction of the candidates), and
# O(n log n) queries in all. Returns an n x m 0-based matrix, -1 padded.
ordered_neighbors <- function(u, m) {
  n <- nrow(u)
  nn <- matrix(-1L, n, m)
  if (n < 2L || m < 1L) return(nn)
  head_n <- min(n, max(4L * m, 64L))
  for (i in seq_len(head_n)[-1]) {
    prev <- seq_len(i - 1L)
    d2 <- colSums((t(u[prev, , drop = FALSE]) - u[i, ])^2)
    take <- prev[order(d2)][seq_len(min(m, i - 1L))]
    nn[i, seq_along(take)] <- as.integer(take - 1L)
  }
  lo <- head_n + 1L
  while (lo <= n) {
    hi <- min(n, 2L * (lo - 1L))
    rows <- lo:hi
    k <- min(hi, 2L * m + 2L)
    pending <- rows
    while (length(pending)) {
      idx <- RANN::nn2(u[seq_len(hi), , drop = FALSE], u[pending, , drop = FALSE], k = k)$nn.idx
      keep <- idx < pending  # recycled down the columns: row r against pending[r]
      cs <- keep
      storage.mode(cs) <- "integer"
      if (k > 1L) for (j in 2:k) cs[, j] <- cs[, j - 1L] + cs[, j]
      sel <- keep & cs <= m
      pos <- which(sel, arr.ind = TRUE)
      # Each selected neighbour goes to its rank among the row's kept ones.
      nn[cbind(pending[pos[, 1]], cs[pos])] <- as.integer(idx[pos] - 1L)
      short <- cs[, k] < pmin(m, pending - 1L)
      if (!any(short) || k >= hi) break
      pending <- pending[short]
      k <- min(hi, 4L * k)
    }
    lo <- hi + 1L
  }
  nn
}

# The Vecchia set-up of a fit: a random ordering (R's RNG) and the ordered
# neighbours of every label, as 0-based indices into the original rows.
# layout = TRUE adds a storage order for the fit's labels (`layout`, below)
# and the neighbours renumbered into it (`layout_neighbors`).
vecchia_setup <- function(x, kernel, m, layout = FALSE) {
  n <- nrow(x)
  perm <- sample.int(n)
  u_all <- vecchia_inputs(x, kernel)
  u <- u_all[perm, , drop = FALSE]
  # Found in the random order, then numbered as the rows are given.
  nn <- renumber_neighbors(ordered_neighbors(u, m), order(perm))
  out <- list(order = perm, neighbors = nn)
  if (layout && isTRUE(getOption("noisylabels.vecchia_layout", TRUE))) {
    out$layout <- z_order(u_all)
    out$layout_neighbors <- renumber_neighbors(nn, out$layout)
  }
  out
}

# Where the labels of a Vecchia fit are stored. The conditioning order is
# random, so a label's neighbours are scattered over the n-vectors a pass
# reads and adds into, and at 10^6 labels a pass waits on memory. Stored
# along a Z-order curve of the scaled inputs (z_order()),
# a set's neighbours lie near it in memory. The model is the same (each label
# keeps its conditioning set); only the numbering changes, so results agree
# to rounding. options(noisylabels.vecchia_layout = FALSE) stores the labels
# in the order given (tests compare the two).
#
# The rows of u sorted along a Z-order (Morton) curve: each of the (at most
# 4) widest coordinates cut into 2^12 bins, the bin numbers' bits interleaved
# from the highest (48 bits, exact in a double).
z_order <- function(u) {
  n <- nrow(u)
  width <- apply(u, 2L, function(v) diff(range(v)))
  dims <- utils::head(order(width, decreasing = TRUE), 4L)
  dims <- dims[is.finite(width[dims]) & width[dims] > 0]
  if (n < 2L || !length(dims)) return(seq_len(n))
  bins <- 2^12
  code <- numeric(n)
  q <- lapply(dims, function(j) pmin(floor((u[, j] - min(u[, j])) / width[j] * bins), bins - 1))
  for (b in 11:0) {
    for (qj in q) code <- 2 * code + (qj %/% 2^b) %% 2
  }
  order(code)
}

# Neighbours (0-based, -1 padded) renumbered for points stored in the order
# `layout` (row r of the new numbering is row layout[r] of the old one).
renumber_neighbors <- function(neighbors, layout) {
  pos <- integer(length(layout))
  pos[layout] <- seq_along(layout)
  nn <- neighbors[layout, , drop = FALSE]
  ok <- nn >= 0L
  nn[ok] <- as.integer(pos[nn[ok] + 1L] - 1L)
  nn
}

# Conditioning sets of new inputs: their m nearest training points.
vecchia_new_neighbors <- function(x, xnew, kernel, m) {
  m <- min(m, nrow(x))
  u <- vecchia_inputs(x, kernel)
  v <- vecchia_inputs(xnew, kernel)
  idx <- RANN::nn2(u, v, k = m)$nn.idx
  storage.mode(idx) <- "integer"
  idx - 1L
}

# Conditioning-set size for predictions of a Vecchia fit. Each block of at
# most `vecchia_predict_block` nearby new points shares one set of this many
# training points (one O(M^3) factorisation per block, O(M^2) per point).
# n = 3,000 Friedman-5 (inst/bench/gpr_loo_vecchia/n3000.R), 2,000 new points:
# one set of 150 per point gave test RMSE 0.42 and 400 per point 0.37; blocks
# of 32 / 64 / 128 points with 600 / 800 / 1,000 gave 0.36 / 0.35 / 0.33 in
# about the same time (5 s, loaded machine); the exact predictor with the same
# variances 0.30.
vecchia_predict_neighbors <- function(m) max(25L * m, 1000L)
vecchia_predict_block <- 128L

# Blocks of nearby new inputs (recursive median splits along the widest
# coordinate of the scaled inputs, at most `block` points each) and, per
# block, its conditioning set: the union of every member's `m_own` nearest
# training points, filled up to `m` with the training points nearest to the
# block's centre. Returns the new points' order, 0-based block offsets and the
# n_blocks x m matrix of 0-based training indices (-1 padded).
vecchia_predict_sets <- function(x, xnew, kernel, m, m_own, block = vecchia_predict_block) {
  m <- min(m, nrow(x))
  m_own <- min(m_own, m)
  u <- vecchia_inputs(x, kernel)
  v <- vecchia_inputs(xnew, kernel)
  groups <- list()
  split_rows <- function(rows) {
    if (length(rows) <= block) {
      groups[[length(groups) + 1L]] <<- rows
      return(invisible())
    }
    vv <- v[rows, , drop = FALSE]
    j <- which.max(apply(vv, 2, function(c) diff(range(c))))
    o <- rows[order(vv[, j])]
    h <- length(o) %/% 2L
    split_rows(o[seq_len(h)])
    split_rows(o[-seq_len(h)])
  }
  split_rows(seq_len(nrow(v)))
  own <- RANN::nn2(u, v, k = m_own)$nn.idx
  centres <- t(vapply(groups, function(g) colMeans(v[g, , drop = FALSE]), numeric(ncol(v))))
  if (ncol(v) == 1L) centres <- matrix(centres, ncol = 1L)
  near <- RANN::nn2(u, centres, k = m)$nn.idx
  nn <- matrix(-1L, length(groups), m)
  for (b in seq_along(groups)) {
    set <- unique(c(own[groups[[b]], ], near[b, ]))[seq_len(m)]
    set <- set[!is.na(set)]
    nn[b, seq_along(set)] <- as.integer(set - 1L)
  }
  sizes <- lengths(groups)
  list(order = unlist(groups, use.names = FALSE), start = as.integer(c(0L, cumsum(sizes))),
       neighbors = nn)
}

# Rows (matrix) or elements (vector) of v in the storage order `lay` of a
# Vecchia fit, and a per-label result in that order put back in the original
# one; lay = NULL leaves v as it is.
stored_rows <- function(v, lay) {
  if (is.null(lay)) return(v)
  if (is.matrix(v)) v[lay, , drop = FALSE] else v[lay]
}

original_rows <- function(v, lay) {
  if (is.null(lay) || !length(v)) return(v)
  out <- v
  out[lay] <- v
  out
}
