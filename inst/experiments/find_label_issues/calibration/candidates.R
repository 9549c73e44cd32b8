# Round-2 candidates (calibration README, "What was tried, round 2"): null families
# GN, Student-t, GN truncated at a profiled edge; BIC choice and model average.
# Usage: source this file, then run(function(z) two_group_bma(z, families = c("gn", "t")))
# (run/summ from the harness at the end; CACHE as in calibration.R).
gn_logdens <- function(z, a, b) log(b) - log(2 * a) - lgamma(1 / b) - (abs(z) / a)^b
gn_sd <- function(a, b) a * sqrt(gamma(3 / b) / gamma(1 / b))
lse2 <- function(l1, l2) { m <- pmax(l1, l2); m + log(exp(l1 - m) + exp(l2 - m)) }

null_logdens <- function(z, par) {
  if (par$family == "t") return(stats::dt(z / par$a, par$b, log = TRUE) - log(par$a))
  l <- gn_logdens(z, par$a, par$b)
  if (is.finite(par$edge)) {
    inside <- stats::pgamma((par$edge / par$a)^par$b, 1 / par$b)
    l <- ifelse(abs(z) <= par$edge, l - log(inside), -Inf)
  }
  l
}
# Median of |z| under the (untruncated) null, as a robust sd.
null_rsd <- function(par) {
  m <- if (par$family == "t") par$a * stats::qt(0.75, par$b) else par$a * stats::qgamma(0.5, 1 / par$b)^(1 / par$b)
  m / stats::qnorm(0.75)
}
two_group_logdens <- function(z, par) {
  list(clean = log1p(-par$w) + null_logdens(z, par),
       wrong = log(par$w) + log(0.5) + lse2(stats::dnorm(z, par$mu, par$tau, log = TRUE),
                                            stats::dnorm(z, -par$mu, par$tau, log = TRUE)))
}
two_group_posterior <- function(z, par) {
  l <- two_group_logdens(z, par)
  p <- exp(l$wrong - lse2(l$clean, l$wrong))
  o <- order(abs(z))
  p[o] <- cummax(p[o])
  p
}

shape_range <- list(gn = c(0.5, 8), tgn = c(0.5, 8), t = c(1, 100))
unpack <- function(th, family, edge) {
  r <- shape_range[[family]]
  par <- list(family = family, edge = edge, w = 0.5 * stats::plogis(th[1]), a = exp(th[2]),
              b = r[1] + (r[2] - r[1]) * stats::plogis(th[3]), mu = exp(th[4]))
  par$tau <- null_rsd(par) * (1 + exp(th[5]))
  par
}
pack <- function(par) {
  r <- shape_range[[par$family]]
  pb <- min(max((par$b - r[1]) / (r[2] - r[1]), 1e-4), 1 - 1e-4)
  c(stats::qlogis(min(max(2 * par$w, 1e-6), 1 - 1e-6)), log(par$a), stats::qlogis(pb), log(max(par$mu, 1e-4)),
    log(max(par$tau / null_rsd(par) - 1, 1e-4)))
}
bin_abs <- function(z, nbins = 1024L) {
  az <- abs(z)
  if (length(unique(az)) <= nbins) { x <- sort(unique(az)); return(list(x = x, cnt = tabulate(match(az, x), length(x)), edges = NULL)) }
  top <- min(max(az), 12 * stats::quantile(az, 0.75, names = FALSE))
  br <- seq(0, top, length.out = nbins + 1L)
  inb <- az <= top
  cnt <- tabulate(findInterval(az[inb], br, rightmost.closed = TRUE, all.inside = TRUE), nbins)
  x <- c((br[-1] + br[-length(br)]) / 2, sort(az[!inb]))
  cnt <- c(cnt, rep(1L, sum(!inb)))
  keep <- cnt > 0
  list(x = x[keep], cnt = cnt[keep], edges = br)
}
nll_of <- function(th, bins, family, edge, prior) {
  par <- unpack(th, family, edge)
  l <- two_group_logdens(bins$x, par)
  lt <- lse2(l$clean, l$wrong)
  v <- -(sum(bins$cnt * lt) + (prior[1] - 1) * log(par$w) + (prior[2] - 1) * log1p(-par$w))
  if (!is.finite(v)) 1e100 else v
}
fit_family <- function(bins, family, edge = Inf, start, prior = c(1, 19), fix_w = NULL) {
  best <- NULL
  for (s in start) {
    th <- pack(c(list(family = family, edge = edge), s))
    f <- if (is.null(fix_w)) function(t) nll_of(t, bins, family, edge, prior)
         else function(t) nll_of(c(stats::qlogis(2 * fix_w), t), bins, family, edge, prior)
    o <- stats::optim(if (is.null(fix_w)) th else th[-1], f, method = "BFGS", control = list(maxit = 500))
    if (is.null(best) || o$value < best$value) best <- o
  }
  th <- if (is.null(fix_w)) best$par else c(stats::qlogis(2 * fix_w), best$par)
  c(unpack(th, family, edge), list(nll = best$value, theta = th))
}
starts <- function(z, family) {
  s <- stats::mad(z); if (s <= 0) s <- 1
  az <- abs(z)
  b0 <- if (family == "t") 10 else 2
  a0 <- if (family == "t") s else sqrt(2) * s
  lapply(list(c(0.02, 0.98), c(0.05, 0.995), c(0.2, 0.9)), function(v)
    list(a = a0, b = b0, w = v[1], mu = max(stats::quantile(az, v[2], names = FALSE), 2 * s), tau = 1.2 * s))
}

