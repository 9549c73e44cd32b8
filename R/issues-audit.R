#' A verified count of wrong labels from a small reviewed sample
#'
#' `audit_sample()` picks the rows a person should check so that the number
#' of wrong labels can be stated with a valid interval from few of them;
#' `estimate_errors()` turns the reviewer's verdicts on those rows into that
#' count, the precision and recall of the result's flags, and a `p_wrong`
#' recalibrated on the reviewed rows; `flag_audited()` (or
#' `find_label_issues(..., audit = )`) flags the labels to a target precision
#' with it.
#'
#' @section Design:
#' The labels are sorted by `p_wrong` and cut into `strata` strata of equal
#' total `sqrt(p (1 - p))` (with `p` clamped to \[0.02, 0.98\]), so that the
#' strata are fine where the model is unsure and coarse where it is sure.
#' Each stratum `h` of `N_h` labels gets `n_h` reviewed rows drawn at random
#' without replacement: 80% of `n` in proportion to `N_h sqrt(mean(p (1 -
#' p)))` (Neyman allocation, were `p_wrong` calibrated) and 20% in proportion
#' to `N_h` (a defensive share, in case it is not), at least
#' `min_per_stratum` each. The inclusion probability of every label of the
#' stratum is `n_h / N_h`; `weight` is its inverse. The sample can be drawn
#' again from the result and `seed`, which `estimate_errors()` does to check
#' that the verdicts are those of this sample.
#'
#' @section Estimate:
#' With `y` the verdict (1 = wrong) and `p` the result's `p_wrong`, the
#' number of wrong labels is estimated by the model-assisted (generalised
#' difference) estimator `b sum(p) + sum_h N_h mean_h(y - b p)` over the
#' reviewed rows of each stratum (prediction-powered inference, Angelopoulos
#' et al. 2023, under a stratified design), whose design variance is
#' `sum_h N_h^2 (1 - n_h / N_h) var_h(y - b p) / n_h`. `b` is the value in
#' \[0, 1\] that minimises that estimated variance: `b = 0` is the audit alone
#' (the stratified estimator), `b = 1` the model's count corrected by the
#' reviewed residuals, so the interval is never wider than the audit-alone
#' one, and it is valid whatever the calibration of `p_wrong` (a bad `p`
#' only gives `b` near 0). Where a stratum's reviewed rows are all right, the
#' variance of `y` there is floored at `t (1 - t)` with `t = 1/2 / (m + 1)`,
#' `m` the number of reviewed rows in all such strata (likewise for strata
#' found all wrong), so that strata that happened to show no errors still
#' count as uncertain, by as much as one stratum of their joint size would
#' (a floor per stratum would grow with the number of strata the design cut
#' the flat region of `p_wrong` into). The interval
#' is normal at `level`, then intersected with what the review proves:
#' at least the number found wrong, at most `N` minus the number found
#' right. With every row reviewed, the estimate is the exact count and the
#' interval a point.
#'
#' The precision of the flags is the estimated number of wrong labels among
#' the flagged (the same estimator on `y * flagged`) over the number flagged;
#' the recall is that over the estimated total, its interval from the
#' intervals of the wrong among the flagged and among the unflagged, each at
#' level `1 - (1 - level) / 2` (a union bound). `p_wrong_audit` is a
#' logistic recalibration of `p_wrong`, `plogis(a + b logit(p_wrong))`, fitted
#' to the verdicts with the design weights (penalised toward `a = 0, b = 1`,
#' the model as it is, by one observation's worth of weight; `b >= 0`).
#'
#' @param result A [find_label_issues()] result (classes or numbers, in
#'   memory or chunked).
#' @param n Number of rows to review.
#' @param seed Seed of the draw; `NULL` draws one from R's random number
#'   generator (so `set.seed()` reproduces the sample). It is kept in the
#'   sample's `design` column.
#' @param strata Number of strata; `NULL` gives `min(10, n %/% 20)` (at least
#'   1).
#' @param min_per_stratum Fewest reviewed rows per stratum (at least 2).
#' @param data Optional: the data the result was computed on; its columns
#'   (the inputs a reviewer reads) are added to the sample.
#' @param audit For `estimate_errors()`: the sample with the reviewer's
#'   verdicts in the logical column `wrong` (every row; `TRUE` = the given
#'   label is wrong), and for classes optionally `true_label`. A CSV export
#'   of the review page read back with [utils::read.csv()] works as well.
#' @param level Level of the intervals.
#' @param ... Unused.
#' @return `audit_sample()`: a data frame of class `noisylabels_audit`, one
#'   row per label to review, in random order: `row`, `given_label`,
#'   `suggested_label` or `suggested_value`, `p_wrong`, `flagged`, `stratum`,
#'   `inclusion` (probability), `weight` (its inverse), `fingerprint` (of the
#'   result's row), `design` (the seed and sizes of the draw), `wrong`
#'   (`NA`, for the verdict), then the columns of `data`.
#'   `estimate_errors()`: an object of class `noisylabels_audit_estimate`:
#'   `wrong_count` (`estimate`, `lower`, `upper`, `rate`, `rate_lower`,
#'   `rate_upper`, `level`, `se`, `audit_only` (the same for the stratified
#'   estimator alone), `model` (the result's own count), `coefficient` (`b`)),
#'   `precision` and `recall` (each `estimate`, `lower`, `upper`),
#'   `p_wrong_audit` (in the order of `label_issues(result)`), `calibration`
#'   (`a`, `b`), `strata` (a data frame per stratum), `n_reviewed`,
#'   `n_wrong`, `level`.
#' @references Angelopoulos, A. N., Bates, S., Fannjiang, C., Jordan, M. I.
#'   and Zrnic, T. (2023). Prediction-powered inference. Science 382,
#'   669-674.
#'
#'   Sarndal, C.-E., Swensson, B. and Wretman, J. (1992). Model Assisted
#'   Survey Sampling. Springer (the generalised difference estimator, 6.3).
#' @seealso [review_report()] with `audit =` to review the sample in the
#'   browser; [label_studio_export()] for Label Studio.
#' @examples
#' set.seed(1)
#' n <- 2000
#' p <- matrix(runif(3 * n)^4, n, 3); p <- p / rowSums(p)
#' truth <- max.col(p)
#' y <- truth; bad <- sample(n, 200); y[bad] <- (y[bad] %% 3) + 1
#' res <- find_label_issues(labels = y, pred_probs = p)
#' a <- audit_sample(res, 100, seed = 1)
#' a$wrong <- y[a$row] != truth[a$row]    # the reviewer's verdicts
#' est <- estimate_errors(res, a)
#' est
#' flagged <- flag_audited(res, a, precision = 0.9)
#' sum(label_issues(flagged)$flagged)
#' @export
audit_sample <- function(result, n, seed = NULL, strata = NULL, min_per_stratum = 2L,
                         data = NULL, ...) {
  check_dots_empty("audit_sample", ...)
  check_result(result)
  n <- check_count(n, "n")
  min_per_stratum <- check_count(min_per_stratum, "min_per_stratum", lower = 2)
  if (!is.null(strata)) strata <- check_count(strata, "strata")
  if (is.null(seed)) seed <- draw_seed() else seed <- check_count(seed, "seed", lower = 0)
  li <- audit_issues(result)
  total <- nrow(li)
  if (!is.null(data)) {
    n_data <- if (is.data.frame(data) || is.matrix(data)) nrow(data) else length(data)
    if (n_data != (result$n_data %||% total)) {
      abort_input("{.arg data} has {n_data} row{?s} but the result was computed on {result$n_data %||% total}.",
                  class = "noisylabels_error_length")
    }
  }
  n <- min(n, total)
  if (is.null(strata)) strata <- max(1L, min(10L, n %/% 20L))
  strata <- max(1L, min(strata, n %/% min_per_stratum))
  design <- audit_design(li$p_wrong, li$row, n, strata, min_per_stratum)
  pick <- audit_draw(design, seed)
  out <- audit_frame(li, pick, design, seed, n, strata, min_per_stratum)
  if (!is.null(data)) {
    inputs <- data_rows_of(result, data, out$row)
    names(inputs) <- make.unique(c(names(out), names(inputs)))[ncol(out) + seq_along(inputs)]
    out <- cbind(out, inputs)
  }
  structure(out, class = c("noisylabels_audit", "data.frame"))
}

