# The p_wrong / q-value contract of fitted models (R/issues-fit.R).

# q-values by their definition: the smallest mean(1 - p) over the top-r sets
# (sorted by p_wrong) that contain the label.
brute_q <- function(p) {
  o <- order(-p)
  share <- cumsum(1 - p[o]) / seq_along(p)
  q <- numeric(length(p))
  for (k in seq_along(o)) q[o[k]] <- min(share[k:length(p)])
  q
}

test_that("gpr_pursuit's p_wrong and suggested values come from its leave-one-out predictive", {
  set.seed(3)
  n <- 50
  x <- matrix(runif(n), n)
  y <- sin(5 * x[, 1]) + rnorm(n, sd = 0.1)
  y[1:4] <- y[1:4] + 1.5
  fit <- suppressWarnings(gpr_pursuit(x, y))
  tol <- 0.25
  li <- label_issues(fit, tolerance = tol)
  li <- li[order(li$row), ]
  # brute force on the standardised scale: drop label i, condition on the rest
  K <- kernel_matrix(fit$kernel, fit$x)
  noise <- (fit$sigma2 + fit$rho) / fit$y_scale^2
  m <- (fit$mean - fit$y_center) / fit$y_scale
  loo <- t(vapply(seq_len(n), function(i) {
    A <- K[-i, -i] + diag(noise[-i])
    mu <- m + drop(K[i, -i] %*% solve(A, fit$y[-i] - m))
    v <- K[i, i] - drop(K[i, -i] %*% solve(A, K[-i, i]))
    c(mu, v)
  }, numeric(2)))
  pred <- fit$y_center + fit$y_scale * loo[, 1]
  sd_t <- sqrt(pmax(loo[, 2], 1e-4 * fit$sigma2 / fit$y_scale^2)) * fit$y_scale
  y_user <- fit$y_center + fit$y_scale * fit$y
  p <- pnorm((y_user - pred - tol) / sd_t) + pnorm((pred - y_user - tol) / sd_t)
  expect_equal(li$suggested_value, pred, tolerance = 1e-6)
  expect_equal(li$p_wrong, p, tolerance = 1e-6)
  expect_equal(li$suggested_upper - li$suggested_value, qnorm(0.95) * sd_t, tolerance = 1e-6)
  expect_equal(li$q_value, brute_q(li$p_wrong), tolerance = 1e-12)
  expect_identical(li$flagged, li$q_value <= 0.1)
  expect_true(all(1:4 %in% li$row[li$flagged]))
  # default: the selected support; fdr = 1 flags every label
  expect_identical(sort(label_issues(fit)$row[label_issues(fit)$flagged]), sort(fit$support))
  expect_true(all(label_issues(fit, fdr = 1)$flagged))
  # an infinite tolerance calls no label wrong
  expect_false(any(label_issues(fit, tolerance = Inf)$flagged))
})

test_that("gpr_loo flags control the false discovery rate and count the wrong labels", {
  set.seed(7)
  n <- 200
  x <- matrix(runif(2 * n), n)
  f <- sin(2 * pi * x[, 1]) + 0.5 * cos(3 * x[, 2])
  y <- f + rnorm(n, sd = 0.1)
  bad <- 1:20
  y[bad] <- y[bad] + sample(c(-1, 1), 20, TRUE) * runif(20, 0.5, 1)
  fit <- suppressWarnings(gpr_loo(x, y))
  li <- label_issues(fit)
  expect_equal(li$q_value, brute_q(li$p_wrong), tolerance = 1e-12)
  expect_identical(li$flagged, li$q_value <= 0.1)
  flagged <- li$row[li$flagged]
  expect_gte(mean(flagged %in% bad), 0.85)
  expect_gte(mean(bad %in% flagged), 0.85)
  r <- find_label_issues(fit)
  expect_equal(r$wrong_count$estimate, sum(li$p_wrong))
  expect_true(r$wrong_count$lower <= 20 && 20 <= r$wrong_count$upper)
  expect_identical(sum(r$label_issues$flagged), sum(li$flagged))
  # the suggested value is the leave-one-out prediction
  expect_equal(li$suggested_value, li$y - li$loo_residual)
  # the same data without wrong labels: at most 1% flagged
  fit0 <- suppressWarnings(gpr_loo(x, f + rnorm(n, sd = 0.1)))
  expect_lte(sum(label_issues(fit0)$flagged), 2)
})

test_that("gpc_ep's p_wrong is its flip posterior, with the suggested class", {
  set.seed(2)
  n <- 150
  x <- matrix(runif(2 * n), n)
  cls <- factor(ifelse(x[, 1] > x[, 2], "a", "b"))
  flip <- 1:12
  cls[flip] <- factor(ifelse(cls[flip] == "a", "b", "a"), levels = c("a", "b"))
  g <- suppressWarnings(gpc_ep(x, cls))
  li <- label_issues(g)
  li <- li[order(li$row), ]
  expect_equal(li$p_wrong, noise_scores(g))
  expect_equal(li$q_value, brute_q(li$p_wrong), tolerance = 1e-12)
  expect_identical(li$flagged, li$q_value <= 0.1)
  swap <- li$flagged | li$p_wrong > 0.5
  expect_identical(as.character(li$suggested_label[swap]), ifelse(li$label[swap] == "a", "b", "a"))
  expect_identical(as.character(li$suggested_label[!swap]), as.character(li$label[!swap]))
  expect_equal(li$prob_suggested, ifelse(swap, li$p_wrong, 1 - li$p_wrong))
  r <- find_label_issues(g)
  expect_equal(r$wrong_count$estimate, sum(noise_scores(g)))
  expect_error(find_label_issues(g, tolerance = 0.1), class = "noisylabels_error_tolerance")
  expect_error(label_issues(g, fdr = 0), class = "noisylabels_error_input")
})
