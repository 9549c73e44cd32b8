# find_label_issues(labels, pred_probs) on real models' out-of-fold
# probabilities with an answer key, side by side with cleanlab 2.9 run from
# its public source on the same files in the same run (a benchmark-only
# peer, not a dependency).
#
#   PYTHONPATH=/path/to/cleanlab-source R_LIBS=<lib> \
#     Rscript inst/experiments/find_label_issues/real-classes/real-classes.R [data-dir]
#
# data-dir (default ../shared/data/real-label-errors-classes) holds the
# files described in its SOURCE.md: `given_label`, the answer key
# (`label_error`, `true_label`, or `reviewed` + `verified_error`) and
# `p0..p{K-1}`. The answer key is used only to score. cleanlab needs
# python3 with numpy, scikit-learn and pandas (Debian's python3-sklearn,
# python3-pandas); without it the cleanlab columns are NA.
# Writes results/real-classes.csv; the console table is results/real-classes-output.txt.
suppressPackageStartupMessages(library(noisylabels))
args <- commandArgs(TRUE)
dir <- if (length(args)) args[1] else file.path("..", "shared", "data", "real-label-errors-classes")
if (!dir.exists(dir)) stop("data directory not found: ", dir)
here <- tryCatch(dirname(normalizePath(sub("--file=", "", grep("--file=", commandArgs(FALSE), value = TRUE)))),
                 error = function(e) ".")
out_dir <- file.path(here, "results")
dir.create(out_dir, showWarnings = FALSE)
files <- sort(list.files(dir, pattern = "\\.csv\\.gz$", full.names = TRUE))

py <- Sys.which("python3")
cl_ok <- nzchar(py) && system2(py, c("-c", shQuote("import cleanlab.filter")), stdout = FALSE, stderr = FALSE) == 0
cl_script <- tempfile(fileext = ".py")
writeLines(c(
  "import sys, time, numpy as np",
  "from cleanlab.filter import find_label_issues",
  "from cleanlab.rank import get_label_quality_scores",
  "from cleanlab.count import num_label_issues",
  "P = np.load(sys.argv[1]); y = np.load(sys.argv[2])",
  "find_label_issues(y, P)",  # warm-up (imports, caches)
  "t = []",
  "for r in range(3):",
  "    t0 = time.perf_counter(); m = find_label_issues(y, P); t.append(time.perf_counter() - t0)",
  "q = get_label_quality_scores(y, P); c = num_label_issues(y, P)",
  "np.savetxt(sys.argv[3], np.column_stack([m.astype(float), q]), delimiter=',')",
  "print(min(t), int(c))"), cl_script)
