# Walks the exported API with bad values of every argument type. A call may
# end in a result or in a classed noisylabels error (warnings are fine); it
# must never end in an unclassed error, and a result's noise scores must be
# finite. Small data and one process, so the walk takes seconds.

fuzz_values <- list(
  null = NULL, na = NA, na_real = NA_real_, neg = -1, zero = 0, huge = 1e9, inf = Inf,
  nan = NaN, string = "x", empty = numeric(), list = list(1, 2), vec = c(1, 2, 3),
  true = TRUE, fun = function(x) x, bigthreads = 1e6
)

# By default one bad value of each kind per argument (text, a list, a
# negative and a huge number); arguments that carry data also get data of
# the wrong shape (a data frame with text, a 2 x 2 matrix, an empty vector,
# Inf). With NOISYLABELS_FUZZ_FULL=1 every argument gets every value of
# fuzz_values as well (NULL, NA, NaN, 0, TRUE, a function, ...; minutes).
fuzz_core <- fuzz_values[c("string", "list", "neg", "huge")]
fuzz_data_values <- list(
  df = data.frame(a = 1:3, b = c("x", "y", "z")), matrix = matrix(c(1, 2, 3, 4), 2),
  empty = numeric(), inf = Inf
)
fuzz_data_args <- c("x", "y", "z", "newdata", "data", "labels", "pred_probs", "predictions", "sd",
                    "groups", "label_dist", "truth", "scores", "inferred", "actual", "object",
                    "kernel", "weights", "init", "inducing", "file", "result", "decisions")
fuzz_values_for <- function(a) {
  values <- if (nzchar(Sys.getenv("NOISYLABELS_FUZZ_FULL"))) c(fuzz_values, fuzz_data_values[c("df", "matrix")])
            else if (a %in% fuzz_data_args) c(fuzz_core, fuzz_data_values) else fuzz_core
  if (a %in% fuzz_work_sizes) values <- values[setdiff(names(values), c("huge", "bigthreads"))]
  values
}
# Work sizes that a function accepts and then works through (epochs, folds,
# sweeps, rows): a billion of them is a valid request that runs for long,
# refused only when it cannot fit in memory (n_features = 1e9 allocates 4 GB
# of column pointers where the machine has them). The walk leaves out
# the value 1e9 for these arguments.
fuzz_work_sizes <- c("epochs", "max_iter", "max_outer", "max_sweeps", "restarts", "folds", "n",
                     "eta_sample", "lbfgs_max_iter", "stable_iter", "n_iter_no_change",
                     "page_length", "max_classes", "gp_subsample", "rounds", "iterations",
                     "n_inducing", "neighbors", "chunk_rows", "U", "N", "n_test", "n_corrupted",
                     "group_size", "D", "M", "d", "max_iter_eps", "n_issues", "gp_max_dim", "n_features")

fuzz_counts <- new.env()
fuzz_counts$calls <- 0L
fuzz_counts$expectations <- 0L

# The outcome of one call: "ok", "classed", or a description of a failure.
fuzz_result <- function(expr) {
  fuzz_counts$calls <- fuzz_counts$calls + 1L
  # printed output (print(), summary()) is not the test's
  utils::capture.output(
    res <- tryCatch(withCallingHandlers(expr, warning = function(w) invokeRestart("muffleWarning"),
                                        message = function(m) invokeRestart("muffleMessage")),
                    error = function(e) e))
  if (inherits(res, "error")) {
    if (inherits(res, "noisylabels_error")) return("classed")
    return(paste("unclassed:", gsub("\n", " ", conditionMessage(res))))
  }
  if (is.numeric(res) && length(res) && !is.null(res) && any(is.infinite(res) | is.nan(res))) {
    return("non-finite result")
  }
  sc <- tryCatch(noise_scores(res), error = function(e) NULL)
  if (is.numeric(sc) && any(!is.finite(sc))) return("non-finite scores")
  "ok"
}

