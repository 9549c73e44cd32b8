# The measurements behind find_label_issues()'s regression default, on all
# rows of the two real tables (see README.md). For each table: 5-fold
# out-of-fold ranger predictions with min.node.size 5 / 20 / 50 / 100; the
# GP's exact leave-one-out residuals at full n (hyperparameters from 1,500
# rows, gpr_baseline()); the GP residual standardised by its LOO sd; the
# forest residual over a second forest's out-of-fold |residual|
# (heteroscedastic scale); blends of the two means; and the fit criteria that
# could choose between forest and GP (median |residual|, Gaussian log-lik).
# Scores use the answer key only to compute AUROC / AUPRC.
#   OPENBLAS_NUM_THREADS=1 Rscript inst/experiments/find_label_issues/design.R airquality_co
#   OPENBLAS_NUM_THREADS=1 Rscript inst/experiments/find_label_issues/design.R telomere_ts
suppressPackageStartupMessages(library(noisylabels))
set_name <- commandArgs(TRUE)[1]
data_dir <- Sys.getenv("NOISYLABELS_SHARED_DATA", "../shared/data")
path <- file.path(data_dir, "real-label-errors", paste0(set_name, ".csv"))
if (!file.exists(path)) path <- file.path("/work/shared/data/real-label-errors", paste0(set_name, ".csv"))
d <- read.csv(path, check.names = FALSE)[, -1]
truth <- d$true_error == 1
feat <- setdiff(names(d), c("true_error", "true_label", "given_label"))
x <- model.matrix(~ . - 1, d[, feat, drop = FALSE])
y <- d$given_label
n <- length(y)
auprc <- function(s, t) { o <- order(-s); h <- cumsum(t[o]); sum((h / seq_along(h))[t[o]]) / sum(t) }
ev <- function(name, s) cat(sprintf("%-34s AUROC %.4f AUPRC %.4f\n", name,
                                    detection_metrics(s, truth)$auc, auprc(s, truth)))
df <- data.frame(x, check.names = TRUE)
set.seed(1)
folds <- sample(rep_len(1:5, n))
forest <- function(target, ...) {
  o <- numeric(n)
  for (k in 1:5) {
    tr <- folds != k
    f <- ranger::ranger(x = df[tr, , drop = FALSE], y = target[tr], num.threads = 1, ...)
    o[!tr] <- predict(f, df[!tr, , drop = FALSE], num.threads = 1)$predictions
  }
  o
}
cat(set_name, "n", n, "inputs", ncol(x), "error rate", round(mean(truth), 4), "\n")
oof <- list()
for (mns in c(5, 20, 50, 100)) {
  t0 <- proc.time()[[3]]
  oof[[as.character(mns)]] <- forest(y, min.node.size = mns)
  ev(sprintf("forest min.node.size %d (%.0f s)", mns, proc.time()[[3]] - t0), abs(y - oof[[as.character(mns)]]))
}
r <- y - oof[["5"]]
ev("forest 5 |r| / forest(|r|)", abs(r) / pmax(forest(abs(r)), 1e-8))
# Refit without the 10% largest residuals of the first pass (trimming).
keep <- abs(r) <= quantile(abs(r), 0.9)
trimmed <- numeric(n)
for (k in 1:5) {
  tr <- folds != k & keep
  f <- ranger::ranger(x = df[tr, , drop = FALSE], y = y[tr], num.threads = 1)
  trimmed[folds == k] <- predict(f, df[folds == k, , drop = FALSE], num.threads = 1)$predictions
}
ev("forest 5, refit without top 10%", abs(y - trimmed))
folds10 <- sample(rep_len(1:10, n))
o10 <- numeric(n)
for (k in 1:10) {
  tr <- folds10 != k
  f <- ranger::ranger(x = df[tr, , drop = FALSE], y = y[tr], num.threads = 1)
  o10[!tr] <- predict(f, df[!tr, , drop = FALSE], num.threads = 1)$predictions
}
ev("forest 5, 10 folds", abs(y - o10))
t0 <- proc.time()[[3]]
gp <- noisylabels:::gp_loo_oof(x, y, subsample = 1500)
cat(sprintf("GP hyperparameters + full-n LOO: %.0f s\n", proc.time()[[3]] - t0))
loo_r <- y - gp$mean
ev("GP |LOO r|", abs(loo_r))
ev("GP |LOO r| / LOO sd", abs(loo_r) / gp$sd)
for (w in c(0.25, 0.5, 0.75)) ev(sprintf("blend %.2f GP + %.2f forest", w, 1 - w),
                                 abs(y - (w * gp$mean + (1 - w) * oof[["5"]])))
cat(sprintf("median |r|: forest %.4f, GP %.4f; Gaussian log-lik: forest %.0f, GP %.0f\n",
            median(abs(r)), median(abs(loo_r)),
            sum(dnorm(r, 0, sqrt(mean(r^2)), log = TRUE)), sum(dnorm(loo_r, 0, gp$sd, log = TRUE))))
