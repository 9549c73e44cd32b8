loss_eval <- function(name, z, s = -1, c = 2) {
  noisylabels:::.sgd_loss_eval(noisylabels:::sgd_loss_spec(name, s = s, c = c), z)
}

test_that("losses match the spec's reference values", {
  sr <- loss_eval("smooth_ramp", c(0, 1), s = -1)
  expect_equal(sr$value, c(1.030, 0.2513), tolerance = 5e-4)
  go <- loss_eval("gompertz", c(0, 1, -1), c = 2)
  expect_equal(go$value[1], exp(-1), tolerance = 1e-14)
  expect_equal(go$value[2:3], c(0.00062, 0.873), tolerance = 5e-3)
  expect_equal(loss_eval("ramp", c(-3, 0, 2), s = -1)$value, c(2, 1, 0))
  # bounds and flat-region starts
  expect_equal(loss_eval("smooth_ramp", 0, s = -2)$bound, 3)
  expect_equal(loss_eval("ramp", 0, s = -0.7)$flat_start, -0.7)
  expect_equal(loss_eval("gompertz", 0)$flat_start, -(exp(1) - 1) / 2)
})

test_that("loss values agree with the paper's formulas and derivatives with finite differences", {
  z <- seq(-6, 6, by = 0.173)  # avoids the kinks of hinge and ramp at 1 and s
  cases <- list(list("hinge", -1), list("logistic", -1), list("ramp", -1), list("ramp", -0.7),
                list("smooth_ramp", -0.7), list("smooth_ramp", -1), list("smooth_ramp", -2),
                list("gompertz", -1))
  for (cs in cases) {
    name <- cs[[1]]; s <- cs[[2]]
    spec <- noisylabels:::sgd_loss_spec(name, s = s)
    ev <- noisylabels:::.sgd_loss_eval(spec, z)
    ref <- ref_sgd_loss(name, z, s = spec$s, alpha = spec$alpha, beta = spec$beta, c = spec$c)
    expect_equal(ev$value, ref, tolerance = 1e-12, label = paste(name, s, "value"))
    h <- 1e-5
    fd <- (ref_sgd_loss(name, z + h, spec$s, spec$alpha, spec$beta, spec$c) -
             ref_sgd_loss(name, z - h, spec$s, spec$alpha, spec$beta, spec$c)) / (2 * h)
    expect_equal(ev$deriv, fd, tolerance = 1e-7, label = paste(name, s, "derivative"))
  }
  # max |r'| of SRamp(-0.7, 3, -0.15) is (1 - s) alpha / 4 = 1.275 (spec section 2)
  ev <- loss_eval("smooth_ramp", seq(-3, 3, by = 1e-4), s = -0.7)
  expect_equal(max(abs(ev$deriv)), 1.275, tolerance = 1e-6)
})

test_that("losses are evaluated stably at extreme margins", {
  z <- c(-1e4, -800, -40, 40, 800, 1e4)
  for (name in c("logistic", "smooth_ramp", "gompertz")) {
    ev <- loss_eval(name, z)
    expect_true(all(is.finite(ev$value)) && all(is.finite(ev$deriv)), label = name)
  }
  expect_equal(loss_eval("logistic", -800)$value, 800)
  expect_equal(loss_eval("smooth_ramp", -800)$value, 2)
  expect_equal(loss_eval("smooth_ramp", -800)$deriv, 0)
  expect_equal(loss_eval("gompertz", c(-800, 800))$value, c(1, 0))
})

test_that("smooth_ramp_params returns the published tuples and refits others", {
  expect_equal(unname(smooth_ramp_params(-1)), c(-1, 2, -0.03))
  expect_equal(unname(smooth_ramp_params(-2)), c(-2, 1.5, 0.5))
  # the spec's independent L2 refit on [-5, 5]: (3.118, -0.150) for s = -0.7
  rf <- smooth_ramp_params(-0.7, refit = TRUE)
  expect_equal(unname(rf[2:3]), c(3.118, -0.150), tolerance = 2e-3)
  # beta is the ramp midpoint -(1 + s)/2 for a symmetric criterion
  expect_equal(unname(smooth_ramp_params(-0.5)[3]), -0.25, tolerance = 1e-3)
})

