# label_dist_vb(): exact ELBO, coordinate updates, interface, methods, baselines.

kl_rows <- function(p, q) sum(ifelse(p > 0, p * (log(p) - log(q)), 0))

test_that("every block update increases the ELBO on random small problems (MF, SMF, MAP, VB)", {
  for (seed in 1:6) {
    pr <- ld_random_problem(seed = seed, M = 2 + seed %% 3)
    for (structured in c(FALSE, TRUE)) for (vb_c in c(FALSE, TRUE)) {
      h <- ld_hyper(alpha_s = c(5, 50)[1 + seed %% 2], alpha_c0 = if (vb_c) 0.5 else 1)
      st <- ld_random_state(pr, structured, vb_c)
      blocks <- if (structured) c("c", "w", "structured") else c("c", "w", "eta", "zeta")
      L <- ld_elbo_of(pr, h, st, structured, vb_c)[["total"]]
      for (rep in 1:3) for (b in blocks) {
        st <- ld_step(pr, h, st, b, structured, vb_c)
        L_new <- ld_elbo_of(pr, h, st, structured, vb_c)[["total"]]
        expect_gte(L_new - L, -1e-9 * abs(L))
        L <- L_new
      }
    }
  }
})

test_that("the zeta step gains exactly sum_u KL(old || new) and the eta step KL for a lone pair", {
  pr <- ld_random_problem(seed = 11)
  h <- ld_hyper()
  st <- ld_random_state(pr)
  L0 <- ld_elbo_of(pr, h, st)[["total"]]
  st1 <- ld_step(pr, h, st, "zeta")
  expect_equal(ld_elbo_of(pr, h, st1)[["total"]] - L0, kl_rows(st$zeta, st1$zeta), tolerance = 1e-8)
  # With single-member groups every eta block is one pair: gain = sum of KLs.
  pr1 <- ld_random_problem(seed = 12)
  pr1$groups <- lapply(seq_len(pr1$N), function(i) pr1$groups[[i]][1])
  memb <- ld_membership(pr1$groups, pr1$U, pr1$N)
  pr1$group_ptr <- memb$group_ptr; pr1$pair_unit <- memb$pair_unit; pr1$P <- pr1$N
  st <- ld_random_state(pr1)
  L0 <- ld_elbo_of(pr1, h, st)[["total"]]
  st1 <- ld_step(pr1, h, st, "eta")
  expect_equal(ld_elbo_of(pr1, h, st1)[["total"]] - L0, kl_rows(st$eta, st1$eta), tolerance = 1e-8)
})

test_that("the eta update equals a brute-force maximisation of the block objective", {
  # Group 1 = {1}, group 2 = {1, 2}: pair 1 alone; pairs 2 and 3 updated in turn.
  set.seed(3)
  M <- 3
  pr <- list(x = matrix(rnorm(4), 2, 2), s = matrix(c(0.5, 0.2, 0.3, 0.1, 0.6, 0.3), 2, 3, byrow = TRUE),
             U = 2L, N = 2L, M = M, D = 2L)
  memb <- ld_membership(list(1L, 1:2), 2L, 2L)
  pr$group_ptr <- memb$group_ptr; pr$pair_unit <- memb$pair_unit; pr$P <- 3L
  h <- ld_hyper(alpha_s = 20)
  st <- ld_random_state(pr)
  new <- ld_step(pr, h, st, "eta")
  brute <- function(state, k) {
    f <- function(theta) {
      e <- exp(c(theta, 0)); state$eta[k, ] <- e / sum(e)
      -ld_elbo_of(pr, h, state)[["total"]]
    }
    best <- optim(c(0, 0), f, method = "BFGS", control = list(reltol = 1e-14, maxit = 1000))
    e <- exp(c(best$par, 0)); e / sum(e)
  }
  expect_equal(new$eta[1, ], brute(st, 1), tolerance = 1e-5)
  expect_equal(new$eta[2, ], brute(st, 2), tolerance = 1e-5)   # pair 3 still old
  st_mid <- st; st_mid$eta[2, ] <- new$eta[2, ]
  expect_equal(new$eta[3, ], brute(st_mid, 3), tolerance = 1e-5)  # pair 2 already new
})