# fun(base with argument `a` replaced by each value); the failures.
fuzz_arg <- function(fun, base, a, values = fuzz_values_for(a)) {
  bad <- character()
  for (v in names(values)) {
    call_args <- base
    if (is.null(values[[v]])) call_args[a] <- list(NULL) else call_args[[a]] <- values[[v]]
    out <- fuzz_result(do.call(fun, call_args))
    if (out != "ok" && out != "classed") bad <- c(bad, paste0(a, "=", v, ": ", out))
  }
  bad
}

# One expectation per argument of `fun` (all its formals but `...` unless
# `args` is given).
expect_fuzz_clean <- function(name, fun, base, args = NULL, formals_of = fun) {
  args <- args %||% setdiff(names(formals(formals_of)), "...")
  for (a in args) {
    fuzz_counts$expectations <- fuzz_counts$expectations + 1L
    expect_identical(fuzz_arg(fun, base, a), character(), label = paste0(name, "(", a, " = <bad>)"))
  }
}

`%||%` <- function(a, b) if (is.null(a)) b else a

# Run `fun(base with one argument replaced)` for every argument and every
# bad value; return the failures as "arg=value: outcome".
fuzz_walk <- function(fun, base, args = names(base), values = fuzz_values) {
  unlist(lapply(args, function(a) fuzz_arg(fun, base, a, values)))
}
fuzz_outcome <- fuzz_result

fuzz_data <- function(n = 30) {
  set.seed(11)
  x <- matrix(stats::runif(n * 2), n, 2)
  y <- sin(3 * x[, 1]) + stats::rnorm(n, sd = 0.1)
  cls <- factor(ifelse(x[, 1] + stats::rnorm(n, sd = 0.2) > 0.5, "a", "b"))
  list(x = x, y = y, cls = cls)
}

test_that("gpr_loo, gpr_pursuit and gpr_baseline never fail unclassed", {
  skip_on_cran()
  d <- fuzz_data()
  expect_equal(fuzz_walk(gpr_loo, list(x = d$x, y = d$y),
                         args = c("x", "y", "kernel", "noise", "lambda", "restarts", "control")),
               character())
  expect_equal(fuzz_walk(gpr_pursuit, list(x = d$x, y = d$y),
                         args = c("x", "y", "kernel", "control")), character())
  expect_equal(fuzz_walk(gpr_baseline, list(x = d$x, y = d$y),
                         args = c("x", "y", "method")), character())
})

test_that("extreme magnitudes give finite scores or a classed error", {
  skip_on_cran()
  d <- fuzz_data()
  for (s in c(1e-300, 1e300)) {
    expect_true(fuzz_outcome(gpr_loo(d$x, d$y * s)) %in% c("ok", "classed"))
    expect_true(fuzz_outcome(gpr_loo(d$x * s, d$y)) %in% c("ok", "classed"))
    expect_true(fuzz_outcome(gpr_pursuit(d$x, d$y * s)) %in% c("ok", "classed"))
    expect_true(fuzz_outcome(find_label_issues(x = d$x, y = d$y * s)) %in% c("ok", "classed"))
  }
})

test_that("gpc_ep, sgd_robust and label_dist_vb never fail unclassed", {
  skip_on_cran()
  d <- fuzz_data()
  expect_equal(fuzz_walk(gpc_ep, list(x = d$x, y = d$cls),
                         args = c("x", "y", "kernel", "likelihood")), character())
  expect_equal(fuzz_walk(sgd_robust, list(x = d$x, y = d$cls),
                         args = c("x", "y", "loss", "lambda", "eta")), character())
  sim <- sim_label_dist(M = 3, U = 12, N = 60, group_size = 6, D = 3, n_test = 10)
  expect_equal(fuzz_walk(label_dist_vb, list(x = sim$x, groups = sim$groups,
                                             label_dist = sim$label_dist),
                         args = c("x", "groups", "label_dist", "alpha_w", "threads")),
               character())
})