test_that("every iterate equals a plain-R replay of the update (all losses, bias modes)", {
  dat <- sgd_toy(n = 25, d = 3, flip = 0.2)
  for (loss in c("hinge", "logistic", "ramp", "smooth_ramp", "gompertz")) {
    for (bias in c("feature", "separate", "none")) for (option in c("A", "B")) {
      fit <- suppressWarnings(sgd_robust(dat$x, dat$y, loss = loss, lambda = 0.05, eta = 0.3,
                                         epochs = 3, bias = bias, option = option, seed = 11,
                                         record_iterates = TRUE))
      spec <- fit$loss
      deriv <- function(z) noisylabels:::.sgd_loss_eval(spec, z)$deriv
      ref <- ref_sgd_replay(dat$x, dat$y, fit, deriv)
      expect_equal(fit$iterates, ref, tolerance = 1e-10, label = paste(loss, bias, option))
      if (option == "A") {
        last <- ref[, ncol(ref)]
        expect_equal(unname(fit$weights), last[seq_len(3)], tolerance = 1e-10)
      }
    }
  }
  # a non-default bias step for the separate bias
  fit <- suppressWarnings(sgd_robust(dat$x, dat$y, loss = "gompertz", lambda = 0.05, eta = 0.3,
                                     epochs = 2, bias = "separate", bias_step = 0.7, seed = 3,
                                     record_iterates = TRUE))
  deriv <- function(z) noisylabels:::.sgd_loss_eval(fit$loss, z)$deriv
  expect_equal(fit$iterates, ref_sgd_replay(dat$x, dat$y, fit, deriv), tolerance = 1e-10)
  expect_false(isTRUE(all.equal(fit$bias, suppressWarnings(
    sgd_robust(dat$x, dat$y, loss = "gompertz", lambda = 0.05, eta = 0.3, epochs = 2,
               bias = "separate", seed = 3))$bias)))
  expect_error(sgd_robust(dat$x, dat$y, bias_step = 0), class = "noisylabels_error_input")
})


test_that("lazy scaling survives many renormalisations", {
  dat <- sgd_toy(n = 30, d = 2)
  # eta * lambda = 0.5: a halves every step, renormalised every ~30 steps
  # (option A) or every 10 (averaging folds its running sum first)
  for (option in c("A", "B")) {
    fit <- suppressWarnings(sgd_robust(dat$x, dat$y, loss = "logistic", lambda = 1, eta = 0.5,
                                       epochs = 4, seed = 3, option = option,
                                       record_iterates = TRUE))
    expect_gt(fit$renormalisations, if (option == "A") 2 else 10)
    ref <- ref_sgd_replay(dat$x, dat$y, fit, function(z) -1 / (1 + exp(z)))
    expect_equal(fit$iterates, ref, tolerance = 1e-12, label = option)
  }
  # ASGD's running average over epochs 2-4 under the same decay
  fit <- suppressWarnings(sgd_robust(dat$x, dat$y, loss = "logistic", method = "asgd", lambda = 1,
                                     eta = 0.5, epochs = 4, seed = 3, record_iterates = TRUE))
  ref <- ref_sgd_replay(dat$x, dat$y, fit, function(z) -1 / (1 + exp(z)))
  expect_equal(unname(fit$weights), rowMeans(ref[1:2, -(1:30)]), tolerance = 1e-12)
  expect_equal(fit$bias, mean(ref[3, -(1:30)]), tolerance = 1e-12)
})

test_that("option B returns the explicit average of the epoch's iterates", {
  dat <- sgd_toy(n = 20, d = 3, flip = 0.1)
  fit <- suppressWarnings(sgd_robust(dat$x, dat$y, loss = "smooth_ramp", option = "B", lambda = 0.01,
                                     eta = 0.2, epochs = 3, seed = 5, record_iterates = TRUE))
  it <- fit$iterates
  last_epoch <- it[, 41:60]
  avg <- rowMeans(last_epoch)
  expect_equal(unname(fit$weights), avg[1:3], tolerance = 1e-12)
  expect_equal(fit$bias, avg[4] + avg[5], tolerance = 1e-12)
  # and each epoch restarts from the previous average: replay agrees
  ref <- ref_sgd_replay(dat$x, dat$y, fit, function(z) noisylabels:::.sgd_loss_eval(fit$loss, z)$deriv)
  expect_equal(it, ref, tolerance = 1e-10)
})

