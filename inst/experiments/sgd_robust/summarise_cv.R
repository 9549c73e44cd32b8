# Summarises the cross-validated runs of noise_cv.R: mean +- sd (number of
# repetitions) of the test error (%) per data set, method and noise level,
# the 40% comparison of the robust losses against hinge and logistic (with a
# paired comparison over repetitions: same flips, folds and seeds), and writes
# results/cv_summary.csv.
# Rows of a re-run of single methods (files <data>_lib_cv_noise.csv, written
# with SGD_CV_METHODS=LIBPrimal and tag _lib) replace the same
# (data set, method, noise, repetition) rows of the main run.
# Runs with SGD_CV_LABELS=clean (files <data>_cleantuned_cv_noise.csv:
# settings chosen by CV on the clean labels, then fitted on the noisy ones)
# are summarised separately at the end and are not part of cv_summary.csv.
# Usage: Rscript inst/experiments/sgd_robust/summarise_cv.R
file_arg <- grep("^--file=", commandArgs(FALSE), value = TRUE)
here <- if (length(file_arg)) dirname(normalizePath(sub("^--file=", "", file_arg))) else "inst/experiments/sgd_robust"
files <- list.files(file.path(here, "results"), pattern = "_cv_noise[.]csv$", full.names = TRUE)
clean_tuned <- grepl("_cleantuned_cv_noise", files)
files_clean <- files[clean_tuned]
files <- files[!clean_tuned]
files <- files[order(!grepl("_lib_cv_noise", files))]  # re-runs first, so they win below
# Files written before noise_cv.R recorded `tuned_on` were all tuned on the noisy labels.
read_run <- function(f) {
  x <- utils::read.csv(f)
  if (is.null(x$tuned_on)) x$tuned_on <- "noisy"
  x
}
res <- do.call(rbind, lapply(files, read_run))
res <- res[!duplicated(res[c("dataset", "method", "noise", "rep")]), ]
fmt <- function(e) sprintf("%.2f±%.2f (%d)", 100 * mean(e), 100 * stats::sd(e), length(e))
summ <- do.call(rbind, lapply(split(res, list(res$dataset, res$method, res$noise), drop = TRUE), function(s) {
  data.frame(dataset = s$dataset[1], method = s$method[1], noise = s$noise[1], reps = nrow(s),
             mean_error_pct = round(100 * mean(s$test_error), 3), sd_error_pct = round(100 * stats::sd(s$test_error), 3),
             median_error_pct = round(100 * stats::median(s$test_error), 3), settings = s$settings[1],
             folds = s$folds[1])
}))
summ <- summ[order(summ$dataset, summ$noise, summ$mean_error_pct), ]
utils::write.csv(summ, file.path(here, "results", "cv_summary.csv"), row.names = FALSE)
report <- function(res, tuned_on) for (ds in unique(res$dataset)) {
  s <- res[res$dataset == ds, ]
  cat("\n##", ds, "- test error % (mean±sd (reps)), hyperparameters by CV on the", tuned_on, "labels\n")
  print(noquote(tapply(s$test_error, list(s$method, s$noise), fmt)))
  s40 <- s[s$noise == 0.4, ]
  if (!nrow(s40)) next
  m <- tapply(s40$test_error, s40$method, mean)
  rob <- m[intersect(c("SGD(SRamp)", "SGD(RGomp)"), names(m))]
  base <- m[intersect(c("SGD(Hinge)", "SGD(Log)"), names(m))]
  cat(sprintf("40%%: best robust %.2f%%, worst robust %.2f%%, best of hinge/logistic %.2f%% -> robust losses %s\n",
              100 * min(rob), 100 * max(rob), 100 * min(base),
              if (max(rob) < min(base)) "both beat hinge and logistic"
              else if (min(rob) < min(base)) "one of them beats hinge and logistic"
              else "do NOT beat hinge and logistic"))
  wide <- reshape(s40[c("method", "rep", "test_error")], idvar = "rep", timevar = "method", direction = "wide")
  names(wide) <- sub("^test_error[.]", "", names(wide))
  for (r in intersect(c("SGD(SRamp)", "SGD(RGomp)"), names(wide))) for (b in intersect(c("SGD(Hinge)", "SGD(Log)"), names(wide))) {
    d <- 100 * (wide[[r]] - wide[[b]])
    d <- d[is.finite(d)]
    cat(sprintf("   paired %s - %s: %+.2f points (sd %.2f, %d of %d repetitions better)\n",
                r, b, mean(d), stats::sd(d), sum(d < 0), length(d)))
  }
}
report(res, "noisy")
if (length(files_clean)) {
  cat("\n# Settings chosen by CV on the clean training labels, then fitted on the noisy labels\n")
  report(do.call(rbind, lapply(files_clean, read_run)), "clean")
}