test_that("the Gaussian-term expectation (V) matches Monte Carlo", {
  set.seed(4)
  M <- 3; n <- 5
  pr <- list(x = matrix(rnorm(n), n, 1), s = matrix(c(0.4, 0.35, 0.25), 1, M), U = n, N = 1L, M = M, D = 1L)
  memb <- ld_membership(list(1:n), n, 1L)
  pr$group_ptr <- memb$group_ptr; pr$pair_unit <- memb$pair_unit; pr$P <- n
  h <- ld_hyper(alpha_s = 3)
  st <- ld_random_state(pr)
  gauss <- ld_elbo_of(pr, h, st)[["gauss"]]
  V <- (0.5 * M * log(h[["alpha_s"]] / (2 * pi)) - gauss) / (h[["alpha_s"]] / 2)
  draws <- 2e5
  tsum <- matrix(0, draws, M)
  for (u in seq_len(n)) {
    lab <- sample.int(M, draws, replace = TRUE, prob = st$eta[u, ])
    tsum[cbind(seq_len(draws), lab)] <- tsum[cbind(seq_len(draws), lab)] + 1
  }
  d2 <- rowSums(sweep(tsum / n, 2, pr$s[1, ])^2)
  expect_lt(abs(mean(d2) - V), 4 * sd(d2) / sqrt(draws))
})

test_that("the W objective's gradient matches central differences", {
  set.seed(5)
  U <- 7; D <- 3; M <- 4
  x <- matrix(rnorm(U * D), U, D)
  zeta <- ld_rdirichlet(U, M)
  w <- matrix(rnorm(M * D), M, D)
  f <- function(v) hook("ld_w_objective", x, zeta, 0.7, matrix(v, M, D))$value
  g <- hook("ld_w_objective", x, zeta, 0.7, w)$gradient
  expect_equal(as.vector(g), fd_grad(f, as.vector(w)), tolerance = 1e-7)
  # independent value: softmax cross-entropy minus the prior
  a <- x %*% t(w)
  lse <- log(rowSums(exp(a)))
  expect_equal(f(as.vector(w)), sum(zeta * (a - lse)) - 0.35 * sum(w^2))
})

test_that("the MAP C step beats random perturbations on the simplex", {
  pr <- ld_random_problem(seed = 6)
  h <- ld_hyper(alpha_c1 = 3)
  st <- ld_step(pr, h, ld_random_state(pr), "c")
  L <- ld_elbo_of(pr, h, st)[["total"]]
  for (r in 1:30) {
    p <- st
    p$cpar <- st$cpar * exp(matrix(rnorm(pr$M^2, sd = 0.05), pr$M))
    p$cpar <- p$cpar / rowSums(p$cpar)
    expect_lt(ld_elbo_of(pr, h, p)[["total"]], L)
  }
})

test_that("uniform zeta with identical rows of C is a fixed point (spec 5.2)", {
  pr <- ld_random_problem(seed = 7)
  h <- ld_hyper(alpha_c1 = 1)
  st <- ld_random_state(pr)
  st$w[] <- 0
  st$cpar <- matrix(rep(c(0.5, 0.3, 0.2), each = 3), 3)
  st$zeta[] <- 1 / 3
  for (b in c("c", "w", "eta", "zeta")) st <- ld_step(pr, h, st, b)
  expect_lt(max(abs(st$zeta - 1 / 3)), 1e-12)
})

