# The sampling design of an audit (strata, allocation, the draw), the checks
# that an audit belongs to a result and its sample, and the row fingerprints
# shared with the review page and apply_review().

# The audit's verdicts, checked against the sample drawn again from the
# result and the audit's design: every sampled row once, no other row, a
# logical verdict for each, and the result's rows as they were when the
# sample was drawn (fingerprints). Returns the positions of the audited rows
# in label_issues (audit order), the verdicts, the design and the rows'
# inclusion probabilities.
check_audit <- function(li, audit, call = parent.frame()) {
  if (!is.data.frame(audit)) {
    abort_input("{.arg audit} must be a data frame from {.fn audit_sample} with the verdicts in {.field wrong}.",
                class = "noisylabels_error_audit", call = call)
  }
  need <- c("row", "design", "fingerprint")
  miss <- setdiff(need, names(audit))
  if (length(miss)) {
    abort_input(c("{.arg audit} lacks column{?s} {.field {miss}}.",
                  "i" = "Start from {.fn audit_sample} and add the verdicts as a logical column {.field wrong}."),
                class = "noisylabels_error_audit", call = call)
  }
  wrong <- audit$wrong
  if (is.null(wrong) || all(is.na(wrong))) {
    if (!is.null(audit$true_label) && !anyNA(audit$true_label)) {
      wrong <- as.character(audit$true_label) != as.character(audit$given_label)
    }
  }
  if (is.null(wrong)) {
    abort_input("{.arg audit} has no {.field wrong} column with the reviewer's verdicts.",
                class = c("noisylabels_error_audit_verdict", "noisylabels_error_audit"), call = call)
  }
  if (!is.logical(wrong)) {
    abort_input(c("The verdicts in {.field wrong} must be logical ({.val TRUE} = the given label is wrong), not {.cls {class(wrong)}}.",
                  "i" = "Convert them, e.g. {.code audit$wrong <- audit$wrong == \"yes\"}."),
                class = c("noisylabels_error_audit_verdict", "noisylabels_error_audit"), call = call)
  }
  if (anyNA(wrong)) {
    abort_input(c("{sum(is.na(wrong))} audited row{?s} {?has/have} no verdict (row{?s} {utils::head(audit$row[is.na(wrong)], 5)}).",
                  "i" = "The interval is valid for the whole sample only: review every row of it."),
                class = c("noisylabels_error_audit_verdict", "noisylabels_error_audit"), call = call)
  }
  rows <- suppressWarnings(as.numeric(audit$row))
  if (anyNA(rows) || any(rows != round(rows))) {
    abort_input("{.field row} of {.arg audit} must hold row numbers.",
                class = c("noisylabels_error_audit_rows", "noisylabels_error_audit"), call = call)
  }
  if (anyDuplicated(rows)) {
    abort_input("Row{?s} {unique(rows[duplicated(rows)])} {?is/are} in {.arg audit} more than once.",
                class = c("noisylabels_error_audit_rows", "noisylabels_error_audit"), call = call)
  }
  spec <- parse_design(unique(as.character(audit$design)), call)
  if (spec[["N"]] != nrow(li)) {
    abort_input(c("{.arg audit} was drawn from a result of {spec[['N']]} labels, not from this one ({nrow(li)}).",
                  "i" = "Estimate with the result the sample was drawn from."),
                class = c("noisylabels_error_audit_result", "noisylabels_error_audit"), call = call)
  }
  pos <- match(rows, li$row)
  # Rows whose label or p_wrong differ from the result's: most of them, the
  # audit comes from another result; a few, those rows were edited.
  mismatch <- rep(TRUE, length(pos))
  known <- !is.na(pos)
  mismatch[known] <- as.character(audit$fingerprint[known]) != audit_fingerprint(li, pos[known])
  from_other <- function() {
    abort_input(c("{.arg audit} was not drawn from this result: its rows' labels or {.field p_wrong} differ.",
                  "i" = "Estimate with the result the sample was drawn from."),
                class = c("noisylabels_error_audit_result", "noisylabels_error_audit"), call = call)
  }
  if (mean(mismatch) > 0.5) from_other()
  design <- audit_design(li$p_wrong, li$row, spec[["n"]], spec[["strata"]], spec[["min"]])
  pick <- audit_draw(design, spec[["seed"]])
  outside <- is.na(pos) | !pos %in% pick
  if (any(outside)) {
    abort_input(c("Row{?s} {utils::head(rows[outside], 5)} {?is/are} not in the audit sample.",
                  "i" = "Only the rows {.fn audit_sample} drew have known inclusion probabilities; review those."),
                class = c("noisylabels_error_audit_rows", "noisylabels_error_audit"), call = call)
  }
  if (any(mismatch)) from_other()
  absent <- setdiff(pick, pos)
  if (length(absent)) {
    abort_input(c("{length(absent)} row{?s} of the sample {?is/are} missing from {.arg audit} (row{?s} {utils::head(li$row[absent], 5)}).",
                  "i" = "The interval is valid for the whole sample only: give a verdict for every row of it."),
                class = c("noisylabels_error_audit_verdict", "noisylabels_error_audit"), call = call)
  }
  list(pos = pos, wrong = wrong, design = design,
       inclusion = design$alloc[design$stratum[pos]] / design$size[design$stratum[pos]])
}