test_that("ASGD returns the average of the iterates after the first epoch; Pegasos projects", {
  dat <- sgd_toy(n = 20, d = 2, flip = 0.1)
  fit <- suppressWarnings(sgd_robust(dat$x, dat$y, method = "asgd", loss = "logistic",
                                     lambda = 0.01, eta = 0.5, epochs = 3, seed = 2,
                                     record_iterates = TRUE))
  ref <- ref_sgd_replay(dat$x, dat$y, fit, function(z) -1 / (1 + exp(z)))
  expect_equal(fit$iterates, ref, tolerance = 1e-10)
  avg <- rowMeans(ref[, 21:60])
  expect_equal(unname(fit$weights), avg[1:2], tolerance = 1e-10)
  expect_equal(fit$bias, avg[3], tolerance = 1e-10)

  peg <- suppressWarnings(sgd_robust(dat$x, dat$y, method = "pegasos", loss = "hinge",
                                     lambda = 0.5, epochs = 2, seed = 2, record_iterates = TRUE))
  ref <- ref_sgd_replay(dat$x, dat$y, peg, function(z) ifelse(z < 1, -1, 0))
  expect_equal(peg$iterates, ref, tolerance = 1e-10)
  expect_true(all(sqrt(colSums(peg$iterates[1:3, ]^2)) <= 1 / sqrt(0.5) + 1e-12))
})

test_that("sparse and dense input give the same weights for the same seed", {
  dat <- sgd_toy(n = 200, d = 6, flip = 0.1)
  x <- dat$x
  x[abs(x) < 0.8] <- 0
  xs <- Matrix::Matrix(x, sparse = TRUE)
  for (method in c("sgd", "asgd", "pegasos")) {
    a <- suppressWarnings(sgd_robust(x, dat$y, method = method, loss = "gompertz", lambda = 1e-3, seed = 9,
                                     option = "B"))
    b <- suppressWarnings(sgd_robust(xs, dat$y, method = method, loss = "gompertz", lambda = 1e-3, seed = 9,
                                     option = "B"))
    expect_true(b$sparse)
    expect_equal(coef(a), coef(b), tolerance = 1e-12, label = method)
    expect_equal(a$trace, b$trace, tolerance = 1e-12)
  }
})

test_that("sparse rows replay exactly with every bias mode, renormalised or not, and match dense bitwise", {
  # Rows that share some columns, none, or are repeated in the data; every
  # iterate of the sparse path is checked against the plain-R replay.
  set.seed(4)
  x <- matrix(rnorm(30 * 8), 30, 8)
  x[matrix(runif(30 * 8) < 0.6, 30, 8)] <- 0
  x[5, ] <- 0                       # an empty row
  x[7, ] <- x[6, ]                  # a repeated row
  y <- ifelse(x[, 1] - x[, 2] + rnorm(30, sd = 0.5) > 0, 1, -1)
  xs <- Matrix::Matrix(x, sparse = TRUE)
  for (loss in c("hinge", "ramp", "logistic", "smooth_ramp", "gompertz")) for (bias in c("feature", "separate")) {
    for (setting in list(list(lambda = 0.05, eta = 0.3, option = "A", method = "sgd"),
                         list(lambda = 1, eta = 0.5, option = "B", method = "sgd"),
                         list(lambda = 0.05, eta = 0.3, option = "A", method = "asgd"))) {
      args <- c(list(loss = loss, bias = bias, epochs = 3, seed = 8, record_iterates = TRUE), setting)
      fs <- suppressWarnings(do.call(sgd_robust, c(list(xs, y), args)))
      fd <- suppressWarnings(do.call(sgd_robust, c(list(x, y), args)))
      deriv <- function(z) noisylabels:::.sgd_loss_eval(fs$loss, z)$deriv
      lab <- paste(loss, bias, setting$option, setting$method, setting$lambda)
      expect_equal(fs$iterates, ref_sgd_replay(x, y, fs, deriv), tolerance = 1e-10, label = lab)
      # dense rows add the same non-zero terms in the same order: bitwise equal
      expect_identical(fs$iterates, fd$iterates, label = lab)
      expect_identical(coef(fs), coef(fd), label = lab)
    }
  }
})

test_that("with hinge loss and a tiny step the objective decreases every epoch", {
  dat <- sgd_toy(n = 300, d = 4)
  fit <- suppressWarnings(sgd_robust(dat$x, dat$y, loss = "hinge", lambda = 1e-3, eta = 1e-4,
                                     epochs = 12, seed = 1))
  expect_true(all(diff(fit$trace$objective) < 0))
  # the traced objective is the primal objective of the final weights
  w <- coef(fit)
  f <- drop(dat$x %*% w[-1]) + w[1]
  obj <- 1e-3 / 2 * sum(w^2) + mean(pmax(0, 1 - dat$y * f))
  expect_equal(fit$trace$objective[12], obj, tolerance = 1e-12)
  expect_equal(fit$margins, dat$y * f, tolerance = 1e-12)
})

