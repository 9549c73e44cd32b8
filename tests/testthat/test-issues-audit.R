# audit_sample(), estimate_errors(), flag_audited() (R/issues-audit*.R).

sim_audit_case <- function(n = 1000, seed = 1) {
  set.seed(seed)
  p <- matrix(stats::runif(3 * n)^3, n, 3)
  p <- p / rowSums(p)
  y <- max.col(p)
  bad <- sample(n, round(0.12 * n))
  y[bad] <- (y[bad] %% 3) + 1
  res <- find_label_issues(labels = y, pred_probs = p)
  li <- label_issues(res)
  # An answer key that p_wrong describes badly: wrong with a probability
  # that is a tempered and shifted version of p_wrong, fixed once.
  pw <- li$p_wrong[order(li$row)]
  truth <- stats::runif(n) < stats::plogis(0.4 * stats::qlogis(pmin(pmax(pw, 1e-4), 1 - 1e-4)) - 0.5)
  list(res = res, truth = truth, p = p, y = y)
}

verdicts <- function(a, truth) {
  a$wrong <- truth[a$row]
  a
}

test_that("the 90% interval covers the true count over seeds, whatever the calibration", {
  case <- sim_audit_case()
  total <- sum(case$truth)
  hits <- vapply(1:150, function(s) {
    a <- verdicts(audit_sample(case$res, 80, seed = s), case$truth)
    wc <- estimate_errors(case$res, a)$wrong_count
    c(wc$lower <= total && total <= wc$upper, wc$upper - wc$lower,
      wc$audit_only$upper - wc$audit_only$lower)
  }, numeric(3))
  # 150 draws: a true coverage of 0.90 gives at least 0.83 with probability 0.997.
  expect_gte(mean(hits[1, ]), 0.83)
  # The model-assisted interval is never wider than the audit-alone one.
  expect_true(all(hits[2, ] <= hits[3, ] + 1e-8))
})

test_that("the audit-alone estimate is the Horvitz-Thompson sum and weights add up to N", {
  case <- sim_audit_case(600, 2)
  a <- verdicts(audit_sample(case$res, 60, seed = 3), case$truth)
  expect_s3_class(a, "noisylabels_audit")
  # Each stratum's weights add to its size, so all add to N.
  expect_equal(sum(a$weight), 600)
  expect_equal(as.vector(tapply(a$weight, a$stratum, sum)),
               as.vector(table(a$stratum) / tapply(a$inclusion, a$stratum, mean)))
  est <- estimate_errors(case$res, a)
  expect_equal(est$wrong_count$audit_only$estimate, sum(a$weight * a$wrong))
  # With one stratum: N * mean(y) alone, N * mean(y - b p) + b sum(p) assisted.
  a1 <- verdicts(audit_sample(case$res, 60, seed = 3, strata = 1), case$truth)
  e1 <- estimate_errors(case$res, a1)
  pw <- label_issues(case$res)$p_wrong
  b <- e1$wrong_count$coefficient
  expect_equal(e1$wrong_count$audit_only$estimate, 600 * mean(a1$wrong))
  expect_equal(e1$wrong_count$estimate, b * sum(pw) + 600 * mean(a1$wrong - b * a1$p_wrong))
  # Its variance: N^2 (1 - n/N) var(y - b p) / n.
  se <- sqrt(600^2 * (1 - 60 / 600) * stats::var(a1$wrong - b * a1$p_wrong) / 60)
  if (sum(a1$wrong) > 0 && sum(!a1$wrong) > 0) expect_equal(e1$wrong_count$se, se)
})

test_that("reviewing every row gives the exact count, precision and recall", {
  case <- sim_audit_case(300, 4)
  a <- verdicts(audit_sample(case$res, 300, seed = 1), case$truth)
  expect_equal(nrow(a), 300)
  est <- estimate_errors(case$res, a)
  expect_equal(est$wrong_count$estimate, sum(case$truth))
  expect_equal(est$wrong_count$lower, sum(case$truth))
  expect_equal(est$wrong_count$upper, sum(case$truth))
  li <- label_issues(case$res)
  tp <- sum(case$truth[li$row] & li$flagged)
  expect_equal(est$precision$estimate, tp / sum(li$flagged))
  expect_equal(est$precision$lower, est$precision$upper)
  expect_equal(est$recall$estimate, tp / sum(case$truth))
  expect_equal(est$recall$lower, tp / sum(case$truth))
})

test_that("the draw is reproducible and leaves the session's random numbers alone", {
  case <- sim_audit_case(500, 5)
  set.seed(9); before <- stats::runif(1)
  set.seed(9); a <- audit_sample(case$res, 50, seed = 7); after <- stats::runif(1)
  expect_identical(before, after)
  expect_identical(audit_sample(case$res, 50, seed = 7)$row, a$row)
  set.seed(3); r1 <- audit_sample(case$res, 50)$row
  set.seed(3); r2 <- audit_sample(case$res, 50)$row
  expect_identical(r1, r2)
  expect_false(anyDuplicated(a$row) > 0)
  expect_true(all(table(a$stratum) >= 2))
})

