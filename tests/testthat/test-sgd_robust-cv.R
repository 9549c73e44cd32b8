test_that("cross-validation picks lambda and s from the grid and refits", {
  dat <- sgd_toy(n = 150, d = 2, flip = 0.1)
  set.seed(1)
  cv <- cv_sgd_robust(dat$x, dat$y, loss = "smooth_ramp", lambda = c(1e-4, 1e-1), s = c(-1, -2),
                      folds = 3, epochs = 3, control = sgd_robust_control(tol = 0.05))
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
  expect_error(cv_sgd_robust(label ~ ., data = df), class = "noisylabels_error_input", regexp = "missing values")
})

test_that("autoplot() of cv_sgd_robust() draws one CV curve per s with the choice circled", {
  skip_if_not_installed("ggplot2")
  dat <- sgd_toy(n = 90, d = 3, flip = 0.1)
  cv <- suppressWarnings(cv_sgd_robust(dat$x, dat$y, folds = 3, lambda = c(1e-4, 1e-2),
                                       seed = 2, control = sgd_robust_control(eta = 0.1)))
  p <- ggplot2::autoplot(cv)
  b <- ggplot2::ggplot_build(p)
  expect_equal(sort(b$data[[3]]$y), sort(cv$results$mean_error))
  expect_equal(length(unique(b$data[[3]]$colour)), length(unique(cv$results$s)))
  best <- cv$results$mean_error[cv$results$lambda == cv$best$lambda & cv$results$s == cv$best$s]
  expect_equal(b$data[[4]]$y, best)
  expect_s3_class(ggplot2::autoplot(cv, which = "fit"), "ggplot")
})

test_that("cv_sgd_robust() reads LIBSVM files and gives the in-memory answer", {
  dat <- sgd_toy(n = 90, d = 3, flip = 0.1)
  path <- write_libsvm_test(dat$x, dat$y, tempfile(fileext = ".svm"))
  set.seed(4)
  cv_file <- suppressWarnings(cv_sgd_robust(path, loss = "hinge", lambda = c(1e-4, 1e-2),
                                            folds = 3, epochs = 2, seed = 1))
  set.seed(4)
  cv_mem <- suppressWarnings(cv_sgd_robust(Matrix::Matrix(dat$x, sparse = TRUE), dat$y,
                                           loss = "hinge", lambda = c(1e-4, 1e-2), folds = 3,
                                           epochs = 2, seed = 1))
  expect_equal(cv_file$results, cv_mem$results)
  expect_equal(coef(cv_file), coef(cv_mem))
  expect_error(cv_sgd_robust(path, dat$y), class = "noisylabels_error_input")
})

test_that("cv_sgd_robust(weights = ) gives each fold the weights of its rows", {
  dat <- sgd_toy(n = 90, d = 3, flip = 0.1)
  w <- rep(c(0.5, 1, 2), 30)
  set.seed(9)
  cv <- suppressWarnings(cv_sgd_robust(dat$x, dat$y, loss = "hinge", lambda = 1e-3, folds = 3,
                                       epochs = 2, weights = w, control = sgd_robust_control(eta = 0.1)))
  # the same folds and fold seeds by hand
  set.seed(9)
  fold_id <- sample(rep_len(1:3, 90))
  seeds <- vapply(1:3, function(k) as.integer(stats::runif(1, 0, .Machine$integer.max)), 1L)
  expect_equal(cv$folds, fold_id)
  errs <- vapply(1:3, function(k) {
    test <- fold_id == k
    # cv_sgd_robust() fits with sgd_robust()'s own default (standardize = TRUE)
    fit <- suppressWarnings(noisylabels::sgd_robust(dat$x[!test, ], dat$y[!test], loss = "hinge", lambda = 1e-3,
                                       epochs = 2, seed = seeds[k], weights = w[!test], control = sgd_robust_control(eta = 0.1)))
    stats::weighted.mean(predict(fit, dat$x[test, ]) != dat$y[test], w[test])
  }, 0)
  expect_equal(cv$results$mean_error, mean(errs))
  expect_equal(cv$fit$case_weights, w / mean(w))  # normalised to mean 1
  # weights of 1 are no weights
  set.seed(9)
  ones <- suppressWarnings(cv_sgd_robust(dat$x, dat$y, loss = "hinge", lambda = 1e-3, folds = 3,
                                         epochs = 2, weights = rep(1, 90), control = sgd_robust_control(eta = 0.1)))
  set.seed(9)
  none <- suppressWarnings(cv_sgd_robust(dat$x, dat$y, loss = "hinge", lambda = 1e-3, folds = 3,
                                         epochs = 2, control = sgd_robust_control(eta = 0.1)))
  expect_equal(ones$results, none$results)
  expect_error(cv_sgd_robust(dat$x, dat$y, weights = 1:3), class = "noisylabels_error_weights")
})
