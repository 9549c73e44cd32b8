# Issue 23 benchmark 3: shards = 2 under plan(multisession, workers = 2)
# against one shard, per epoch, on LIBSVM files (two files of `rows` rows
# each, 20 dense features: each worker reads only its own file, so nothing
# but file names and the model travels to the workers), and the test error
# of both fits on a held-out set.
#
#   OPENBLAS_NUM_THREADS=1 R_LIBS=<lib> Rscript inst/bench/sgd/bench_shards.R [rows_per_file] [epochs]
#
# One shard = the plain chunked file fit in this process (it reads both
# files); per-epoch wall times are `fit$epoch_seconds` (after the pass that
# learns the classes and the step search on the first chunk).
suppressPackageStartupMessages(library(noisylabels))
args <- commandArgs(trailingOnly = TRUE)
rows <- if (length(args) >= 1) as.numeric(args[1]) else 5e5
epochs <- if (length(args) >= 2) as.integer(args[2]) else 3L
set.seed(11)
d <- 20; w <- rnorm(d)
make <- function(m) {
  x <- matrix(round(runif(m * d), 4), m, d)
  y <- ifelse(x %*% w - sum(w) / 2 + rnorm(m, sd = 0.3) > 0, 1, -1)
  list(x = x, y = y)
}
write_svm <- function(dat, path) {
  tok <- matrix(sprintf("%d:%g", rep(seq_len(d), each = nrow(dat$x)), dat$x), nrow(dat$x), d)
  writeLines(paste(dat$y, do.call(paste, as.data.frame(tok))), path)
  path
}
files <- character(2)
for (k in 1:2) {
  dat <- make(rows)
  flip <- sample(rows, round(0.2 * rows)); dat$y[flip] <- -dat$y[flip]
  files[k] <- write_svm(dat, file.path(tempdir(), sprintf("shard%d.svm", k)))
}
test <- make(1e5)
cat(sprintf("data: 2 files x %.0f rows x %d features (20%% flipped labels), %.2f GB; test %d rows\n",
            rows, d, sum(file.size(files)) / 1e9, nrow(test$x)))
err <- function(fit) 100 * mean(predict(fit, test$x) != test$y)
one <- suppressMessages(suppressWarnings(sgd_robust(files, loss = "smooth_ramp", epochs = epochs,
                                                    chunk_rows = 1e5, seed = 1)))
future::plan("multisession", workers = 2)
two <- suppressMessages(suppressWarnings(sgd_robust(files, loss = "smooth_ramp", epochs = epochs,
                                                    chunk_rows = 1e5, seed = 1, shards = 2)))
# Reference in the same run: the speed-up this machine gives right now to an
# embarrassingly parallel busy loop (two futures of ~0.5 s CPU each) under
# the same plan, against the same loop run twice in this process.
busy <- function(i) { t <- proc.time()[["elapsed"]]; s <- 0; for (k in 1:3e7) s <- s + k; proc.time()[["elapsed"]] - t }
invisible(future.apply::future_lapply(1:2, function(i) 1))  # workers up
serial <- system.time(for (i in 1:2) busy(i))[["elapsed"]]
parallel <- system.time(future.apply::future_lapply(1:2, busy))[["elapsed"]]
future::plan("sequential")
cat(sprintf("reference: busy loop x2 serial %.2f s, two futures %.2f s: speed-up %.2f\n",
            serial, parallel, serial / parallel))
cat(sprintf("one shard : %s s per epoch; test error %.2f%%\n",
            paste(sprintf("%.2f", one$epoch_seconds), collapse = " "), err(one)))
cat(sprintf("two shards: %s s per epoch; test error %.2f%%\n",
            paste(sprintf("%.2f", two$epoch_seconds), collapse = " "), err(two)))
cat(sprintf("speed-up per epoch (median): %.2f (target >= 1.6); test error difference %.2f points (target <= 0.2)\n",
            stats::median(one$epoch_seconds) / stats::median(two$epoch_seconds), abs(err(one) - err(two))))
unlink(files)
