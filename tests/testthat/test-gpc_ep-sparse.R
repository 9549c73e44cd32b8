# Sparse (FITC) EP: oracle tests against dense EP and finite differences,
# eps recovery, the approx/inducing plumbing and bad input.

ns <- asNamespace("noisylabels")

sparse_case <- function(n = 40, seed = 1) {
  set.seed(seed)
  x <- matrix(rnorm(n * 2), n)
  y <- ifelse(x[, 1] + 0.5 * x[, 2] > 0, 1, -1)
  y[1:3] <- -y[1:3]
  k <- gp_kernel("mixed", ard = TRUE, variance = 2, bias = 0.1, nugget = 1, fixed = "nugget")
  k <- ns$kernel_resolve(k, x)
  fl <- ns$kernel_flatten(k)
  list(x = x, y = y, kernel = k, log_par = fl$log_par, spec = ns$kernel_spec(k, fl$log_par))
}

tight_ep <- function(schedule = "sequential", clamp = FALSE) {
  list(max_sweeps = 1000L, min_sweeps = 2L, tol_logz = 1e-12, tol_site = 1e-10,
       damping = if (schedule == "parallel") 0.8 else 1, clamp = clamp, schedule = schedule,
       block_size = 64L, refresh_every = 1L, joint_epsilon = TRUE)
}

test_that("sparse EP with Z = X equals dense EP (sites, log Z, gradient) to 1e-6", {
  d <- sparse_case()
  for (case in list(list(eps = 0.05, sigma = 0, clamp = FALSE),
                    list(eps = 0.1, sigma = 0, clamp = TRUE),
                    list(eps = 0.02, sigma = 1, clamp = FALSE))) {
    ep <- tight_ep(clamp = case$clamp)
    dense <- hook("gpc_ep_run_k", .kernel_gram(d$x, d$spec), d$y, case$eps, case$sigma, ep, 1)
    dgrad <- hook("gpc_ep_gradient", d$x, d$y, d$spec, case$eps, case$sigma, ep, 1)
    sp <- hook("gpc_ep_sparse_run", d$x, d$x, d$y, d$spec, case$eps, case$sigma, ep, 1, TRUE)
    expect_true(sp$proper)
    expect_equal(sp$kuu_jitter, 0)
    expect_lt(max(abs(sp$site_tau - dense$site_tau)), 1e-6)
    expect_lt(max(abs(sp$site_nu - dense$site_nu)), 1e-6)
    expect_lt(max(abs(sp$var - dense$var)), 1e-6)
    expect_lt(abs(sp$log_z - dense$log_z), 1e-6)
    expect_lt(max(abs(sp$gradient - dgrad$gradient)), 1e-6)
    expect_lt(abs(sp$dlogz_deps_sum - dgrad$dlogz_deps), 1e-6)
  }
  # the parallel schedule reaches the same fixed point
  sp <- hook("gpc_ep_sparse_run", d$x, d$x, d$y, d$spec, 0.05, 0, tight_ep("parallel"), 1, TRUE)
  dense <- hook("gpc_ep_run_k", .kernel_gram(d$x, d$spec), d$y, 0.05, 0, tight_ep(), 1)
  expect_lt(max(abs(sp$site_tau - dense$site_tau)), 1e-6)
  expect_lt(abs(sp$log_z - dense$log_z), 1e-6)
})