parse_design <- function(design, call) {
  bad <- function() {
    abort_input("The {.field design} column of {.arg audit} is not one written by {.fn audit_sample}.",
                class = c("noisylabels_error_audit_result", "noisylabels_error_audit"), call = call)
  }
  if (length(design) != 1L || is.na(design)) bad()
  parts <- strsplit(strsplit(design, ";", fixed = TRUE)[[1]], "=", fixed = TRUE)
  vals <- suppressWarnings(as.numeric(vapply(parts, function(x) x[2] %||% NA_character_, "")))
  names(vals) <- vapply(parts, `[`, "", 1)
  if (!all(c("seed", "n", "strata", "min", "N") %in% names(vals)) || anyNA(vals)) bad()
  vals
}

# Fingerprints of strings: two polynomial hashes mod primes below 2^31 over
# the UTF-8 bytes, as 16 hex digits. Vectorised over the strings (one pass
# per byte position), no package needed; used for the result's rows in an
# audit and for the data rows in the review page's decisions.
fingerprint_strings <- function(x) {
  x <- enc2utf8(as.character(x))
  x[is.na(x)] <- "\001NA"
  if (!length(x)) return(character())
  bytes <- lapply(x, function(s) as.integer(charToRaw(s)))
  len <- lengths(bytes)
  width <- max(len, 1L)
  mat <- matrix(0L, length(x), width)
  if (sum(len)) mat[cbind(rep(seq_along(x), len), sequence(len))] <- unlist(bytes)
  m1 <- 2147483647; m2 <- 2147483629
  h1 <- rep(7, length(x)); h2 <- rep(11, length(x))
  for (j in seq_len(width)) {
    on <- j <= len
    h1[on] <- (h1[on] * 131 + mat[on, j] + 1) %% m1
    h2[on] <- (h2[on] * 257 + mat[on, j] + 1) %% m2
  }
  h1 <- (h1 * 131 + len) %% m1
  h2 <- (h2 * 257 + len) %% m2
  sprintf("%08x%08x", as.integer(h1), as.integer(h2))
}

# One fingerprint per row of a data frame (or element of a vector): every
# column's value as text, in column order.
fingerprint_rows <- function(data, rows) {
  if (is.data.frame(data) || is.matrix(data)) {
    d <- as.data.frame(data, stringsAsFactors = FALSE)[rows, , drop = FALSE]
    txt <- do.call(paste, c(lapply(d, function(v) {
      if (is.double(v)) formatC(v, digits = 10, format = "g") else as.character(v)
    }), sep = "\037"))
  } else {
    v <- data[rows]
    txt <- if (is.double(v)) formatC(v, digits = 10, format = "g") else as.character(v)
  }
  fingerprint_strings(paste(rows, txt, sep = "\036"))
}