two_group_fit <- function(z, prior = c(1, 19), families = c("gn", "t", "tgn"), edge_margin = 10,
                          level = 0.9) {
  n <- length(z)
  bins <- bin_abs(z)
  fits <- list()
  for (fam in intersect(families, c("gn", "t"))) fits[[fam]] <- fit_family(bins, fam, Inf, starts(z, fam), prior)
  if ("tgn" %in% families) {
    # edge candidates: bin edges / midpoints between data values at upper quantiles
    az <- sort(abs(z))
    qs <- stats::quantile(az, c(seq(0.8, 0.99, by = 0.01), 0.995, 0.999), names = FALSE)
    cand <- if (is.null(bins$edges)) unique((az[findInterval(qs, az)] + az[pmin(findInterval(qs, az) + 1, n)]) / 2)
            else unique(bins$edges[findInterval(qs, bins$edges) + 1L])
    g <- fits$gn
    st <- list(g[c("a", "b", "w", "mu", "tau")])
    prof <- lapply(cand, function(cc) fit_family(bins, "tgn", cc, c(st, starts(z, "gn")[1]), prior))
    nl <- vapply(prof, `[[`, 0, "nll")
    fits$tgn <- prof[[which.min(nl)]]
    fits$tgn$profile <- data.frame(edge = cand, nll = nl)
  }
  k <- c(gn = 5, t = 5, tgn = 6)
  bic <- vapply(names(fits), function(f) 2 * fits[[f]]$nll + k[[f]] * log(n), 0)
  # The edge must win clearly: it adds the edge parameter and a discontinuity.
  if ("tgn" %in% names(bic)) bic["tgn"] <- bic["tgn"] + edge_margin
  fam <- names(which.min(bic))
  par <- fits[[fam]]
  p_wrong <- two_group_posterior(z, par)
  list(par = par, bic = bic, family = fam, p_wrong = p_wrong, n_wrong = sum(p_wrong), fits = fits, bins = bins)
}

# Profile-likelihood interval of w (other parameters re-fitted).
w_profile <- function(fit, prior = c(1, 19), level = 0.9, z) {
  par <- fit$par; bins <- fit$bins
  crit <- stats::qchisq(level, 1) / 2
  st <- list(par[c("a", "b", "w", "mu", "tau")])
  f <- function(w) fit_family(bins, par$family, par$edge, st, prior, fix_w = w)$nll - par$nll - crit
  lo <- if (f(1e-6) < 0) 0 else stats::uniroot(f, c(1e-6, par$w), tol = 1e-4)$root
  hi <- if (f(0.499) < 0) 0.5 else stats::uniroot(f, c(par$w, 0.499), tol = 1e-4)$root
  c(lo, hi)
}

