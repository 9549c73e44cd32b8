# The parent class of every fit (new_noisylabels_fit(), R/generics.R) and
# what find_label_issues() reads of it (R/issues-fit.R): each fit class
# records its task and whether its label_issues() carry p_wrong, and
# find_label_issues() takes any fit through one method.

contract_fits_make <- function() {
  q <- function(expr) suppressWarnings(suppressMessages(expr))
  set.seed(44)
  n <- 40
  x1 <- matrix(seq(0, 1, length.out = n), n)
  yr <- sin(6 * x1[, 1]) + rnorm(n, sd = 0.1)
  yr[c(5, 20)] <- yr[c(5, 20)] + 2
  xv <- matrix(runif(300), 150, 2)
  yv <- sin(5 * xv[, 1]) + xv[, 2] + rnorm(150, sd = 0.1)
  yv[1:5] <- yv[1:5] + 2
  xc <- matrix(rnorm(120), 60, 2)
  yc <- factor(ifelse(xc[, 1] + xc[, 2] > 0, "a", "b"))
  yc[1:4] <- ifelse(yc[1:4] == "a", "b", "a")
  y3 <- factor(ifelse(xc[, 1] > 0.5, "a", ifelse(xc[, 2] > 0, "b", "c")))
  sim <- sim_label_dist(U = 40, N = 120, group_size = 10, alpha_c1 = 100, alpha_s = 100)
  list(
    gpr_loo = list(fit = q(gpr_loo(x1, yr)), task = "regression", p = TRUE),
    gpr_loo_vecchia = list(fit = q(gpr_loo(xv, yv, approx = "vecchia", neighbors = 10)),
                           task = "regression", p = TRUE),
    gpr_pursuit = list(fit = q(gpr_pursuit(x1, yr, direction = "forward", n_outliers = 0:3)),
                       task = "regression", p = TRUE),
    gpc_ep = list(fit = q(gpc_ep(xc, yc, learn_kernel = FALSE)), task = "classification", p = TRUE),
    gpc_ep_ovr = list(fit = q(gpc_ep(xc, y3, multiclass = "ovr", learn_kernel = FALSE)),
                      task = "classification", p = TRUE),
    gpc_ep_sparse = list(fit = q(gpc_ep(xc, yc, approx = "sparse", inducing = 15, learn_kernel = FALSE)),
                         task = "classification", p = TRUE),
    sgd_robust = list(fit = q(sgd_robust(xc, yc, loss = "gompertz", lambda = 1e-3, epochs = 5)),
                      task = "classification", p = FALSE),
    sgd_robust_multiclass = list(fit = q(sgd_robust(xc, y3, loss = "smooth_ramp", lambda = 1e-3,
                                                    epochs = 5)),
                                 task = "classification", p = FALSE),
    label_dist_vb = list(fit = q(label_dist_vb(sim$x, sim$groups, sim$label_dist, alpha_s = 100,
                                               alpha_c1 = 100)),
                         task = "classification", p = FALSE),
    gpr_baseline = list(fit = q(gpr_baseline(x1, yr)), task = "regression", p = TRUE),
    gpr_baseline_trimmed = list(fit = q(gpr_baseline(x1, yr, "trimmed", trim = 0.1)),
                                task = "regression", p = TRUE),
    cv_gpr_loo = list(fit = q(cv_gpr_loo(x1, yr, lambda = c(0, 3), folds = 2, restarts = 1))$fit,
                      task = "regression", p = TRUE),
    cv_sgd_robust = list(fit = q(cv_sgd_robust(xc, yc, loss = "hinge", lambda = c(1e-3, 1e-2),
                                               folds = 2, epochs = 3))$fit,
                         task = "classification", p = FALSE),
    label_dist_baseline = list(fit = label_dist_baseline(sim$x, sim$groups, sim$label_dist),
                               task = "classification", p = FALSE, refused = TRUE)
  )
}

# Made once for the file (the fits are small, but there are fourteen).
contract_fits <- local({
  cache <- NULL
  function() {
    if (is.null(cache)) cache <<- contract_fits_make()
    cache
  }
})

test_that("every fit has the parent class, its task and whether it has p_wrong", {
  fits <- contract_fits()
  for (nm in names(fits)) {
    case <- fits[[nm]]
    fit <- case$fit
    expect_true(inherits(fit, "noisylabels_fit"), label = nm)
    expect_identical(class(fit)[length(class(fit))], "noisylabels_fit", label = nm)
    expect_identical(fit$task, case$task, label = nm)
    expect_identical(fit$has_p_wrong, case$p, label = nm)
    if (isTRUE(case$refused)) next
    li <- label_issues(fit)
    # has_p_wrong says whether label_issues() give a probability per label
    expect_identical(!all(is.na(li$p_wrong)), fit$has_p_wrong, label = nm)
    if (fit$has_p_wrong) expect_true(all(li$p_wrong >= 0 & li$p_wrong <= 1), label = nm)
  }
})

