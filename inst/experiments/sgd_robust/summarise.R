# Prints mean +- sd (number of repetitions) of the test error (%) per data set,
# method and noise level from results/*_noise.csv, and the 40% comparison of
# the robust losses against hinge and logistic.
# Usage: Rscript inst/experiments/sgd_robust/summarise.R
file_arg <- grep("^--file=", commandArgs(FALSE), value = TRUE)
here <- if (length(file_arg)) dirname(normalizePath(sub("^--file=", "", file_arg))) else "inst/experiments/sgd_robust"
files <- list.files(file.path(here, "results"), pattern = "_noise[.]csv$", full.names = TRUE)
res <- do.call(rbind, lapply(files, utils::read.csv))
res <- res[!duplicated(res[c("dataset", "method", "noise", "rep")]), ]  # same seeds in split runs
fmt <- function(e) sprintf("%.2f±%.2f (%d)", 100 * mean(e), 100 * stats::sd(e), length(e))
for (ds in unique(res$dataset)) {
  s <- res[res$dataset == ds, ]
  tab <- tapply(s$test_error, list(s$method, s$noise), fmt)
  cat("\n##", ds, "- test error % by fraction of flipped training labels\n")
  print(noquote(tab))
  s40 <- s[s$noise == 0.4, ]
  if (nrow(s40)) {
    m <- tapply(s40$test_error, s40$method, mean)
    rob <- m[intersect(c("SGD(SRamp)", "SGD(RGomp)"), names(m))]
    base <- m[intersect(c("SGD(Hinge)", "SGD(Log)"), names(m))]
    cat(sprintf("40%%: best robust %.2f%%, worst robust %.2f%%, best of hinge/logistic %.2f%% -> robust losses %s\n",
                100 * min(rob), 100 * max(rob), 100 * min(base),
                if (max(rob) < min(base)) "both beat hinge and logistic"
                else if (min(rob) < min(base)) "one of them beats hinge and logistic"
                else "do NOT beat hinge and logistic"))
  }
}
