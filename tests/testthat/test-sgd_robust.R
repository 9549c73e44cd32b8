test_that("every iterate equals a plain-R replay of the update (all losses, bias modes)", {
  dat <- sgd_toy(n = 25, d = 3, flip = 0.2)
  for (loss in c("hinge", "logistic", "ramp", "smooth_ramp", "gompertz")) {
    for (bias in c("feature", "separate", "none")) for (option in c("A", "B")) {
      fit <- suppressWarnings(sgd_robust(dat$x, dat$y, loss = loss, lambda = 0.05,
                                         epochs = 3, seed = 11, control = sgd_robust_control(eta = 0.3, bias = bias, option = option, record_iterates = TRUE)))
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
  fit <- suppressWarnings(sgd_robust(dat$x, dat$y, loss = "gompertz", lambda = 0.05,
                                     epochs = 2, seed = 3, control = sgd_robust_control(eta = 0.3, bias = "separate", bias_step = 0.7, record_iterates = TRUE)))
  deriv <- function(z) noisylabels:::.sgd_loss_eval(fit$loss, z)$deriv
  expect_equal(fit$iterates, ref_sgd_replay(dat$x, dat$y, fit, deriv), tolerance = 1e-10)
  expect_false(isTRUE(all.equal(fit$bias, suppressWarnings(
    sgd_robust(dat$x, dat$y, loss = "gompertz", lambda = 0.05, epochs = 2, seed = 3, control = sgd_robust_control(eta = 0.3, bias = "separate")))$bias)))
  expect_error(sgd_robust(dat$x, dat$y, control = sgd_robust_control(bias_step = 0)), class = "noisylabels_error_input")
})

test_that("lazy scaling survives many renormalisations", {
  dat <- sgd_toy(n = 30, d = 2)
  # eta * lambda = 0.5: a halves every step, renormalised every ~30 steps
  # (option A) or every 10 (averaging folds its running sum first)
  for (option in c("A", "B")) {
    fit <- suppressWarnings(sgd_robust(dat$x, dat$y, loss = "logistic", lambda = 1,
                                       epochs = 4, seed = 3, control = sgd_robust_control(eta = 0.5, option = option, record_iterates = TRUE)))
    expect_gt(fit$renormalisations, if (option == "A") 2 else 10)
    ref <- ref_sgd_replay(dat$x, dat$y, fit, function(z) -1 / (1 + exp(z)))
    expect_equal(fit$iterates, ref, tolerance = 1e-12, label = option)
  }
  # ASGD's running average over epochs 2-4 under the same decay
  fit <- suppressWarnings(sgd_robust(dat$x, dat$y, loss = "logistic", lambda = 1, epochs = 4, seed = 3, control = sgd_robust_control(method = "asgd", eta = 0.5, record_iterates = TRUE)))
  ref <- ref_sgd_replay(dat$x, dat$y, fit, function(z) -1 / (1 + exp(z)))
  expect_equal(unname(fit$weights), rowMeans(ref[1:2, -(1:30)]), tolerance = 1e-12)
  expect_equal(fit$bias, mean(ref[3, -(1:30)]), tolerance = 1e-12)
})

test_that("option B returns the explicit average of the epoch's iterates", {
  dat <- sgd_toy(n = 20, d = 3, flip = 0.1)
  fit <- suppressWarnings(sgd_robust(dat$x, dat$y, loss = "smooth_ramp", lambda = 0.01, epochs = 3, seed = 5, control = sgd_robust_control(option = "B", eta = 0.2, record_iterates = TRUE)))
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
  fit <- suppressWarnings(sgd_robust(dat$x, dat$y, loss = "logistic",
                                     lambda = 0.01, epochs = 3, seed = 2, control = sgd_robust_control(method = "asgd", eta = 0.5, record_iterates = TRUE)))
  ref <- ref_sgd_replay(dat$x, dat$y, fit, function(z) -1 / (1 + exp(z)))
  expect_equal(fit$iterates, ref, tolerance = 1e-10)
  avg <- rowMeans(ref[, 21:60])
  expect_equal(unname(fit$weights), avg[1:2], tolerance = 1e-10)
  expect_equal(fit$bias, avg[3], tolerance = 1e-10)

  peg <- suppressWarnings(sgd_robust(dat$x, dat$y, loss = "hinge",
                                     lambda = 0.5, epochs = 2, seed = 2, control = sgd_robust_control(method = "pegasos", record_iterates = TRUE)))
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
    a <- suppressWarnings(sgd_robust(x, dat$y, loss = "gompertz", lambda = 1e-3, seed = 9, control = sgd_robust_control(method = method, option = "B")))
    b <- suppressWarnings(sgd_robust(xs, dat$y, loss = "gompertz", lambda = 1e-3, seed = 9, control = sgd_robust_control(method = method, option = "B")))
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
  fit <- suppressWarnings(sgd_robust(dat$x, dat$y, loss = "hinge", lambda = 1e-3,
                                     epochs = 12, seed = 1, control = sgd_robust_control(eta = 1e-4)))
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
  fit <- suppressWarnings(sgd_robust(dat$x, dat$y, epochs = 2, seed = 1, control = sgd_robust_control(eta = 0.1)))
  for (nm in c("seconds", "cpu_seconds", "eval_seconds", "eval_cpu_seconds")) {
    expect_true(is.numeric(fit[[nm]]) && length(fit[[nm]]) == 1 && fit[[nm]] >= 0, label = nm)
  }
  spec <- noisylabels:::sgd_data(dat$x)
  spec$y <- as.double(dat$y)
  fl <- hook("sgd_floor_seconds", spec, 1L)
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

test_that("non-convergence warns with the number of epochs reached", {
  dat <- sgd_toy(n = 100, d = 3, flip = 0.3)
  expect_warning(sgd_robust(dat$x, dat$y, loss = "hinge", epochs = 2, seed = 1, control = sgd_robust_control(eta = 1, tol = 0)),
                 class = "noisylabels_warning_convergence")
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
  # three classes are fitted one-vs-rest now; a 3-class validation set of a
  # binary fit, or classes the fit does not know, are classed errors
  expect_error(sgd_robust(x, y, x_valid = x[1:3, ], y_valid = c(1, -1, 2)),
               class = "noisylabels_error_input")
  y3 <- factor(rep(c("a", "b", "c"), length.out = 50))
  expect_error(suppressWarnings(sgd_robust(x, y3, x_valid = x[1:2, ], y_valid = c("a", "z"))),
               class = "noisylabels_error_unknown_class")
  expect_error(sgd_robust(x, y3, loss = "hinge", multiclass = "multinomial"),
               class = "noisylabels_error_input", regexp = "logistic")
  expect_error(sgd_robust(x, y, control = sgd_robust_control(step_guard = -1)), class = "noisylabels_error_input")
  expect_error(sgd_robust(x, y[-1]), class = "noisylabels_error_input", regexp = "length")
  expect_error(sgd_robust(x, y, lambda = -1), class = "noisylabels_error_input", regexp = "lambda")
  expect_error(sgd_robust(x, y, control = sgd_robust_control(eta = 0)), class = "noisylabels_error_input", regexp = "eta")
  expect_error(sgd_robust(x, y, control = sgd_robust_control(eta = -0.1)), class = "noisylabels_error_input", regexp = "eta")
  expect_error(sgd_robust(x, y, control = sgd_robust_control(eta = Inf)), class = "noisylabels_error_input", regexp = "eta")
  expect_error(sgd_robust(x, y, lambda = 2, control = sgd_robust_control(eta = 1)), class = "noisylabels_error_input")
  expect_error(sgd_robust(Matrix::Matrix(0, 0, 3, sparse = TRUE), numeric(0)),
               class = "noisylabels_error_input", regexp = "empty sparse")
  expect_error(sgd_robust(Matrix::Matrix(0, 5, 3, sparse = TRUE), c(1, -1, 1, -1, 1)),
               class = "noisylabels_error_input", regexp = "empty sparse")
  expect_error(sgd_robust(x, y, lambda = 0, control = sgd_robust_control(method = "pegasos")), class = "noisylabels_error_input")
  expect_error(sgd_robust(x, y, x_valid = x), class = "noisylabels_error_input")
  expect_error(sgd_robust(x, y, lamda = 1), class = "noisylabels_error_input", regexp = "lamda")
  df <- data.frame(x, label = y); df$X1[4] <- NA
  expect_error(sgd_robust(label ~ X1 + X2, data = df), class = "noisylabels_error_input",
               regexp = "missing")
})

test_that("a diverging run stops with an error suggesting a smaller eta", {
  dat <- sgd_toy(n = 50, d = 2)
  x <- dat$x * 1e200
  expect_error(sgd_robust(x, dat$y, loss = "logistic", lambda = 0, control = sgd_robust_control(eta = 1e150)),
               class = "noisylabels_error_numeric", regexp = "smaller eta")
})

test_that("standardize = TRUE is a fit on standardised columns reported on the original scale", {
  set.seed(5)
  n <- 80
  x <- cbind(runif(n), 10 * runif(n), runif(n) + 5)
  y <- ifelse(x[, 1] - x[, 2] / 10 + 0.1 * rnorm(n) > 0.3, 1, -1)
  fit <- suppressWarnings(noisylabels::sgd_robust(x, y, loss = "smooth_ramp", lambda = 1e-3,
                                     epochs = 4, seed = 9, control = sgd_robust_control(eta = 0.2)))
  m <- colMeans(x)
  s <- apply(x, 2, sd)
  xs <- scale(x)
  ref <- suppressWarnings(noisylabels::sgd_robust(xs, y, loss = "smooth_ramp", lambda = 1e-3, epochs = 4, seed = 9, standardize = FALSE, control = sgd_robust_control(eta = 0.2)))
  expect_equal(fit$centre, m)
  expect_equal(fit$scale, s)
  expect_equal(fit$weights, ref$weights / s, tolerance = 1e-12, ignore_attr = TRUE)
  expect_equal(fit$bias, ref$bias - sum(ref$weights / s * m), tolerance = 1e-12)
  # predictions on the raw columns equal the standardised fit's on standardised columns
  expect_equal(predict(fit, x, type = "link"), predict(ref, xs, type = "link"),
               tolerance = 1e-10, ignore_attr = TRUE)
  expect_equal(fit$margins, ref$margins, tolerance = 1e-12)
  expect_equal(fit$trace$objective, ref$trace$objective, tolerance = 1e-12)
  # a sparse x is only scaled (its zeros stay zero)
  xsp <- Matrix::Matrix(x * (x > 3), sparse = TRUE)
  fsp <- suppressWarnings(noisylabels::sgd_robust(xsp, y, loss = "smooth_ramp", lambda = 1e-3,
                                     epochs = 4, seed = 9, control = sgd_robust_control(eta = 0.2)))
  ssp <- apply(as.matrix(xsp), 2, sd)
  ssp[ssp == 0] <- 1
  expect_null(fsp$centre)
  expect_equal(fsp$scale, ssp, tolerance = 1e-12, ignore_attr = TRUE)
  rsp <- suppressWarnings(noisylabels::sgd_robust(sweep(as.matrix(xsp), 2, ssp, "/"), y, loss = "smooth_ramp",
                                     lambda = 1e-3, epochs = 4, seed = 9, standardize = FALSE, control = sgd_robust_control(eta = 0.2)))
  expect_equal(predict(fsp, xsp, type = "link"), predict(rsp, sweep(as.matrix(xsp), 2, ssp, "/"), type = "link"),
               tolerance = 1e-10, ignore_attr = TRUE)
  expect_error(noisylabels::sgd_robust(x, y, standardize = NA), class = "noisylabels_error_input")
  # center is the deprecated old name
  expect_warning(old <- withCallingHandlers(
    noisylabels::sgd_robust(x, y, loss = "smooth_ramp", lambda = 1e-3, epochs = 4,
                            seed = 9, center = FALSE, control = sgd_robust_control(eta = 0.2)),
    noisylabels_warning_convergence = function(w) invokeRestart("muffleWarning")),
    class = "noisylabels_warning_deprecated")
  expect_null(old$scale)
  expect_error(noisylabels::sgd_robust(x, y, center = TRUE, standardize = TRUE), class = "noisylabels_error_input")
})

test_that("sgd_robust on raw iris rows reaches a low training error or warns", {
  # the issue-40 case: 80 raw rows of two classes, default settings
  for (s in 1:3) {
    set.seed(s)
    d <- droplevels(iris[sample(51:150, 80), ])
    w <- NULL
    fit <- withCallingHandlers(noisylabels::sgd_robust(Species ~ ., d),
                               noisylabels_warning_convergence = function(c) {
                                 w <<- c
                                 invokeRestart("muffleWarning")
                               })
    err <- mean(predict(fit, d) != d$Species)
    expect_true(err <= 0.10 || !is.null(w), label = paste("seed", s, "error", err))
    expect_identical(fit$converged, is.null(w))
  }
  # raw columns: a flat training error far above the optimum is not "converged"
  set.seed(1)
  d <- droplevels(iris[sample(51:150, 80), ])
  w <- NULL
  fit <- withCallingHandlers(noisylabels::sgd_robust(Species ~ ., d, standardize = FALSE),
                             noisylabels_warning_convergence = function(c) {
                               w <<- c
                               invokeRestart("muffleWarning")
                             })
  err <- mean(predict(fit, d) != d$Species)
  expect_true(err <= 0.10 || !is.null(w), label = paste("raw error", err))
})

test_that("init starts the iterates at the given coefficients, in every bias mode", {
  dat <- sgd_toy(n = 25, d = 3, flip = 0.2)
  start <- c("(Intercept)" = 0.4, x1 = -0.3, x2 = 0.8, x3 = 0.1)
  for (bias in c("feature", "separate")) for (option in c("A", "B")) {
    fit <- suppressWarnings(sgd_robust(dat$x, dat$y, loss = "gompertz", lambda = 0.05,
                                       epochs = 2, seed = 5,
                                       init = start, control = sgd_robust_control(eta = 0.3, bias = bias, option = option, record_iterates = TRUE)))
    deriv <- function(z) noisylabels:::.sgd_loss_eval(fit$loss, z)$deriv
    w0 <- if (bias == "feature") c(start[-1], start[1]) else start[-1]
    b0 <- if (bias == "separate") start[[1]] else 0
    ref <- ref_sgd_replay(dat$x, dat$y, fit, deriv, w0 = unname(w0), b0 = b0)
    expect_equal(fit$iterates, ref, tolerance = 1e-10, label = paste(bias, option))
  }
  # the weights alone mean intercept 0; bias = "none" takes them as they are
  fit <- suppressWarnings(sgd_robust(dat$x, dat$y, loss = "logistic", lambda = 0.05,
                                     epochs = 1, seed = 5,
                                     init = start[-1], control = sgd_robust_control(eta = 0.3, bias = "none", option = "A", record_iterates = TRUE)))
  deriv <- function(z) noisylabels:::.sgd_loss_eval(fit$loss, z)$deriv
  expect_equal(fit$iterates, ref_sgd_replay(dat$x, dat$y, fit, deriv, w0 = unname(start[-1])),
               tolerance = 1e-10)
})

test_that("init is on the user's columns, also when the fit standardises them", {
  dat <- sgd_toy(n = 60, d = 3, seed = 4)
  x <- dat$x + 3  # far from centred
  start <- c(0.7, -0.2, 0.5, 1.1)
  for (std in c(FALSE, TRUE)) for (bias in c("feature", "separate")) {
    # A negligible step: the fit must hand back (almost exactly) its start.
    fit <- suppressWarnings(noisylabels::sgd_robust(x, dat$y, loss = "logistic", lambda = 0,
                                       epochs = 1, standardize = std, seed = 1,
                                       init = start, control = sgd_robust_control(eta = 1e-12, bias = bias)))
    expect_equal(unname(coef(fit)), start, tolerance = 1e-9, label = paste(std, bias))
  }
  # a fitted model as the start: continuing from it
  a <- suppressWarnings(noisylabels::sgd_robust(x, dat$y, loss = "logistic", epochs = 2, seed = 2))
  b <- suppressWarnings(noisylabels::sgd_robust(x, dat$y, loss = "logistic", lambda = 0, epochs = 1,
                                   seed = 3, init = a, control = sgd_robust_control(eta = 1e-12)))
  expect_equal(coef(b), coef(a), tolerance = 1e-9)
})

test_that("a malformed init is a classed error", {
  dat <- sgd_toy(n = 20, d = 3)
  expect_error(sgd_robust(dat$x, dat$y, init = c(1, 2)), class = "noisylabels_error_input",
               regexp = "init")
  expect_error(sgd_robust(dat$x, dat$y, init = c(0, 1, NA, 2)), class = "noisylabels_error_input")
  expect_error(sgd_robust(dat$x, dat$y, init = "zero"), class = "noisylabels_error_input")
  expect_error(sgd_robust(dat$x, dat$y, init = c(1, 0, 0, 0), control = sgd_robust_control(bias = "none")),
               class = "noisylabels_error_input", regexp = "intercept")
})

test_that("epochs = 1 measures convergence against the starting point, never 'changed by NA'", {
  dat <- sgd_toy(n = 80, d = 2, flip = 0.1)
  msgs <- character()
  withCallingHandlers(
    sgd_robust(dat$x, dat$y, loss = "hinge", lambda = 1e-3, epochs = 1, seed = 1, control = sgd_robust_control(eta = 0.1)),
    warning = function(w) {
      msgs <<- c(msgs, conditionMessage(w))
      invokeRestart("muffleWarning")
    })
  expect_false(any(grepl("NA", msgs)))
  # from a converged fit, one more epoch changes the objective little: no warning at all
  start <- suppressWarnings(sgd_robust(dat$x, dat$y, loss = "hinge", lambda = 1e-3,
                                       epochs = 50, seed = 1, control = sgd_robust_control(eta = 0.01)))
  fit <- expect_no_warning(sgd_robust(dat$x, dat$y, loss = "hinge", lambda = 1e-3,
                                      epochs = 1, init = start, seed = 2, control = sgd_robust_control(eta = 0.01)))
  expect_true(fit$converged)
  expect_true(is.finite(fit$rel_change))
  expect_equal(fit$rel_change, abs(fit$trace$objective[1] - fit$objective_start) /
                 max(1, fit$trace$objective[1]))
})

test_that("the step guard undoes an epoch that ends much worse and halves the step", {
  dat <- sgd_toy(n = 200, d = 3, flip = 0.1)
  args <- list(dat$x * 10, dat$y, loss = "logistic", lambda = 1e-3, eta = 10, epochs = 8,
               option = "A", seed = 2)
  off <- suppressWarnings(do.call(sgd_robust, c(args, step_guard = 0)))
  expect_gt(max(diff(off$trace$objective) / off$trace$objective[-8]), 0.25)
  expect_message(on <- suppressWarnings(do.call(sgd_robust, args)),
                 class = "noisylabels_message_step_guard")
  sh <- on$step_shrinks
  expect_gt(nrow(sh), 0)
  expect_equal(sh$eta_to, sh$eta_from / 2)
  expect_equal(on$eta, 10 / 2^nrow(sh))
  expect_equal(on$eta_initial, 10)
  expect_true(all(sh$objective_rejected > 1.25 * sh$objective_before))
  obj <- c(on$objective_start, on$trace$objective)
  expect_true(all(obj[-1] <= 1.25 * obj[-length(obj)] + 1e-12))
  expect_lt(on$trace$objective[8], off$trace$objective[8] / 10)
})

test_that("the smooth ramp does not collapse to a constant classifier on ijcnn1", {
  path <- shared_data_path("ijcnn1", "ijcnn1.trn.bz2")
  skip_if(is.null(path), "shared data (ijcnn1) not available")
  skip_on_cran()
  d <- read_libsvm(path, n_features = 22)
  x <- as.matrix(d$x)
  set.seed(2016)
  te <- sort(sample(nrow(x), round(nrow(x) / 5)))
  mn <- apply(x[-te, ], 2, min); rg <- apply(x[-te, ], 2, max) - mn; rg[rg == 0] <- 1
  xtr <- sweep(sweep(x[-te, ], 2, mn), 2, rg, "/")
  xte <- pmin(pmax(sweep(sweep(x[te, ], 2, mn), 2, rg, "/"), 0), 1)
  constant <- min(mean(d$y[te] == 1), mean(d$y[te] == -1))
  for (seed in 1:3) {
    fit <- suppressMessages(suppressWarnings(
      sgd_robust(xtr, d$y[-te], loss = "smooth_ramp", seed = seed)))
    err <- mean(predict(fit, xte) != d$y[te])
    expect_lt(err, constant - 0.01)
    expect_equal(fit$warm_start, "hinge")
  }
})

test_that("early stopping holds out rows, stops on a plateau and returns the best epoch", {
  dat <- sgd_toy(n = 300, d = 3, flip = 0.25)
  fit <- suppressMessages(suppressWarnings(sgd_robust(
    dat$x, dat$y, loss = "hinge", lambda = 1e-4, epochs = 60, seed = 5, control = sgd_robust_control(eta = 0.5, option = "A", n_iter_no_change = 3))))
  es <- fit$early_stopping
  hold <- es$validation_rows
  expect_length(hold, 30L)
  expect_equal(fit$n, 270L)
  expect_equal(sort(c(hold, fit$row_index)), 1:300)
  expect_setequal(label_issues(fit)$row, fit$row_index)
  expect_true(es$stopped_early)
  expect_lt(fit$iterations, 60L)
  # it stopped n_iter_no_change epochs after the best one ...
  expect_equal(fit$iterations, es$best_epoch + 3L)
  ve <- fit$trace$valid_error
  expect_equal(min(ve), ve[es$best_epoch])
  expect_true(all(ve[(es$best_epoch + 1):fit$iterations] >= ve[es$best_epoch]))
  # ... and returns the best epoch's model: its error on the held-out rows
  expect_equal(mean(predict(fit, dat$x[hold, ]) != dat$y[hold]), min(ve))
  # same seed, same split; the session's random numbers are untouched
  set.seed(99); r1 <- runif(1)
  set.seed(99)
  fit2 <- suppressMessages(suppressWarnings(sgd_robust(
    dat$x, dat$y, loss = "hinge", lambda = 1e-4, epochs = 60, seed = 5, control = sgd_robust_control(eta = 0.5, option = "A", n_iter_no_change = 3))))
  expect_equal(runif(1), r1)
  expect_identical(coef(fit2), coef(fit))
  # with x_valid the given rows are the validation data
  f3 <- suppressMessages(suppressWarnings(sgd_robust(
    dat$x[1:200, ], dat$y[1:200], x_valid = dat$x[201:300, ], y_valid = dat$y[201:300],
    loss = "hinge", epochs = 60, seed = 5, control = sgd_robust_control(eta = 0.5, option = "A", n_iter_no_change = 2))))
  expect_equal(f3$n, 200L)
  expect_equal(mean(predict(f3, dat$x[201:300, ]) != dat$y[201:300]), min(f3$trace$valid_error))
  expect_error(sgd_robust(dat$x, dat$y, control = sgd_robust_control(validation_fraction = 1.5)), class = "noisylabels_error_input")
  expect_error(sgd_robust(dat$x, dat$y, chunk_rows = 50, control = sgd_robust_control(n_iter_no_change = 2)),
               class = "noisylabels_error_input")
})

test_that("the L1 penalty gives exact zeros, O(nnz) and dense = sparse", {
  set.seed(3)
  n <- 400; d <- 12
  x <- matrix(rnorm(n * d), n, d) * (matrix(runif(n * d), n, d) < 0.5)
  y <- ifelse(2 * x[, 1] - 1.5 * x[, 2] + 0.2 * rnorm(n) > 0, 1, -1)
  for (option in c("A", "B")) for (method in c("sgd", "asgd")) {
    l1 <- suppressMessages(suppressWarnings(sgd_robust(x, y, loss = "logistic", penalty = "l1",
                                                       lambda = 0.02, epochs = 10, seed = 2, control = sgd_robust_control(eta = 0.1, option = option, method = method))))
    l2 <- suppressMessages(suppressWarnings(sgd_robust(x, y, loss = "logistic", penalty = "l2",
                                                       lambda = 0.02, epochs = 10, seed = 2, control = sgd_robust_control(eta = 0.1, option = option, method = method))))
    lab <- paste(option, method)
    expect_gte(sum(l1$weights[3:d] == 0), 6, label = lab)
    expect_true(all(l1$weights[1:2] != 0), label = lab)
    expect_equal(sum(l2$weights == 0), 0, label = lab)
    expect_gt(l1$weights[1], 0)
    expect_lt(l1$weights[2], 0)
  }
  # objective = mean loss + lambda_l1 |w|_1 (option A: the reported model is the last iterate)
  en <- suppressMessages(suppressWarnings(sgd_robust(x, y, loss = "logistic", penalty = "elasticnet",
                                                     l1_ratio = 0.5, lambda = 0.02,
                                                     epochs = 4, seed = 2, control = sgd_robust_control(eta = 0.1, option = "A"))))
  z <- y * (x %*% en$weights + en$bias)
  ref <- mean(log1p(exp(-z))) + 0.01 / 2 * (sum(en$weights^2) + en$bias^2) + 0.01 * sum(abs(en$weights))
  expect_equal(en$trace$objective[4], ref, tolerance = 1e-10)
  expect_equal(c(en$lambda_l2, en$lambda_l1), c(0.01, 0.01))
  # dense and sparse input give the same L1 fit
  xs <- Matrix::Matrix(x, sparse = TRUE)
  a <- suppressMessages(suppressWarnings(sgd_robust(x, y, penalty = "l1", lambda = 0.01, seed = 4)))
  b <- suppressMessages(suppressWarnings(sgd_robust(xs, y, penalty = "l1", lambda = 0.01, seed = 4)))
  expect_identical(coef(a), coef(b))
  # multiclass and multinomial take it too
  d3 <- sgd_toy3(n = 300)
  x3 <- cbind(d3$x, matrix(rnorm(300 * 4), 300, 4))
  for (mc in c("ovr", "multinomial")) {
    f <- suppressMessages(suppressWarnings(sgd_robust(x3, d3$y, loss = "logistic", penalty = "l1",
                                                      lambda = 0.02, multiclass = mc, seed = 1)))
    expect_gte(sum(f$weights[3:6, ] == 0), 6)
  }
  expect_error(sgd_robust(x, y, penalty = "l1", control = sgd_robust_control(method = "pegasos")), class = "noisylabels_error_input")
  expect_error(sgd_robust(x, y, l1_ratio = 2, penalty = "elasticnet"), class = "noisylabels_error_input")
})

test_that("verbose = TRUE shows a cli progress bar over the epochs; silent otherwise", {
  dat <- sgd_toy(n = 500, d = 3)
  withr::local_options(cli.progress_show_after = 0)
  out <- capture.output(f <- sgd_robust(dat$x, dat$y, loss = "hinge", epochs = 4, seed = 1,
                                   verbose = TRUE, control = sgd_robust_control(tol = 1)), type = "message")
  expect_true(any(grepl("SGD epochs", out)))
  expect_true(any(grepl("100%", out)))
  out <- capture.output(f <- sgd_robust(dat$x, dat$y, loss = "hinge", epochs = 4, seed = 1, control = sgd_robust_control(tol = 1)), type = "message")
  expect_false(any(grepl("SGD epochs", out)))
  # chunked fits tick the same bar from R
  out <- capture.output(f <- sgd_robust(dat$x, dat$y, loss = "hinge", epochs = 3, seed = 1,
                                   chunk_rows = 200, verbose = TRUE, control = sgd_robust_control(tol = 1)), type = "message")
  expect_true(any(grepl("SGD epochs", out)))
})