test_that("the fit reports epoch-loop and evaluation times separately", {
  dat <- sgd_toy(n = 50, d = 2)
  fit <- suppressWarnings(sgd_robust(dat$x, dat$y, eta = 0.1, epochs = 2, seed = 1))
  for (nm in c("seconds", "cpu_seconds", "eval_seconds", "eval_cpu_seconds")) {
    expect_true(is.numeric(fit[[nm]]) && length(fit[[nm]]) == 1 && fit[[nm]] >= 0, label = nm)
  }
  spec <- noisylabels:::sgd_data(dat$x)
  spec$y <- as.double(dat$y)
  fl <- noisylabels:::.sgd_floor_seconds(spec, 1L)
  expect_named(fl, c("wall", "cpu"))
})

test_that("the same seed gives an identical fit and set.seed reproduces it", {
  dat <- sgd_toy(n = 100, d = 3, flip = 0.2)
  set.seed(42); a <- suppressWarnings(sgd_robust(dat$x, dat$y))
  set.seed(42); b <- suppressWarnings(sgd_robust(dat$x, dat$y))
  expect_identical(coef(a), coef(b))
  expect_identical(a$trace, b$trace)
  set.seed(43); c2 <- suppressWarnings(sgd_robust(dat$x, dat$y))
  expect_false(identical(coef(a), coef(c2)))
})

test_that("formula and matrix interfaces agree", {
  dat <- sgd_toy(n = 120, d = 3)
  df <- data.frame(dat$x, label = factor(ifelse(dat$y > 0, "pos", "neg")))
  a <- suppressWarnings(sgd_robust(label ~ X1 + X2 + X3, data = df, loss = "gompertz", seed = 4))
  b <- suppressWarnings(sgd_robust(dat$x, df$label, loss = "gompertz", seed = 4))
  expect_equal(unname(coef(a)), unname(coef(b)))
  expect_equal(names(coef(a)), c("(Intercept)", "X1", "X2", "X3"))
  expect_identical(predict(a, df), predict(b, dat$x))
  expect_s3_class(predict(a, df), "factor")
  expect_equal(levels(predict(a, df)), c("neg", "pos"))
  expect_equal(predict(a, df, type = "link"), drop(dat$x %*% coef(b)[-1]) + coef(b)[1],
               ignore_attr = TRUE)
})

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

test_that("robust losses flag flipped labels: noise scores rank them first", {
  set.seed(8)
  x <- matrix(rnorm(1000), 500, 2)
  y <- ifelse(x[, 1] + x[, 2] > 0, 1, -1)
  noisy <- flip_labels(y, 0.1)
  fit <- suppressWarnings(sgd_robust(x, noisy$y, loss = "smooth_ramp", lambda = 1e-3))
  m <- detection_metrics(noise_scores(fit), noisy$flipped)
  expect_gt(m$auc, 0.9)
  iss <- label_issues(fit)
  expect_equal(nrow(iss), 500)
  expect_true(all(c("row", "score", "flagged", "margin", "loss_weight", "label") %in% names(iss)))
  expect_equal(iss$flagged, iss$score > 0)
  expect_equal(sum(label_issues(fit, threshold = 1)$flagged), sum(noise_scores(fit) > 1))
  expect_gt(mean(noisy$flipped[iss$row[iss$flagged]]), 0.6)
})

test_that("methods return the documented shapes", {
  dat <- sgd_toy(n = 100, d = 3)
  fit <- suppressWarnings(sgd_robust(dat$x, dat$y, x_valid = dat$x, y_valid = dat$y, seed = 1))
  expect_equal(fit$trace$valid_error, fit$trace$train_error)
  expect_equal(fitted(fit), predict(fit, dat$x, type = "link"), tolerance = 1e-12)
  td <- tidy(fit)
  expect_equal(td$estimate, unname(coef(fit)))
  gl <- glance(fit)
  expect_equal(nrow(gl), 1)
  expect_equal(gl$train_error, fit$trace$train_error[15])
  au <- augment(fit)
  expect_equal(au$.noise_score, noise_scores(fit))
  expect_output(print(fit), "Robust-loss SGD")
  expect_output(print(summary(fit)), "Per-epoch trace")
  pdf(NULL); on.exit(grDevices::dev.off())
  expect_invisible(plot(fit))
  skip_if_not_installed("ggplot2")
  expect_s3_class(ggplot2::autoplot(fit), "ggplot")
})

