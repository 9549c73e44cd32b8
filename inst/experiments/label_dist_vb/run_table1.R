# Reproduction of Yoshikawa (2017) Table 1 with the simulation choices of
# sim_label_dist() (M = 4, U = 100, N = 1000 groups of 30,
# D = 10, alpha_w = 1, alpha_c0 = 1, alpha_c1 in {1, 10, 100}, alpha_s in {10, 100}).
# Methods: mean field (MF, the paper's family with the corrected updates),
# structured mean field (SMF, q(y) q(t | y), our extension), group-mean ridge
# and multi-task elastic net (label_dist_baseline()). All fits use the generating
# hyperparameters (oracle; the paper's CV protocol is unknown).
#
# Usage (from the package root, after installing the package):
#   Rscript inst/experiments/label_dist_vb/run_table1.R [n_seeds] [out.csv]
# Writes one row per (alpha_s, alpha_c1, seed, method).
suppressPackageStartupMessages(library(noisylabels))
args <- commandArgs(trailingOnly = TRUE)
n_seeds <- if (length(args) >= 1) as.integer(args[1]) else 20L
out <- if (length(args) >= 2) args[2] else "inst/experiments/label_dist_vb/results/table1.csv"

perms <- function(v) {
  if (length(v) <= 1) return(matrix(v, 1))
  do.call(rbind, lapply(seq_along(v), function(i) cbind(v[i], perms(v[-i]))))
}
P4 <- perms(1:4)
best_relabel <- function(pred, truth) max(apply(P4, 1, function(p) mean(p[pred] == truth)))

rows <- list()
for (alpha_s in c(10, 100)) for (alpha_c1 in c(1, 10, 100)) for (seed in seq_len(n_seeds)) {
  set.seed(1000 * seed + alpha_c1 + alpha_s)
  sim <- sim_label_dist(M = 4, U = 100, N = 1000, group_size = 30, D = 10, alpha_w = 1,
                        alpha_c0 = 1, alpha_c1 = alpha_c1, alpha_s = alpha_s, n_test = 1000)
  y <- as.integer(sim$y); y_te <- as.integer(sim$y_test)
  logit_te <- sim$x_test %*% t(sim$w)
  oracle_te <- mean(max.col(logit_te) == y_te)
  add <- function(method, tr_pred, te_pred, secs, extra = list()) {
    rows[[length(rows) + 1L]] <<- data.frame(
      alpha_s = alpha_s, alpha_c1 = alpha_c1, seed = seed, method = method,
      acc_train = mean(tr_pred == y), acc_test = mean(te_pred == y_te),
      acc_train_relabel = best_relabel(tr_pred, y), oracle_test = oracle_te, seconds = secs,
      iterations = extra$iterations %||% NA_integer_, mean_max_zeta = extra$mmz %||% NA_real_)
  }
  `%||%` <- function(a, b) if (is.null(a)) b else a
  for (structured in c(FALSE, TRUE)) {
    t0 <- proc.time()[[3]]
    fit <- suppressWarnings(label_dist_vb(sim$x, sim$groups, sim$label_dist, alpha_w = 1,
                                          alpha_s = alpha_s, alpha_c0 = 1, alpha_c1 = alpha_c1,
                                          structured = structured, raw_dist = TRUE))
    secs <- proc.time()[[3]] - t0
    add(if (structured) "SMF" else "MF", max.col(fitted(fit)), as.integer(predict(fit, sim$x_test)),
        secs, list(iterations = fit$iterations, mmz = mean(apply(fit$zeta, 1, max))))
  }
  for (m in c("ridge", "mten")) {
    t0 <- proc.time()[[3]]
    b <- label_dist_baseline(sim$x, sim$groups, sim$label_dist, method = m, raw_dist = TRUE)
    secs <- proc.time()[[3]] - t0
    add(m, as.integer(predict(b)), as.integer(predict(b, sim$x_test)), secs)
  }
  cat(sprintf("alpha_s %3g alpha_c1 %3g seed %2d done\n", alpha_s, alpha_c1, seed))
}
res <- do.call(rbind, rows)
write.csv(res, out, row.names = FALSE)
cat("wrote", out, "\n")