test_that("find_label_issues never fails unclassed", {
  skip_on_cran()
  d <- fuzz_data()
  p <- cbind(a = stats::plogis(d$x[, 1] * 4 - 2), b = 0)
  p[, "b"] <- 1 - p[, "a"]
  expect_equal(fuzz_walk(find_label_issues, list(labels = d$cls, pred_probs = p),
                         args = c("labels", "pred_probs", "fdr")), character())
  expect_equal(fuzz_walk(find_label_issues, list(x = d$x, y = d$y),
                         args = c("x", "y", "folds", "threads")), character())
})

test_that("simulators and helpers bound their sizes", {
  skip_on_cran()
  expect_equal(fuzz_walk(sim_friedman, list(n = 20), args = "n"), character())
  expect_equal(fuzz_walk(corrupt_labels, list(y = rnorm(20), rate = 0.1),
                         args = c("y", "rate", "level")), character())
  expect_equal(fuzz_walk(kernel_matrix, list(kernel = gp_kernel("rbf"), x = cbind(1:5)),
                         args = c("kernel", "x", "z")), character())
})

# ---- the whole exported API ----------------------------------------------------
# Every exported function with every argument (its formals, or those of its
# default method) replaced by each bad value in turn, and every method of
# every fitted class with a foreign or modified object and bad values of its
# other arguments. A call must end in a result (finite where numeric) or a
# classed noisylabels error. Base calls are small and cheap (20 rows, fixed
# settings) so the walk stays within seconds per function.
fuzz_small <- function() {
  set.seed(11)
  n <- 20
  x <- matrix(stats::runif(n * 2), n, 2, dimnames = list(NULL, c("x1", "x2")))
  y <- sin(3 * x[, 1]) + stats::rnorm(n, sd = 0.1)
  cls <- factor(ifelse(x[, 1] + stats::rnorm(n, sd = 0.2) > 0.5, "a", "b"))
  cls3 <- factor(rep(c("a", "b", "c"), length.out = n))
  p <- cbind(a = stats::plogis(x[, 1] * 4 - 2), b = 0)
  p[, "b"] <- 1 - p[, "a"]
  sim <- sim_label_dist(M = 3, U = 12, N = 60, group_size = 6, D = 3, n_test = 10)
  list(x = x, y = y, cls = cls, cls3 = cls3, p = p, sim = sim,
       data = data.frame(x, y = y, cls = cls))
}

test_that("every exported constructor, simulator and helper refuses bad values with a classed error", {
  skip_on_cran()
  d <- fuzz_small()
  withr::local_dir(withr::local_tempdir())
  expect_fuzz_clean("gp_kernel", gp_kernel, list(type = "rbf"))
  expect_fuzz_clean("kernel_matrix", kernel_matrix, list(kernel = gp_kernel("rbf"), x = d$x))
  expect_fuzz_clean("gpr_loo_control", gpr_loo_control, list())
  expect_fuzz_clean("gpc_ep_control", gpc_ep_control, list())
  expect_fuzz_clean("pursuit_control", pursuit_control, list())
  expect_fuzz_clean("smooth_ramp_params", smooth_ramp_params, list(s = -1))
  expect_fuzz_clean("sim_friedman", sim_friedman, list(n = 10))
  expect_fuzz_clean("sim_hartmann6", sim_hartmann6, list(n = 10))
  expect_fuzz_clean("sim_tang1d", sim_tang1d, list())
  expect_fuzz_clean("sim_goldberg", sim_goldberg, list())
  expect_fuzz_clean("sim_le", sim_le, list())
  expect_fuzz_clean("sim_label_dist", sim_label_dist,
                    list(M = 3, U = 6, N = 30, group_size = 6, D = 2, n_test = 5))
  expect_fuzz_clean("corrupt_labels", corrupt_labels, list(y = d$y, rate = 0.2))
  expect_fuzz_clean("flip_labels", flip_labels, list(y = d$cls, rate = 0.2))
  expect_fuzz_clean("add_outliers", add_outliers, list(x = d$x, y = d$y))
  expect_fuzz_clean("detection_metrics", detection_metrics,
                    list(scores = d$y, truth = d$y > 0.5))
  expect_fuzz_clean("confident_joint", confident_joint, list(labels = d$cls, pred_probs = d$p))
  svm <- tempfile(fileext = ".svm")
  writeLines(c("+1 1:0.5 3:1", "-1 2:2", "+1 1:1 2:1 3:1"), svm)
  expect_fuzz_clean("read_libsvm", read_libsvm, list(file = svm))
})