test_that("non-convergence warns with the number of epochs reached", {
  dat <- sgd_toy(n = 100, d = 3, flip = 0.3)
  expect_warning(sgd_robust(dat$x, dat$y, loss = "hinge", eta = 1, epochs = 2, tol = 0, seed = 1),
                 class = "noisylabels_warning_convergence")
})

test_that("cross-validation picks lambda and s from the grid and refits", {
  dat <- sgd_toy(n = 150, d = 2, flip = 0.1)
  set.seed(1)
  cv <- cv_sgd_robust(dat$x, dat$y, loss = "smooth_ramp", lambda = c(1e-4, 1e-1), s = c(-1, -2),
                      folds = 3, epochs = 3, tol = 0.05)
  expect_equal(nrow(cv$results), 4)
  best <- cv$results[cv$results$lambda == cv$best$lambda & cv$results$s == cv$best$s, ]
  expect_equal(best$mean_error, min(cv$results$mean_error))
  expect_s3_class(cv$fit, "sgd_robust")
  expect_equal(cv$fit$lambda, cv$best$lambda)
  expect_output(print(cv), "Best: lambda")
  expect_identical(noise_scores(cv), noise_scores(cv$fit))
  expect_identical(label_issues(cv), label_issues(cv$fit))
  expect_identical(fitted(cv), fitted(cv$fit))
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off())
  p <- plot(cv)
  expect_equal(sum(p$chosen), 1)
  expect_equal(p$error[p$chosen], min(cv$results$mean_error))
  expect_equal(c(p$lambda[p$chosen], p$group[p$chosen]), c(cv$best$lambda, cv$best$s))
  expect_equal(p$upper - p$lower, 2 * cv$results$sd_error / sqrt(3))
  expect_setequal(unique(p$group), c(-1, -2))
  td <- tidy(cv)
  expect_equal(sum(td$chosen), 1)
  expect_equal(td$mean_error[td$chosen], min(cv$results$mean_error))
  gl <- glance(cv)
  expect_equal(c(gl$lambda, gl$s, gl$mean_error), c(cv$best$lambda, cv$best$s, min(cv$results$mean_error)))
  expect_identical(gl$n, 150L)
  expect_error(plot(cv, which = "fit"), NA)
})

test_that("cross-validation through a formula matches the matrix interface", {
  dat <- sgd_toy(n = 120, d = 2, flip = 0.1)
  df <- data.frame(dat$x, label = factor(ifelse(dat$y > 0, "pos", "neg"), levels = c("neg", "pos")))
  set.seed(2)
  m <- cv_sgd_robust(dat$x, df$label, loss = "gompertz", lambda = c(1e-4, 1e-2), folds = 3, epochs = 3)
  set.seed(2)
  f <- cv_sgd_robust(label ~ ., data = df, loss = "gompertz", lambda = c(1e-4, 1e-2), folds = 3, epochs = 3)
  expect_identical(f$results, m$results)
  expect_equal(unname(coef(f)), unname(coef(m)))
  expect_identical(predict(f, df[1:10, ]), predict(m, dat$x[1:10, ]))
  expect_s3_class(predict(f, df[1:10, ]), "factor")
  expect_error(cv_sgd_robust(label ~ ., data = as.matrix(dat$x)), class = "noisylabels_error_input")
  df$X1[4] <- NA
  expect_error(cv_sgd_robust(label ~ ., data = df), class = "noisylabels_error_input", regexp = "model frame")
})

