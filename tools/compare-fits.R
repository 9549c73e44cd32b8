# Seeded fits of the five methods, their cross-validation and
# find_label_issues(), saved so that two builds of the package can be
# compared number for number. Run each build in its own process:
#   R_LIBS=<lib-before> Rscript tools/compare-fits.R run before.rds
#   R_LIBS=<lib-after>  Rscript tools/compare-fits.R run after.rds
#   Rscript tools/compare-fits.R compare before.rds after.rds
# `run` stores, per case, the numbers a user reads (coefficients,
# hyperparameters, fitted values, predictions, per-label scores, the
# label_issues table, the CV grid) and the elapsed seconds (best of `reps`).
# `compare` reports identical() per case and the timing ratio; its exit
# status is 1 when any case differs. Class attributes, calls and control
# objects are not compared: they are the contract being changed.
args <- commandArgs(TRUE)
`%||%` <- function(a, b) if (is.null(a)) b else a
mode <- args[1]

strip <- function(x) {
  if (is.data.frame(x)) {
    x <- as.list(x)
    attributes(x) <- list(names = names(x))
  } else if (is.list(x)) {
    x <- lapply(x, strip)
  }
  x
}

numbers <- function(fit, newdata = NULL) {
  library(noisylabels)
  out <- list(
    coef = tryCatch(stats::coef(fit), error = function(e) NULL),
    fitted = tryCatch(stats::fitted(fit), error = function(e) NULL),
    scores = tryCatch(noise_scores(fit), error = function(e) NULL),
    issues = tryCatch(strip(label_issues(fit)), error = function(e) NULL),
    loglik = tryCatch(as.numeric(stats::logLik(fit)), error = function(e) NULL)
  )
  if (!is.null(newdata)) out$predict <- tryCatch(stats::predict(fit, newdata), error = function(e) NULL)
  out
}

cases <- list(
  gpr_loo = function() {
    set.seed(1)
    d <- noisylabels::sim_tang1d()
    fit <- noisylabels::gpr_loo(y ~ x, data = d$data)
    numbers(fit, data.frame(x = c(0.1, 0.5, 0.9)))
  },
  gpr_loo_vecchia = function() {
    set.seed(2)
    x <- matrix(runif(1200), ncol = 2)
    y <- sin(6 * x[, 1]) + x[, 2] + rnorm(600, sd = 0.1)
    y[1:20] <- y[1:20] + 3
    fit <- noisylabels::gpr_loo(x, y, approx = "vecchia", neighbors = 15)
    numbers(fit, x[1:5, , drop = FALSE])
  },
  gpr_pursuit = function() {
    set.seed(1)
    x <- seq(0, 1, length.out = 60)
    y <- sin(6 * x) + rnorm(60, sd = 0.1)
    y[c(5, 20, 33)] <- y[c(5, 20, 33)] + 3
    fit <- noisylabels::gpr_pursuit(x, y, direction = "forward", n_outliers = 0:6)
    numbers(fit, data.frame(x = c(0.25, 0.5)))
  },
  gpr_pursuit_backward = function() {
    set.seed(3)
    x <- seq(0, 1, length.out = 50)
    y <- cos(4 * x) + rnorm(50, sd = 0.1)
    y[c(7, 30)] <- y[c(7, 30)] - 2
    fit <- noisylabels::gpr_pursuit(x, y, direction = "backward")
    numbers(fit, data.frame(x = c(0.3, 0.6)))
  },
  gpc_ep = function() {
    set.seed(1)
    x <- matrix(rnorm(240), ncol = 2)
    y <- ifelse(x[, 1] + x[, 2] > 0, "a", "b")
    y[1:6] <- ifelse(y[1:6] == "a", "b", "a")
    fit <- noisylabels::gpc_ep(x, y)
    c(numbers(fit), list(prob = stats::predict(fit, x[1:5, ], type = "prob")))
  },
  gpc_ep_multiclass = function() {
    set.seed(4)
    fit <- noisylabels::gpc_ep(Species ~ ., data = iris[seq(1, 150, by = 2), ], multiclass = "ovr")
    c(numbers(fit), list(prob = stats::predict(fit, iris[seq(2, 150, by = 10), 1:4], type = "prob")))
  },
  sgd_robust = function() {
    set.seed(1)
    x <- matrix(rnorm(2000), 1000, 2)
    y <- ifelse(x[, 1] + x[, 2] > 0, 1, -1)
    y_noisy <- noisylabels::flip_labels(y, 0.2)$y
    a <- noisylabels::sgd_robust(x, y_noisy, loss = "gompertz", lambda = 1e-3)
    b <- noisylabels::sgd_robust(x, y_noisy, loss = "smooth_ramp", lambda = 1e-3)
    c <- noisylabels::sgd_robust(x, y_noisy, loss = "hinge", lambda = 1e-3)
    list(gompertz = numbers(a, x[1:10, ]), ramp = numbers(b, x[1:10, ]), hinge = numbers(c, x[1:10, ]))
  },
  sgd_robust_multiclass = function() {
    set.seed(5)
    fit <- noisylabels::sgd_robust(Species ~ ., data = iris, loss = "smooth_ramp", lambda = 1e-3)
    numbers(fit, iris[1:10, ])
  },
  label_dist_vb = function() {
    set.seed(1)
    sim <- noisylabels::sim_label_dist(U = 60, N = 300, group_size = 15, alpha_c1 = 100, alpha_s = 100)
    fit <- noisylabels::label_dist_vb(sim$x, sim$groups, sim$label_dist, alpha_s = 100, alpha_c1 = 100)
    c(numbers(fit), list(prob = stats::predict(fit, newdata = sim$x[1:10, ])))
  },
  cv_gpr_loo = function() {
    set.seed(2)
    d <- noisylabels::sim_tang1d()
    cv <- noisylabels::cv_gpr_loo(cbind(x = d$data$x), d$data$y, lambda = c(0, 3, 10), folds = 4, restarts = 2)
    list(results = strip(cv$results), folds = cv$folds, scores = noisylabels::noise_scores(cv))
  },
  cv_sgd_robust = function() {
    set.seed(7)
    x <- matrix(rnorm(600), 300, 2)
    y <- ifelse(x[, 1] + 0.5 * x[, 2] > 0, 1, -1)
    cv <- noisylabels::cv_sgd_robust(x, noisylabels::flip_labels(y, 0.2)$y, loss = "smooth_ramp",
                                     lambda = c(1e-4, 1e-2), folds = 3, epochs = 5)
    list(results = strip(cv$results), folds = cv$folds)
  },
  find_label_issues_classes = function() {
    set.seed(11)
    x <- matrix(rnorm(3000), 1000, 3)
    y <- factor(ifelse(x[, 1] + x[, 2] > 0, "a", ifelse(x[, 3] > 0, "b", "c")))
    y[1:60] <- sample(levels(y), 60, replace = TRUE)
    r <- noisylabels::find_label_issues(x, y)
    s <- unclass(summary(r))
    s$time <- NULL  # elapsed seconds
    list(issues = strip(r$label_issues), summary = strip(s))
  },
  find_label_issues_probs = function() {
    set.seed(12)
    p <- matrix(stats::rexp(3000), 1000, 3)
    p <- p / rowSums(p)
    y <- factor(apply(p, 1, function(q) sample(c("a", "b", "c"), 1, prob = q)))
    r <- noisylabels::find_label_issues(labels = y, pred_probs = p)
    list(issues = strip(r$label_issues))
  },
  find_label_issues_regression = function() {
    set.seed(13)
    x <- matrix(runif(800), 400, 2)
    y <- sin(5 * x[, 1]) + x[, 2] + rnorm(400, sd = 0.1)
    y[1:15] <- y[1:15] + 2
    r <- noisylabels::find_label_issues(x, y)
    list(issues = strip(r$label_issues))
  },
  find_label_issues_fits = function() {
    set.seed(14)
    x <- matrix(rnorm(400), 200, 2)
    y <- ifelse(x[, 1] > 0, "a", "b")
    y[1:8] <- ifelse(y[1:8] == "a", "b", "a")
    sg <- noisylabels::sgd_robust(x, y, loss = "gompertz", lambda = 1e-3)
    ep <- noisylabels::gpc_ep(x, y)
    d <- noisylabels::sim_tang1d()
    lo <- noisylabels::gpr_loo(y ~ x, data = d$data)
    list(sgd = strip(noisylabels::find_label_issues(sg)$label_issues),
         ep = strip(noisylabels::find_label_issues(ep)$label_issues),
         loo = strip(noisylabels::find_label_issues(lo)$label_issues))
  }
)