test_that("every fitting function refuses bad values of each argument with a classed error", {
  skip_on_cran()
  d <- fuzz_small()
  method <- function(g) getS3method(g, "default", envir = asNamespace("noisylabels"))
  expect_fuzz_clean("gpr_loo", gpr_loo, list(x = d$x, y = d$y, restarts = 1),
                    formals_of = method("gpr_loo"))
  expect_fuzz_clean("gpr_pursuit", gpr_pursuit,
                    list(x = d$x, y = d$y, n_outliers = 0:2, direction = "forward",
                         selection = "bic", refine = FALSE), formals_of = method("gpr_pursuit"))
  expect_fuzz_clean("gpr_baseline", gpr_baseline, list(x = d$x, y = d$y))
  expect_fuzz_clean("gpc_ep", gpc_ep, list(x = d$x, y = d$cls, learn_kernel = FALSE),
                    formals_of = method("gpc_ep"))
  expect_fuzz_clean("sgd_robust", sgd_robust, list(x = d$x, y = d$cls, epochs = 2, eta = 0.1),
                    formals_of = method("sgd_robust"))
  expect_fuzz_clean("cv_sgd_robust", cv_sgd_robust,
                    list(x = d$x, y = d$cls, loss = "hinge", lambda = 1e-3, folds = 2, epochs = 2,
                         eta = 0.1), formals_of = method("cv_sgd_robust"))
  expect_fuzz_clean("cv_gpr_loo", cv_gpr_loo, list(x = d$x, y = d$y, lambda = 0, folds = 2),
                    formals_of = method("cv_gpr_loo"))
  expect_fuzz_clean("label_dist_vb", label_dist_vb,
                    list(x = d$sim$x, groups = d$sim$groups, label_dist = d$sim$label_dist,
                         max_iter = 20), formals_of = method("label_dist_vb"))
  expect_fuzz_clean("label_dist_baseline", label_dist_baseline,
                    list(x = d$sim$x, groups = d$sim$groups, label_dist = d$sim$label_dist))
  expect_fuzz_clean("find_label_issues", find_label_issues, list(labels = d$cls, pred_probs = d$p),
                    formals_of = method("find_label_issues"))
  expect_fuzz_clean("find_label_issues(x, y)", find_label_issues,
                    list(x = d$x, y = d$y, method = "gpr_loo", folds = 2),
                    args = c("x", "y", "method", "folds", "task", "fdr", "n_issues", "tolerance"))
  # the formula interfaces: bad formulas and bad data
  for (g in c("gpr_loo", "gpr_pursuit", "gpc_ep", "sgd_robust", "find_label_issues")) {
    resp <- if (g %in% c("gpc_ep", "sgd_robust")) "cls" else "y"
    base <- list(x = stats::as.formula(paste(resp, "~ x1 + x2")), data = d$data)
    if (g == "gpc_ep") base$learn_kernel <- FALSE
    if (g == "sgd_robust") base$epochs <- 2
    if (g == "find_label_issues") base$method <- "gpr_loo"
    expect_fuzz_clean(paste0(g, "(formula)"), get(g), base, args = c("x", "data"))
  }
})

