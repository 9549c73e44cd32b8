# Round-4 candidates (calibration README, "Round 4"): heavier-tailed nulls and a
# separated ring for Student-t3 clean noise, and the F1/FDP frontier of the |z|
# ranking. A function of the cached out-of-fold predictions of calibration.R.
#   CACHE=/tmp/num R_LIBS=<lib> Rscript round4.R frontier
#   CACHE=/tmp/num R_LIBS=<lib> Rscript round4.R gn gt_free gt_e2 sep sep95 tie5 tie3 avg_sep95 avg_sep99 shrink
# Null: GN(a, b) or the generalised t with body shape b and tail index 1 / eta
# (eta = 0 is the GN); ring 0.5 N(+-mu, tau^2); optionally mu >= the null's
# q-quantile of |z| plus tau ("separated").
library(noisylabels)
ns <- asNamespace("noisylabels")
`%||%` <- function(a, b) if (is.null(a)) b else a
cache <- Sys.getenv("CACHE", "/tmp/num")
cases <- c(list(telomere = readRDS(file.path(cache, "oof-telomere_ts.rds")),
                air = readRDS(file.path(cache, "oof-airquality_co.rds"))),
           readRDS(file.path(cache, "oof-sim.rds")))
zof <- function(d) { r <- d$labels - d$pred; if (is.null(d$sd)) r / ns$robust_scale(r) else r / d$sd }
Z <- lapply(cases, zof)

lse2 <- function(l1, l2) { m <- pmax(l1, l2); m + log(exp(l1 - m) + exp(l2 - m)) }
gn_logdens <- function(z, a, b) log(b) - log(2 * a) - lgamma(1 / b) - (abs(z) / a)^b
null_logdens <- function(z, par) {
  if (par$eta <= 1e-8) return(gn_logdens(z, par$a, par$b))
  p <- par$b; q <- 1 / (p * par$eta)
  log(p) - log(2 * par$a) - log(q) / p - lbeta(1 / p, q) - (q + 1 / p) * log1p(abs(z / par$a)^p / q)
}
# Quantile of |z| under the null (GT: |z / a|^p / q is beta-prime(1 / p, q)).
null_qabs <- function(prob, par) {
  if (par$eta <= 1e-8) return(par$a * stats::qgamma(prob, 1 / par$b)^(1 / par$b))
  p <- par$b; q <- 1 / (p * par$eta); x <- stats::qbeta(prob, 1 / p, q)
  par$a * (q * x / (1 - x))^(1 / p)
}
null_rsd <- function(par) null_qabs(0.5, par) / stats::qnorm(0.75)
logdens2 <- function(z, par) {
  ring <- lse2(stats::dnorm(z, par$mu, par$tau, log = TRUE), stats::dnorm(z, -par$mu, par$tau, log = TRUE))
  list(clean = log1p(-par$w) + null_logdens(z, par), wrong = log(par$w) + log(0.5) + ring)
}
posterior2 <- function(z, par) {
  l <- logdens2(z, par); p <- exp(l$wrong - lse2(l$clean, l$wrong))
  o <- order(abs(z)); p[o] <- cummax(p[o]); p
}
B <- c(0.5, 8)
# eta: 0 (GN), fixed, free in [0, eta_max], or tied to the body, tie * max(0, 2 - b).
unpack <- function(th, o) {
  b <- B[1] + diff(B) * plogis(th[3])
  eta <- if (!is.null(o$tie)) o$tie * max(0, 2 - b) else if (!is.null(o$eta_fixed)) o$eta_fixed
         else if (o$gt) o$eta_max * plogis(th[6]) else 0
  par <- list(w = 0.5 * plogis(th[1]), a = exp(th[2]), b = b, eta = eta)
  par$tau <- null_rsd(par) * (1 + exp(th[5]))
  base <- if (isTRUE(o$sep)) null_qabs(o$sep_q, par) + o$sep_k * par$tau else 0
  par$mu <- base + exp(th[4])
  par
}
nll <- function(th, bins, o) {
  par <- unpack(th, o); l <- logdens2(bins$x, par)
  v <- -(sum(bins$cnt * lse2(l$clean, l$wrong)) + (o$prior[1] - 1) * log(par$w) +
           (o$prior[2] - 1) * log1p(-par$w))
  if (is.finite(v)) v else 1e100
}
cfit <- function(z, gt = FALSE, eta_fixed = NULL, eta_max = 0.5, sep = FALSE, sep_q = 0.99, sep_k = 1,
                 prior = c(1, 19), tie = NULL) {
  o <- list(tie = tie, gt = gt || !is.null(eta_fixed), eta_fixed = eta_fixed, eta_max = eta_max,
            sep = sep, sep_q = sep_q, sep_k = sep_k, prior = prior)
  free_eta <- o$gt && is.null(eta_fixed)
  bins <- ns$abs_bins(z); s <- ns$robust_scale(z); az <- abs(z); best <- NULL
  for (v in list(c(0.02, 0.98), c(0.05, 0.995), c(0.2, 0.9))) for (e0 in if (free_eta) c(0.05, 0.3) else 0.05) {
    th <- c(qlogis(2 * v[1]), log(sqrt(2) * s), qlogis((2 - B[1]) / diff(B)), 0, log(0.2), qlogis(e0 / eta_max))
    p0 <- unpack(th, o)
    th[4] <- log(max(max(quantile(az, v[2], names = FALSE), 2 * s) - (p0$mu - 1), 1e-3))
    if (!free_eta) th <- th[1:5]
    r <- stats::optim(th, nll, bins = bins, o = o, method = "BFGS", control = list(maxit = 500))
    if (is.null(best) || r$value < best$value) best <- r
  }
  par <- unpack(best$par, o)
  h <- stats::optimHess(best$par, nll, bins = bins, o = o)
  vv <- tryCatch(solve(h)[1, 1], error = function(e) NA_real_); if (!is.finite(vv) || vv < 0) vv <- 0
  c(par, list(weight_se = 0.5 * dlogis(best$par[1]) * sqrt(vv), p_wrong = posterior2(z, par),
              nll = best$value, extra = par$eta))
}
# Equal-weight average of the fits' posteriors; the count's variance adds the
# spread of their estimates.
avgfit <- function(z, fits) {
  n <- length(z); pw <- lapply(fits, `[[`, "p_wrong"); p <- Reduce(`+`, pw) / length(pw)
  est <- vapply(pw, sum, 0)
  v <- mean(vapply(fits, function(f) (n * f$weight_se)^2, 0)) + mean((est - mean(est))^2)
  c(fits[[1]][c("a", "b")], list(p_wrong = p, weight_se = sqrt(v) / n, extra = est[2] - est[1]))
}

