# Issue 23 benchmark 2: train on a 5 x 10^6-row LIBSVM file with 20 dense
# features (about 1.2 GB of text) streamed in chunks; the peak resident memory
# of the training process (VmHWM from /proc/self/status) must stay <= 500 MB.
#
#   OPENBLAS_NUM_THREADS=1 R_LIBS=<lib> Rscript inst/bench/sgd/bench_stream.R [rows] [epochs]
#
# The file is written first (in a child process, so its memory does not
# count), then a fresh R process trains sgd_robust(<file>, chunk_rows = 1e5)
# and reports its peak memory, the time per pass and the training error.
args <- commandArgs(trailingOnly = TRUE)
rows <- if (length(args) >= 1) as.numeric(args[1]) else 5e6
epochs <- if (length(args) >= 2) as.integer(args[2]) else 1L
# SGD_BENCH_DIR keeps the file between runs (it is written only when absent).
keep <- nzchar(Sys.getenv("SGD_BENCH_DIR"))
file <- file.path(Sys.getenv("SGD_BENCH_DIR", tempdir()), sprintf("stream-bench-%.0f.svm", rows))
gen <- sprintf('
set.seed(7); d <- 20; w <- rnorm(d); block <- 1e5; left <- %.0f
con <- file("%s", "w")
while (left > 0) {
  m <- min(block, left)
  x <- matrix(round(runif(m * d), 4), m, d)
  y <- ifelse(x %%*%% w - sum(w) / 2 + rnorm(m, sd = 0.3) > 0, 1, -1)
  flip <- sample(m, round(0.1 * m))
  y[flip] <- -y[flip]
  tok <- matrix(sprintf("%%d:%%g", rep(seq_len(d), each = m), x), m, d)
  writeLines(paste(y, do.call(paste, as.data.frame(tok))), con)
  left <- left - m
}
close(con)', rows, file)
if (!file.exists(file)) {
  t0 <- proc.time()[["elapsed"]]
  system2("Rscript", c("-e", shQuote(gen)))
  cat(sprintf("wrote %s: %.0f rows, %.2f GB in %.0f s\n", file, rows, file.size(file) / 1e9,
              proc.time()[["elapsed"]] - t0))
} else {
  cat(sprintf("reusing %s: %.2f GB\n", file, file.size(file) / 1e9))
}
train <- sprintf('
suppressPackageStartupMessages(library(noisylabels))
t0 <- proc.time()[["elapsed"]]
fit <- suppressMessages(suppressWarnings(sgd_robust("%s", loss = "smooth_ramp", epochs = %d,
                                                    chunk_rows = 100000, seed = 1)))
total <- proc.time()[["elapsed"]] - t0
hwm <- grep("VmHWM", readLines("/proc/self/status"), value = TRUE)
cat(sprintf("rows %%.0f, epochs %%d: whole call %%.1f s (core epoch loops %%.1f s); training error (progressive) %%.4f\\n",
            fit$n, fit$iterations, total, fit$seconds, fit$trace$train_error[fit$iterations]))
cat(sprintf("peak resident memory: %%s (%%.0f MB)\\n", trimws(sub("VmHWM:", "", hwm)),
            as.numeric(gsub("[^0-9]", "", hwm)) / 1024))
', file, epochs)
system2("Rscript", c("-e", shQuote(train)))
if (!keep) unlink(file)
