# 200 audits of n = 200 rows on each dev file, the answer key as the
# reviewer: coverage of the 90% interval of estimate_errors(), its median
# half-width over the true count, against the exact (hypergeometric)
# interval of a simple random sample of the same n, and the realised
# precision of flag_audited(precision = 0.9).
#   Rscript fit-results.R OUTDIR   # once: the find_label_issues() results
#   Rscript audit.R OUTDIR         # writes OUTDIR/audit-table.csv
suppressMessages(library(noisylabels))
out <- commandArgs(TRUE)[1]
if (is.na(out)) out <- "audit-results"
reps <- as.integer(Sys.getenv("AUDIT_REPS", "200"))
n_audit <- 200
level <- 0.9

# Exact interval for the number M of wrong labels among N from x wrong in a
# simple random sample of n (hypergeometric inversion, equal tails).
srs_exact <- function(x, n, N, level) {
  a <- (1 - level) / 2
  M <- 0:N
  up <- stats::phyper(x - 1, M, N - M, n, lower.tail = FALSE)   # P(X >= x | M)
  lo <- stats::phyper(x, M, N - M, n)                            # P(X <= x | M)
  c(lower = min(M[up > a]), upper = max(M[lo > a]))
}
auroc <- function(score, wrong) {
  r <- rank(score)
  n1 <- sum(wrong); n0 <- length(wrong) - n1
  (sum(r[wrong]) - n1 * (n1 + 1) / 2) / (n1 * n0)
}

rows <- list()
for (f in sort(list.files(out, "\\.rds$", full.names = TRUE))) {
  fit <- readRDS(f)
  res <- fit$result
  li <- label_issues(res)
  truth <- fit$wrong[li$row]          # in the order of label_issues()
  wrong_by_row <- fit$wrong
  N <- length(truth); M <- sum(truth)
  # Can the ranking reach precision 0.9 at all (some top-k, k >= 20)?
  ord <- order(-li$p_wrong, li$row)
  prec_k <- cumsum(truth[ord]) / seq_along(ord)
  reachable <- any(prec_k[20:N] >= 0.9)
  t0 <- proc.time()[["elapsed"]]
  sims <- vapply(seq_len(reps), function(s) {
    a <- audit_sample(res, n_audit, seed = s)
    a$wrong <- wrong_by_row[a$row]
    est <- estimate_errors(res, a, level = level)
    wc <- est$wrong_count
    fl <- flag_audited(res, a, precision = 0.9)
    flagged <- label_issues(fl)$flagged
    set.seed(10000 + s)
    srs <- sample(N, n_audit)
    ex <- srs_exact(sum(truth[srs]), n_audit, N, level)
    c(cover = wc$lower <= M && M <= wc$upper, half = (wc$upper - wc$lower) / 2,
      half_audit_only = (wc$audit_only$upper - wc$audit_only$lower) / 2,
      cover_srs = ex[["lower"]] <= M && M <= ex[["upper"]], half_srs = (ex[["upper"]] - ex[["lower"]]) / 2,
      n_flag = sum(flagged), prec = if (any(flagged)) mean(fit$wrong[li$row[flagged]]) else NA,
      prec_cover = est$precision$lower <= mean(truth[li$flagged]) && mean(truth[li$flagged]) <= est$precision$upper,
      recall_cover = {r <- sum(truth & li$flagged) / M; est$recall$lower <= r && r <= est$recall$upper})
  }, numeric(9))
  secs <- (proc.time()[["elapsed"]] - t0) / reps
  rows[[length(rows) + 1]] <- data.frame(
    file = fit$name, labels = N, wrong = M, rate = M / N, auroc = auroc(li$p_wrong, truth),
    model_count = sum(li$p_wrong), coverage = mean(sims["cover", ]),
    half_width = median(sims["half", ]) / M, half_width_audit_only = median(sims["half_audit_only", ]) / M,
    half_width_srs = median(sims["half_srs", ]) / M, coverage_srs = mean(sims["cover_srs", ]),
    narrower_than_srs = 1 - median(sims["half", ]) / median(sims["half_srs", ]),
    reachable = reachable, flags = median(sims["n_flag", ]), precision = mean(sims["prec", ], na.rm = TRUE),
    no_flags = mean(sims["n_flag", ] == 0), precision_coverage = mean(sims["prec_cover", ]),
    recall_coverage = mean(sims["recall_cover", ]), seconds_per_audit = secs)
  print(rows[[length(rows)]], digits = 3)
}
tab <- do.call(rbind, rows)
utils::write.csv(tab, file.path(out, "audit-table.csv"), row.names = FALSE)
print(tab, digits = 3)
