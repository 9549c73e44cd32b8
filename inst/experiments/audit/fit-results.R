# Runs find_label_issues() once per dev file and saves the results (and the
# answer key, kept apart) for audit.R.
#   Rscript fit-results.R OUTDIR
# Classes: find_label_issues(labels = factor(given_label), pred_probs = P)
# with the files' own out-of-fold probabilities. Numbers: the formula
# interface given_label ~ features with the default model (method = "auto":
# out-of-fold forest or GP leave-one-out predictions).
suppressMessages(library(noisylabels))
out <- commandArgs(TRUE)[1]
if (is.na(out)) out <- "audit-results"
dir.create(out, showWarnings = FALSE, recursive = TRUE)
cls_dir <- "/work/shared/data/real-label-errors-classes"
reg_dir <- "/work/shared/data/real-label-errors"
only <- Sys.getenv("AUDIT_ONLY", "")
files <- c(file.path(cls_dir, c(sprintf("roman_numeral_%s.csv.gz", c("efficientnet_b1", "resnet18", "resnet50d", "swin_base", "twins_pcpvt")),
                                 sprintf("cifar10_synthetic_%s.csv.gz", c("efficientnet_b1", "resnet18", "resnet50d", "swin_base", "twins_pcpvt")))),
           file.path(reg_dir, c("airquality_co.csv", "telomere_ts.csv")))
if (nzchar(only)) files <- files[grepl(only, files)]
for (f in files) {
  name <- sub("\\.csv(\\.gz)?$", "", basename(f))
  target <- file.path(out, paste0(name, ".rds"))
  if (file.exists(target)) next
  set.seed(1)
  t0 <- proc.time()[["elapsed"]]
  if (grepl("\\.gz$", f)) {
    d <- read.csv(gzfile(f))
    P <- as.matrix(d[, grep("^p[0-9]+$", names(d))])
    colnames(P) <- seq_len(ncol(P)) - 1L
    wrong <- if (!is.null(d$label_error)) d$label_error == 1 else d$true_label != d$given_label
    res <- find_label_issues(labels = factor(d$given_label, levels = colnames(P)), pred_probs = P)
  } else {
    d <- read.csv(f, check.names = FALSE)[, -1]
    wrong <- d$true_error == 1
    feats <- d[setdiff(names(d), c("true_error", "true_label"))]
    for (nm in names(feats)) if (is.character(feats[[nm]])) feats[[nm]] <- factor(feats[[nm]])
    res <- find_label_issues(given_label ~ ., data = feats)
  }
  res$pred_probs <- NULL
  saveRDS(list(name = name, result = res, wrong = wrong, fit_seconds = proc.time()[["elapsed"]] - t0), target)
  cat(sprintf("%s: %d labels, %d wrong, fit %.0f s (%s)\n", name, length(wrong), sum(wrong),
              proc.time()[["elapsed"]] - t0, res$method))
}