test_that("fits stay on the simplex, never decrease the ELBO per block, and are reproducible", {
  set.seed(8)
  sim <- sim_label_dist(U = 30, N = 120, group_size = 8, D = 3, alpha_c1 = 20, n_test = 0)
  for (structured in c(FALSE, TRUE)) {
    set.seed(9)
    fit <- label_dist_vb(sim$x, sim$groups, sim$label_dist, alpha_c1 = 20, raw_dist = TRUE,
                         structured = structured, control = label_dist_vb_control(restarts = 3, debug = TRUE, max_iter = 40))
    expect_gte(min(fit$block_deltas), -1e-8 * abs(fit$elbo))
    expect_true(all(diff(fit$elbo_trace) >= -1e-8 * abs(fit$elbo)))
    for (m in list(fit$zeta, fit$eta, fit$C)) {
      expect_true(all(m >= 0))
      expect_equal(unname(rowSums(m)), rep(1, nrow(m)), tolerance = 1e-12)
    }
    if (structured) {
      ec <- matrix(t(fit$eta_cond), ncol(fit$C))  # columns are conditional rows
      expect_equal(colSums(ec), rep(1, ncol(ec)), tolerance = 1e-12)
    }
    expect_length(fit$restart_elbo, 3)
    expect_equal(fit$elbo, max(fit$restart_elbo))
    set.seed(9)
    again <- label_dist_vb(sim$x, sim$groups, sim$label_dist, alpha_c1 = 20, raw_dist = TRUE,
                           structured = structured, control = label_dist_vb_control(restarts = 3, debug = TRUE, max_iter = 40))
    expect_identical(again$zeta, fit$zeta)
    expect_identical(again$W, fit$W)
    expect_identical(again$elbo_trace, fit$elbo_trace)
  }
})

test_that("VB for C is used when a concentration is below 1 and stays monotone", {
  set.seed(10)
  sim <- sim_label_dist(U = 25, N = 80, group_size = 6, D = 2, alpha_c0 = 0.5, alpha_c1 = 10, n_test = 0)
  fit <- label_dist_vb(sim$x, sim$groups, sim$label_dist, alpha_c0 = 0.5, raw_dist = TRUE, control = label_dist_vb_control(debug = TRUE, max_iter = 30))
  expect_equal(fit$c_update, "vb")
  expect_gte(min(fit$block_deltas), -1e-8 * abs(fit$elbo))
  expect_error(label_dist_vb(sim$x, sim$groups, sim$label_dist, alpha_c0 = 0.5, raw_dist = TRUE, control = label_dist_vb_control(c_update = "map")), class = "noisylabels_error_input")
})

test_that("membership as list, table or sparse matrix and the formula interface give the same fit", {
  set.seed(11)
  sim <- sim_label_dist(U = 20, N = 60, group_size = 5, D = 2, alpha_c1 = 50, n_test = 0)
  set.seed(1); f_list <- label_dist_vb(sim$x, sim$groups, sim$label_dist, raw_dist = TRUE)
  tab <- data.frame(instance = unlist(sim$groups), group = rep(seq_along(sim$groups), lengths(sim$groups)))
  tab <- tab[sample(nrow(tab)), ]
  set.seed(1); f_tab <- label_dist_vb(sim$x, tab, sim$label_dist, raw_dist = TRUE)
  inc <- Matrix::sparseMatrix(i = tab$instance, j = tab$group, x = 1, dims = c(20, 60))
  set.seed(1); f_sp <- label_dist_vb(sim$x, inc, sim$label_dist, raw_dist = TRUE)
  expect_identical(f_tab$zeta, f_list$zeta)
  expect_identical(f_sp$zeta, f_list$zeta)
  expect_identical(f_sp$elbo_trace, f_list$elbo_trace)
  df <- as.data.frame(sim$x)
  set.seed(1); f_form <- label_dist_vb(~ x1 + x2 - 1, data = df, groups = sim$groups,
                                       label_dist = sim$label_dist, raw_dist = TRUE)
  expect_identical(f_form$zeta, f_list$zeta)
  expect_identical(unname(f_form$W), unname(f_list$W))
  expect_equal(predict(f_form, df[1:3, ], type = "prob"), predict(f_list, sim$x[1:3, ], type = "prob"))
})

