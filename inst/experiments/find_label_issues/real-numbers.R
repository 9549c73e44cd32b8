# Numeric labels with real, recorded errors (issue 43): the default flags, the
# count with its 90% interval, the ranking and the time of
# find_label_issues(given_label ~ ., data) on both tables of
# ../shared/data/real-label-errors/ and mlbench's BostonHousing2 (medv given,
# the corrected cmedv the truth: 8 rows differ). The same out-of-fold
# predictions then go through find_label_issues(labels =, predictions =)
# (robust scale, no sd), at fdr = 0.1 and 0.3, and, on telomere, with
# tolerance = 0.1. cleanlab 2.9's regression scores
# (cleanlab.regression.rank.get_label_quality_scores) run on the same
# predictions when its source is on PYTHONPATH or in CLEANLAB_SRC.
#
#   OPENBLAS_NUM_THREADS=1 PYTHONPATH=/work/cleanlab-src \
#     Rscript inst/experiments/find_label_issues/real-numbers.R
#
# BostonHousing2 inputs: crim ... lstat (13 columns, chas a factor); town,
# tract, lon, lat are identifiers or coordinates and cmedv is the answer key.
suppressMessages(library(noisylabels))
dd <- Sys.getenv("FLI_DATA", "/work/shared/data/real-label-errors")
threads <- as.integer(Sys.getenv("FLI_THREADS", "2"))
auprc <- function(s, e) { o <- order(-s); e <- e[o]; sum(cumsum(e)[e] / which(e)) / sum(e) }
auroc <- function(s, e) { r <- rank(s); (sum(r[e]) - sum(e) * (sum(e) + 1) / 2) / (sum(e) * sum(!e)) }
read_dev <- function(f) {
  d <- read.csv(file.path(dd, f), check.names = FALSE)[, -1]
  list(data = d[, setdiff(names(d), c("true_error", "true_label"))], err = d$true_error == 1)
}
tables <- list(
  airquality_co = function() read_dev("airquality_co.csv"),
  telomere_ts = function() read_dev("telomere_ts.csv"),
  boston_housing2 = function() {
    e <- new.env()
    utils::data("BostonHousing2", package = "mlbench", envir = e)
    b <- e$BostonHousing2
    x <- b[, setdiff(names(b), c("cmedv", "town", "tract", "lon", "lat"))]
    names(x)[names(x) == "medv"] <- "given_label"
    list(data = x, err = b$medv != b$cmedv)
  })
cl_src <- Sys.getenv("CLEANLAB_SRC", "")
pypath <- paste(c(Sys.getenv("PYTHONPATH", ""), cl_src)[nzchar(c(Sys.getenv("PYTHONPATH", ""), cl_src))],
                collapse = ":")
cleanlab_scores <- function(y, pred) {
  if (!nzchar(pypath)) return(NULL)
  tf <- tempfile(fileext = ".csv")
  write.csv(data.frame(y = y, p = pred), tf, row.names = FALSE)
  code <- paste0("import sys, numpy as np, pandas as pd\n",
                 "from cleanlab.regression.rank import get_label_quality_scores\n",
                 "d = pd.read_csv(sys.argv[1])\n",
                 "s = get_label_quality_scores(d['y'].values, d['p'].values)\n",
                 "np.savetxt(sys.argv[1] + '.out', s)\n")
  py <- tempfile(fileext = ".py")
  writeLines(code, py)
  st <- system2("/usr/bin/python3", c(py, tf), env = paste0("PYTHONPATH=", pypath), stdout = FALSE, stderr = FALSE)
  if (st != 0 || !file.exists(paste0(tf, ".out"))) return(NULL)
  scan(paste0(tf, ".out"), quiet = TRUE)
}
row_of <- function(name, how, res, err, time) {
  li <- res$label_issues
  f <- li$flagged[order(li$row)]
  s <- li$score[order(li$row)]
  wc <- res$wrong_count
  data.frame(table = name, call = how, n = length(err), wrong = sum(err), flags = sum(f),
             false_flags = sum(f & !err), fdp = if (any(f)) round(mean(!err[f]), 3) else NA,
             supported = if (is.null(res$flags_supported)) NA else res$flags_supported,
             estimate = round(wc$estimate), lower = wc$lower, upper = wc$upper,
             covered = wc$lower <= sum(err) && sum(err) <= wc$upper,
             ratio = round(wc$estimate / sum(err), 2), auroc = round(auroc(s, err), 4),
             auprc = round(auprc(s, err), 4), seconds = round(time, 1))
}
out <- list()
for (nm in names(tables)) {
  t <- tables[[nm]]()
  set.seed(1)
  tm <- system.time(r <- find_label_issues(given_label ~ ., data = t$data, threads = threads))[["elapsed"]]
  cat(sprintf("\n== %s: %s\n", nm, r$method))
  print(r, n = 0)
  out[[length(out) + 1]] <- row_of(nm, "formula, default", r, t$err, tm)
  y <- t$data$given_label
  for (a in c(0.1, 0.3)) {
    tm <- system.time(rp <- find_label_issues(labels = y, predictions = r$predictions, fdr = a))[["elapsed"]]
    out[[length(out) + 1]] <- row_of(nm, sprintf("labels + predictions, fdr %g", a), rp, t$err, tm)
  }
  if (nm == "telomere_ts") {
    set.seed(1)
    tm <- system.time(rt <- find_label_issues(given_label ~ ., data = t$data, threads = threads,
                                              tolerance = 0.1))[["elapsed"]]
    f <- rt$label_issues$flagged[order(rt$label_issues$row)]
    cat(sprintf("tolerance = 0.1 (formula, default model): %d flagged, precision %.3f, recall %.3f, F1 %.3f, %.1f s\n",
                sum(f), mean(t$err[f]), mean(f[t$err]), 2 * sum(f & t$err) / (sum(f) + sum(t$err)), tm))
    out[[length(out) + 1]] <- row_of(nm, "formula, tolerance 0.1", rt, t$err, tm)
  }
  cs <- cleanlab_scores(y, r$predictions)
  if (!is.null(cs)) {
    cat(sprintf("cleanlab 2.9 get_label_quality_scores on the same predictions: AUROC %.4f, AUPRC %.4f\n",
                auroc(-cs, t$err), auprc(-cs, t$err)))
  } else {
    cat("cleanlab: skipped (set PYTHONPATH or CLEANLAB_SRC to its source)\n")
  }
}
tab <- do.call(rbind, out)
cat("\n")
print(tab, row.names = FALSE)
if (!is.na(out_csv <- Sys.getenv("FLI_OUT", NA))) write.csv(tab, out_csv, row.names = FALSE)