if (identical(mode, "run")) {
  out_file <- args[2]
  reps <- as.integer(Sys.getenv("COMPARE_REPS", "3"))
  suppressPackageStartupMessages(library(noisylabels))
  options(noisylabels.verbose = FALSE)
  res <- list()
  for (nm in names(cases)) {
    times <- numeric(reps)
    val <- NULL
    for (r in seq_len(reps)) {
      t0 <- proc.time()[["elapsed"]]
      val <- suppressWarnings(suppressMessages(cases[[nm]]()))
      times[r] <- proc.time()[["elapsed"]] - t0
    }
    res[[nm]] <- list(value = val, seconds = min(times))
    cat(sprintf("%-28s %7.3f s\n", nm, min(times)))
  }
  saveRDS(res, out_file)
} else if (identical(mode, "compare")) {
  a <- readRDS(args[2])
  b <- readRDS(args[3])
  bad <- 0L
  cat(sprintf("%-28s %-10s %8s %8s %6s\n", "case", "identical", "before", "after", "ratio"))
  for (nm in union(names(a), names(b))) {
    same <- !is.null(a[[nm]]) && !is.null(b[[nm]]) && identical(a[[nm]]$value, b[[nm]]$value)
    if (!same) bad <- bad + 1L
    cat(sprintf("%-28s %-10s %8.3f %8.3f %6.2f\n", nm, same, a[[nm]]$seconds %||% NA,
                b[[nm]]$seconds %||% NA, (b[[nm]]$seconds %||% NA) / (a[[nm]]$seconds %||% NA)))
    if (!same && !is.null(a[[nm]]) && !is.null(b[[nm]])) {
      d <- all.equal(a[[nm]]$value, b[[nm]]$value)
      cat("  ", utils::head(d, 5), sep = "\n  ")
    }
  }
  cat(sprintf("%d of %d cases differ\n", bad, length(union(names(a), names(b)))))
  quit(status = as.integer(bad > 0L))
} else {
  cat("usage: Rscript tools/compare-fits.R run OUT.rds | compare BEFORE.rds AFTER.rds\n")
  quit(status = 2L)
}
