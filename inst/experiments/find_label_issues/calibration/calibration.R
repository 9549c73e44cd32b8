# Calibration of the numeric-label flags of find_label_issues() (issue 29):
# flags at fdr = 0.1, the estimated count and its 90% interval, against the
# truth on the two real tables with recorded errors and on simulated data.
#
# Out-of-fold predictions are computed the way find_label_issues(y ~ ., data)
# does (method = "auto") and cached in CACHE, since the calibration is a
# function of (labels, predictions, sd) only.
#   R_LIBS=<lib> Rscript calibration.R [path/to/real-label-errors]
library(noisylabels)
args <- commandArgs(TRUE)
real_dir <- if (length(args)) args[1] else "../shared/data/real-label-errors"
cache <- Sys.getenv("CACHE", "/tmp/num")
dir.create(cache, showWarnings = FALSE)

# Friedman-like smooth function of 5 inputs, clean noise of sd 1 (Gaussian,
# Student t3, uniform), a share `rate` of labels shifted by +-U(1, 6).
sim_case <- function(n, rate, noise, seed) {
  set.seed(seed)
  x <- matrix(runif(n * 5), n)
  f <- 10 * sin(pi * x[, 1] * x[, 2]) + 20 * (x[, 3] - 0.5)^2 + 10 * x[, 4] + 5 * x[, 5]
  e <- switch(noise, gauss = rnorm(n), heavy = rt(n, df = 3) / sqrt(3),
              light = runif(n, -sqrt(3), sqrt(3)))
  y <- f + e
  yc <- y
  m <- round(rate * n)
  bad <- sort(sample.int(n, m))
  y[bad] <- y[bad] + sample(c(-1, 1), m, TRUE) * runif(m, 1, 6)
  list(x = x, y = y, truth = seq_len(n) %in% bad, yc = yc)
}

oof_cached <- function(file, make) {
  path <- file.path(cache, file)
  if (file.exists(path)) return(readRDS(path))
  out <- make()
  saveRDS(out, path)
  out
}

cases <- list()
for (nm in c("telomere_ts", "airquality_co")) {
  csv <- file.path(real_dir, paste0(nm, ".csv"))
  if (!file.exists(csv)) next
  cases[[nm]] <- oof_cached(sprintf("oof-%s.rds", nm), function() {
    d <- read.csv(csv, check.names = FALSE)[, -1]
    truth <- d$true_error; tl <- d$true_label
    d$true_error <- NULL; d$true_label <- NULL
    set.seed(1)
    res <- find_label_issues(given_label ~ ., data = d)
    list(labels = d$given_label, pred = res$predictions, sd = res$sd, truth = truth,
         true_label = tl, method = res$method)
  })
}
sims <- oof_cached("oof-sim.rds", function() {
  out <- list()
  for (noise in c("gauss", "heavy", "light")) for (rate in c(0, 0.05, 0.1, 0.2)) for (seed in 1:3) {
    s <- sim_case(1000, rate, noise, 100 * seed + round(100 * rate))
    set.seed(seed)
    res <- find_label_issues(s$x, s$y, verbose = FALSE)
    out[[sprintf("%s-%02d-%d", noise, round(100 * rate), seed)]] <-
      list(labels = s$y, pred = res$predictions, sd = res$sd, truth = s$truth, true_label = s$yc,
           method = res$method)
  }
  out
})
cases <- c(cases, sims)

measure <- function(d, fdr = 0.1) {
  truth <- d$truth == 1
  t0 <- proc.time()[["elapsed"]]
  res <- find_label_issues(labels = d$labels, predictions = d$pred, sd = d$sd, fdr = fdr)
  secs <- proc.time()[["elapsed"]] - t0
  li <- res$label_issues[order(res$label_issues$row), ]
  fl <- li$flagged
  tp <- sum(fl & truth)
  o <- order(-li$score)
  best <- if (any(truth)) max(2 * cumsum(truth[o]) / (seq_along(o) + sum(truth))) else NA
  auprc <- function(s, t) { o <- order(-s); tp <- cumsum(t[o]); sum((tp / seq_along(o))[t[o]]) / sum(t) }
  clean <- !truth
  cover <- mean(d$true_label[clean] >= li$suggested_lower[clean] &
                  d$true_label[clean] <= li$suggested_upper[clean])
  data.frame(n = length(truth), true = sum(truth), flagged = sum(fl),
             precision = if (any(fl)) tp / sum(fl) else NA, recall = if (any(truth)) tp / sum(truth) else NA,
             f1 = if (any(truth)) 2 * tp / (sum(fl) + sum(truth)) else NA, best_f1 = best,
             fdp = if (any(fl)) 1 - tp / sum(fl) else 0,
             estimate = res$wrong_count$estimate, lower = res$wrong_count$lower, upper = res$wrong_count$upper,
             auroc = if (any(truth)) detection_metrics(li$score, truth)$auc else NA,
             auprc = if (any(truth)) auprc(li$score, truth) else NA,
             shape = res$mixture$shape, interval_cover = cover, seconds = secs)
}