test_that("invalid audits are classed errors", {
  case <- sim_audit_case(500, 6)
  a <- verdicts(audit_sample(case$res, 50, seed = 1), case$truth)
  other <- setdiff(seq_len(500), a$row)[1]
  b <- a; b$row[1] <- other
  expect_error(estimate_errors(case$res, b), class = "noisylabels_error_audit_rows")
  b <- a; b$wrong[3] <- NA
  expect_error(estimate_errors(case$res, b), class = "noisylabels_error_audit_verdict")
  b <- a; b$wrong <- as.integer(b$wrong)
  expect_error(estimate_errors(case$res, b), class = "noisylabels_error_audit_verdict")
  b <- a; b$wrong <- ifelse(b$wrong, "yes", "no")
  expect_error(estimate_errors(case$res, b), class = "noisylabels_error_audit_verdict")
  b <- rbind(a, a[1, ])
  expect_error(estimate_errors(case$res, b), class = "noisylabels_error_audit_rows")
  b <- a[-1, ]
  expect_error(estimate_errors(case$res, b), class = "noisylabels_error_audit_verdict")
  b <- a; b$wrong <- NULL
  expect_error(estimate_errors(case$res, b), class = "noisylabels_error_audit_verdict")
  # Drawn from another result: other size, or same size with other labels.
  case2 <- sim_audit_case(400, 7)
  expect_error(estimate_errors(case2$res, a), class = "noisylabels_error_audit_result")
  case3 <- sim_audit_case(500, 8)
  expect_error(estimate_errors(case3$res, a), class = "noisylabels_error_audit_result")
  expect_error(estimate_errors(case$res, as.list(a)), class = "noisylabels_error_audit")
  expect_error(audit_sample(case$res, 0), class = "noisylabels_error_input")
  expect_error(audit_sample(list(), 10), class = "noisylabels_error_input")
})

test_that("a CSV round trip of the audit gives the same estimate", {
  case <- sim_audit_case(400, 9)
  a <- verdicts(audit_sample(case$res, 40, seed = 2), case$truth)
  f <- tempfile(fileext = ".csv")
  utils::write.csv(a, f, row.names = FALSE)
  back <- utils::read.csv(f)
  expect_equal(estimate_errors(case$res, back)$wrong_count, estimate_errors(case$res, a)$wrong_count)
  # true_label instead of wrong, for classes.
  b <- a; b$wrong <- NA
  b$true_label <- ifelse(a$wrong, "none", as.character(a$given_label))
  expect_equal(estimate_errors(case$res, b)$wrong_count$estimate,
               estimate_errors(case$res, a)$wrong_count$estimate)
})

test_that("flag_audited flags the top labels to the target precision under p_wrong_audit", {
  case <- sim_audit_case(800, 10)
  a <- verdicts(audit_sample(case$res, 100, seed = 4), case$truth)
  fl <- flag_audited(case$res, a, precision = 0.8)
  li <- label_issues(fl)
  expect_identical(fl$flag_by, "audit")
  ord <- order(-li$p_wrong, li$row)
  k <- sum(li$flagged)
  expect_true(all(li$flagged[ord[seq_len(k)]]))
  run <- cumsum(li$p_wrong_audit[ord]) / seq_along(ord)
  if (k > 0) expect_gte(run[k], 0.8)
  if (k < nrow(li)) expect_true(all(run[(k + 1):nrow(li)] < 0.8))
  # The same through find_label_issues(audit = ), with precision 1 - fdr.
  again <- find_label_issues(labels = case$y, pred_probs = case$p, audit = a, fdr = 0.2)
  expect_identical(label_issues(again)$flagged, li$flagged)
  expect_equal(again$wrong_count$estimate, estimate_errors(case$res, a)$wrong_count$estimate)
  expect_output(print(estimate_errors(case$res, a)), "Audited count")
  expect_output(print(summary(estimate_errors(case$res, a))), "Strata")
})

test_that("chunked and regression results audit the same way", {
  case <- sim_audit_case(600, 11)
  chunks <- function(i) if (i <= 3) case$p[(i - 1) * 200 + 1:200, , drop = FALSE] else NULL
  ch <- find_label_issues(labels = case$y, pred_probs = chunks)
  a <- audit_sample(ch, 60, seed = 5)
  expect_identical(a$row, audit_sample(case$res, 60, seed = 5)$row)
  a <- verdicts(a, case$truth)
  expect_equal(estimate_errors(ch, a)$wrong_count, estimate_errors(case$res, a)$wrong_count)
  set.seed(12)
  yhat <- sin(1:400 / 20)
  y <- yhat + stats::rnorm(400, sd = 0.1)
  bad <- sample(400, 30); y[bad] <- y[bad] + 1.5
  reg <- find_label_issues(labels = y, predictions = yhat)
  ar <- audit_sample(reg, 50, seed = 1)
  expect_true("suggested_value" %in% names(ar))
  ar$wrong <- ar$row %in% bad
  est <- estimate_errors(reg, ar)
  expect_true(est$wrong_count$lower <= est$wrong_count$estimate)
  full <- audit_sample(reg, 400, seed = 1); full$wrong <- full$row %in% bad
  expect_equal(estimate_errors(reg, full)$wrong_count$estimate, 30)
})