# Fitted objects of every class, small and fast.
fuzz_fits <- function(d) {
  q <- function(expr) suppressWarnings(suppressMessages(expr))
  list(
    gpr_loo = q(gpr_loo(d$x, d$y)),
    gpr_pursuit = q(gpr_pursuit(d$x, d$y, n_outliers = 0:2)),
    gpr_baseline = q(gpr_baseline(d$x, d$y)),
    gpc_ep = q(gpc_ep(y = d$cls, x = d$x, learn_kernel = FALSE)),
    gpc_ep_ovr = q(gpc_ep(d$x, d$cls3, multiclass = "ovr", learn_kernel = FALSE)),
    sgd_robust = q(sgd_robust(d$x, d$cls, epochs = 2, control = sgd_robust_control(eta = 0.1))),
    label_dist_vb = q(label_dist_vb(d$sim$x, d$sim$groups, d$sim$label_dist, control = label_dist_vb_control(max_iter = 20))),
    label_dist_baseline = q(label_dist_baseline(d$sim$x, d$sim$groups, d$sim$label_dist)),
    find_label_issues = q(find_label_issues(labels = d$cls, pred_probs = d$p)),
    cv_sgd_robust = q(cv_sgd_robust(d$x, d$cls, loss = "hinge", lambda = 1e-3, folds = 2,
                                    epochs = 2, control = sgd_robust_control(eta = 0.1))),
    cv_gpr_loo = q(cv_gpr_loo(d$x, d$y, lambda = 0, folds = 2))
  )
}

fuzz_generics <- c("predict", "print", "summary", "coef", "fitted", "residuals", "label_issues",
                   "noise_scores", "tidy", "glance", "augment", "plot", "autoplot", "logLik", "nobs",
                   "find_label_issues", "update", "as.data.frame")

# The method of generic `g` for `object` (by its classes), or NULL.
fuzz_method <- function(g, object) {
  for (cl in class(object)) {
    m <- utils::getS3method(g, cl, optional = TRUE)
    if (is.null(m)) m <- tryCatch(utils::getS3method(g, cl, envir = asNamespace("noisylabels")),
                                  error = function(e) NULL)
    if (!is.null(m)) return(m)
  }
  NULL
}

