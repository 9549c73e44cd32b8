# The flag rule shared by every label type (R/issues-fdr.R).

test_that("q-values equal the brute-force minimum over flagged sets", {
  set.seed(1)
  p <- c(stats::runif(40), 0.5, 0.5)
  q <- noisylabels:::fdr_qvalues(p)
  o <- order(-p)
  brute <- vapply(seq_along(p), function(i) {
    r <- max(which(p[o] == p[i]))
    min(vapply(r:length(p), function(k) mean(1 - p[o[seq_len(k)]]), numeric(1)))
  }, numeric(1))
  expect_equal(q, brute)
})

test_that("q-values are monotone in p_wrong and the limits of fdr hold", {
  set.seed(2)
  p <- stats::rbeta(200, 0.3, 2)
  q <- noisylabels:::fdr_qvalues(p)
  o <- order(-p)
  expect_true(all(diff(q[o]) >= -1e-12))
  expect_true(all(noisylabels:::fdr_select(p, fdr = 1)$flagged))
  expect_false(any(noisylabels:::fdr_select(p, fdr = 1e-12)$flagged))
  sure <- c(1, 1, 1, p[p < 0.9])
  expect_equal(sum(noisylabels:::fdr_select(sure, fdr = 1e-12)$flagged), 3)
})

test_that("the count interval covers the number of wrong labels at its level", {
  set.seed(3)
  hit <- vapply(1:400, function(i) {
    p <- stats::rbeta(300, 0.4, 3)
    truth <- sum(stats::runif(300) < p)
    ci <- noisylabels:::wrong_count(p, level = 0.9)
    truth >= ci$lower && truth <= ci$upper
  }, logical(1))
  expect_gt(mean(hit), 0.86)
  expect_lt(mean(hit), 0.99)
})
