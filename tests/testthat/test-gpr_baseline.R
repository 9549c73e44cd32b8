# Tests for the robust-regression baselines of R/gpr_baseline.R:
# iterative trimming (Li et al.) and the trimmed marginal likelihood
# (Andrade & Takeda), with a brute-force oracle for the subset step.

ns <- asNamespace("noisylabels")

# Clean smooth data on [0, 1]^2 and the same data with k gross outliers
# appended as extra rows (so the clean fit uses exactly the first n rows).
appended_outliers <- function(n = 40, k = 4, seed = 7) {
  set.seed(seed)
  x <- matrix(runif(2 * n), n)
  y <- sin(4 * x[, 1]) + cos(3 * x[, 2]) + rnorm(n, sd = 0.05)
  xo <- matrix(runif(2 * k), k)
  yo <- sin(4 * xo[, 1]) + cos(3 * xo[, 2]) + c(4, -4, 5, -5, 4.5, -4.5)[seq_len(k)]
  list(x = rbind(x, xo), y = c(y, yo), clean = seq_len(n), out = n + seq_len(k))
}

test_that("the trimmed-MLL subset step finds the brute-force optimal subset", {
  set.seed(11)
  n <- 9
  x <- matrix(runif(n))
  spec <- ns$kernel_spec(ns$kernel_resolve(gp_kernel("rbf", lengthscale = 0.3), x))
  k <- ns$.kernel_gram(x, spec)
  diag(k) <- diag(k) + 0.01
  r <- as.vector(t(chol(k)) %*% rnorm(n))
  r[c(3, 7)] <- r[c(3, 7)] + c(3, -2.5)
  inlier_term <- function(out) {
    keep <- setdiff(seq_len(n), out)
    sum(r[keep] * solve(k[keep, keep], r[keep]))
  }
  pairs <- utils::combn(n, 2)
  vals <- apply(pairs, 2, inlier_term)
  best <- pairs[, which.min(vals)]
  sub <- ns$.gpr_trimmed_subset(x, spec, 0.01, r, 2L, 20000L, 1e-10, "lapack")
  expect_true(sub$converged)
  expect_equal(sub$outliers, sort(best))
  # at a converged support, b is the exact minimiser: the objective is the
  # inliers' own quadratic form
  expect_equal(sub$objective, min(vals), tolerance = 1e-6)
  # no trimming: the full quadratic form, no offset
  none <- ns$.gpr_trimmed_subset(x, spec, 0.01, r, 0L, 200L, 1e-10, "lapack")
  expect_equal(none$objective, sum(r * solve(k, r)), tolerance = 1e-10)
  expect_length(none$outliers, 0)
  expect_error(ns$.gpr_trimmed_subset(x, spec, 0.01, r, n, 200L, 1e-10, "lapack"), "n_trim")
})

test_that("trimmed MLL with trim = 0 is the standard GP", {
  d <- appended_outliers()
  xt <- matrix(runif(20), 10)
  std <- gpr_baseline(d$x, d$y, "standard")
  t0 <- gpr_baseline(d$x, d$y, "trimmed_mll", trim = 0)
  expect_equal(t0$kept, seq_along(d$y))
  expect_equal(t0$rounds, 0L)
  expect_equal(predict(t0, xt), predict(std, xt))
  i0 <- gpr_baseline(d$x, d$y, "trimmed", trim = 0)
  expect_equal(predict(i0, xt), predict(std, xt))
})

test_that("trimmed MLL and iterative trimming remove planted gross outliers and recover the clean fit", {
  d <- appended_outliers()
  set.seed(2)
  xt <- matrix(runif(40), 20)
  clean <- gpr_baseline(d$x[d$clean, ], d$y[d$clean], "standard")
  p_clean <- predict(clean, xt)
  std <- gpr_baseline(d$x, d$y, "standard")
  # the outliers do hurt the standard GP (so the recovery below is not vacuous)
  expect_gt(sqrt(mean((predict(std, xt) - p_clean)^2)), 0.05)
  trim <- length(d$out) / length(d$y)
  for (m in c("trimmed_mll", "trimmed")) {
    b <- gpr_baseline(d$x, d$y, m, trim = trim)
    expect_true(b$converged)
    expect_equal(b$kept, d$clean, info = m)
    expect_equal(predict(b, xt), p_clean, tolerance = 1e-8, info = m)
  }
  expect_output(print(gpr_baseline(d$x, d$y, "trimmed_mll", trim = trim)), "40 of 44 points kept")
})

test_that("trimmed MLL rejects a trim fraction that leaves too few points", {
  d <- appended_outliers(n = 6, k = 2)
  expect_error(gpr_baseline(d$x, d$y, "trimmed_mll", trim = 0.5), class = "noisylabels_error_input")
  expect_error(gpr_baseline(d$x, d$y, "trimmed_mll", trim = 1), class = "noisylabels_error_input")
})

test_that("too few observations is a classed error naming gpr_baseline()", {
  x <- matrix(c(0.1, 0.5, 0.9, 0.3), ncol = 1)
  for (m in c("standard", "winsorize", "yeo_johnson", "trimmed", "trimmed_mll")) {
    expect_error(gpr_baseline(x, c(1, 2, 4, 3), m), class = "noisylabels_error_too_few",
                 regexp = "gpr_baseline")
  }
  expect_error(gpr_baseline(x[1, , drop = FALSE], 1), class = "noisylabels_error_too_few")
})