test_that("every method of every fitted class checks its object and its arguments", {
  skip_on_cran()
  skip_if_not_installed("ggplot2")
  d <- fuzz_small()
  fits <- fuzz_fits(d)
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off(), add = TRUE)
  for (cls in names(fits)) {
    fit <- fits[[cls]]
    spec <- noisylabels:::fit_specs[[cls]]
    bad_objects <- list(foreign = structure(list(a = 1), class = class(fit)),
                        empty_list = structure(list(), class = class(fit)))
    # each part of the fit removed and altered, spread over the generics
    altered <- list()
    for (p in spec$parts) {
      dropped <- unclass(fit)
      dropped[[p]] <- NULL
      garbage <- unclass(fit)
      garbage[[p]] <- "garbage"
      altered[[length(altered) + 1L]] <- list(paste0("without_", p), structure(dropped, class = class(fit)))
      altered[[length(altered) + 1L]] <- list(paste0("garbage_", p), structure(garbage, class = class(fit)))
    }
    k <- 0L
    for (g in fuzz_generics) {
      m <- fuzz_method(g, fit)
      if (is.null(m)) next
      gen <- get(g, envir = if (g == "autoplot") asNamespace("ggplot2") else
        if (g %in% c("tidy", "glance", "augment")) asNamespace("generics") else globalenv())
      # a valid call first: it must succeed (update() needs new data), unless
      # the method refuses the class by its documented error
      # (find_label_issues() of a baseline without label_issues() or of a result)
      refused <- g == "find_label_issues" &&
        inherits(tryCatch({gen(fit); NULL}, error = identity), "noisylabels_error_no_method")
      if (g != "update" && !refused) {
        fuzz_counts$expectations <- fuzz_counts$expectations + 1L
        expect_identical(fuzz_result(gen(fit)), "ok", label = paste0(g, "(<", cls, ">)"))
      }
      {
        bad <- character()
        k <- k + 1L
        mine <- altered[unique((k - 1L) * 3L + 0:2) %% length(altered) + 1L]
        objects <- c(bad_objects, stats::setNames(lapply(mine, `[[`, 2L), vapply(mine, `[[`, "", 1L)))
        for (b in names(objects)) {
          out <- fuzz_result(gen(objects[[b]]))
          # a foreign object must be refused; an altered part may also be
          # one the method does not read
          allowed <- if (b %in% names(bad_objects)) "classed" else c("classed", "ok")
          if (!out %in% allowed) bad <- c(bad, paste0(b, ": ", out))
        }
        fuzz_counts$expectations <- fuzz_counts$expectations + 1L
        expect_identical(bad, character(), label = paste0(g, "(<modified ", cls, ">)"))
      }
      # the arguments every method shares (newdata, type, threshold) and the
      # display arguments (grid, which, n)
      others <- intersect(names(formals(m))[-1L], c("newdata", "type", "threshold", "grid",
                                                    "which", "n"))
      for (a in others) {
        fuzz_counts$expectations <- fuzz_counts$expectations + 1L
        expect_identical(fuzz_arg(function(...) gen(fit, ...), list(), a), character(),
                         label = paste0(g, "(<", cls, ">, ", a, " = <bad>)"))
      }
    }
  }
  if (nzchar(Sys.getenv("NOISYLABELS_FUZZ_REPORT"))) {
    message(sprintf("fuzz walk: %d calls, %d expectations", fuzz_counts$calls,
                    fuzz_counts$expectations))
  }
})

# ---- issue 40: silent failures and unclassed errors found by the walk -------

test_that("the regression simulators refuse non-finite settings and never return NA labels", {
  for (sim in list(sim_friedman, sim_hartmann6)) {
    for (bad in list(NA, NA_real_, Inf, NaN, "x", c(1, 2))) {
      expect_error(sim(20, corruption = "constant", prob = 0.5, constant = bad),
                   class = "noisylabels_error_input")
      expect_error(sim(20, corruption = "uniform", prob = 0.5, scale = bad),
                   class = "noisylabels_error_input")
    }
    expect_error(sim(20, corruption = "student_t", prob = 0.5, scale = -1),
                 class = "noisylabels_error_input")
    # one point: sd(f) is NA, the default spread is then 0
    for (corr in c("none", "uniform", "constant", "student_t")) for (n in c(1, 2, 20)) {
      set.seed(n)
      s <- sim(n, corruption = corr, prob = 1)
      expect_true(all(is.finite(s$y)), label = paste(corr, n))
      expect_length(s$y, n)
    }
  }
  set.seed(1)
  s <- sim_hartmann6(1, corruption = "constant", prob = 1)
  expect_identical(s$y, s$f)  # constant = max(f) + 3 * 0
})

