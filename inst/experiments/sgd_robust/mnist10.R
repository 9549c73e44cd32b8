# MNIST 10-class with flipped labels (issue 23): one-vs-rest robust losses
# against logistic (OvR and multinomial) SGD and LiblineaR's one-vs-rest L2
# logistic regression. ../shared/data/mnist has the 10,000 test images only
# (see its SOURCE.md), so they are split 4:1 (seed 2016): 8,000 training and
# 2,000 test digits, pixels / 255. A fraction p of the training labels is
# replaced by a different class drawn uniformly (test labels stay clean).
#
#   R_LIBS=<lib> Rscript inst/experiments/sgd_robust/mnist10.R [reps] [rates]
#
# lambda = 1e-4 for every method (no cross-validation: one setting, the
# package default), 15 epochs, default step search; LiblineaR type 0 with
# C = 1 / (lambda n). Writes results/mnist10_noise.csv (one row per method,
# rate and repetition) and prints mean +- sd test error.
suppressPackageStartupMessages(library(noisylabels))
source(file.path(dirname(sub("--file=", "", grep("--file=", commandArgs(), value = TRUE))), "data.R"))
args <- commandArgs(trailingOnly = TRUE)
reps <- if (length(args) >= 1) as.integer(args[1]) else 3L
rates <- if (length(args) >= 2) as.numeric(strsplit(args[2], ",")[[1]]) else c(0, 0.2, 0.4)
dir <- file.path(shared_data_dir(), "mnist")
img <- read_idx_gz(file.path(dir, "t10k-images-idx3-ubyte.gz"))
lab <- read_idx_gz(file.path(dir, "t10k-labels-idx1-ubyte.gz"), "labels")
x <- img / 255
set.seed(2016)
te <- sort(sample(nrow(x), 2000))
xtr <- x[-te, ]; ytr <- factor(lab[-te], levels = 0:9)
xte <- x[te, ]; yte <- factor(lab[te], levels = 0:9)
lambda <- 1e-4
quiet <- function(e) suppressMessages(suppressWarnings(e))
methods <- list(
  "SGD(SRamp) OvR" = function(x, y, seed) quiet(sgd_robust(x, y, loss = "smooth_ramp", lambda = lambda, seed = seed)),
  "SGD(RGomp) OvR" = function(x, y, seed) quiet(sgd_robust(x, y, loss = "gompertz", lambda = lambda, seed = seed)),
  "SGD(Hinge) OvR" = function(x, y, seed) quiet(sgd_robust(x, y, loss = "hinge", lambda = lambda, seed = seed)),
  "SGD(Log) OvR" = function(x, y, seed) quiet(sgd_robust(x, y, loss = "logistic", lambda = lambda, seed = seed)),
  "SGD(Log) multinomial" = function(x, y, seed) quiet(sgd_robust(x, y, loss = "logistic", lambda = lambda,
                                                                  multiclass = "multinomial", seed = seed)),
  "LiblineaR LR OvR" = function(x, y, seed) {
    if (!requireNamespace("LiblineaR", quietly = TRUE)) return(NULL)
    LiblineaR::LiblineaR(x, y, type = 0, cost = 1 / (lambda * nrow(x)), bias = 1, epsilon = 0.01)
  })
rows <- list()
for (p in rates) for (r in seq_len(reps)) {
  set.seed(1000 * r + 100 * p)
  y <- ytr
  k <- sample(length(y), round(p * length(y)))
  y[k] <- factor((as.integer(as.character(y[k])) + sample(1:9, length(k), replace = TRUE)) %% 10,
                 levels = 0:9)
  for (m in names(methods)) {
    t0 <- proc.time()[["elapsed"]]
    fit <- methods[[m]](xtr, y, seed = r)
    secs <- proc.time()[["elapsed"]] - t0
    if (is.null(fit)) next
    pred <- if (inherits(fit, "sgd_robust")) predict(fit, xte) else predict(fit, xte)$predictions
    auc <- if (inherits(fit, "sgd_robust") && p > 0) {
      detection_metrics(noise_scores(fit), seq_along(y) %in% k)$auc
    } else NA_real_
    rows[[length(rows) + 1L]] <- data.frame(method = m, noise = p, rep = r,
                                            test_error = mean(as.character(pred) != as.character(yte)),
                                            flip_auc = auc, seconds = secs)
    cat(sprintf("p = %.1f rep %d %-22s test error %.4f  flip AUC %s  %.1f s\n", p, r, m,
                rows[[length(rows)]]$test_error, format(auc, digits = 3), secs))
  }
}
res <- do.call(rbind, rows)
out <- file.path(dirname(sub("--file=", "", grep("--file=", commandArgs(), value = TRUE))),
                 "results", "mnist10_noise.csv")
utils::write.csv(res, out, row.names = FALSE)
agg <- aggregate(cbind(test_error, flip_auc) ~ method + noise, res, function(v) c(mean = mean(v), sd = stats::sd(v)),
                 na.action = na.pass)
print(agg, digits = 3)
