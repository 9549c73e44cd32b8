test_that("labels are coded consistently: 0/1, -1/+1, logical and factor", {
  dat <- sgd_toy(n = 80, d = 2)
  f1 <- suppressWarnings(sgd_robust(dat$x, dat$y, seed = 1))
  f2 <- suppressWarnings(sgd_robust(dat$x, (dat$y + 1) / 2, seed = 1))
  f3 <- suppressWarnings(sgd_robust(dat$x, dat$y > 0, seed = 1))
  expect_equal(coef(f1), coef(f2))
  expect_equal(coef(f1), coef(f3))
  expect_true(all(predict(f2, dat$x) %in% c(0, 1)))
  expect_type(predict(f3, dat$x), "logical")
})

test_that("one-vs-rest with K = 2 equals the binary fit (every loss, dense and sparse)", {
  dat <- sgd_toy(n = 120, d = 3, flip = 0.1)
  yf <- factor(ifelse(dat$y > 0, "pos", "neg"))
  for (loss in c("smooth_ramp", "gompertz", "hinge", "logistic", "ramp")) {
    for (option in c("A", "B")) {
      bin <- suppressMessages(suppressWarnings(
        sgd_robust(dat$x, yf, loss = loss, lambda = 1e-3, seed = 9, control = sgd_robust_control(option = option))))
      ovr <- suppressMessages(suppressWarnings(
        sgd_robust(dat$x, yf, loss = loss, lambda = 1e-3, seed = 9,
                   multiclass = "ovr", control = sgd_robust_control(option = option))))
      lab <- paste(loss, option)
      expect_equal(ovr$multiclass, "ovr")
      expect_identical(unname(ovr$weights[, "pos"]), unname(bin$weights), label = lab)
      expect_identical(unname(ovr$weights[, "neg"]), -unname(bin$weights), label = lab)
      expect_identical(unname(ovr$bias), c(-bin$bias, bin$bias), label = lab)
      expect_equal(ovr$eta, bin$eta)
      expect_identical(predict(ovr, dat$x), predict(bin, dat$x))
      expect_equal(noise_scores(ovr), noise_scores(bin), tolerance = 1e-12)
    }
  }
  xs <- Matrix::Matrix(dat$x * (abs(dat$x) > 0.5), sparse = TRUE)
  bin <- suppressMessages(suppressWarnings(sgd_robust(xs, yf, lambda = 1e-3, seed = 4)))
  ovr <- suppressMessages(suppressWarnings(sgd_robust(xs, yf, lambda = 1e-3, seed = 4,
                                                      multiclass = "ovr")))
  expect_identical(unname(ovr$weights[, 2]), unname(bin$weights))
})

test_that("multiclass fits predict classes, probabilities and flag flipped labels", {
  dat <- sgd_toy3(n = 400, flip = 0.1)
  for (loss in c("smooth_ramp", "gompertz", "hinge")) {
    fit <- suppressMessages(suppressWarnings(sgd_robust(dat$x, dat$y, loss = loss, lambda = 1e-3,
                                                        seed = 1)))
    expect_equal(fit$n_classes, 3L)
    expect_equal(dim(fit$weights), c(2L, 3L))
    expect_equal(dim(coef(fit)), c(3L, 3L))
    pred <- predict(fit, dat$x)
    expect_s3_class(pred, "factor")
    expect_equal(levels(pred), c("a", "b", "c"))
    expect_gt(mean(pred == dat$truth), 0.95)
    expect_error(predict(fit, dat$x, type = "prob"), class = "noisylabels_error_input",
                 regexp = "logistic")
    iss <- label_issues(fit)
    expect_equal(nrow(iss), 400L)
    expect_true(all(c("margin", "margin_vs_best", "loss_weight", "label", "best_other") %in% names(iss)))
    auc <- detection_metrics(noise_scores(fit), dat$flipped)$auc
    expect_gt(auc, 0.9)
    # the flagged rows are mostly the flipped ones
    expect_gt(mean(dat$flipped[iss$row[iss$flagged]]), 0.8)
  }
  for (mc in c("ovr", "multinomial")) {
    fit <- suppressMessages(suppressWarnings(sgd_robust(dat$x, dat$y, loss = "logistic",
                                                        lambda = 1e-3, seed = 1, multiclass = mc)))
    expect_equal(fit$multiclass, mc)
    p <- predict(fit, dat$x, type = "prob")
    expect_equal(dim(p), c(400L, 3L))
    expect_equal(unname(rowSums(p)), rep(1, 400), tolerance = 1e-12)
    expect_equal(colnames(p), c("a", "b", "c"))
    expect_identical(as.character(predict(fit, dat$x)), colnames(p)[max.col(p, "first")])
    expect_gt(mean(predict(fit, dat$x) == dat$truth), 0.95)
    expect_equal(predict(fit, type = "link"), fit$decision)
  }
  # multinomial objective: the softmax cross-entropy of the reported model
  fit <- suppressMessages(suppressWarnings(sgd_robust(dat$x, dat$y, loss = "logistic",
                                                      lambda = 1e-3, seed = 1,
                                                      multiclass = "multinomial", control = sgd_robust_control(option = "A"))))
  f <- cbind(1, dat$x) %*% coef(fit)
  ce <- mean(log(rowSums(exp(f))) - f[cbind(1:400, as.integer(dat$y))])
  expect_equal(fit$trace$objective[fit$iterations], ce + 1e-3 / 2 * sum(fit$weights^2 + 0) +
                 1e-3 / 2 * sum(fit$bias^2), tolerance = 1e-10)
  # binary logistic also has probabilities
  b <- suppressWarnings(sgd_robust(dat$x[dat$y != "c", ], droplevels(dat$y[dat$y != "c"]),
                                   loss = "logistic", lambda = 1e-3, seed = 1))
  p <- predict(b, dat$x[1:5, ], type = "prob")
  expect_equal(p[, 2], stats::plogis(predict(b, dat$x[1:5, ], type = "link")))
  # tidy/augment/summary/print handle the matrix of coefficients
  td <- tidy(fit)
  expect_equal(nrow(td), 9L)
  expect_equal(names(td), c("class", "term", "estimate"))
  expect_equal(nrow(augment(fit)), 400L)
  expect_output(print(fit), "multinomial")
  expect_output(print(summary(fit)), "Largest coefficients")
})