# The result's per-label frame with p_wrong, checked.
audit_issues <- function(result, call = parent.frame()) {
  li <- result$label_issues
  if (is.null(li$p_wrong) || anyNA(li$p_wrong)) {
    abort_input(c("This result has no {.field p_wrong} for every label, which the audit design stratifies on.",
                  "i" = "Use a {.fn find_label_issues} result from out-of-fold predictions or probabilities."),
                call = call)
  }
  li
}

audit_frame <- function(li, pick, design, seed, n, strata, min_per_stratum) {
  h <- design$stratum[pick]
  out <- data.frame(row = li$row[pick], stringsAsFactors = FALSE)
  out$given_label <- li$given_label[pick]
  for (nm in intersect(c("suggested_label", "suggested_value", "prediction"), names(li))) {
    out[[nm]] <- li[[nm]][pick]
  }
  out$p_wrong <- li$p_wrong[pick]
  out$flagged <- li$flagged[pick]
  out$stratum <- h
  out$inclusion <- design$alloc[h] / design$size[h]
  out$weight <- 1 / out$inclusion
  out$fingerprint <- audit_fingerprint(li, pick)
  out$design <- sprintf("seed=%d;n=%d;strata=%d;min=%d;N=%d", as.integer(seed), as.integer(n),
                        as.integer(strata), as.integer(min_per_stratum), nrow(li))
  out$wrong <- NA
  rownames(out) <- NULL
  out
}