test_that("find_label_issues() takes every fit, as x or as method, with the fit's own flags", {
  fits <- contract_fits()
  for (nm in names(fits)) {
    case <- fits[[nm]]
    fit <- case$fit
    if (isTRUE(case$refused)) {
      expect_error(find_label_issues(fit), class = "noisylabels_error_no_method")
      expect_error(find_label_issues(method = fit), class = "noisylabels_error_no_method")
      expect_error(label_issues(fit), class = "noisylabels_error_no_method")
      expect_error(noise_scores(fit), class = "noisylabels_error_no_method")
      next
    }
    li <- if (fit$has_p_wrong) label_issues(fit, fdr = 0.1) else label_issues(fit)
    r <- find_label_issues(fit)
    expect_s3_class(r, c("find_label_issues", "noisylabels_result"), exact = TRUE)
    expect_false(inherits(r, "noisylabels_fit"))
    expect_identical(r$task, fit$task, label = nm)
    expect_identical(nrow(r$label_issues), nrow(li), label = nm)
    # the same labels flagged, row for row, as the fit's own label_issues()
    by_row <- function(t) t$flagged[order(t$row)]
    expect_identical(by_row(r$label_issues), by_row(li), label = nm)
    if (fit$has_p_wrong) {
      expect_equal(r$wrong_count$estimate, sum(li$p_wrong), label = nm)
      expect_identical(r$fdr, 0.1)
    } else {
      expect_null(r$wrong_count)
      expect_identical(r$estimated_issues, sum(li$flagged), label = nm)
    }
    # method = fit is the same call
    via <- find_label_issues(method = fit)
    expect_identical(via$label_issues, r$label_issues, label = nm)
    # n_issues flags the n_issues highest scores
    top <- find_label_issues(fit, n_issues = 3)
    expect_identical(sum(top$label_issues$flagged), 3L, label = nm)
    expect_true(all(top$label_issues$flagged[1:3]), label = nm)
    # tolerance: numeric labels with p_wrong only
    if (fit$task == "regression" && fit$has_p_wrong) {
      tol <- find_label_issues(fit, tolerance = Inf)
      expect_false(any(tol$label_issues$flagged), label = nm)
    } else {
      expect_error(find_label_issues(fit, tolerance = 0.1), class = "noisylabels_error_tolerance")
    }
  }
})

test_that("a result is not a fit, and a broken parent is a classed error", {
  fits <- contract_fits()
  fit <- fits$gpc_ep$fit
  r <- find_label_issues(fit)
  expect_error(find_label_issues(r), class = "noisylabels_error_no_method")
  expect_error(find_label_issues(fit, threshold = 0.5), class = "noisylabels_error_unknown_argument")
  expect_error(find_label_issues(fit, n_issues = -1), class = "noisylabels_error_input")
  bad_task <- fit
  bad_task$task <- "ranking"
  expect_error(find_label_issues(bad_task), class = "noisylabels_error_object", regexp = "task")
  no_flag <- fit
  no_flag$has_p_wrong <- NULL
  expect_error(find_label_issues(no_flag), class = "noisylabels_error_object",
               regexp = "has_p_wrong")
  # the parent check goes on to the fit's own parts
  no_flip <- fit
  no_flip$flip_prob <- NULL
  expect_error(find_label_issues(no_flip), class = "noisylabels_error_object", regexp = "flip_prob")
  hand <- structure(list(task = "regression", has_p_wrong = TRUE), class = c("gpr_loo", "noisylabels_fit"))
  expect_error(find_label_issues(hand), class = "noisylabels_error_object", regexp = "missing")
})

test_that("predictive_loglik() is a generic with a classed error for other objects", {
  fits <- contract_fits()
  p <- fits$gpr_pursuit$fit
  xt <- matrix(c(0.1, 0.45, 0.8), 3)
  yt <- sin(6 * xt[, 1])
  pr <- predict(p, xt, se.fit = TRUE)
  expect_equal(predictive_loglik(p, xt, yt), mean(dnorm(yt, pr$fit, pr$sd, log = TRUE)))
  expect_error(predictive_loglik(fits$gpr_loo$fit, xt, yt), class = "noisylabels_error_no_method")
  expect_error(predictive_loglik(list(), xt, yt), class = "noisylabels_error_no_method")
  expect_error(predictive_loglik(p, xt, yt[1:2]), class = "noisylabels_error_input")
})