# Leave-one-out mean and latent variance of label i under fixed
# hyperparameters, by conditioning on the other labels (standardised scale).
brute_loo <- function(fit) {
  K <- kernel_matrix(fit$kernel, fit$x)
  noise <- fit$sigma2 / fit$y_scale^2
  m <- (fit$mean - fit$y_center) / fit$y_scale
  n <- nrow(fit$x)
  t(vapply(seq_len(n), function(i) {
    A <- K[-i, -i] + diag(noise, n - 1)
    mu <- m + drop(K[i, -i] %*% solve(A, fit$y[-i] - m))
    v <- K[i, i] - drop(K[i, -i] %*% solve(A, K[-i, i]))
    c(fit$y_center + fit$y_scale * mu, v * fit$y_scale^2)
  }, numeric(2)))
}

test_that("a baseline's label issues compare each label with its held-out prediction", {
  d <- appended_outliers()
  b <- suppressWarnings(gpr_baseline(d$x, d$y, "trimmed", trim = 0.15))
  expect_true(inherits(b, "noisylabels_fit"))
  expect_true(b$has_p_wrong)
  li <- label_issues(b)
  li <- li[order(li$row), ]
  kept <- b$kept
  out <- setdiff(seq_along(d$y), kept)
  expect_true(all(d$out %in% out))
  # kept labels: leave-one-out from the final GP; trimmed ones: its prediction
  loo <- brute_loo(b$fit)
  pred <- numeric(length(d$y))
  latent_var <- numeric(length(d$y))
  pred[kept] <- loo[, 1]
  latent_var[kept] <- pmax(loo[, 2], 1e-4 * b$fit$sigma2)
  p_out <- predict(b$fit, d$x[out, , drop = FALSE], se.fit = TRUE)
  pred[out] <- p_out$fit
  latent_var[out] <- pmax(p_out$se.fit^2, 1e-4 * b$fit$sigma2)
  z <- (d$y - pred) / sqrt(latent_var + b$fit$sigma2)
  expect_equal(li$suggested_value, pred, tolerance = 1e-6)
  expect_equal(li$z, z, tolerance = 1e-6)
  expect_equal(li$score, abs(z), tolerance = 1e-6)
  expect_equal(noise_scores(b), abs(z), tolerance = 1e-6)
  expect_identical(li$kept, seq_along(d$y) %in% kept)
  expect_identical(li$flagged, li$q_value <= 0.1)
  expect_true(all(d$out %in% li$row[li$flagged]))
  # with a tolerance: P(|y - T| > tol), T ~ N(pred, latent variance)
  tol <- 0.5
  lt <- label_issues(b, tolerance = tol)
  lt <- lt[order(lt$row), ]
  sd_t <- sqrt(latent_var)
  expect_equal(lt$p_wrong, pnorm((d$y - pred - tol) / sd_t) + pnorm((pred - d$y - tol) / sd_t),
               tolerance = 1e-6)
  # find_label_issues() counts them as label_issues() does
  r <- find_label_issues(b)
  expect_equal(r$wrong_count$estimate, sum(li$p_wrong))
  expect_identical(r$task, "regression")
  # fitted and residuals at the training inputs
  expect_equal(fitted(b), predict(b, d$x))
  expect_equal(residuals(b), d$y - predict(b, d$x))
  expect_identical(nobs(b), length(d$y))
  # the likelihood of the kept labels
  expect_equal(as.numeric(logLik(b)), as.numeric(logLik(b$fit)))
  expect_identical(attr(logLik(b), "nobs"), length(kept))
  s <- summary(b)
  expect_s3_class(s, "summary.gpr_baseline")
  expect_identical(s$n_flagged, sum(li$flagged))
  expect_output(print(s), "trimming round")
})

test_that("Yeo-Johnson: densities carry the transform's Jacobian, suggested values are transformed back", {
  set.seed(3)
  s <- sim_friedman(50, corruption = "constant", prob = 0.1)
  t <- sim_friedman(20)
  b <- gpr_baseline(s$x, s$y, "yeo_johnson")
  lam <- b$lambda
  # the Jacobian by finite differences of the transform itself
  h <- 1e-6
  log_jac <- function(y) log((ns$yeo_johnson(y + h, lam) - ns$yeo_johnson(y - h, lam)) / (2 * h))
  p <- predict(b, t$x, se.fit = TRUE)
  zt <- ns$yeo_johnson(t$y, lam)
  expect_equal(predictive_loglik(b, t$x, t$y),
               mean(dnorm(zt, p$fit_transformed, p$sd, log = TRUE) + log_jac(t$y)), tolerance = 1e-6)
  ll <- logLik(b)
  expect_equal(as.numeric(ll), as.numeric(logLik(b$fit)) + sum(log_jac(s$y)), tolerance = 1e-6)
  expect_identical(attr(ll, "df"), attr(logLik(b$fit), "df") + 1)
  li <- label_issues(b)
  li <- li[order(li$row), ]
  loo <- brute_loo(b$fit)
  expect_equal(li$suggested_value, ns$yeo_johnson_inverse(loo[, 1], lam), tolerance = 1e-6)
  expect_true(all(li$suggested_lower <= li$suggested_value & li$suggested_value <= li$suggested_upper))
  expect_error(label_issues(b, tolerance = 1), class = "noisylabels_error_tolerance")
  expect_error(find_label_issues(b, tolerance = 1), class = "noisylabels_error_tolerance")
  # a winsorised fit modelled other labels: no likelihood of the given ones
  w <- gpr_baseline(s$x, s$y, "winsorize")
  expect_error(logLik(w), class = "noisylabels_error_no_method")
  expect_true(is.finite(predictive_loglik(w, t$x, t$y)))
})
