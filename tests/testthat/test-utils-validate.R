# Methods of fitted classes validate their object (R/utils-validate.R).

test_that("a foreign or modified fit is a classed error naming the part, a valid one passes", {
  set.seed(2)
  x <- matrix(stats::runif(40), 20, 2)
  y <- factor(ifelse(x[, 1] > 0.5, "a", "b"))
  fit <- suppressWarnings(sgd_robust(x, y, epochs = 2, control = sgd_robust_control(eta = 0.1)))
  expect_silent(noisylabels:::check_fit(fit, "sgd_robust"))
  foreign <- structure(list(weights = 1), class = "sgd_robust")
  expect_error(predict(foreign, x), class = "noisylabels_error_object", regexp = "missing")
  expect_error(predict.sgd_robust(list(), x), class = "noisylabels_error_object",
               regexp = "made by `sgd_robust()`", fixed = TRUE)
  no_weights <- fit
  no_weights$weights <- NULL
  expect_error(coef(no_weights), class = "noisylabels_error_object", regexp = "weights")
  nan_weights <- fit
  nan_weights$weights[1] <- NaN
  expect_error(label_issues(nan_weights), class = "noisylabels_error_object", regexp = "weights")
  text_n <- fit
  text_n$n <- "twenty"
  expect_error(print(text_n), class = "noisylabels_error_object", regexp = "`n`|n ")
})

test_that("per-row parts must have one value per training row; cv objects check their refit", {
  set.seed(3)
  x <- matrix(stats::runif(40), 20, 2)
  cls <- factor(ifelse(x[, 1] > 0.5, "a", "b"))
  ep <- gpc_ep(x, cls, learn_kernel = FALSE)
  short <- ep
  short$flip_prob <- short$flip_prob[-1]
  expect_error(noise_scores(short), class = "noisylabels_error_object", regexp = "flip_prob")
  cls3 <- factor(rep(c("a", "b", "c"), length.out = 20))
  ovr <- suppressWarnings(suppressMessages(gpc_ep(x, cls3, multiclass = "ovr", learn_kernel = FALSE)))
  two <- ovr
  two$fits <- two$fits[1:2]
  expect_error(predict(two, x), class = "noisylabels_error_object", regexp = "2 fits for 3 classes")
  cv <- suppressWarnings(cv_sgd_robust(x, cls, loss = "hinge", lambda = 1e-3, folds = 2, epochs = 2, control = sgd_robust_control(eta = 0.1)))
  broken <- cv
  broken$fit$bias <- NULL
  expect_error(predict(broken, x), class = "noisylabels_error_object", regexp = "bias")
  expect_equal(predict(cv, x), predict(cv$fit, x))
})