test_that("the baselines and the cv results have tidy(), glance() and augment()", {
  skip_on_cran()
  set.seed(2)
  s <- sim_friedman(40, d = 5, corruption = "constant", prob = 0.1)
  b <- suppressWarnings(gpr_baseline(s$x, s$y, "trimmed", trim = 0.1))
  td <- tidy(b)
  expect_identical(td, tidy(b$fit))
  g <- glance(b)
  expect_identical(g$n, 40L)
  expect_identical(g$n_kept, length(b$kept))
  a <- augment(b)
  expect_equal(a$.fitted, predict(b, s$x))
  expect_identical(a$.kept, seq_len(40) %in% b$kept)
  expect_equal(a$.resid, s$y - a$.fitted)
  expect_equal(a$.z, a$.resid / predict(b, s$x, se.fit = TRUE)$sd)
  expect_error(augment(b, s$x[1:5, ]), class = "noisylabels_error_dimension")
  yj <- suppressWarnings(gpr_baseline(s$x, s$y, "yeo_johnson"))
  expect_identical(tail(tidy(yj)$term, 1), "yeo_johnson_lambda")
  expect_equal(glance(yj)$lambda, yj$lambda)
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off(), add = TRUE)
  expect_identical(plot(b), b)

  sim <- sim_label_dist(M = 3, U = 12, N = 60, group_size = 6, D = 3, n_test = 10)
  lb <- label_dist_baseline(sim$x, sim$groups, sim$label_dist)
  td <- tidy(lb)
  cf <- coef(lb)
  expect_identical(nrow(td), length(cf))
  expect_equal(td$estimate[td$term == "(Intercept)" & td$class == colnames(cf)[2]], cf[1, 2])
  expect_identical(glance(lb)$n_classes, 3L)
  al <- augment(lb)
  expect_identical(al$.pred, predict(lb))
  expect_equal(al[[paste0(".score_", lb$classes[1])]], unname(predict(lb, type = "score")[, 1]))

  d <- sim_tang1d()
  cv <- suppressWarnings(cv_gpr_loo(d$data["x"], d$data$y, lambda = c(0, 3), folds = 2, restarts = 1))
  expect_identical(augment(cv), augment(cv$fit))
})

test_that("augment() of find_label_issues() keeps the data's rows, with NA for dropped ones", {
  skip_on_cran()
  skip_if_not_installed("ranger")
  d <- droplevels(iris[51:150, ])
  d$Species[c(3, 40)] <- NA
  set.seed(1)
  expect_message(r <- find_label_issues(Species ~ ., d), class = "noisylabels_message_dropped_rows")
  expect_message(find_label_issues(Species ~ ., d), "Dropped 2 rows")
  expect_setequal(r$label_issues$row, setdiff(1:100, c(3, 40)))
  a <- augment(r, d)
  expect_identical(nrow(a), 100L)
  expect_identical(names(a)[1:5], names(d))
  expect_true(all(is.na(a$.score[c(3, 40)])))
  li <- r$label_issues
  expect_equal(a$.score[li$row], li$score)
  expect_identical(a$.flagged[li$row], li$flagged)
  # without data: one row per label, in row order
  a0 <- augment(r)
  expect_identical(a0$.row, sort(li$row))
  # no message when nothing is dropped
  expect_no_message(find_label_issues(Species ~ ., droplevels(iris[51:150, ])),
                    class = "noisylabels_message_dropped_rows")
})

test_that("find_label_issues(carb ~ ., mtcars) shows no internal warning", {
  skip_on_cran()
  skip_if_not_installed("ranger")
  # carb has classes of a single row (6 and 8): the fold assignment's
  # sample() of one number, and ranger's unused factor levels, warned
  # (the package's own classed warnings, e.g. about classes with few labels,
  # are not internal ones)
  for (s in 1:3) {
    set.seed(s)
    internal <- character()
    r <- withCallingHandlers(find_label_issues(carb ~ ., mtcars), warning = function(w) {
      if (!inherits(w, "noisylabels_warning")) internal <<- c(internal, conditionMessage(w))
      invokeRestart("muffleWarning")
    })
    expect_identical(internal, character())
    expect_identical(nrow(r$label_issues), 32L)
  }
  # the folds still spread each class and give every row one fold
  set.seed(1)
  y <- factor(mtcars$carb)
  id <- noisylabels:::make_folds(y, 5)
  expect_length(id, 32)
  expect_true(all(id %in% 1:5))
  for (lev in levels(y)) {
    k <- sum(y == lev)
    expect_identical(length(unique(id[y == lev])), min(k, 5L))
  }
})