test_that("reduced reproduction: near-perfect recovery in the easy regime, close to the true-weight classifier", {
  set.seed(12)
  sim <- sim_label_dist(U = 100, N = 1000, group_size = 30, alpha_c1 = 100, alpha_s = 100, n_test = 500)
  fit <- label_dist_vb(sim$x, sim$groups, sim$label_dist, alpha_s = 100, alpha_c1 = 100, raw_dist = TRUE)
  train_acc <- mean(max.col(fitted(fit)) == as.integer(sim$y))
  expect_gte(train_acc, 0.97)  # 1.00 at this seed
  # Independent reference: the Bayes classifier with the generating weights,
  # argmax_m w_m'x. The learned one must nearly match it on new instances
  # (seeds 1-3, 12: accuracy gap 0.03-0.07, agreement 0.80-0.83).
  oracle <- max.col(sim$x_test %*% t(sim$w))
  acc_oracle <- mean(oracle == as.integer(sim$y_test))
  pred <- predict(fit, sim$x_test)
  expect_gte(mean(pred == sim$y_test), acc_oracle - 0.1)
  expect_gte(mean(as.integer(pred) == oracle), 0.75)
  # the learned confusion matrix tracks the generating one (r = 0.999 here)
  expect_gt(cor(c(fit$C), c(sim$C)), 0.98)
  expect_true(all(max.col(fit$C) == seq_len(4)))
  base <- label_dist_baseline(sim$x, sim$groups, sim$label_dist, raw_dist = TRUE)
  expect_gt(train_acc, mean(predict(base) == sim$y))
})

test_that("group noise scores flag groups whose distribution was replaced", {
  set.seed(13)
  sim <- sim_label_dist(U = 60, N = 300, group_size = 15, D = 3, alpha_c1 = 100, alpha_s = 400, n_test = 0)
  bad <- 1:15
  s <- sim$label_dist
  s[bad, ] <- diag(4)[rep(c(4, 3, 2, 1), length.out = length(bad)), ]  # one-hot reports
  fit <- label_dist_vb(sim$x, sim$groups, s, alpha_s = 400, alpha_c1 = 100, raw_dist = TRUE)
  iss <- label_issues(fit, level = "group")
  flagged <- iss$row[iss$flagged]
  expect_gte(mean(bad %in% flagged), 0.8)
  expect_lte(mean(!(flagged %in% bad)), 0.3)
  auc <- detection_metrics(noise_scores(fit, level = "group"), seq_len(300) %in% bad)
  expect_gt(auc$auc, 0.9)
})

test_that("methods: predict, fitted, residuals, coef, tidy, glance, augment, plots, issues", {
  set.seed(14)
  sim <- sim_label_dist(U = 30, N = 100, group_size = 8, D = 3, alpha_c1 = 50, n_test = 10)
  fit <- label_dist_vb(sim$x, sim$groups, sim$label_dist, alpha_c1 = 50, raw_dist = TRUE)
  p <- predict(fit, sim$x_test, type = "prob")
  expect_equal(dim(p), c(10L, 4L))
  expect_equal(unname(rowSums(p)), rep(1, 10))
  cls <- predict(fit, sim$x_test)
  expect_s3_class(cls, "factor")
  expect_identical(as.character(cls), colnames(p)[max.col(p)])
  expect_identical(fitted(fit), fit$zeta)
  expect_equal(dim(residuals(fit)), c(100L, 4L))
  expect_identical(coef(fit), fit$W)
  expect_equal(nrow(tidy(fit)), 4L * 3L)
  expect_equal(tidy(fit, matrix = "C")$estimate, as.vector(fit$C))
  g <- glance(fit)
  expect_equal(nrow(g), 1L)
  expect_equal(g$n_pairs, 800L)
  a <- augment(fit)
  expect_equal(nrow(a), 30L)
  expect_equal(a$.prob_c2, fit$zeta[, 2])
  sc <- noise_scores(fit)
  expect_equal(sc, 1 - apply(fit$zeta, 1, max))
  iss <- label_issues(fit)
  expect_equal(nrow(iss), 30L)
  expect_identical(iss$flagged, iss$score > 0.5)
  expect_length(noise_scores(fit, level = "group"), 100L)
  grDevices::pdf(NULL)
  expect_invisible(plot(fit))
  expect_invisible(plot(fit, type = "confusion"))
  grDevices::dev.off()
  skip_if_not_installed("ggplot2")
  expect_s3_class(ggplot2::autoplot(fit), "ggplot")
  expect_s3_class(ggplot2::autoplot(fit, type = "confusion"), "ggplot")
})