#' @rdname audit_sample
#' @export
estimate_errors <- function(result, audit, level = 0.9, ...) {
  check_dots_empty("estimate_errors", ...)
  check_result(result)
  check_number(level, "level", lower = 0, upper = 1, open_lower = TRUE)
  if (level >= 1) abort_input("{.arg level} must be below 1.")
  li <- audit_issues(result)
  chk <- check_audit(li, audit)
  pos <- chk$pos
  y <- as.numeric(chk$wrong)
  p <- li$p_wrong
  design <- chk$design
  h <- design$stratum
  flagged <- as.numeric(li$flagged)
  total <- length(p)
  z <- stats::qnorm(1 - (1 - level) / 2)
  count <- audit_total(y, p[pos], h[pos], p, h, design$size, design$alloc, z)
  bound <- function(est, lo_obs, hi_obs) {
    est$lower <- max(est$lower, lo_obs)
    est$upper <- min(est$upper, hi_obs)
    est
  }
  count <- bound(count, sum(y), total - sum(1 - y))
  count$audit_only <- bound(count$audit_only, sum(y), total - sum(1 - y))
  wrong_count <- c(count[c("estimate", "lower", "upper")],
                   list(rate = count$estimate / total, rate_lower = count$lower / total,
                        rate_upper = count$upper / total, level = level, se = count$se,
                        audit_only = count$audit_only[c("estimate", "lower", "upper")],
                        model = sum(p), coefficient = count$coefficient))
  fl <- flagged[pos]
  z2 <- stats::qnorm(1 - (1 - level) / 4)
  n_flag <- sum(flagged)
  in_flag <- function(zq, keep) {
    w <- audit_total(y * keep[pos], p[pos] * keep[pos], h[pos], p * keep, h, design$size,
                     design$alloc, zq)
    bound(w, sum(y * keep[pos]), sum(keep) - sum((1 - y) * keep[pos]))
  }
  tp <- in_flag(z, flagged)
  precision <- if (n_flag > 0) {
    list(estimate = tp$estimate / n_flag, lower = max(0, tp$lower / n_flag),
         upper = min(1, tp$upper / n_flag), flagged = n_flag)
  } else list(estimate = NA_real_, lower = NA_real_, upper = NA_real_, flagged = 0)
  tp2 <- in_flag(z2, flagged)
  fn2 <- in_flag(z2, 1 - flagged)
  ratio <- function(a, b) if (a + b > 0) a / (a + b) else NA_real_
  recall <- list(estimate = ratio(max(tp$estimate, 0), max(count$estimate - tp$estimate, 0)),
                 lower = ratio(max(tp2$lower, 0), max(fn2$upper, 0)),
                 upper = ratio(max(tp2$upper, 0), max(fn2$lower, 0)))
  cal <- recalibrate(y, p[pos], 1 / chk$inclusion)
  cal$p <- cal$fun(p)
  strata_tab <- data.frame(stratum = seq_along(design$size), labels = design$size,
                           reviewed = design$alloc,
                           p_wrong_min = as.vector(tapply(p, h, min)),
                           p_wrong_max = as.vector(tapply(p, h, max)),
                           model_wrong = as.vector(rowsum(p, h, reorder = TRUE)),
                           found_wrong = tabulate(h[pos][y == 1], length(design$size)))
  structure(list(wrong_count = wrong_count, precision = precision, recall = recall,
                 p_wrong_audit = cal$p, calibration = cal$coef, strata = strata_tab,
                 n_reviewed = length(y), n_wrong = sum(y), n = total, level = level,
                 task = result$task),
            class = "noisylabels_audit_estimate")
}