test_that("display arguments and allocations are checked with classed errors", {
  skip_on_cran()
  d <- fuzz_small()
  g <- suppressWarnings(gpc_ep(d$x, d$cls, learn_kernel = FALSE))
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off(), add = TRUE)
  expect_error(plot(g, grid = -1), class = "noisylabels_error_input")
  expect_error(plot(g, threshold = NA), class = "noisylabels_error_input")
  expect_error(plot(g, type = "scores", threshold = 2), class = "noisylabels_error_input")
  p <- suppressWarnings(gpr_pursuit(d$x[, 1], d$y, n_outliers = 0:1))
  expect_error(plot(p, which = 99), class = "noisylabels_error_choice")
  expect_error(plot(p, which = NA), class = "noisylabels_error_choice")
  expect_error(print(label_issues(g), n = -1), class = "noisylabels_error_input")
  # allocations above the noisylabels.max_gb limit are refused before they are tried
  withr::local_options(noisylabels.max_gb = 1)
  expect_error(kernel_matrix(gp_kernel("rbf"), matrix(0, 2e4, 1)),
               class = "noisylabels_error_memory")
  expect_error(sim_label_dist(M = 1e6), class = "noisylabels_error_memory")
  f <- withr::local_tempfile(fileext = ".svm")
  writeLines(c("+1 1:0.5 2000000000:1", "-1 2:2"), f)
  expect_error(read_libsvm(f), class = "noisylabels_error_memory")
  withr::local_options(noisylabels.max_gb = 8)
  expect_equal(dim(kernel_matrix(gp_kernel("rbf"), matrix(0, 3, 1))), c(3L, 3L))
})

test_that("the exports the walk does not reach check their file and label arguments", {
  skip_on_cran()
  d <- fuzz_small()
  res <- find_label_issues(labels = d$cls, pred_probs = d$p)
  for (bad in list(NULL, NA, 1, c("a", "b"), "", list("a"))) {
    expect_error(label_studio_export(res, file = bad), class = "noisylabels_error_file")
    if (requireNamespace("DT", quietly = TRUE)) {
      expect_error(review_report(res, file = bad), class = "noisylabels_error_file")
    }
  }
  b <- suppressWarnings(gpr_baseline(d$x, d$y))
  expect_true(is.finite(predictive_loglik(b, d$x, d$y)))
  for (bad in list(NULL, "x", list(1, 2), d$y[1:3], c(d$y[-1], NA))) {
    expect_error(predictive_loglik(b, d$x, bad), class = "noisylabels_error_input")
  }
})

test_that("a function where a number or names belong is refused with a classed error", {
  # cases of the full walk (NOISYLABELS_FUZZ_FULL=1) that ended unclassed
  skip_on_cran()
  d <- fuzz_small()
  fn <- function(x) x
  # `c` a function: every c() inside sgd_robust() would have called it
  expect_error(sgd_robust(d$x, d$cls, c = fn), class = "noisylabels_error_input")
  expect_error(cv_sgd_robust(d$x, d$cls, s = fn, folds = 2, epochs = 2),
               class = "noisylabels_error_input")
  expect_error(label_dist_vb(d$sim$x, d$sim$groups, d$sim$label_dist, classes = fn),
               class = "noisylabels_error_classes")
  expect_error(label_dist_baseline(d$sim$x, d$sim$groups, d$sim$label_dist, classes = fn),
               class = "noisylabels_error_classes")
  g <- suppressMessages(suppressWarnings(gpc_ep(d$x, d$cls3, multiclass = "ovr", learn_kernel = FALSE)))
  p <- predict(g, d$x[1:4, ], type = "prob")
  expect_identical(dim(p), c(4L, 3L))
  expect_equal(unname(rowSums(p)), rep(1, 4))
  expect_identical(dim(predict(g, d$x[1, , drop = FALSE], type = "prob")), c(1L, 3L))
  expect_true(fuzz_result(predict(g, c(1, 2, 3))) %in% c("ok", "classed"))
})