test_that("bad input gives classed errors", {
  dat <- sgd_toy(n = 50, d = 2)
  x <- dat$x; y <- dat$y
  bad <- x; bad[3, 2] <- NA
  expect_error(sgd_robust(bad, y), class = "noisylabels_error_input", regexp = "NA")
  bad[3, 2] <- Inf
  expect_error(sgd_robust(bad, y), class = "noisylabels_error_input", regexp = "infinite")
  xs <- Matrix::Matrix(x, sparse = TRUE); xs@x[2] <- NaN
  expect_error(sgd_robust(xs, y), class = "noisylabels_error_input")
  expect_error(sgd_robust(x, rep(1, 50)), class = "noisylabels_error_input", regexp = "single class")
  expect_error(sgd_robust(x, factor(rep(c("a", "b", "c"), length.out = 50))),
               class = "noisylabels_error_input", regexp = "one-vs-rest")
  expect_error(sgd_robust(x, rep(1:3, length.out = 50)), class = "noisylabels_error_input",
               regexp = "one-vs-rest")
  expect_error(sgd_robust(x, y[-1]), class = "noisylabels_error_input", regexp = "length")
  expect_error(sgd_robust(x, y, lambda = -1), class = "noisylabels_error_input", regexp = "lambda")
  expect_error(sgd_robust(x, y, eta = 0), class = "noisylabels_error_input", regexp = "eta")
  expect_error(sgd_robust(x, y, eta = -0.1), class = "noisylabels_error_input", regexp = "eta")
  expect_error(sgd_robust(x, y, eta = Inf), class = "noisylabels_error_input", regexp = "eta")
  expect_error(sgd_robust(x, y, eta = 1, lambda = 2), class = "noisylabels_error_input")
  expect_error(sgd_robust(Matrix::Matrix(0, 0, 3, sparse = TRUE), numeric(0)),
               class = "noisylabels_error_input", regexp = "empty sparse")
  expect_error(sgd_robust(Matrix::Matrix(0, 5, 3, sparse = TRUE), c(1, -1, 1, -1, 1)),
               class = "noisylabels_error_input", regexp = "empty sparse")
  expect_error(sgd_robust(x, y, method = "pegasos", lambda = 0), class = "noisylabels_error_input")
  expect_error(sgd_robust(x, y, x_valid = x), class = "noisylabels_error_input")
  expect_error(sgd_robust(x, y, lamda = 1), class = "noisylabels_error_input", regexp = "lamda")
  df <- data.frame(x, label = y); df$X1[4] <- NA
  expect_error(sgd_robust(label ~ X1 + X2, data = df), class = "noisylabels_error_input",
               regexp = "missing")
})

test_that("a diverging run stops with an error suggesting a smaller eta", {
  dat <- sgd_toy(n = 50, d = 2)
  x <- dat$x * 1e200
  expect_error(sgd_robust(x, dat$y, loss = "logistic", lambda = 0, eta = 1e150),
               class = "noisylabels_error_numeric", regexp = "smaller eta")
})

test_that("print and summary output are stable", {
  dat <- sgd_toy(n = 60, d = 2)
  fit <- suppressWarnings(sgd_robust(dat$x, dat$y, loss = "gompertz", lambda = 1e-2, eta = 0.05,
                                     epochs = 3, option = "A", seed = 1))
  expect_snapshot(print(fit))
  expect_snapshot(print(summary(fit)))
})

test_that("center = TRUE is a fit on centred columns reported on the original scale", {
  set.seed(5)
  n <- 80
  x <- cbind(runif(n), runif(n), runif(n))
  y <- ifelse(x[, 1] - x[, 2] + 0.1 * rnorm(n) > 0.3, 1, -1)
  fit <- suppressWarnings(sgd_robust(x, y, loss = "smooth_ramp", lambda = 1e-3, eta = 0.2,
                                     epochs = 4, center = TRUE, seed = 9))
  m <- colMeans(x)
  ref <- suppressWarnings(sgd_robust(sweep(x, 2, m), y, loss = "smooth_ramp", lambda = 1e-3,
                                     eta = 0.2, epochs = 4, seed = 9))
  expect_equal(fit$weights, ref$weights, tolerance = 1e-12)
  expect_equal(fit$bias, ref$bias - sum(ref$weights * m), tolerance = 1e-12)
  # predictions on the raw columns equal the centred fit's on centred columns
  expect_equal(predict(fit, x, type = "link"), predict(ref, sweep(x, 2, m), type = "link"),
               tolerance = 1e-10, ignore_attr = TRUE)
  expect_equal(fit$margins, ref$margins, tolerance = 1e-12)
  expect_error(sgd_robust(Matrix::Matrix(x, sparse = TRUE), y, center = TRUE),
               class = "noisylabels_error_input")
  expect_error(sgd_robust(x, y, center = NA), class = "noisylabels_error_input")
})