test_that("print and summary output", {
  set.seed(15)
  sim <- sim_label_dist(U = 20, N = 60, group_size = 6, D = 2, alpha_c1 = 50, n_test = 0)
  fit <- label_dist_vb(sim$x, sim$groups, sim$label_dist, alpha_c1 = 50, raw_dist = TRUE)
  expect_snapshot(print(fit, digits = 2), transform = function(l) gsub("-?[0-9]+\\.[0-9]{3,}", "<num>", l))
  expect_snapshot(summary(fit), transform = function(l) gsub("-?[0-9]+\\.[0-9]{3,}", "<num>", l))
})

test_that("held-out group likelihood prefers the generating noise level", {
  set.seed(16)
  sim <- sim_label_dist(U = 40, N = 200, group_size = 10, D = 3, alpha_c1 = 50, alpha_s = 100, n_test = 0)
  fit <- label_dist_vb(sim$x, sim$groups, sim$label_dist, alpha_c1 = 50, raw_dist = TRUE,
                       tune = list(alpha_s = c(1, 100)), folds = 3)
  expect_equal(nrow(fit$tuning$grid), 2L)
  expect_equal(fit$tuning$grid$alpha_s[which.max(fit$tuning$grid$heldout_loglik)], 100)
  expect_equal(fit$hyper[["alpha_s"]], 100)
})

test_that("baselines: ridge matches an augmented least-squares fit, MTEN approaches OLS", {
  set.seed(17)
  sim <- sim_label_dist(U = 40, N = 150, group_size = 10, D = 3, alpha_c1 = 50, n_test = 0)
  r <- label_dist_baseline(sim$x, sim$groups, sim$label_dist, raw_dist = TRUE, lambda = 0.3)
  f <- t(vapply(sim$groups, function(g) colMeans(sim$x[g, , drop = FALSE]), numeric(3)))
  fc <- scale(f, scale = FALSE); sc <- scale(sim$label_dist, scale = FALSE)
  aug <- qr.coef(qr(rbind(fc, diag(sqrt(0.3), 3))), rbind(sc, matrix(0, 3, 4)))
  expect_equal(unname(r$coefficients), unname(aug), tolerance = 1e-10)
  expect_equal(unname(predict(r, f, type = "score")),
               unname(sweep(fc %*% aug, 2, attr(sc, "scaled:center"), "+")), tolerance = 1e-10)
  skip_if_not_installed("glmnet")
  m <- label_dist_baseline(sim$x, sim$groups, sim$label_dist, method = "mten", raw_dist = TRUE)
  ols <- coef(lm(sim$label_dist ~ f))
  expect_equal(unname(coef(m)), unname(ols), tolerance = 1e-3)
})