rows <- lapply(names(cases), function(k) cbind(case = k, measure(cases[[k]])))
res <- do.call(rbind, rows)
res$setting <- sub("-[0-9]+$", "", res$case)
res$setting[!grepl("^(gauss|heavy|light)", res$case)] <- res$case[!grepl("^(gauss|heavy|light)", res$case)]
res$covered <- res$true >= res$lower & res$true <= res$upper
num <- c("true", "flagged", "precision", "recall", "f1", "best_f1", "fdp", "estimate", "lower",
         "upper", "covered", "auroc", "auprc", "shape", "interval_cover")
agg <- aggregate(res[num], res["setting"], function(v) mean(v, na.rm = TRUE))
agg$f1_ratio <- agg$f1 / agg$best_f1
agg$flag_rate <- agg$flagged / aggregate(res$n, res["setting"], mean)$x
print(agg, digits = 3, row.names = FALSE)
write.csv(res, file.path(cache, "calibration-results.csv"), row.names = FALSE)

# ---- tolerance-type errors: find_label_issues(..., tolerance) -----------------
# A label is wrong when |given - true| > tolerance. p_wrong needs the model's
# predictive distribution of the true value, so the GP path's leave-one-out
# mean, sd and fitted noise variance are cached (the forest gives one
# residual scale only and uses it as the truth's sd).
gp_real <- function(nm) oof_cached(sprintf("gp-%s.rds", nm), function() {
  d <- read.csv(file.path(real_dir, paste0(nm, ".csv")), check.names = FALSE)[, -1]
  truth <- d$true_error; tl <- d$true_label
  d$true_error <- NULL; d$true_label <- NULL
  x <- as.matrix(d[, setdiff(names(d), "given_label")])
  options(noisylabels.gp_loo_dense_max = 20000)
  set.seed(1)
  g <- noisylabels:::gp_loo_oof(x, d$given_label)
  list(labels = d$given_label, pred = g$mean, sd = g$sd, noise_var = g$noise_var,
       truth = truth, true_label = tl, method = g$method)
})
measure_tol <- function(d, tol, latent) {
  truth <- d$truth == 1
  res <- noisylabels:::issues_regression(d$labels, d$pred, d$sd, NULL, "cached", fdr = 0.1,
                                         tolerance = tol, latent_sd = latent)
  li <- res$label_issues[order(res$label_issues$row), ]
  tp <- sum(li$flagged & truth)
  data.frame(tolerance = tol, true = sum(truth), flagged = sum(li$flagged),
             precision = if (any(li$flagged)) tp / sum(li$flagged) else NA,
             recall = tp / sum(truth), f1 = 2 * tp / (sum(li$flagged) + sum(truth)),
             estimate = res$wrong_count$estimate, lower = res$wrong_count$lower, upper = res$wrong_count$upper)
}
tol_rows <- list()
if (file.exists(file.path(real_dir, "telomere_ts.csv"))) {
  g <- gp_real("telomere_ts")
  tol_rows$telomere <- cbind(case = "telomere TS (GP latent sd)",
                             measure_tol(g, 0.1, noisylabels:::gp_latent_sd(g$sd, g$noise_var)))
}
if (!is.null(cases$airquality_co)) {
  a <- cases$airquality_co
  tol_rows$air <- do.call(rbind, lapply(c(0.1, 0.2, 0.5, 0.8), function(t)
    cbind(case = "air quality CO (forest, scale as truth sd)",
          measure_tol(a, t, noisylabels:::robust_scale(a$labels - a$pred)))))
}
print(do.call(rbind, tol_rows), digits = 3, row.names = FALSE)
