# The contract every fit of the package keeps: the parent class
# noisylabels_fit, what it records for the issues layer (task, has_p_wrong),
# and one find_label_issues() method for all of them.

contract_fits <- function() {
  set.seed(31)
  x1 <- matrix(seq(0, 1, length.out = 40))
  yr <- sin(6 * x1[, 1]) + rnorm(40, sd = 0.1)
  yr[c(5, 20)] <- yr[c(5, 20)] + 3
  x2 <- matrix(rnorm(160), 80, 2)
  yb <- ifelse(x2[, 1] + x2[, 2] > 0, "a", "b")
  yb[1:4] <- ifelse(yb[1:4] == "a", "b", "a")
  y3 <- factor(ifelse(x2[, 1] > 0.5, "a", ifelse(x2[, 2] > 0, "b", "c")))
  xv <- matrix(runif(600), 300, 2)
  yv <- sin(5 * xv[, 1]) + xv[, 2] + rnorm(300, sd = 0.1)
  sim <- sim_label_dist(U = 40, N = 120, group_size = 10, alpha_c1 = 100, alpha_s = 100)
  list(
    gpr_loo = gpr_loo(x1, yr),
    gpr_loo_vecchia = suppressWarnings(gpr_loo(xv, yv, approx = "vecchia", neighbors = 10)),
    gpr_pursuit = gpr_pursuit(x1, yr, n_outliers = 0:3),
    gpr_baseline = gpr_baseline(x1, yr),
    gpc_ep = gpc_ep(x2, yb),
    gpc_ep_ovr = gpc_ep(x2, y3, multiclass = "ovr"),
    gpc_ep_sparse = gpc_ep(x2, yb, approx = "sparse", inducing = 10),
    sgd_robust = sgd_robust(x2, yb, loss = "gompertz", lambda = 1e-3),
    sgd_robust_multiclass = sgd_robust(x2, y3, loss = "smooth_ramp", lambda = 1e-3),
    label_dist_vb = suppressWarnings(label_dist_vb(sim$x, sim$groups, sim$label_dist,
                                                   alpha_s = 100, alpha_c1 = 100)),
    label_dist_baseline = label_dist_baseline(sim$x, sim$groups, sim$label_dist),
    cv_gpr_loo = cv_gpr_loo(x1, yr, lambda = c(0, 3), folds = 3, restarts = 1)$fit,
    cv_sgd_robust = cv_sgd_robust(x2, yb, loss = "hinge", lambda = c(1e-4, 1e-2), folds = 3,
                                  epochs = 3)$fit
  )
}

test_that("every fit has the parent class and records its task and p_wrong", {
  fits <- contract_fits()
  regression <- c("gpr_loo", "gpr_loo_vecchia", "gpr_pursuit", "gpr_baseline", "cv_gpr_loo")
  for (nm in names(fits)) {
    fit <- fits[[nm]]
    expect_true(inherits(fit, "noisylabels_fit"), info = nm)
    expect_identical(class(fit)[length(class(fit))], "noisylabels_fit", info = nm)
    expect_identical(fit$task, if (nm %in% regression) "regression" else "classification", info = nm)
    expect_true(is.logical(fit$has_p_wrong) && length(fit$has_p_wrong) == 1L, info = nm)
    # has_p_wrong is exactly "label_issues() gives p_wrong"
    li <- tryCatch(label_issues(fit), noisylabels_error_no_method = function(e) NULL)
    if (is.null(li)) {
      expect_false(fit$has_p_wrong, info = nm)
    } else {
      expect_identical(fit$has_p_wrong, !all(is.na(li$p_wrong)), info = nm)
    }
  }
})

test_that("one find_label_issues() method serves every fit with label issues", {
  fits <- contract_fits()
  for (nm in setdiff(names(fits), "label_dist_baseline")) {
    fit <- fits[[nm]]
    res <- find_label_issues(fit)
    expect_s3_class(res, "find_label_issues")
    expect_identical(res$task, fit$task, info = nm)
    li <- label_issues(fit)
    expect_setequal(res$label_issues$row, li$row)
    # the same call through `method =` gives the same table
    expect_identical(find_label_issues(method = fit)$label_issues, res$label_issues, info = nm)
    if (fit$has_p_wrong) {
      expect_false(is.null(res$wrong_count), info = nm)
    } else {
      expect_identical(res$label_issues$flagged[order(res$label_issues$row)],
                       li$flagged[order(li$row)], info = nm)
    }
  }
  expect_error(find_label_issues(fits$label_dist_baseline), class = "noisylabels_error_no_method")
  expect_error(find_label_issues(fits$sgd_robust, tolerance = 0.1), class = "noisylabels_error_tolerance")
  res <- find_label_issues(fits$gpc_ep)
  expect_error(find_label_issues(res), class = "noisylabels_error_no_method")
  expect_false(inherits(res, "noisylabels_fit"))
})

test_that("a fit edited by hand is refused by the parent's check", {
  fit <- gpr_loo(matrix(seq(0, 1, length.out = 20)), sin(seq(0, 6, length.out = 20)))
  bad <- fit
  bad$task <- "ranking"
  expect_error(find_label_issues(bad), class = "noisylabels_error_object")
  bad <- fit
  bad$has_p_wrong <- NA
  expect_error(find_label_issues(bad), class = "noisylabels_error_object")
})

test_that("predictive_loglik() is a generic with methods for the GP regressions", {
  set.seed(4)
  s <- sim_friedman(50)
  t <- sim_friedman(20)
  b <- gpr_baseline(s$x, s$y)
  p <- predict(b, t$x, se.fit = TRUE)
  # the Gaussian predictive density, computed here from predict()
  expect_equal(predictive_loglik(b, t$x, t$y), mean(dnorm(t$y, p$fit, p$sd, log = TRUE)))
  expect_error(predictive_loglik(sgd_robust(s$x, s$y > median(s$y)), t$x, t$y),
               class = "noisylabels_error_no_method")
})