test_that("the sparse evidence gradient matches finite differences with m < n", {
  d <- sparse_case(n = 50, seed = 2)
  z <- d$x[c(3, 8, 15, 21, 30, 33, 41, 47), ]
  ep <- tight_ep()
  logz <- function(lp) {
    hook("gpc_ep_sparse_run", d$x, z, d$y, ns$kernel_spec(d$kernel, lp), 0.05, 0, ep, 1, FALSE)$log_z
  }
  g <- hook("gpc_ep_sparse_run", d$x, z, d$y, d$spec, 0.05, 0, ep, 1, TRUE)$gradient
  h <- 1e-5
  fd <- vapply(seq_along(d$log_par), function(j) {
    e <- replace(numeric(length(d$log_par)), j, h)
    (logz(d$log_par + e) - logz(d$log_par - e)) / (2 * h)
  }, numeric(1))
  expect_equal(g, fd, tolerance = 1e-5)
  # and the FITC evidence differs from the dense one (the test can fail)
  dense <- hook("gpc_ep_run_k", .kernel_gram(d$x, d$spec), d$y, 0.05, 0, ep, 1)
  expect_gt(abs(logz(d$log_par) - dense$log_z), 1e-3)
})

test_that("the evidence gradient in a categorical precision matches finite differences", {
  # two continuous inputs and a 3-level code compared by equality (mixed ARD)
  set.seed(4)
  n <- 60
  x <- cbind(matrix(rnorm(2 * n), n), sample(1:3, n, replace = TRUE))
  y <- ifelse(x[, 1] + 0.5 * x[, 2] + c(-0.8, 0, 0.8)[x[, 3]] > 0, 1, -1)
  y[1:4] <- -y[1:4]
  k <- gp_kernel("mixed", ard = TRUE, variance = 2, bias = 0.1, nugget = 1,
                 precision = c(0.5, 0.8, 1.5), categorical = 3, fixed = "nugget")
  k <- ns$kernel_resolve(k, x)
  lp <- ns$kernel_flatten(k)$log_par
  z <- x[seq(2, n, by = 6), ]
  ep <- tight_ep()
  run <- function(p, grad = FALSE) {
    hook("gpc_ep_sparse_run", x, z, y, ns$kernel_spec(k, p), 0.05, 0, ep, 1, grad)
  }
  g <- run(lp, TRUE)$gradient
  h <- 1e-5
  fd <- vapply(seq_along(lp), function(j) {
    e <- replace(numeric(length(lp)), j, h)
    (run(lp + e)$log_z - run(lp - e)$log_z) / (2 * h)
  }, numeric(1))
  expect_equal(g, fd, tolerance = 1e-5)
  # the categorical precision is the last parameter and moves log Z_EP
  expect_gt(abs(fd[length(fd)]), 1e-3)
})

test_that("sparse sweeps that hand M to the refresh give the exact refresh's iterates", {
  # refresh_every = 1 rebuilds M from U and the sites after every sweep; 0
  # never does within a run (M updated block by block over all sweeps), 10
  # every tenth sweep. 200 sites in blocks of 15 (m = 30), a fixed number
  # of sweeps, epsilon large enough for negative site precisions.
  set.seed(5)
  n <- 200
  x <- matrix(rnorm(2 * n), n)
  y <- ifelse(sin(2 * x[, 1]) + x[, 2] > 0, 1, -1)
  y[1:30] <- -y[1:30]
  k <- ns$kernel_resolve(gp_kernel("mixed", ard = TRUE, variance = 4, bias = 0.1, nugget = 1,
                                   fixed = "nugget"), x)
  spec <- ns$kernel_spec(k, ns$kernel_flatten(k)$log_par)
  z <- x[seq(1, n, length.out = 30), ]
  ep <- function(re) modifyList(tight_ep(), list(min_sweeps = 25L, max_sweeps = 25L,
                                                 refresh_every = re))
  for (eps in c(0.02, 0.2)) {
    ref <- hook("gpc_ep_sparse_run", x, z, y, spec, eps, 0, ep(1L), 7, FALSE)
    expect_true(ref$proper)
    expect_equal(ref$sweeps, 25L)
    for (re in c(0L, 10L)) {
      fa <- hook("gpc_ep_sparse_run", x, z, y, spec, eps, 0, ep(re), 7, FALSE)
      lab <- sprintf("eps = %g, refresh_every = %d", eps, re)
      expect_lt(max(abs(fa$site_tau - ref$site_tau)), 1e-10, label = lab)
      expect_lt(max(abs(fa$site_nu - ref$site_nu)), 1e-10, label = lab)
      expect_lt(max(abs(fa$var - ref$var)), 1e-10, label = lab)
      expect_lt(abs(fa$log_z - ref$log_z), 1e-9, label = lab)
    }
  }
  # the case has negative site precisions (the sign split of the M updates)
  expect_true(any(hook("gpc_ep_sparse_run", x, z, y, spec, 0.2, 0, ep(1L), 7, FALSE)$site_tau < 0))
})