# Model-assisted total of y (reviewed rows: y_s, p_s, h_s) with the
# population's p and strata, its variance, and the stratified estimator
# alone; b in [0, 1] minimises the estimated variance.
audit_total <- function(y_s, p_s, h_s, p, h, size, alloc, z) {
  nh <- length(size)
  cnt <- tabulate(h_s, nh)
  sum_by <- function(v) as.vector(rowsum(v, factor(h_s, levels = seq_len(nh)), reorder = TRUE))
  ybar <- sum_by(y_s) / cnt
  pbar <- sum_by(p_s) / cnt
  dm <- pmax(cnt - 1, 1)
  syy <- (sum_by(y_s^2) - cnt * ybar^2) / dm
  spp <- pmax((sum_by(p_s^2) - cnt * pbar^2) / dm, 0)
  syp <- (sum_by(y_s * p_s) - cnt * ybar * pbar) / dm
  # Variance floor where the stratum's verdicts are all equal (binary y).
  x <- sum_by(y_s)
  binary <- all(y_s %in% c(0, 1))
  if (binary) {
    # The pseudo-count is pooled over the strata that showed no error (and
    # over those that showed only errors): a stratum's floor then does not
    # depend on how finely the design cut the region where p_wrong is flat.
    none <- x == 0 & cnt < size
    all_wrong <- x == cnt & cnt < size & !none
    t0 <- 0.5 / (sum(cnt[none]) + 1)
    t1 <- 0.5 / (sum(cnt[all_wrong]) + 1)
    if (!getOption("noisylabels.audit_pool_floor", TRUE)) {
      t0 <- 0.5 / (cnt + 1)
      t1 <- t0
    }
    syy <- pmax(syy, ifelse(none, t0 * (1 - t0), ifelse(all_wrong, t1 * (1 - t1), 0)))
  }
  syy <- pmax(syy, 0)
  fpc <- pmax(1 - cnt / size, 0)
  a <- size^2 * fpc / cnt
  p_tot <- as.vector(rowsum(p, factor(h, levels = seq_len(nh)), reorder = TRUE))
  den <- sum(a * spp)
  b <- if (den > 0) min(1, max(0, sum(a * syp) / den)) else 1
  one <- function(b) {
    est <- b * sum(p_tot) + sum(size * (ybar - b * pbar))
    v <- sum(a * pmax(syy - 2 * b * syp + b^2 * spp, 0))
    list(estimate = est, lower = est - z * sqrt(v), upper = est + z * sqrt(v), se = sqrt(v))
  }
  out <- one(b)
  out$coefficient <- b
  out$audit_only <- one(0)
  out
}

# Weighted logistic recalibration of p_wrong on its logit, penalised toward
# the identity (a = 0, b = 1) with the weight of one observation; b in
# [0, 20] (box-constrained quasi-Newton: a projected Newton step diverges
# when the verdicts barely depend on p_wrong).
recalibrate <- function(y, p_s, w) {
  eps <- 1e-6
  lg <- function(p) stats::qlogis(pmin(pmax(p, eps), 1 - eps))
  xs <- lg(p_s)
  w <- w / mean(w)
  nll <- function(th) {
    eta <- th[1] + th[2] * xs
    sum(w * (log1p(exp(-abs(eta))) + pmax(eta, 0) - y * eta)) + 0.5 * sum((th - c(0, 1))^2)
  }
  grad <- function(th) {
    r <- w * (stats::plogis(th[1] + th[2] * xs) - y)
    c(sum(r), sum(r * xs)) + (th - c(0, 1))
  }
  fit <- stats::optim(c(0, 1), nll, grad, method = "L-BFGS-B", lower = c(-Inf, 0), upper = c(Inf, 20))
  theta <- fit$par
  list(coef = c(a = theta[1], b = theta[2]),
       fun = function(p) stats::plogis(theta[1] + theta[2] * lg(p)))
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
