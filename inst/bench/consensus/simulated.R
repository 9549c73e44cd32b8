# consensus_labels() on 10^6 simulated labels: 10^5 items, 10^3 annotators,
# 10 classes (10 labels per item; annotator accuracy uniform in 0.5-0.95),
# with and without a model's probabilities, 2 threads.
#   R_LIBS=<lib> Rscript inst/bench/consensus/simulated.R
suppressPackageStartupMessages(library(noisylabels))
set.seed(1)
N <- 1e5; J <- 1e3; K <- 10; per <- 10
truth <- sample.int(K, N, replace = TRUE)
acc <- stats::runif(J, 0.5, 0.95)
item <- rep(seq_len(N), each = per)
annot <- sample.int(J, N * per, replace = TRUE)
ok <- stats::runif(N * per) < acc[annot]
label <- ifelse(ok, truth[item], sample.int(K, N * per, replace = TRUE))
ann <- data.frame(item = item, annotator = annot, label = label)
p <- matrix(stats::rexp(N * K), N, K)
p[cbind(seq_len(N), truth)] <- p[cbind(seq_len(N), truth)] + 2
p <- p / rowSums(p)
run <- function(pp) {
  gc(reset = TRUE)
  t <- system.time(fit <- consensus_labels(ann, pred_probs = pp, threads = 2, verbose = FALSE))
  mem <- sum(gc()[, 6])
  cat(sprintf("%-18s %6.2f s elapsed  %4d iterations  accuracy %.4f  peak R memory %.0f MB\n",
              if (is.null(pp)) "labels only" else "with pred_probs", t[["elapsed"]], fit$iterations,
              mean(as.integer(fit$items$consensus_label) == truth), mem))
}
run(NULL)
run(p)
