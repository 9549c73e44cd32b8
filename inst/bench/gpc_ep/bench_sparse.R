# Sparse (FITC) EP against dense EP: time, peak memory, flip detection and
# test error on simulated data (sim_sparse.R: d = 5, 10% flipped labels).
#
#   compare: dense EP and sparse EP with several inducing-point counts on the
#            same n (default 2000); one CSV row per fit.
#   large:   one sparse fit at n (default 20000) with m inducing points
#            (default: the package rule), in its own process so that the peak
#            RSS (VmHWM) is that fit's.
#
#   OPENBLAS_NUM_THREADS=1 Rscript inst/bench/gpc_ep/bench_sparse.R compare 2000 100,179,300 out.csv
#   OPENBLAS_NUM_THREADS=1 Rscript inst/bench/gpc_ep/bench_sparse.R large 20000 default out.csv
#
# Times are CPU (user + system of this process) and elapsed; the load
# average is recorded because the machine is shared.
args <- commandArgs(TRUE)
mode <- if (length(args) >= 1) args[1] else "compare"
n <- if (length(args) >= 2) as.integer(args[2]) else if (mode == "large") 20000L else 2000L
ms <- if (length(args) >= 3) args[3] else "default"
out <- if (length(args) >= 4) args[4] else sprintf("bench_sparse_%s_%d.csv", mode, n)
suppressPackageStartupMessages(library(noisylabels))
here <- if (file.exists("sim_sparse.R")) "." else "inst/bench/gpc_ep"
source(file.path(here, "sim_sparse.R"))

vm_hwm_mb <- function() {
  st <- readLines("/proc/self/status")
  as.numeric(sub("[^0-9]*([0-9]+).*", "\\1", grep("^VmHWM", st, value = TRUE))) / 1024
}
load_avg <- function() as.numeric(strsplit(readLines("/proc/loadavg"), " ")[[1]][1])

set.seed(20241125)
d <- sim_gpc_sparse(n)
one <- function(approx, m) {
  load0 <- load_avg()
  t <- system.time(fit <- gpc_ep(d$x, d$y, approx = approx,
                                 inducing = if (approx == "sparse" && !is.na(m)) m))
  sc <- noise_scores(fit)
  data.frame(n = n, approx = approx, m = if (approx == "sparse") fit$n_inducing else NA,
             cpu_s = unname(t[["user.self"]] + t[["sys.self"]]), elapsed_s = unname(t[["elapsed"]]),
             peak_rss_mb = vm_hwm_mb(), load_before = load0, load_after = load_avg(),
             auc = detection_metrics(sc, d$truth)$auc,
             test_error = mean(predict(fit, d$x_test) != d$y_test),
             epsilon = fit$epsilon, log_z = fit$log_z, ep_runs = fit$ep_runs,
             outer_iterations = fit$outer_iterations, converged = fit$converged)
}
m_list <- if (ms == "default") NA else as.integer(strsplit(ms, ",")[[1]])
# the sparse fits first (they are quick); one CSV row is written per fit
jobs <- c(lapply(m_list, function(m) list("sparse", m)), if (mode == "compare") list(list("dense", NA)))
if (file.exists(out)) file.remove(out)
for (j in jobs) {
  row <- one(j[[1]], j[[2]])
  print(row, digits = 4)
  utils::write.table(row, out, sep = ",", row.names = FALSE, append = file.exists(out),
                     col.names = !file.exists(out))
}