test_that("init starts the iterates at the given coefficients, in every bias mode", {
  dat <- sgd_toy(n = 25, d = 3, flip = 0.2)
  start <- c("(Intercept)" = 0.4, x1 = -0.3, x2 = 0.8, x3 = 0.1)
  for (bias in c("feature", "separate")) for (option in c("A", "B")) {
    fit <- suppressWarnings(sgd_robust(dat$x, dat$y, loss = "gompertz", lambda = 0.05, eta = 0.3,
                                       epochs = 2, bias = bias, option = option, seed = 5,
                                       init = start, record_iterates = TRUE))
    deriv <- function(z) noisylabels:::.sgd_loss_eval(fit$loss, z)$deriv
    w0 <- if (bias == "feature") c(start[-1], start[1]) else start[-1]
    b0 <- if (bias == "separate") start[[1]] else 0
    ref <- ref_sgd_replay(dat$x, dat$y, fit, deriv, w0 = unname(w0), b0 = b0)
    expect_equal(fit$iterates, ref, tolerance = 1e-10, label = paste(bias, option))
  }
  # the weights alone mean intercept 0; bias = "none" takes them as they are
  fit <- suppressWarnings(sgd_robust(dat$x, dat$y, loss = "logistic", lambda = 0.05, eta = 0.3,
                                     epochs = 1, bias = "none", seed = 5, option = "A",
                                     init = start[-1], record_iterates = TRUE))
  deriv <- function(z) noisylabels:::.sgd_loss_eval(fit$loss, z)$deriv
  expect_equal(fit$iterates, ref_sgd_replay(dat$x, dat$y, fit, deriv, w0 = unname(start[-1])),
               tolerance = 1e-10)
})

test_that("init is on the user's columns, also when the fit centres them", {
  dat <- sgd_toy(n = 60, d = 3, seed = 4)
  x <- dat$x + 3  # far from centred
  start <- c(0.7, -0.2, 0.5, 1.1)
  for (center in c(FALSE, TRUE)) for (bias in c("feature", "separate")) {
    # A negligible step: the fit must hand back (almost exactly) its start.
    fit <- suppressWarnings(sgd_robust(x, dat$y, loss = "logistic", lambda = 0, eta = 1e-12,
                                       epochs = 1, center = center, bias = bias, seed = 1,
                                       init = start))
    expect_equal(unname(coef(fit)), start, tolerance = 1e-9, label = paste(center, bias))
  }
  # a fitted model as the start: continuing from it
  a <- suppressWarnings(sgd_robust(x, dat$y, loss = "logistic", epochs = 2, seed = 2, center = TRUE))
  b <- suppressWarnings(sgd_robust(x, dat$y, loss = "logistic", lambda = 0, eta = 1e-12, epochs = 1,
                                   seed = 3, center = TRUE, init = a))
  expect_equal(coef(b), coef(a), tolerance = 1e-9)
})

test_that("a malformed init is a classed error", {
  dat <- sgd_toy(n = 20, d = 3)
  expect_error(sgd_robust(dat$x, dat$y, init = c(1, 2)), class = "noisylabels_error_input",
               regexp = "init")
  expect_error(sgd_robust(dat$x, dat$y, init = c(0, 1, NA, 2)), class = "noisylabels_error_input")
  expect_error(sgd_robust(dat$x, dat$y, init = "zero"), class = "noisylabels_error_input")
  expect_error(sgd_robust(dat$x, dat$y, bias = "none", init = c(1, 0, 0, 0)),
               class = "noisylabels_error_input", regexp = "intercept")
})

test_that("autoplot() of cv_sgd_robust() draws one CV curve per s with the choice circled", {
  skip_if_not_installed("ggplot2")
  dat <- sgd_toy(n = 90, d = 3, flip = 0.1)
  cv <- suppressWarnings(cv_sgd_robust(dat$x, dat$y, folds = 3, lambda = c(1e-4, 1e-2), eta = 0.1,
                                       seed = 2))
  p <- ggplot2::autoplot(cv)
  b <- ggplot2::ggplot_build(p)
  expect_equal(sort(b$data[[3]]$y), sort(cv$results$mean_error))
  expect_equal(length(unique(b$data[[3]]$colour)), length(unique(cv$results$s)))
  best <- cv$results$mean_error[cv$results$lambda == cv$best$lambda & cv$results$s == cv$best$s]
  expect_equal(b$data[[4]]$y, best)
  expect_s3_class(ggplot2::autoplot(cv, which = "fit"), "ggplot")
})