# Model average over null families (BIC weights); count interval from the full
# observed information (all parameters free) of each family's fit.
two_group_bma <- function(z, prior = c(1, 19), families = c("gn", "t"), level = 0.9, mode = "bma") {
  n <- length(z); bins <- bin_abs(z)
  fits <- lapply(stats::setNames(families, families), function(f) fit_family(bins, f, Inf, starts(z, f), prior))
  bic <- vapply(fits, function(f) 2 * f$nll, 0)
  wt <- exp(-(bic - min(bic)) / 2); wt <- wt / sum(wt)
  if (mode == "best") wt <- as.numeric(wt == max(wt))
  pw <- lapply(fits, function(f) two_group_posterior(z, f))
  p <- Reduce(`+`, Map(`*`, pw, wt))
  est <- vapply(pw, sum, 0)
  vw <- vapply(fits, function(f) {
    h <- stats::optimHess(f$theta, nll_of, bins = bins, family = f$family, edge = Inf, prior = prior)
    v <- tryCatch(solve(h)[1, 1], error = function(e) NA)
    if (!is.finite(v) || v < 0) v <- 0
    (0.5 * stats::dlogis(f$theta[1]))^2 * v }, 0)
  mv <- sum(wt * (n^2 * vw + (est - sum(wt * est))^2))
  pb <- sum(p * (1 - p)); mu <- sum(p); zq <- stats::qnorm(1 - (1 - level) / 2)
  s <- sqrt(pb + mv)
  list(p_wrong = p, par = fits[[which.max(wt)]], family = paste(names(wt)[wt > 0.05], collapse = "+"),
       ci = c(max(0, floor(mu - zq * s - 0.5)), min(n, ceiling(mu + zq * s + 0.5))), wt = wt)
}

# Harness over the cached cases.
library(noisylabels)
ns <- asNamespace("noisylabels")
cache <- Sys.getenv("CACHE", "/tmp/num")
cases <- c(list(telomere = readRDS(file.path(cache, "oof-telomere_ts.rds")),
                air = readRDS(file.path(cache, "oof-airquality_co.rds"))),
           readRDS(file.path(cache, "oof-sim.rds")))
zof <- function(d) { r <- d$labels - d$pred; if (is.null(d$sd)) r / ns$robust_scale(r) else r / d$sd }
ev <- function(d, fit, fdr = 0.1) {
  truth <- d$truth == 1; z <- zof(d); pw <- fit$p_wrong
  fl <- ns$fdr_qvalues(pw) <= fdr; tp <- sum(fl & truth)
  o <- order(-abs(z)); best <- if (any(truth)) max(2 * cumsum(truth[o]) / (seq_along(o) + sum(truth))) else NA
  data.frame(true = sum(truth), flagged = sum(fl), prec = if (any(fl)) tp / sum(fl) else NA,
    rec = if (any(truth)) tp / sum(truth) else NA, f1 = if (any(truth)) 2 * tp / (sum(fl) + sum(truth)) else NA,
    best = best, fdp = if (any(fl)) 1 - tp / sum(fl) else 0, est = sum(pw),
    lo = if (!is.null(fit$ci)) fit$ci[1] else NA, hi = if (!is.null(fit$ci)) fit$ci[2] else NA,
    fam = fit$family, shape = fit$par$b, edge = fit$par$edge)
}
run <- function(fitter, which = names(cases)) {
  rows <- lapply(which, function(k) { t0 <- proc.time()[[3]]; f <- fitter(zof(cases[[k]]))
    cbind(case = k, ev(cases[[k]], f), sec = proc.time()[[3]] - t0) })
  res <- do.call(rbind, rows); res$set <- sub("-[0-9]$", "", res$case)
  res$cov <- res$true >= res$lo & res$true <= res$hi
  res
}
summ <- function(res) {
  a <- aggregate(cbind(true, flagged, prec, rec, f1, best, fdp, est, lo, hi, cov, sec) ~ set, res, mean, na.action = na.pass)
  a$ratio <- a$f1 / a$best; a$fams <- tapply(res$fam, res$set, paste, collapse = ",")[a$set]
  print(a, digits = 3, row.names = FALSE)
}
