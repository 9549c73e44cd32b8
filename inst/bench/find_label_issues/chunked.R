# Confident learning on 10^7 x 10 probabilities read from a binary file in
# chunks of 10^6 rows (find_label_issues(labels, pred_probs = <file>)),
# against the in-memory path on the same rows, measured in the same run.
#   nice -n 5 Rscript inst/bench/find_label_issues/chunked.R [n] [n_ref] [dir]
# Writes the file (n x 10 doubles, row-major) and the labels to `dir`
# (default tempdir()); checks at n = 10^5 (chunks of 12,345 rows) that the
# chunked answer is identical to the in-memory one; then runs, each in a
# fresh R process under /usr/bin/time -v (peak resident memory): the chunked
# call at n, the chunked and the in-memory call at n_ref (default 2 x 10^6,
# the first n_ref rows; the in-memory process reads them into a matrix
# first, outside the timing), and R holding only the labels.
args <- commandArgs(TRUE)
n <- if (length(args) >= 1) as.numeric(args[1]) else 1e7
n_ref <- if (length(args) >= 2) as.numeric(args[2]) else 2e6
dir <- if (length(args) >= 3) args[3] else tempdir()
k <- 10L
suppressPackageStartupMessages(library(noisylabels))
write_case <- function(n, path, seed = 1) {
  set.seed(seed)
  con <- file(path, "wb")
  on.exit(close(con))
  given <- integer(n)
  for (s in seq(1, n, by = 1e6)) {
    m <- min(1e6, n - s + 1)
    true <- sample.int(k, m, TRUE)
    l <- matrix(rnorm(m * k), m, k)
    l[cbind(seq_len(m), true)] <- l[cbind(seq_len(m), true)] + 2.5
    p <- exp(l); p <- p / rowSums(p)
    g <- true; u <- runif(m) < 0.15
    g[u] <- (true[u] + sample.int(k - 1L, sum(u), TRUE) - 1L) %% k + 1L
    given[s:(s + m - 1)] <- g
    writeBin(as.double(t(p)), con)
  }
  given
}
small <- file.path(dir, "p-small.bin")
g <- write_case(1e5, small)
options(noisylabels.chunk_rows = 12345)
ch <- find_label_issues(labels = g, pred_probs = small, flag_by = "fdr")
p <- matrix(readBin(small, "double", 1e6), ncol = k, byrow = TRUE)
mem <- find_label_issues(labels = g, pred_probs = p, flag_by = "fdr")
cat("n = 1e5: chunked identical to in-memory:",
    identical(ch$label_issues, mem$label_issues) && identical(ch$confident_learning, mem$confident_learning), "\n")
big <- file.path(dir, "p-big.bin")
lab <- file.path(dir, "labels.rds")
saveRDS(write_case(n, big, seed = 2), lab)
cat(sprintf("file: %.0f MB; one chunk (10^6 rows): %.0f MB\n", file.size(big) / 2^20, 1e6 * k * 8 / 2^20))
# One fresh process under /usr/bin/time -v: its own report line, then wall
# time, CPU time and peak RSS of the whole process.
run <- function(what, code) {
  out <- system2("/usr/bin/time", c("-v", "Rscript", "-e", shQuote(code)), stdout = TRUE, stderr = TRUE)
  num <- function(pat) as.numeric(sub(".*: ", "", grep(pat, out, value = TRUE)))
  cat(sprintf("%-28s %s | process: CPU %.1f s, peak RSS %.0f MB\n", what,
              paste(grep("^call", out, value = TRUE), collapse = " "),
              num("User time") + num("System time"), num("Maximum resident") / 1024))
}
report <- 'hwm <- as.numeric(gsub("[^0-9]", "", grep("VmHWM", readLines("/proc/self/status"), value = TRUE))) / 1024
  cat(sprintf("call %.1f s (CPU %.1f s), peak RSS by its end %.0f MB, %d flagged, estimated wrong %.0f; label_issues %.0f MB\\n",
  t[["elapsed"]], t[["user.self"]] + t[["sys.self"]], hwm, sum(r$label_issues$flagged), r$wrong_count$estimate,
  as.numeric(object.size(r$label_issues)) / 2^20))'
lib <- 'suppressPackageStartupMessages(library(noisylabels))'
chunked_file <- function(m) {
  path <- if (m == n) big else {
    f <- file.path(dir, "p-ref.bin")
    con <- file(big, "rb"); writeBin(readBin(con, "double", m * k), f); close(con)
    f
  }
  sprintf('%s; g <- readRDS("%s")[seq_len(%.0f)]
    t <- system.time(r <- find_label_issues(labels = g, pred_probs = "%s", flag_by = "fdr")); %s',
    lib, lab, m, path, report)
}
in_memory <- sprintf('%s; g <- readRDS("%s")[seq_len(%.0f)]
  con <- file("%s", "rb"); p <- matrix(readBin(con, "double", %.0f * 10), ncol = 10, byrow = TRUE); close(con)
  t <- system.time(r <- find_label_issues(labels = g, pred_probs = p, flag_by = "fdr")); %s',
  lib, lab, n_ref, big, n_ref, report)
run(sprintf("chunked, n = %g", n), chunked_file(n))
run(sprintf("chunked, n = %g", n_ref), chunked_file(n_ref))
run(sprintf("in memory, n = %g", n_ref), in_memory)
run("R + package + labels only", sprintf('%s; g <- readRDS("%s"); cat("call -\\n")', lib, lab))
unlink(c(small, big, lab, file.path(dir, "p-ref.bin")))
