# Each adapter must give exactly the bare-vector result on the same
# out-of-fold predictions. The comparison leaves out what says where the
# predictions came from (method, call, time).
same_result <- function(a, b) {
  drop <- c("method", "call", "time")
  expect_identical(unclass(a)[setdiff(names(a), drop)], unclass(b)[setdiff(names(b), drop)])
}

# tools/run-check.sh (CI) installs every adapter's package
# (tools/install-deps.sh) and sets NOISYLABELS_REQUIRE_ADAPTERS=true: there a
# missing one is a failure, not a skip.
need_pkg <- function(pkg) {
  if (identical(Sys.getenv("NOISYLABELS_REQUIRE_ADAPTERS"), "true") &&
      !requireNamespace(pkg, quietly = TRUE)) {
    fail(sprintf("%s is not installed (tools/install-deps.sh installs it)", pkg))
  }
  skip_if_not_installed(pkg)
}

test_that("caret: train() with saved predictions, classes and numbers", {
  # caret's dependencies ask timedatectl for the time zone when loading
  # (need_pkg() loads it).
  withr::local_envvar(TZ = "UTC")
  need_pkg("caret")
  suppressWarnings(loadNamespace("caret"))
  need_pkg("MASS")
  set.seed(1)
  d <- iris
  d$Species[c(5, 60, 110)] <- c("virginica", "setosa", "versicolor")
  ctrl <- caret::trainControl(method = "cv", number = 5, savePredictions = "final", classProbs = TRUE)
  fit <- caret::train(Species ~ ., data = d, method = "lda", trControl = ctrl)
  res <- find_label_issues(fit)
  pr <- fit$pred[order(fit$pred$rowIndex), ]
  probs <- as.matrix(pr[levels(d$Species)])
  rownames(probs) <- NULL
  bare <- find_label_issues(labels = d$Species, pred_probs = probs)
  same_result(res, bare)
  expect_match(res$method, "caret train (lda, cv)", fixed = TRUE)
  expect_true(all(c(5, 60, 110) %in% res$label_issues$row[res$label_issues$flagged]))

  fit_r <- caret::train(Sepal.Length ~ ., data = d[1:4], method = "lm",
                        trControl = caret::trainControl(method = "cv", number = 5, savePredictions = "final"))
  pr <- fit_r$pred[order(fit_r$pred$rowIndex), ]
  same_result(find_label_issues(fit_r), find_label_issues(labels = d$Sepal.Length, predictions = pr$pred))
})

test_that("caret: repeated resamples are averaged; unsaved predictions are a classed error", {
  need_pkg("caret")
  set.seed(2)
  ctrl <- caret::trainControl(method = "repeatedcv", number = 3, repeats = 2, savePredictions = "final")
  fit <- caret::train(Sepal.Length ~ ., data = iris[1:4], method = "lm", trControl = ctrl)
  avg <- tapply(fit$pred$pred, fit$pred$rowIndex, mean)
  same_result(find_label_issues(fit), find_label_issues(labels = iris$Sepal.Length, predictions = as.vector(avg)))
  nosave <- caret::train(Sepal.Length ~ ., data = iris[1:4], method = "lm",
                         trControl = caret::trainControl(method = "cv", number = 3))
  expect_error(find_label_issues(nosave), "savePredictions", class = "noisylabels_error_input")
  noprob <- caret::train(Species ~ ., data = iris, method = "lda",
                         trControl = caret::trainControl(method = "cv", number = 3, savePredictions = "final"))
  expect_error(find_label_issues(noprob), "classProbs", class = "noisylabels_error_input")
})

test_that("mlr3: ResampleResult, classes and numbers", {
  need_pkg("mlr3")
  lg <- lgr::get_logger("mlr3")
  old <- lg$threshold
  lg$set_threshold("warn")
  withr::defer(lg$set_threshold(old))
  set.seed(3)
  task <- mlr3::tsk("iris")
  learner <- mlr3::lrn("classif.rpart", predict_type = "prob")
  rr <- mlr3::resample(task, learner, mlr3::rsmp("cv", folds = 5))
  res <- find_label_issues(rr)
  pred <- rr$prediction()
  probs <- pred$prob[order(pred$row_ids), ]
  same_result(res, find_label_issues(labels = task$truth(), pred_probs = probs))
  expect_match(res$method, "mlr3 resample", fixed = TRUE)

  rr_resp <- mlr3::resample(task, mlr3::lrn("classif.rpart"), mlr3::rsmp("cv", folds = 3))
  expect_error(find_label_issues(rr_resp), "predict_type", class = "noisylabels_error_input")

  treg <- mlr3::tsk("mtcars")
  rr2 <- mlr3::resample(treg, mlr3::lrn("regr.rpart"), mlr3::rsmp("cv", folds = 4))
  p2 <- rr2$prediction()
  same_result(find_label_issues(rr2),
              find_label_issues(labels = treg$truth(), predictions = p2$response[order(p2$row_ids)]))
  rr3 <- mlr3::resample(treg, mlr3::lrn("regr.rpart"), mlr3::rsmp("holdout"))
  expect_error(find_label_issues(rr3), "never in an assessment set", class = "noisylabels_error_input")
})

test_that("tidymodels: fit_resamples() with save_pred = TRUE", {
  need_pkg("tune")
  need_pkg("parsnip")
  need_pkg("rsample")
  need_pkg("workflows")
  set.seed(4)
  folds <- rsample::vfold_cv(iris, v = 5)
  spec <- parsnip::set_engine(parsnip::multinom_reg(), "nnet")
  need_pkg("nnet")
  ctrl <- tune::control_resamples(save_pred = TRUE)
  rs <- tune::fit_resamples(spec, Species ~ ., resamples = folds, control = ctrl)
  res <- find_label_issues(rs)
  pr <- tune::collect_predictions(rs)
  pr <- pr[order(pr$.row), ]
  probs <- as.matrix(pr[paste0(".pred_", levels(iris$Species))])
  colnames(probs) <- levels(iris$Species)
  same_result(res, find_label_issues(labels = iris$Species, pred_probs = probs))

  lm_spec <- parsnip::linear_reg()
  rs2 <- tune::fit_resamples(lm_spec, Sepal.Length ~ ., resamples = folds, control = ctrl)
  pr2 <- tune::collect_predictions(rs2)
  same_result(find_label_issues(rs2),
              find_label_issues(labels = iris$Sepal.Length, predictions = pr2$.pred[order(pr2$.row)]))
  nosave <- tune::fit_resamples(lm_spec, Sepal.Length ~ ., resamples = folds)
  expect_error(find_label_issues(nosave), "save_pred", class = "noisylabels_error_input")
})
