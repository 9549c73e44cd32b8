# Whole fits on the thyroid reproduction (Kim & Ghahramani's Table 1
# protocol, inst/experiments/gpc_ep/thyroid_protocol.R) under three EP
# settings: the default (sequential, Sigma from the sweeps' factors with an
# exact refresh every 10th sweep), sequential with the exact refresh after
# every sweep (refresh_every = 1, the previous default) and the parallel
# schedule. Each fit learns epsilon and the kernel (many warm-started EP runs)
# from the same seed; the question is whether the settings reach the same
# fit (log Z_EP, epsilon, test predictions) and which is faster.
#
# Usage (from the package root, OPENBLAS_NUM_THREADS=1):
#   Rscript inst/bench/gpc_ep/schedules_thyroid.R [splits = 1:3] [out = schedules_thyroid.csv]
args <- commandArgs(trailingOnly = TRUE)
splits <- if (length(args) >= 1) eval(parse(text = args[1])) else 1:3
out <- if (length(args) >= 2) args[2] else "inst/bench/gpc_ep/schedules_thyroid.csv"
suppressPackageStartupMessages(library(noisylabels))
source("inst/experiments/gpc_ep/thyroid_protocol.R")
settings <- list(
  default = gpc_ep_control(min_sweeps = 1, tol_outer = 1e-3),
  exact = gpc_ep_control(min_sweeps = 1, tol_outer = 1e-3, refresh_every = 1),
  parallel = gpc_ep_control(min_sweeps = 1, tol_outer = 1e-3, schedule = "parallel"))
cat("uptime at start:", system("uptime", intern = TRUE), "\n")
data <- thyroid_data()
rows <- list()
for (s in splits) {
  for (nm in names(settings)) {
    st <- system.time(r <- thyroid_split(s, flip_levels = c(0, 3, 9), models = c("former", "tilted"),
                                         data = data, control = settings[[nm]]))
    r$setting <- nm
    r$split_cpu_s <- st[["user.self"]] + st[["sys.self"]]
    rows[[length(rows) + 1]] <- r
  }
}
res <- do.call(rbind, rows)
cat("uptime at end:", system("uptime", intern = TRUE), "\n")
utils::write.csv(res, out, row.names = FALSE)
# the same fits side by side
key <- c("split", "flips", "model")
wide <- Reduce(function(a, b) merge(a, b, by = key),
               lapply(names(settings), function(nm) {
                 d <- res[res$setting == nm, c(key, "log_z", "epsilon", "test_error", "seconds")]
                 names(d)[-(1:3)] <- paste0(names(d)[-(1:3)], "_", nm)
                 d
               }))
print(wide, digits = 6)
cat("\nmax |log Z - default|: exact", max(abs(wide$log_z_exact - wide$log_z_default)),
    " parallel", max(abs(wide$log_z_parallel - wide$log_z_default)), "\n")
cat("max |epsilon - default|: exact", max(abs(wide$epsilon_exact - wide$epsilon_default)),
    " parallel", max(abs(wide$epsilon_parallel - wide$epsilon_default)), "\n")
cat("test errors that differ: exact", sum(wide$test_error_exact != wide$test_error_default),
    " parallel", sum(wide$test_error_parallel != wide$test_error_default), "of", nrow(wide), "\n")
cat("fit seconds (elapsed, sum): default", sum(wide$seconds_default), " exact", sum(wide$seconds_exact),
    " parallel", sum(wide$seconds_parallel), "\n")
cat("CPU seconds per setting:", tapply(res$split_cpu_s, res$setting, function(v) sum(unique(v))), "\n")
