# Flags of fitted models under the p_wrong / q-value contract (issue 29):
# gpr_loo() and gpc_ep() on simulated data with known truth (several noise
# rates including 0%), gpr_pursuit() on 1,000 rows of telomere TS with a
# tolerance. Each line: flagged, precision, recall, F1, best-threshold F1 of
# the same p_wrong, false discovery proportion, estimated count and its 90%
# interval against the true count.
#   R_LIBS=<lib> Rscript fits.R [sims|pursuit] [path/to/real-label-errors]
suppressPackageStartupMessages(library(noisylabels))
args <- commandArgs(TRUE)
part <- if (length(args)) args[1] else "sims"
real_dir <- if (length(args) > 1) args[2] else "../shared/data/real-label-errors"

measure <- function(setting, seed, r, truth) {
  li <- r$label_issues[order(r$label_issues$row), ]
  fl <- li$flagged
  tp <- sum(fl & truth)
  prec <- if (any(fl)) tp / sum(fl) else NA
  rec <- if (any(truth)) tp / sum(truth) else NA
  f1 <- if (tp > 0) 2 * tp / (sum(fl) + sum(truth)) else 0
  o <- order(-li$p_wrong)
  best <- if (any(truth)) max(2 * cumsum(truth[o]) / (seq_along(o) + sum(truth))) else NA
  data.frame(setting = setting, seed = seed, n = length(truth), true = sum(truth), flagged = sum(fl),
             precision = prec, recall = rec, f1 = f1, best_f1 = best,
             fdp = if (any(fl)) 1 - prec else 0,
             estimate = r$wrong_count$estimate, lower = r$wrong_count$lower,
             upper = r$wrong_count$upper,
             covered = r$wrong_count$lower <= sum(truth) && sum(truth) <= r$wrong_count$upper)
}

if (part == "sims") {
  rows <- list()
  for (rate in c(0, 0.05, 0.1, 0.2)) for (seed in 1:3) {
    # gpr_loo: smooth function of 2 inputs, noise sd 0.1, a share of labels
    # shifted by +-U(0.3, 1) (3 to 10 noise sds)
    set.seed(seed)
    n <- 400
    x <- matrix(runif(2 * n), n)
    y <- sin(2 * pi * x[, 1]) + 0.5 * cos(3 * x[, 2]) + rnorm(n, sd = 0.1)
    bad <- seq_len(n) <= round(rate * n)
    y[bad] <- y[bad] + sample(c(-1, 1), sum(bad), TRUE) * runif(sum(bad), 0.3, 1)
    fit <- suppressWarnings(gpr_loo(x, y))
    rows[[length(rows) + 1]] <- measure(sprintf("gpr_loo %g%%", 100 * rate), seed,
                                        find_label_issues(fit), bad)
    # gpc_ep: two classes from a smooth boundary, a share of labels flipped
    set.seed(seed)
    x <- matrix(runif(2 * n), n)
    cls <- factor(ifelse(sin(2 * pi * x[, 1]) > 2 * x[, 2] - 1 + rnorm(n, sd = 0.1), "a", "b"))
    flip <- seq_len(n) <= round(rate * n)
    cls[flip] <- factor(ifelse(cls[flip] == "a", "b", "a"), levels = levels(cls))
    g <- suppressWarnings(gpc_ep(x, cls))
    rows[[length(rows) + 1]] <- measure(sprintf("gpc_ep %g%%", 100 * rate), seed,
                                        find_label_issues(g), flip)
    cat(".")
  }
  res <- do.call(rbind, rows)
  agg <- aggregate(cbind(true, flagged, precision, recall, f1, best_f1, fdp, estimate, lower, upper, covered) ~ setting,
                   data = transform(res, precision = ifelse(is.na(precision), 0, precision),
                                    recall = ifelse(is.na(recall), 0, recall),
                                    best_f1 = ifelse(is.na(best_f1), 0, best_f1)), FUN = mean)
  cat("\n"); print(res, digits = 3, row.names = FALSE); print(agg, digits = 3, row.names = FALSE)
} else {
  d <- read.csv(file.path(real_dir, "telomere_ts.csv"), check.names = FALSE)[, -1]
  set.seed(1)
  d <- d[sort(sample.int(nrow(d), 1000)), ]
  truth <- d$true_error == 1
  x <- as.matrix(d[, c("true.dna.scg", "true.telo.var")])
  fit <- gpr_pursuit(x, d$given_label)
  print(rbind(measure("gpr_pursuit, fdr = 0.1", 1, find_label_issues(fit), truth),
              measure("gpr_pursuit, tolerance = 0.1", 1, find_label_issues(fit, tolerance = 0.1), truth),
              measure("gpr_loo, tolerance = 0.1", 1,
                      find_label_issues(suppressWarnings(gpr_loo(x, d$given_label)), tolerance = 0.1), truth)),
        digits = 3, row.names = FALSE)
}