# A row of the result: its number, given label and p_wrong (6 digits).
audit_fingerprint <- function(li, pos) {
  fingerprint_strings(paste(li$row[pos], as.character(li$given_label[pos]),
                            formatC(li$p_wrong[pos], digits = 6, format = "g"), sep = "\r"))
}

# Strata of equal total sqrt(p (1 - p)) along the labels sorted by p_wrong
# (ties by row), and the number to review in each. Returns the stratum of
# every label (in the order of `p`), the sizes N_h and allocations n_h.
audit_design <- function(p, row, n, strata, min_per_stratum) {
  total <- length(p)
  ord <- order(p, row)
  clamp <- getOption("noisylabels.audit_clamp", 0.02)
  pc <- pmin(pmax(p, clamp), 1 - clamp)
  spread <- sqrt(pc * (1 - pc))
  cum <- cumsum(spread[ord]) / sum(spread)
  h_sorted <- pmin(strata, floor(cum * strata * (1 - 1e-12)) + 1L)
  # Every stratum must hold at least min_per_stratum labels: merge small
  # ones into their neighbour below (or above for the first).
  sizes <- tabulate(h_sorted, strata)
  while (any(sizes < min_per_stratum) && length(sizes) > 1L) {
    k <- which(sizes < min_per_stratum)[1]
    into <- if (k > 1L) k - 1L else 2L
    h_sorted[h_sorted == k] <- into
    h_sorted <- match(h_sorted, sort(unique(h_sorted)))
    sizes <- tabulate(h_sorted)
  }
  stratum <- integer(total)
  stratum[ord] <- h_sorted
  big_n <- tabulate(stratum, length(sizes))
  s_h <- sqrt(as.vector(rowsum(pc * (1 - pc), stratum, reorder = TRUE)) / big_n)
  defensive <- getOption("noisylabels.audit_defensive", 0.2)
  share <- (1 - defensive) * big_n * s_h / sum(big_n * s_h) + defensive * big_n / total
  list(stratum = stratum, size = big_n, alloc = allocate(n, share, big_n, min_per_stratum))
}

# The reviewed rows (positions in label_issues) for a design and seed; the
# session's random number stream is left as it was.
audit_draw <- function(design, seed) {
  old <- if (exists(".Random.seed", envir = globalenv(), inherits = FALSE))
           get(".Random.seed", envir = globalenv(), inherits = FALSE)
  on.exit(if (is.null(old)) rm(".Random.seed", envir = globalenv())
          else assign(".Random.seed", old, envir = globalenv()))
  set.seed(seed, kind = "Mersenne-Twister", normal.kind = "Inversion", sample.kind = "Rejection")
  pos <- split(seq_along(design$stratum), design$stratum)
  pick <- unlist(lapply(seq_along(pos), function(h) {
    m <- design$alloc[h]
    if (m >= length(pos[[h]])) pos[[h]] else pos[[h]][sample.int(length(pos[[h]]), m)]
  }), use.names = FALSE)
  pick[sample.int(length(pick))]
}

# Integer allocation of n over strata proportional to `share`, each between
# `lower` (or its size) and its size: largest remainders, capped strata
# removed and the rest reallocated.
allocate <- function(n, share, size, lower) {
  lo <- pmin(size, lower)
  alloc <- lo
  free <- rep(TRUE, length(size))
  repeat {
    left <- n - sum(alloc)
    free <- free & alloc < size
    if (left <= 0 || !any(free)) break
    want <- alloc
    want[free] <- alloc[free] + left * share[free] / sum(share[free])
    capped <- free & want >= size
    if (any(capped)) {
      alloc[capped] <- size[capped]
      next
    }
    base <- floor(want)
    rest <- n - sum(base)
    if (rest > 0) {
      extra <- order(-(want - base) * free)[seq_len(rest)]
      base[extra] <- base[extra] + 1
    }
    alloc <- pmin(base, size)
    break
  }
  as.integer(alloc)
}
