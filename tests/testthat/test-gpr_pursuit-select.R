# Tests for the forward-search selection of gpr_pursuit() (selection = "esd",
# R/gpr_pursuit-select.R, C++ in src/core/gpr/forward_search.cpp; issue 21):
# the search against brute-force
# conditioning, its closed-form diagonal case, and the rule's two properties
# (nothing flagged on a well-specified GP sample, planted outliers found).

ns <- asNamespace("noisylabels")

test_that("each forward-search statistic is the smallest |z| given the clean set (brute force)", {
  set.seed(11)
  n <- 25
  x <- matrix(runif(n * 2), n)
  kern <- ns$kernel_resolve(gp_kernel("rbf", lengthscale = 0.3), x)
  C <- ns$.kernel_gram(x, ns$kernel_spec(kern))
  diag(C) <- diag(C) + 0.05
  r <- drop(t(chol(C)) %*% rnorm(n))
  r[c(3, 17)] <- r[c(3, 17)] + c(3, -4)
  fs <- ns$forward_search(x, kern, 0.05, r, kmax = 10, alpha = 0.05)
  expect_setequal(fs$entered, seq_len(n))
  for (m in c(0, 1, 5, 12, n - 2, n - 1)) {
    inside <- fs$entered[seq_len(m)]
    out <- setdiff(seq_len(n), inside)
    z <- vapply(out, function(j) {
      if (!m) return(abs(r[j]) / sqrt(C[j, j]))
      w <- solve(C[inside, inside, drop = FALSE], C[inside, j])
      abs(r[j] - sum(w * r[inside])) / sqrt(C[j, j] - sum(w * C[inside, j]))
    }, numeric(1))
    expect_equal(fs$statistic[m + 1], min(z), tolerance = 1e-8, info = paste("m =", m))
    expect_equal(fs$entered[m + 1], out[which.min(z)], info = paste("m =", m))
  }
  # the critical values are the Bonferroni t quantiles of the documentation
  m <- 0:(n - 1)
  expect_equal(fs$critical, qt(1 - 0.05 / (2 * (m + 1)), pmax(m, 1)))
})

test_that("with a diagonal covariance the forward search is Rosner's rule on |r| / sd", {
  set.seed(12)
  n <- 100
  r <- rnorm(n)
  planted <- c(7, 40, 41, 90)
  r[planted] <- c(6, -7, 8, 5.5)
  # C = I: an RBF kernel on inputs 100 length-scales apart (exp(-5000) = 0)
  xd <- matrix(100 * seq_len(n))
  kd <- ns$kernel_resolve(gp_kernel("rbf", lengthscale = 1, variance = 1), xd)
  fs <- ns$forward_search(xd, kd, 0, r, kmax = 30, alpha = 0.05)
  # independent points: the clean set grows in order of |r|
  expect_equal(fs$entered, order(abs(r)))
  expect_equal(fs$statistic, sort(abs(r)))
  # k is n - m for the smallest m >= n - kmax whose statistic exceeds the
  # critical value
  crit <- qt(1 - 0.05 / (2 * (0:(n - 1) + 1)), pmax(0:(n - 1), 1))
  m_star <- min(which(sort(abs(r)) > crit & 0:(n - 1) >= n - 30)) - 1
  expect_equal(fs$k, n - m_star)
  expect_setequal(fs$outliers, planted)
  # nothing flagged without the planted values
  expect_equal(ns$forward_search(xd, kd, 0, rnorm(n), kmax = 30, alpha = 0.05)$k, 0L)
})

# A sample of the model itself: y ~ GP(0, k) + N(0, s2), k RBF.
gp_sample <- function(n, seed, ls = 0.2, s2 = 0.01) {
  set.seed(seed)
  x <- sort(runif(n))
  K <- exp(-outer(x, x, "-")^2 / (2 * ls^2)) + diag(s2, n)
  list(x = x, y = drop(t(chol(K + diag(1e-8, n))) %*% rnorm(n)))
}

test_that("selection = 'esd' flags nothing on well-specified GP samples in most seeds", {
  skip_on_cran()
  sel <- vapply(1:6, function(seed) {
    d <- gp_sample(60, seed)
    fit <- suppressWarnings(gpr_pursuit(d$x, d$y, selection = "esd"))
    length(fit$support)
  }, numeric(1))
  # the test's level is 5 % per fit: at most one of six fits flags anything,
  # and then at most two points
  expect_lte(sum(sel > 0), 1)
  expect_lte(max(sel), 2)
})

test_that("selection = 'esd' finds planted constant outliers and records its refits", {
  skip_on_cran()
  d <- gp_sample(80, 5)
  set.seed(5)
  bad <- sort(sample(80, 20))
  y <- d$y
  y[bad] <- max(d$y) + 3 * sd(d$y)
  fit <- suppressWarnings(gpr_pursuit(d$x, y, selection = "esd"))
  tp <- sum(fit$support %in% bad)
  expect_gte(tp / length(fit$support), 0.9)
  expect_gte(tp / length(bad), 0.9)
  # the selected model is self-consistent: the forward search with its own
  # kernel, mean and sigma2 flags exactly its support
  st <- fit$steps[[fit$selected]]
  expect_equal(ns$esd_search(st, fit$x, fit$y, fit$kernel_std, 0.05, 40)$outliers,
               sort(st$support))
  expect_true(fit$selection == "esd")
  expect_true(all(fit$trace$stage %in% c("pursuit", "refine", "esd")))
  # the trace's scores are the BIC's
  n <- 80
  ll_std <- fit$trace$loglik + n * log(fit$y_scale) + fit$trace$log_hyperprior
  expect_equal(fit$trace$score, ll_std - 0.5 * log(n) * fit$trace$size, tolerance = 1e-10)
})

test_that("the fixed points are compared by the EBIC, the empty support only as the last resort", {
  step <- function(k, nll) list(support = seq_len(k), nll = nll, penalty = 0)
  n <- 50
  ebic <- function(k, nll) -nll - 0.5 * log(n) * k - 0.5 * lchoose(n, k)
  steps <- list(step(0, 10), step(3, 2), step(8, -20))
  expect_equal(ns$esd_choose(1:3, steps, n),
               which.max(c(-Inf, ebic(3, 2), ebic(8, -20))))
  # the empty support loses to a non-empty fixed point even with a better EBIC
  steps[[1]]$nll <- -1000
  expect_false(ns$esd_choose(1:3, steps, n) == 1L)
  expect_equal(ns$esd_choose(1L, steps, n), 1L)
})

test_that("the test flags no more than the schedule's largest support", {
  d <- gp_sample(40, 8)
  y <- d$y
  y[c(5, 30)] <- y[c(5, 30)] + 4
  # n_outliers = 0 asks for the model without outliers: no test refits
  fit <- gpr_pursuit(d$x, y, direction = "forward", n_outliers = 0, refine = FALSE)
  expect_length(fit$support, 0)
  expect_equal(nrow(fit$trace), 1L)
  fit1 <- suppressWarnings(gpr_pursuit(d$x, y, direction = "forward", n_outliers = 0:1))
  expect_lte(length(fit1$support), 1)
  fit2 <- suppressWarnings(gpr_pursuit(d$x, y, direction = "forward", n_outliers = 0:4))
  expect_setequal(fit2$support, c(5, 30))
})

test_that("esd_alpha is checked", {
  expect_error(pursuit_control(esd_alpha = 0), class = "noisylabels_error_input")
  expect_error(pursuit_control(esd_alpha = 1.5), class = "noisylabels_error_input")
  expect_equal(pursuit_control(esd_alpha = 0.01)$esd_alpha, 0.01)
})