# Share shrunk towards "no wrong labels": the posterior of the two-group fit
# times the BIC weight of that fit against the GN null alone (3 more parameters).
shrinkfit <- function(z, pen = 3) {
  f1 <- cfit(z); bins <- ns$abs_bins(z); s <- ns$robust_scale(z)
  nll0 <- function(th) -sum(bins$cnt * gn_logdens(bins$x, exp(th[1]), B[1] + diff(B) * plogis(th[2])))
  f0 <- stats::optim(c(log(sqrt(2) * s), qlogis((2 - B[1]) / diff(B))), nll0, method = "BFGS")
  d <- 2 * (f0$value - f1$nll) - pen * log(length(z))
  w1 <- plogis(d / 2)
  c(f1[c("a", "b")], list(p_wrong = w1 * f1$p_wrong, weight_se = f1$weight_se, extra = w1))
}

ev <- function(k, fit, fdr = 0.1) {
  d <- cases[[k]]; truth <- d$truth == 1; z <- Z[[k]]; pw <- fit$p_wrong; n <- length(z)
  fl <- ns$fdr_qvalues(pw) <= fdr; tp <- sum(fl & truth)
  o <- order(-abs(z)); best <- if (any(truth)) max(2 * cumsum(truth[o]) / (seq_along(o) + sum(truth))) else NA
  cnt <- ns$wrong_count(pw, 0.9, (n * (fit$weight_se %||% 0))^2)
  data.frame(true = sum(truth), flagged = sum(fl), prec = if (any(fl)) tp / sum(fl) else NA,
    rec = if (any(truth)) tp / sum(truth) else NA, f1 = if (any(truth)) 2 * tp / (sum(fl) + sum(truth)) else NA,
    best = best, fdp = if (any(fl)) 1 - tp / sum(fl) else 0, est = sum(pw),
    lo = cnt$lower, hi = cnt$upper, shape = fit$b %||% NA, extra = fit$extra %||% NA)
}
run <- function(fitter, which = names(cases)) {
  t0 <- proc.time()
  res <- do.call(rbind, lapply(which, function(k) cbind(case = k, ev(k, fitter(Z[[k]])))))
  res$set <- sub("-[0-9]$", "", res$case)
  res$cov <- res$true >= res$lo & res$true <= res$hi
  tt <- proc.time() - t0; attr(res, "cpu") <- tt[[1]] + tt[[2]]
  res
}
summ <- function(res) {
  a <- aggregate(cbind(true, flagged, prec, rec, f1, best, fdp, est, lo, hi, cov, shape, extra) ~ set, res,
                 mean, na.action = na.pass)
  a$ratio <- a$f1 / a$best
  print(a[, c("set", "true", "flagged", "prec", "rec", "fdp", "ratio", "est", "lo", "hi", "cov", "shape", "extra")],
        digits = 3, row.names = FALSE)
  cat("count covered", sum(res$cov[!res$case %in% c("telomere", "air")]), "of 36; CPU", attr(res, "cpu"), "s\n")
}