test_that("bad input gives classed errors", {
  set.seed(18)
  sim <- sim_label_dist(U = 10, N = 8, group_size = 3, D = 2, n_test = 0)
  s <- abs(sim$label_dist); s <- s / rowSums(s)
  attr(s, "raw_dist") <- NULL  # proportions now: checked as such
  x <- sim$x; g <- sim$groups
  err <- "noisylabels_error_input"
  g_bad <- g; g_bad[[2]] <- c(1L, 11L)
  expect_error(label_dist_vb(x, g_bad, s), class = "noisylabels_error_membership")
  g_bad <- g; g_bad[[2]] <- integer(0)
  expect_error(label_dist_vb(x, g_bad, s), class = "noisylabels_error_membership")
  g_bad <- g; g_bad[[2]] <- c(1L, 1L)
  expect_error(label_dist_vb(x, g_bad, s), class = "noisylabels_error_membership")
  expect_error(label_dist_vb(x, g[-1], s), class = err)
  expect_error(label_dist_vb(x, data.frame(i = c(1, 2), g = c(1, 9)), s), class = "noisylabels_error_membership")
  expect_error(label_dist_vb(x, Matrix::Matrix(0, 10, 7, sparse = TRUE), s), class = err)
  s_na <- s; s_na[1, 1] <- NA
  expect_error(label_dist_vb(x, g, s_na), class = err)
  s_neg <- s; s_neg[1, 1] <- -0.2
  expect_error(label_dist_vb(x, g, s_neg), class = err)
  expect_error(label_dist_vb(x, g, s_neg, raw_dist = TRUE, control = label_dist_vb_control(max_iter = 2, stable_iter = 0)), NA) |>
    suppressWarnings()
  s_sum <- s; s_sum[1, ] <- s_sum[1, ] * 1.5
  expect_warning(label_dist_vb(x, g, s_sum), class = "noisylabels_warning_input")
  expect_error(label_dist_vb(x, g, s, classes = c("c1", "c2", "c3")), class = "noisylabels_error_classes")
  expect_error(label_dist_vb(x, g, s, classes = c("a", "b", "c", "d")), class = "noisylabels_error_classes")
  expect_error(label_dist_vb(x, g, s[, 1, drop = FALSE]), class = err)
  expect_error(label_dist_vb(x[0, , drop = FALSE], g, s), class = err)
  expect_error(label_dist_vb(x[, 0, drop = FALSE], g, s), class = err)
  x_inf <- x; x_inf[2, 1] <- Inf
  expect_error(label_dist_vb(x_inf, g, s), class = err)
  x_na <- x; x_na[2, 1] <- NaN
  expect_error(label_dist_vb(x_na, g, s), class = err)
  expect_error(label_dist_vb(x, g, s, alpha_s = -1), class = err)
  expect_error(label_dist_vb(x, "groups", s), class = err)
  expect_error(label_dist_vb(x, g, s, tune = list(beta = 1)), class = err)
  expect_error(label_dist_vb(~ a, data = data.frame(a = c(NA, 1:9)), groups = g, label_dist = s), class = err)
  expect_error(label_dist_vb(x, g, s, alpha_z = 1), class = err)
  expect_error(label_dist_vb(y ~ a, data = data.frame(a = 1:10, y = 1), groups = g, label_dist = s), class = err)
  expect_warning(label_dist_vb(x, g, s, control = label_dist_vb_control(max_iter = 1, stable_iter = 0, tol = 0)),
                 class = "noisylabels_warning_convergence")
})

test_that("the structured block update maximises the ELBO over the last instance's block", {
  pr <- ld_random_problem(seed = 21, U = 6, N = 5, M = 3)
  h <- ld_hyper(alpha_s = 30)
  st <- ld_step(pr, h, ld_random_state(pr, structured = TRUE), "structured", structured = TRUE)
  L <- ld_elbo_of(pr, h, st, structured = TRUE)[["total"]]
  u <- pr$U  # swept last, so optimal given everyone else's final state
  pairs <- which(pr$pair_unit + 1L == u)
  expect_gt(length(pairs), 0)
  M <- pr$M
  for (r in 1:40) {
    p <- st
    z <- p$zeta[u, ] * exp(rnorm(M, sd = 0.1)); p$zeta[u, ] <- z / sum(z)
    for (k in pairs) {
      cond <- matrix(p$eta_cond[k, ], M, M, byrow = TRUE) * exp(matrix(rnorm(M * M, sd = 0.1), M))
      cond <- cond / rowSums(cond)
      p$eta_cond[k, ] <- as.vector(t(cond))
      p$eta[k, ] <- drop(p$zeta[u, ] %*% cond)
    }
    expect_lt(ld_elbo_of(pr, h, p, structured = TRUE)[["total"]], L)
  }
})

