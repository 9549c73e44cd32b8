test_that("new_label_issues keeps the score even when a column is named like a formal", {
  li <- noisylabels:::new_label_issues(1:4, c(0.1, 0.9, 0.5, 0.2), c(FALSE, TRUE, TRUE, FALSE),
                                       s = c(9, 8, 7, 6), r = letters[1:4])
  expect_equal(li$row, c(2L, 3L, 4L, 1L))
  expect_equal(li$score, c(0.9, 0.5, 0.2, 0.1))
  expect_equal(li$s, c(8, 7, 6, 9))
  expect_equal(li$flagged, c(TRUE, TRUE, FALSE, FALSE))
  expect_error(noisylabels:::new_label_issues(1:2, 1:2, c(TRUE, FALSE), 3:4), "named")
})

test_that("generics give classed errors for objects they do not know", {
  expect_error(noise_scores(lm(dist ~ speed, cars)), class = "noisylabels_error_input")
  expect_error(label_issues(1:3), class = "noisylabels_error_input")
})

test_that("detection_metrics matches a brute-force AUC and reads precision at recall off the ranking", {
  set.seed(1)
  sc <- runif(30); truth <- sc + rnorm(30, sd = 0.3) > 0.6
  pairs <- outer(sc[truth], sc[!truth], ">") + 0.5 * outer(sc[truth], sc[!truth], "==")
  dm <- detection_metrics(sc, truth)
  expect_equal(dm$auc, mean(pairs))
  o <- order(-sc); k <- which(cumsum(truth[o]) >= 0.7 * sum(truth))[1]
  expect_equal(dm$precision_at_70, mean(truth[o][1:k]))
  expect_equal(detection_metrics(sc, which(truth))$auc, dm$auc)
  expect_equal(detection_metrics(1:3, c(TRUE, FALSE, FALSE), inferred = 1:3, actual = 1:3)$r_squared, 1)
})

test_that("detection_metrics() counts in doubles at sizes where npos x nneg passes 2^31", {
  n <- 120000
  scores <- c(rep(2, n / 2), rep(1, n / 2)) + seq_len(n) * 1e-9
  m <- detection_metrics(scores, seq_len(n / 2))
  expect_equal(m$auc, 1)
  # one swapped pair lowers the AUC by exactly 1 / (npos * nneg)
  scores[c(1, n)] <- scores[c(n, 1)]
  expect_equal(detection_metrics(scores, seq_len(n / 2))$auc, 1 - 1 / (n / 2)^2, tolerance = 1e-14)
})