test_that("weights of 2 equal duplicated rows: same objective, same expected step", {
  dat <- sgd_toy(n = 40, d = 3, flip = 0.1)
  dup <- c(3, 7, 11, 20, 33)
  w <- rep(1, 40); w[dup] <- 2
  xd <- rbind(dat$x, dat$x[dup, ]); yd <- c(dat$y, dat$y[dup])
  w0 <- c(0.1, 0.3, -0.2, 0.5)
  for (loss in c("smooth_ramp", "logistic", "gompertz")) {
    # the objective at the starting point is that of the duplicated data
    a <- suppressWarnings(sgd_robust(dat$x, dat$y, loss = loss, weights = w, init = w0,
                                     lambda = 0.01, epochs = 1, seed = 5, control = sgd_robust_control(eta = 1e-9)))
    b <- suppressWarnings(sgd_robust(xd, yd, loss = loss, init = w0, lambda = 0.01, epochs = 1, seed = 5, control = sgd_robust_control(eta = 1e-9)))
    expect_equal(a$objective_start, b$objective_start, tolerance = 1e-14)
    # to first order in eta an epoch moves w by eta times the summed gradient:
    # per step the weighted and the duplicated epochs agree
    a <- suppressWarnings(sgd_robust(dat$x, dat$y, loss = loss, weights = w, init = w0,
                                     lambda = 0, epochs = 1, seed = 5, control = sgd_robust_control(eta = 1e-7, option = "A", warm_start = "none")))
    b <- suppressWarnings(sgd_robust(xd, yd, loss = loss, init = w0, lambda = 0,
                                     epochs = 1, seed = 5, control = sgd_robust_control(eta = 1e-7, option = "A", warm_start = "none")))
    step_a <- (coef(a) - w0) / 40
    step_b <- (coef(b) - w0) / 45
    expect_equal(unname(step_a), unname(step_b), tolerance = 1e-5)
    # and unweighted differs
    u <- suppressWarnings(sgd_robust(dat$x, dat$y, loss = loss, init = w0, lambda = 0, epochs = 1,
                                     seed = 5, control = sgd_robust_control(eta = 1e-7, option = "A", warm_start = "none")))
    expect_gt(max(abs((coef(u) - w0) / 40 - step_b)), 1e-3 * max(abs(step_b)))
  }
  # equal weights are no weights (bitwise)
  f1 <- suppressMessages(suppressWarnings(sgd_robust(dat$x, dat$y, weights = rep(3, 40), seed = 1)))
  f2 <- suppressMessages(suppressWarnings(sgd_robust(dat$x, dat$y, seed = 1)))
  expect_identical(coef(f1), coef(f2))
  expect_null(f1$case_weights)
})

test_that("class_weight = 'balanced' is the weight n / (K n_k); named vectors; bad weights", {
  dat <- sgd_toy3(n = 300)
  keep <- c(which(dat$y == "a"), which(dat$y != "a")[1:60])
  x <- dat$x[keep, ]; y <- droplevels(dat$y[keep])
  n <- length(y); nk <- table(y)
  wb <- as.vector(n / (3 * nk[as.character(y)]))
  f1 <- suppressMessages(suppressWarnings(sgd_robust(x, y, class_weight = "balanced", seed = 3)))
  f2 <- suppressMessages(suppressWarnings(sgd_robust(x, y, weights = wb, seed = 3)))
  expect_identical(coef(f1), coef(f2))
  expect_equal(f1$class_weight, c(a = n / (3 * nk[["a"]]), b = n / (3 * nk[["b"]]),
                                  c = n / (3 * nk[["c"]])))
  f3 <- suppressMessages(suppressWarnings(sgd_robust(x, y, class_weight = c(b = 2), seed = 3)))
  f4 <- suppressMessages(suppressWarnings(sgd_robust(x, y, weights = ifelse(y == "b", 2, 1),
                                                     seed = 3)))
  expect_identical(coef(f3), coef(f4))
  expect_false(identical(coef(f3), coef(suppressMessages(suppressWarnings(
    sgd_robust(x, y, seed = 3))))))
  # binary fits take class weights by their labels too
  yb <- sgd_toy(n = 50, d = 2)
  fb <- suppressWarnings(sgd_robust(yb$x, yb$y, class_weight = c("1" = 3), loss = "hinge", seed = 1))
  fw <- suppressWarnings(sgd_robust(yb$x, yb$y, weights = ifelse(yb$y > 0, 3, 1), loss = "hinge",
                                    seed = 1))
  expect_identical(coef(fb), coef(fw))
  expect_error(sgd_robust(x, y, weights = c(-1, rep(1, n - 1))),
               class = "noisylabels_error_input", regexp = "negative")
  expect_error(sgd_robust(x, y, weights = rep(1, 3)), class = "noisylabels_error_weights")
  expect_error(sgd_robust(x, y, weights = rep(0, n)), class = "noisylabels_error_input")
  expect_error(sgd_robust(x, y, class_weight = c(z = 2)), class = "noisylabels_error_unknown_class")
  expect_error(sgd_robust(x, y, class_weight = "even"), class = "noisylabels_error_input")
})
