# gpr_pursuit()'s default selection on 1,000 rows of telomere TS (issue 29),
# against find_label_issues(..., tolerance = 0.1) on the same rows, and the
# pursuit's ranking cut at the tolerance count. About 5 minutes.
#   R_LIBS=<lib> Rscript pursuit_telomere.R [path/to/real-label-errors]
library(noisylabels)
args <- commandArgs(TRUE)
real_dir <- if (length(args)) args[1] else "../shared/data/real-label-errors"
d <- read.csv(file.path(real_dir, "telomere_ts.csv"), check.names = FALSE)[, -1]
set.seed(1)
d <- d[sort(sample.int(nrow(d), 1000)), ]
truth <- d$true_error == 1
x <- as.matrix(d[, c("true.dna.scg", "true.telo.var")])
y <- d$given_label
fit <- gpr_pursuit(x, y)
sc <- noise_scores(fit)
pr <- function(fl) sprintf("flagged %d, precision %.3f, recall %.3f", sum(fl),
                           if (any(fl)) mean(truth[fl]) else NA, sum(fl & truth) / sum(truth))
cat("wrong:", sum(truth), " AUROC of pursuit scores:", detection_metrics(sc, truth)$auc, "\n")
cat("gpr_pursuit default (esd):", pr(seq_len(1000) %in% fit$support), "\n")
o <- order(-sc)
for (k in c(30, 40, 49, 60, 80)) cat("top", k, ":", pr(seq_len(1000) %in% o[1:k]), "\n")
set.seed(1)
r <- find_label_issues(x, y, method = "gp", tolerance = 0.1, verbose = FALSE)
li <- r$label_issues[order(r$label_issues$row), ]
cat("find_label_issues(tolerance = 0.1):", pr(li$flagged),
    sprintf("; count %.1f (%d-%d)", r$wrong_count$estimate, r$wrong_count$lower, r$wrong_count$upper), "\n")
k <- round(r$wrong_count$estimate)
cat("pursuit ranking cut at the tolerance count", k, ":", pr(seq_len(1000) %in% o[1:k]), "\n")
