# find_label_issues(labels, pred_probs) on simulated noisy labels with known
# truth: time on 50,000 x 10 probabilities, and the default ranking (posterior
# under the estimated noise matrix) and flags (the estimated_issues lowest)
# against self-confidence 1 - p[given] and prune-by-noise-rate confident
# learning. Probabilities: softmax of N(0, 1) logits with +2.5 on the true
# class; 15% of labels moved to the next class ("class-conditional") or to a
# uniformly drawn class ("uniform"). 5 replications of n = 5,000 per setting
# (seeded once, so the sets differ from those of the documentation's 24).
#   Rscript inst/experiments/find_label_issues/classification.R
suppressPackageStartupMessages(library(noisylabels))
sim <- function(n, k, asym, strength = 2.5, rate = 0.15) {
  true <- sample.int(k, n, TRUE)
  logits <- matrix(rnorm(n * k), n, k)
  logits[cbind(1:n, true)] <- logits[cbind(1:n, true)] + strength
  p <- exp(logits); p <- p / rowSums(p)
  given <- true; u <- runif(n) < rate
  given[u] <- if (asym) (true[u] %% k) + 1L else sample.int(k, sum(u), TRUE)
  list(p = p, given = given, wrong = given != true)
}
flags <- function(res) { f <- logical(res$n); f[res$label_issues$row[res$label_issues$flagged]] <- TRUE; f }
f1 <- function(f, w) 2 * sum(f & w) / (sum(f) + sum(w))

set.seed(1)
s <- sim(50000, 10, TRUE)
times <- replicate(5, system.time(find_label_issues(labels = s$given, pred_probs = s$p))[["elapsed"]])
cat(sprintf("50,000 x 10: median %.3f s over 5 runs (min %.3f, max %.3f)\n", median(times), min(times), max(times)))

rows <- list()
for (asym in c(TRUE, FALSE)) for (k in c(3, 5, 10)) for (rep in 1:5) {
  s <- sim(5000, k, asym)
  res <- find_label_issues(labels = s$given, pred_probs = s$p)
  pb <- find_label_issues(labels = s$given, pred_probs = s$p, flag_by = "prune_by_noise_rate")
  sc <- 1 - s$p[cbind(seq_along(s$given), s$given)]
  rows[[length(rows) + 1]] <- data.frame(
    noise = if (asym) "class-conditional" else "uniform", k = k, rep = rep,
    auroc_default = detection_metrics(noise_scores(res), s$wrong)$auc,
    auroc_self_conf = detection_metrics(sc, s$wrong)$auc,
    f1_default = f1(flags(res), s$wrong), f1_pbnr = f1(flags(pb), s$wrong),
    estimated = res$estimated_issues, wrong = sum(s$wrong))
}
tab <- do.call(rbind, rows)
agg <- aggregate(cbind(auroc_default, auroc_self_conf, f1_default, f1_pbnr, estimated, wrong) ~ noise + k,
                 data = tab, FUN = mean)
agg$auroc_wins <- aggregate(auroc_default >= auroc_self_conf ~ noise + k, data = tab, FUN = sum)[, 3]
agg$f1_wins <- aggregate(f1_default >= f1_pbnr ~ noise + k, data = tab, FUN = sum)[, 3]
print(agg, digits = 4, row.names = FALSE)