test_that("plug-in ablation: objective >= exact bound, eta update maximises the plug-in block", {
  pr <- ld_random_problem(seed = 31, M = 3)
  h <- ld_hyper(alpha_s = 40)
  st <- ld_random_state(pr)
  plug <- hook("ld_elbo", pr$x, pr$s, as.integer(pr$group_ptr), as.integer(pr$pair_unit), h, st, FALSE, FALSE, FALSE)
  expect_gte(plug[["total"]], ld_elbo_of(pr, h, st)[["total"]])  # Jensen
  new <- hook("ld_update", pr$x, pr$s, as.integer(pr$group_ptr), as.integer(pr$pair_unit), h, st, "eta",
                    FALSE, FALSE, FALSE)
  plug_of <- function(state) hook("ld_elbo", pr$x, pr$s, as.integer(pr$group_ptr), as.integer(pr$pair_unit),
                                      h, state, FALSE, FALSE, FALSE)[["total"]]
  expect_gte(plug_of(new), plug[["total"]])
  # the last pair of the last group is optimal given all others: no perturbation helps
  k <- pr$P
  L <- plug_of(new)
  for (r in 1:30) {
    p <- new
    e <- p$eta[k, ] * exp(rnorm(3, sd = 0.05)); p$eta[k, ] <- e / sum(e)
    expect_lt(plug_of(p), L)
  }
  set.seed(32)
  sim <- sim_label_dist(U = 30, N = 100, group_size = 6, D = 2, alpha_c1 = 50, n_test = 0)
  f <- label_dist_vb(sim$x, sim$groups, sim$label_dist, alpha_c1 = 50, raw_dist = TRUE, exact = FALSE, control = label_dist_vb_control(debug = TRUE, max_iter = 20))
  expect_gte(min(f$block_deltas), -1e-8 * abs(f$elbo))
  expect_error(label_dist_vb(sim$x, sim$groups, sim$label_dist, raw_dist = TRUE, exact = FALSE,
                             structured = TRUE), class = "noisylabels_error_input")
})

test_that("sim_label_dist() output is fitted without extra arguments (issue 21)", {
  set.seed(21)
  sim <- sim_label_dist(U = 20, N = 60, group_size = 5, D = 2, alpha_c1 = 50, n_test = 0)
  expect_true(any(sim$label_dist < 0))  # raw Gaussian-noise observations
  expect_true(isTRUE(attr(sim$label_dist, "raw_dist")))
  set.seed(1); f_auto <- label_dist_vb(sim$x, sim$groups, sim$label_dist)
  set.seed(1); f_raw <- label_dist_vb(sim$x, sim$groups, sim$label_dist, raw_dist = TRUE)
  expect_identical(f_auto$zeta, f_raw$zeta)
  expect_identical(f_auto$elbo_trace, f_raw$elbo_trace)
  # the formula method and the baseline take it as well
  set.seed(1)
  f_form <- label_dist_vb(~ x1 + x2 - 1, data = as.data.frame(sim$x), groups = sim$groups,
                          label_dist = sim$label_dist)
  expect_identical(f_form$zeta, f_auto$zeta)
  b_auto <- label_dist_baseline(sim$x, sim$groups, sim$label_dist)
  b_raw <- label_dist_baseline(sim$x, sim$groups, sim$label_dist, raw_dist = TRUE)
  expect_identical(coef(b_auto), coef(b_raw))
  # an explicit FALSE still checks, and unmarked negative data are still an error
  expect_error(label_dist_vb(sim$x, sim$groups, sim$label_dist, raw_dist = FALSE),
               class = "noisylabels_error_input")
  unmarked <- sim$label_dist
  attr(unmarked, "raw_dist") <- NULL
  expect_error(label_dist_vb(sim$x, sim$groups, unmarked), class = "noisylabels_error_input")
  expect_error(label_dist_baseline(sim$x, sim$groups, unmarked), class = "noisylabels_error_input")
  expect_error(label_dist_vb(sim$x, sim$groups, sim$label_dist, raw_dist = NA),
               class = "noisylabels_error_input")
})
