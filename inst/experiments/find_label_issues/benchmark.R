# find_label_issues() on regression tables with real, recorded label errors
# (cleanlab/regression-label-error-benchmark; see ../../../../shared/data/
# real-label-errors/SOURCE.md) and on the package's synthetic generators.
#
# For every table, in the same run and on all rows:
#   * baseline: ranger with its defaults (500 trees, min.node.size 5), 5-fold
#     out-of-fold predictions, score |y - prediction| (the reference of the
#     issue and of SOURCE.md);
#   * default:  find_label_issues(given_label ~ ., data) with every default.
# The answer key (true_error, true_label) is used only to score.
# AUROC is detection_metrics()$auc; AUPRC is average precision (mean of the
# precision at each recorded error in the ranking by decreasing score).
# Both use one thread (ranger num.threads = 1, OPENBLAS_NUM_THREADS=1) so the
# times compare like with like on a shared machine.
#
# Run from the package root after installing the package:
#   OPENBLAS_NUM_THREADS=1 Rscript inst/experiments/find_label_issues/benchmark.R
# Environment: NOISYLABELS_SHARED_DATA (folder holding real-label-errors/),
# FLI_SKIP_SYNTHETIC=1 to run only the real tables, FLI_SEED (default 1) for
# the seed set before each method on each table.
suppressPackageStartupMessages(library(noisylabels))
stopifnot(requireNamespace("ranger", quietly = TRUE))

data_dir <- Sys.getenv("NOISYLABELS_SHARED_DATA", "../shared/data")
real_dir <- file.path(data_dir, "real-label-errors")
if (!dir.exists(real_dir)) real_dir <- "/work/shared/data/real-label-errors"

auprc <- function(score, truth) {
  o <- order(-score)
  hits <- cumsum(truth[o])
  sum((hits / seq_along(hits))[truth[o]]) / sum(truth)
}

ranger_baseline <- function(x, y, folds = 5) {
  df <- as.data.frame(x)
  fold <- sample(rep_len(seq_len(folds), nrow(df)))
  pred <- numeric(nrow(df))
  for (k in seq_len(folds)) {
    tr <- fold != k
    fit <- ranger::ranger(x = df[tr, , drop = FALSE], y = y[tr], num.threads = 1)
    pred[!tr] <- predict(fit, df[!tr, , drop = FALSE], num.threads = 1)$predictions
  }
  abs(y - pred)
}

seed <- as.integer(Sys.getenv("FLI_SEED", "1"))
one_table <- function(name, data, truth, formula) {
  x <- model.matrix(formula, data)[, -1, drop = FALSE]
  y <- model.response(model.frame(formula, data))
  set.seed(seed)
  t_base <- system.time(base <- ranger_baseline(x, y))[["elapsed"]]
  set.seed(seed)
  t_def <- system.time(res <- find_label_issues(formula, data = data, verbose = FALSE))[["elapsed"]]
  s <- noise_scores(res)
  flagged <- logical(length(truth))
  flagged[res$label_issues$row[res$label_issues$flagged]] <- TRUE
  data.frame(
    table = name, n = nrow(data), inputs = ncol(x), errors = sum(truth),
    base_auroc = detection_metrics(base, truth)$auc, base_auprc = auprc(base, truth),
    base_s = t_base,
    def_auroc = detection_metrics(s, truth)$auc, def_auprc = auprc(s, truth), def_s = t_def,
    def_model = if (grepl("^GP", res$method)) "gp" else "forest",
    estimated = res$estimated_issues,
    flag_precision = if (any(flagged)) mean(truth[flagged]) else NA_real_,
    flag_recall = sum(flagged & truth) / sum(truth))
}

rows <- list()
cat("Real tables (all rows)\n")
air <- read.csv(file.path(real_dir, "airquality_co.csv"), check.names = FALSE)[, -1]
tel <- read.csv(file.path(real_dir, "telomere_ts.csv"), check.names = FALSE)[, -1]
key <- c("true_error", "true_label")
rows$air <- one_table("airquality_co", air[, setdiff(names(air), key)], air$true_error == 1,
                      given_label ~ .)
print(rows$air, digits = 3, row.names = FALSE)
rows$tel <- one_table("telomere_ts", tel[, setdiff(names(tel), key)], tel$true_error == 1,
                      given_label ~ .)
print(rows$tel, digits = 3, row.names = FALSE)

if (!nzchar(Sys.getenv("FLI_SKIP_SYNTHETIC"))) {
  cat("Synthetic (n = 2000, 5% of labels replaced by uniform draws)\n")
  set.seed(20)
  for (d in c(5, 10)) {
    s <- sim_friedman(2000, d = d, corruption = "uniform", prob = 0.05)
    rows[[paste0("friedman", d)]] <- one_table(sprintf("friedman d=%d", d), data.frame(s$x, y = s$y),
                                                s$is_corrupted, y ~ .)
    print(rows[[paste0("friedman", d)]], digits = 3, row.names = FALSE)
  }
  s <- sim_hartmann6(2000, corruption = "uniform", prob = 0.05)
  rows$hartmann6 <- one_table("hartmann6", data.frame(s$x, y = s$y), s$is_corrupted, y ~ .)
  print(rows$hartmann6, digits = 3, row.names = FALSE)
}

tab <- do.call(rbind, rows)
rownames(tab) <- NULL
cat("\nAll results\n")
print(tab, digits = 3, row.names = FALSE)
real <- tab[tab$table %in% c("airquality_co", "telomere_ts"), ]
cat(sprintf("\nReal tables: mean AUPRC default %.3f vs ranger %.3f (ratio %.2f; target >= 1.25); AUROC above ranger on each: %s\n",
            mean(real$def_auprc), mean(real$base_auprc), mean(real$def_auprc) / mean(real$base_auprc),
            paste(sprintf("%s %+.3f", real$table, real$def_auroc - real$base_auroc), collapse = ", ")))
out <- file.path(tempdir(), "find_label_issues_benchmark.csv")
if (dir.exists("inst/experiments/find_label_issues") && seed == 1L && !nzchar(Sys.getenv("FLI_SKIP_SYNTHETIC"))) {
  out <- "inst/experiments/find_label_issues/results/benchmark.csv"
}
write.csv(tab, out, row.names = FALSE)
cat("Wrote", out, "\n")