npy_write <- function(x, path, int = FALSE) {
  # A minimal .npy (version 1.0) writer: little-endian doubles or int64, C order.
  shape <- if (is.matrix(x)) sprintf("(%d, %d)", nrow(x), ncol(x)) else sprintf("(%d,)", length(x))
  descr <- if (int) "<i8" else "<f8"
  header <- sprintf("{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, shape)
  pad <- 64 - (10 + nchar(header) + 1) %% 64
  header <- paste0(header, strrep(" ", pad), "\n")
  con <- file(path, "wb")
  on.exit(close(con))
  writeBin(as.raw(c(0x93, charToRaw("NUMPY"), 1, 0)), con)
  writeBin(as.integer(nchar(header)), con, size = 2, endian = "little")
  writeBin(charToRaw(header), con)
  if (int) {
    v <- as.integer(x)
    writeBin(as.vector(rbind(v, ifelse(v < 0, -1L, 0L))), con, size = 4, endian = "little")
  } else {
    writeBin(as.double(if (is.matrix(x)) t(x) else x), con, size = 8, endian = "little")
  }
}
run_cleanlab <- function(P, y) {
  if (!cl_ok) return(NULL)
  fp <- tempfile(fileext = ".npy"); fy <- tempfile(fileext = ".npy"); fo <- tempfile(fileext = ".csv")
  npy_write(P, fp); npy_write(y, fy, int = TRUE)
  o <- system2(py, c(cl_script, fp, fy, fo), stdout = TRUE, stderr = FALSE)
  r <- utils::read.csv(fo, header = FALSE)
  v <- as.numeric(strsplit(o[length(o)], " ")[[1]])
  list(mask = r[[1]] == 1, quality = r[[2]], time = v[1], count = v[2])
}
auroc <- function(s, w) {
  r <- rank(s); n1 <- sum(w); n0 <- length(w) - n1
  (sum(r[w]) - n1 * (n1 + 1) / 2) / (n1 * n0)
}
f1 <- function(f, w) if (!any(f & w)) 0 else 2 * sum(f & w) / (sum(f) + sum(w))

rows <- list()
for (f in files) {
  d <- utils::read.csv(gzfile(f))
  P <- as.matrix(d[, grep("^p[0-9]+$", names(d))])
  P <- P / rowSums(P)
  y <- d$given_label
  full <- !is.null(d$label_error) || !is.null(d$true_label)
  wrong <- if (!is.null(d$label_error)) d$label_error == 1
           else if (!is.null(d$true_label)) d$true_label != d$given_label
           else d$verified_error == 1
  reviewed <- if (full) rep(TRUE, nrow(d)) else d$reviewed == 1
  res <- find_label_issues(labels = y, pred_probs = P)   # warm-up
  tm <- vapply(1:3, function(i) system.time(res <- find_label_issues(labels = y, pred_probs = P))[["elapsed"]], 1)
  fdr <- find_label_issues(labels = y, pred_probs = P, flag_by = "fdr", fdr = 0.1)
  ord <- order(res$label_issues$row)
  fl <- res$label_issues$flagged[ord]
  pw <- res$label_issues$p_wrong[ord]
  ffl <- fdr$label_issues$flagged[ord]
  wc <- res$wrong_count
  cl <- run_cleanlab(P, y)
  truth <- if (full) sum(wrong) else NA
  rows[[length(rows) + 1]] <- data.frame(
    file = sub("\\.csv\\.gz$", "", basename(f)), n = nrow(d), k = ncol(P), truth = truth,
    f1 = if (full) f1(fl, wrong) else NA, cl_f1 = if (full && !is.null(cl)) f1(cl$mask, wrong) else NA,
    flagged = sum(fl), verified = if (!full) sum(fl & wrong) else NA,
    precision = if (!full) sum(fl & wrong) / max(1, sum(fl & reviewed)) else NA,
    cl_flagged = if (!is.null(cl)) sum(cl$mask) else NA,
    cl_verified = if (!full && !is.null(cl)) sum(cl$mask & wrong) else NA,
    cl_precision = if (!full && !is.null(cl)) sum(cl$mask & wrong) / max(1, sum(cl$mask & reviewed)) else NA,
    auroc = auroc(pw, wrong), cl_auroc = if (!is.null(cl)) auroc(-cl$quality, wrong) else NA,
    estimate = wc$estimate, lower = wc$lower, upper = wc$upper,
    covered = if (full) wc$lower <= truth && truth <= wc$upper else NA,
    ratio = if (full) wc$estimate / truth else NA, cl_count = if (!is.null(cl)) cl$count else NA,
    fdr_flagged = sum(ffl), fdr_fdp = if (full && any(ffl)) 1 - mean(wrong[ffl]) else if (full) 0 else NA,
    fdr_supported = isTRUE(fdr$fdr_supported),
    time = min(tm), cl_time = if (!is.null(cl)) cl$time else NA)
  r <- rows[[length(rows)]]
  cat(sprintf("%-34s F1 %.3f (cl %.3f) flags %5d (cl %5s) ver %s (cl %s) AUROC %.4f (cl %.4f) count %.0f [%d, %d] truth %s | fdr %d fdp %s | %.3f s (cl %.3f s)\n",
              r$file, r$f1, r$cl_f1, r$flagged, r$cl_flagged, r$verified, r$cl_verified, r$auroc,
              r$cl_auroc, r$estimate, r$lower, r$upper, r$truth, r$fdr_flagged,
              format(r$fdr_fdp, digits = 2), r$time, r$cl_time))
}
# The chunked path on the first 50,000-row file: probabilities from a binary
# file in chunks of 10,000 rows give the in-memory result exactly.
big <- files[grepl("cifar10_synthetic", files)][1]
if (!is.na(big)) {
  d <- utils::read.csv(gzfile(big))
  P <- unname(as.matrix(d[, grep("^p[0-9]+$", names(d))])); P <- P / rowSums(P)
  bin <- tempfile(fileext = ".bin"); writeBin(as.double(t(P)), bin)
  old <- options(noisylabels.chunk_rows = 1e4)
  ch <- find_label_issues(labels = d$given_label, pred_probs = bin)
  options(old)
  mem <- find_label_issues(labels = d$given_label, pred_probs = P)
  cat(sprintf("chunked (10,000-row chunks of a binary file) identical to in-memory on %s: %s\n",
              basename(big), identical(ch$label_issues, mem$label_issues) &&
                identical(ch$wrong_count, mem$wrong_count)))
}
tab <- do.call(rbind, rows)
utils::write.csv(tab, file.path(out_dir, "real-classes.csv"), row.names = FALSE)
cat(sprintf("\nnoisylabels %s, cleanlab %s\n", utils::packageVersion("noisylabels"),
            if (cl_ok) system2(py, c("-c", shQuote("import cleanlab; print(cleanlab.__version__)")), stdout = TRUE) else "not found"))
