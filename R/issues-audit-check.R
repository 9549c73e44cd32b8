# Checks that an audit belongs to a result and its sample, flags to a target
# precision from an audit, and the row fingerprints shared with the review
# page and apply_review().

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

#' @rdname audit_sample
#' @param precision Target precision of the flags (`flag_audited()`).
#' @return `flag_audited()`: `result` with the labels flagged so that their
#'   expected precision under the recalibrated `p_wrong_audit` is at least
#'   `precision` (the most suspect labels by `p_wrong`, as many as keep the
#'   mean `p_wrong_audit` of the flagged at or above it), `p_wrong_audit`
#'   added to `label_issues`, `flag_by = "audit"`, `wrong_count` the audited
#'   count and `audit` the [estimate_errors()] object.
#' @export
flag_audited <- function(result, audit, precision = 0.9, level = 0.9) {
  check_result(result)
  check_number(precision, "precision", lower = 0, upper = 1, open_lower = TRUE)
  est <- estimate_errors(result, audit, level = level)
  li <- result$label_issues
  pa <- est$p_wrong_audit
  ord <- order(-li$p_wrong, li$row)
  run <- cumsum(pa[ord]) / seq_along(ord)
  k <- if (any(run >= precision)) max(which(run >= precision)) else 0L
  flagged <- logical(nrow(li))
  flagged[ord[seq_len(k)]] <- TRUE
  li$flagged <- flagged
  li$p_wrong_audit <- pa
  result$label_issues <- li
  result$flag_by <- "audit"
  result$fdr <- 1 - precision
  result$wrong_count <- est$wrong_count
  result$audit <- est
  result
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