# Smallest mean FDP over the 3 seeds of a setting among cuts of the |z| ranking
# (one cut per seed, chosen knowing the truth) whose mean F1 is >= 0.8 x the
# mean best-threshold F1.
pareto <- function(k) {
  t <- cases[[k]]$truth == 1; o <- order(-abs(Z[[k]])); tp <- cumsum(t[o]); m <- seq_along(o)
  f1 <- c(0, 2 * tp / (m + sum(t))); fdp <- c(0, 1 - tp / m); cut <- c(0, m)
  keep <- vapply(seq_along(f1), function(i) !any((fdp < fdp[i] & f1 >= f1[i]) | (fdp <= fdp[i] & f1 > f1[i])), TRUE)
  list(d = data.frame(cut = cut, fdp = fdp, f1 = f1)[keep, ], best = max(f1))
}
frontier <- function(set) {
  ps <- lapply(paste0(set, "-", 1:3), pareto)
  g <- expand.grid(lapply(ps, function(p) seq_len(nrow(p$d))))
  f <- Reduce(`+`, lapply(1:3, function(i) ps[[i]]$d$f1[g[[i]]]))
  d <- Reduce(`+`, lapply(1:3, function(i) ps[[i]]$d$fdp[g[[i]]])) / 3
  b <- sum(vapply(ps, `[[`, 0, "best")); ok <- f >= 0.8 * b
  j <- which(ok)[which.min(d[ok])]
  cat(sprintf("%s: smallest mean FDP at F1 ratio >= 0.8: %.3f (cuts %s, ratio %.2f)\n", set, d[j],
              paste(vapply(1:3, function(i) ps[[i]]$d$cut[g[[i]][j]], 0), collapse = "/"), f[j] / b))
}

cands <- list(
  gn = function(z) cfit(z),
  gt_free = function(z) cfit(z, gt = TRUE),
  gt_e2 = function(z) cfit(z, eta_fixed = 0.2),
  sep = function(z) cfit(z, sep = TRUE),
  sep95 = function(z) cfit(z, sep = TRUE, sep_q = 0.95),
  tie5 = function(z) cfit(z, tie = 0.5),
  tie3 = function(z) cfit(z, tie = 0.3),
  avg_sep95 = function(z) avgfit(z, list(cfit(z), cfit(z, sep = TRUE, sep_q = 0.95))),
  avg_sep99 = function(z) avgfit(z, list(cfit(z), cfit(z, sep = TRUE))),
  shrink = function(z) shrinkfit(z))
for (nm in commandArgs(TRUE)) {
  cat("==", nm, "\n")
  if (nm == "frontier") {
    for (s in c("heavy-05", "heavy-10", "heavy-20", "gauss-05", "light-05")) frontier(s)
  } else summ(run(cands[[nm]]))
}