test_that("sparse predictions with Z = X equal dense ones; fits agree end to end", {
  d <- sparse_case(n = 60, seed = 3)
  yy <- factor(d$y)
  ctl <- gpc_ep_control(tol_logz = 1e-12, tol_site = 1e-10, max_sweeps = 1000)
  fd <- gpc_ep(d$x, yy, kernel = d$kernel, epsilon = 0.05, learn_kernel = FALSE,
               approx = "dense", control = ctl)
  fs <- gpc_ep(d$x, yy, kernel = d$kernel, epsilon = 0.05, learn_kernel = FALSE,
               approx = "sparse", inducing = d$x, control = ctl)
  expect_identical(fs$approx, "sparse")
  expect_identical(fd$approx, "dense")
  expect_lt(abs(fs$log_z - fd$log_z), 1e-6)
  xn <- matrix(rnorm(20), 10)
  pd <- predict(fd, xn, type = "link", se.fit = TRUE)
  ps <- predict(fs, xn, type = "link", se.fit = TRUE)
  expect_lt(max(abs(ps$fit - pd$fit)), 1e-6)
  expect_lt(max(abs(ps$se.fit - pd$se.fit)), 1e-6)
  expect_lt(max(abs(predict(fs, type = "prob") - predict(fd, type = "prob"))), 1e-6)
  # learning epsilon and the kernel: the same optimum (the sparse path skips
  # EP re-runs at points just computed, so the iterates differ by EP's
  # tolerance)
  fd <- gpc_ep(d$x, yy, approx = "dense")
  fs <- gpc_ep(d$x, yy, approx = "sparse", inducing = nrow(d$x))
  expect_identical(fs$inducing_rule, "all training inputs")
  expect_equal(fs$epsilon, fd$epsilon, tolerance = 1e-3)
  expect_equal(fs$log_z, fd$log_z, tolerance = 1e-4)
  # both paths report the hyperparameters of every outer iteration
  expect_equal(dim(fs$par_trace), c(nrow(fs$trace), ncol(fd$par_trace)))
  expect_equal(colnames(fs$par_trace), colnames(fd$par_trace))
})

test_that("approx = 'auto' and the inducing rule", {
  expect_identical(ns$gp_backend("classify", 194), "dense")  # thyroid
  expect_identical(ns$gp_backend("classify", 1000), "dense")
  expect_identical(ns$gp_backend("classify", 1001), "sparse")
  expect_identical(ns$gp_backend("classify", 5000), "sparse")
  expect_identical(ns$gp_backend("classify", 50, inducing = 10L), "sparse")
  expect_identical(ns$gpc_ep_default_inducing(50), 50L)
  expect_identical(ns$gpc_ep_default_inducing(2000), 100L)
  expect_identical(ns$gpc_ep_default_inducing(20000), 283L)
  set.seed(1)
  x <- matrix(rnorm(400), 200)
  rows <- ns$kmeanspp_rows(x, 30)
  expect_length(unique(rows), 30)
  # k-means++ never picks a duplicate of a chosen point
  xd <- rbind(x[1:5, ], x[1:5, ])
  expect_length(ns$kmeanspp_rows(xd, 10), 5)
})

