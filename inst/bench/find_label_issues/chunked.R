# Confident learning on 10^7 x 10 probabilities read from a binary file in
# chunks of 10^6 rows (find_label_issues(labels, pred_probs = <file>)).
#   Rscript inst/bench/find_label_issues/chunked.R [n] [dir]
# Writes the file (n x 10 doubles, row-major) and the labels to `dir`
# (default tempdir()), then times the chunked call in a fresh R process under
# /usr/bin/time -v (peak resident memory) and checks, at n = 10^5, that the
# chunked answer is identical to the in-memory one.
args <- commandArgs(TRUE)
n <- if (length(args) >= 1) as.numeric(args[1]) else 1e7
dir <- if (length(args) >= 2) args[2] else tempdir()
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
code <- sprintf('suppressPackageStartupMessages(library(noisylabels)); g <- readRDS("%s");
  t <- system.time(r <- find_label_issues(labels = g, pred_probs = "%s", flag_by = "fdr"))[["elapsed"]];
  cat(sprintf("chunked %%g x 10: %%.1f s, %%d flagged, estimated wrong %%.0f [%%d, %%d], true ~15%%%%; output %%.0f MB\n",
      length(g), t, sum(r$label_issues$flagged), r$wrong_count$estimate, r$wrong_count$lower,
      r$wrong_count$upper, as.numeric(object.size(r$label_issues)) / 2^20))', lab, big)
if (file.exists("/usr/bin/time")) {
  out <- system2("/usr/bin/time", c("-v", "Rscript", "-e", shQuote(code)), stdout = TRUE, stderr = TRUE)
  cat(grep("chunked|Maximum resident|Elapsed", out, value = TRUE), sep = "\n")
} else {
  system2("Rscript", c("-e", shQuote(code)))
}
base <- system2("/usr/bin/time", c("-v", "Rscript", "-e", shQuote(sprintf('g <- readRDS("%s")', lab))),
                stdout = TRUE, stderr = TRUE)
cat("R with the labels only:", grep("Maximum resident", base, value = TRUE), "\n")
unlink(c(small, big, lab))