test_that("sparse fits work with every method, and one-vs-rest", {
  set.seed(4)
  n <- 150L
  x <- matrix(rnorm(2 * n), n)
  y <- ifelse(x[, 1] > 0, "a", "b")
  y[1:5] <- ifelse(y[1:5] == "a", "b", "a")
  fit <- gpc_ep(x, y, approx = "sparse", inducing = 20)
  expect_identical(fit$n_inducing, 20L)
  expect_identical(fit$inducing_rule, "k-means++ seeding")
  expect_output(print(fit), "sparse \\(FITC, 20 inducing")
  expect_output(print(summary(fit)), "Approximation: sparse")
  li <- label_issues(fit)
  expect_identical(nrow(li), n)
  expect_gt(mean(li$row[1:5] %in% 1:5), 0.5)
  expect_s3_class(predict(fit, x[1:4, ]), "factor")
  expect_identical(nrow(augment(fit)), n)
  expect_identical(nrow(glance(fit)), 1L)
  expect_identical(tidy(fit)$term, c(fit$par_names, "epsilon"))
  pdf(NULL)
  on.exit(grDevices::dev.off())
  expect_invisible(plot(fit))
  y3 <- ifelse(x[, 2] > 1, "c", y)
  ovr <- suppressMessages(gpc_ep(x, y3, multiclass = "ovr", approx = "sparse", inducing = 20))
  expect_true(all(vapply(ovr$fits, `[[`, "", "approx") == "sparse"))
  p <- predict(ovr, x[1:7, ], type = "prob")
  expect_equal(unname(rowSums(p)), rep(1, 7))
  expect_identical(nrow(label_issues(ovr)), n)
})

test_that("bad inducing input gives clear errors", {
  set.seed(5)
  x <- matrix(rnorm(40), 20)
  y <- x[, 1] > 0
  expect_error(gpc_ep(x, y, approx = "sparse", inducing = 21), "more than the 20",
               class = "noisylabels_error_inducing")
  expect_error(gpc_ep(x, y, approx = "sparse", inducing = 2.5), "whole number",
               class = "noisylabels_error_inducing")
  expect_error(gpc_ep(x, y, approx = "sparse", inducing = 0), "whole number",
               class = "noisylabels_error_inducing")
  expect_error(gpc_ep(x, y, approx = "sparse", inducing = NA_real_), "whole number",
               class = "noisylabels_error_inducing")
  z <- x[1:5, ]
  z[2, 1] <- Inf
  expect_error(gpc_ep(x, y, approx = "sparse", inducing = z), "missing or infinite",
               class = "noisylabels_error_inducing")
  expect_error(gpc_ep(x, y, approx = "sparse", inducing = x[1:5, 1, drop = FALSE]),
               "1 column", class = "noisylabels_error_inducing")
  expect_error(gpc_ep(x, y, approx = "sparse", inducing = rbind(x, x)), "between 1 and n",
               class = "noisylabels_error_inducing")
  expect_error(gpc_ep(x, y, approx = "sparse", inducing = "ten"), "number of inducing",
               class = "noisylabels_error_inducing")
  expect_error(gpc_ep(x, y, approx = "dense", inducing = 5), "only used by the sparse path")
  expect_error(gpc_ep(x, y, approx = "fitc"))
})

test_that("sparse EP recovers epsilon within 0.02 at n = 5000", {
  skip_on_cran()
  set.seed(6)
  n <- 5000
  x <- matrix(rnorm(2 * n), n)
  y <- ifelse(sin(1.5 * x[, 1]) + x[, 2] > 0, "a", "b")
  flipped <- sample.int(n, 0.1 * n)
  y[flipped] <- ifelse(y[flipped] == "a", "b", "a")
  fit <- gpc_ep(x, y, approx = "sparse", inducing = 60)
  expect_lt(abs(fit$epsilon - 0.1), 0.02)
  expect_gt(detection_metrics(noise_scores(fit), seq_len(n) %in% flipped)$auc, 0.9)
})
