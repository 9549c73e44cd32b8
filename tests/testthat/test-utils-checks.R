# Argument handling shared by every fitting function: misspelt or foreign
# arguments, invalid choices, and new data that lacks the formula's variables
# are classed errors that name the problem.

arg_data <- function() {
  set.seed(3)
  x <- matrix(rnorm(40 * 2), 40, 2, dimnames = list(NULL, c("x1", "x2")))
  df <- data.frame(x, y = sin(x[, 1]) + rnorm(40, sd = 0.1),
                   cls = factor(ifelse(x[, 1] + rnorm(40, sd = 0.3) > 0, "b", "a")))
  list(x = x, df = df)
}

test_that("an argument no fitting function knows is an error, with the closest name", {
  d <- arg_data()
  y <- d$df$y
  cls <- d$df$cls
  calls <- list(
    gpr_loo = function() gpr_loo(d$x, y, nosie = "full"),
    gpr_pursuit = function() gpr_pursuit(d$x, y, schedule = c(0, 0.1)),
    gpc_ep = function() gpc_ep(d$x, cls, epsilom = 0.1),
    sgd_robust = function() sgd_robust(d$x, cls, lamda = 1e-3),
    label_dist_vb = function() label_dist_vb(d$x, rep(1:4, each = 10), matrix(0.5, 4, 2), alpha_ww = 2),
    cv_sgd_robust = function() cv_sgd_robust(d$x, cls, folds = 2, lamdba = 1),
    cv_gpr_loo = function() cv_gpr_loo(d$x, y, folds = 2, nosie = "x")
  )
  for (fn in names(calls)) {
    err <- tryCatch(calls[[fn]](), error = identity)
    expect_s3_class(err, "noisylabels_error_unknown_argument")
    expect_s3_class(err, "noisylabels_error_input")
    expect_match(conditionMessage(err), "Unknown argument", label = fn)
  }
  hint <- function(f) cli::ansi_strip(conditionMessage(tryCatch(f(), error = identity)))
  expect_match(hint(calls$gpr_loo), "Did you mean `noise` instead of `nosie`", fixed = TRUE)
  expect_match(hint(calls$sgd_robust), "Did you mean `lambda`", fixed = TRUE)
  expect_match(hint(calls$gpc_ep), "Did you mean `epsilon`", fixed = TRUE)
  expect_match(hint(calls$label_dist_vb), "Did you mean `alpha_w`", fixed = TRUE)
  # no made-up suggestion when nothing is close
  expect_no_match(hint(calls$gpr_pursuit), "Did you mean")
  # several at once, and unnamed extras through the formula method
  err <- tryCatch(sgd_robust(cls ~ x1, data = d$df, foo = 1, bar = 2), error = identity)
  expect_match(cli::ansi_strip(conditionMessage(err)), "Unknown arguments `foo` and `bar`", fixed = TRUE)
  # (an unnamed extra only reaches `...` once every formal is filled)
  f <- function(a, ...) noisylabels:::check_dots_empty("f", ...)
  expect_silent(f(1))
  err <- tryCatch(f(1, 2, 3, b = 4), error = identity)
  expect_s3_class(err, "noisylabels_error_unknown_argument")
  expect_match(cli::ansi_strip(conditionMessage(err)), "Unknown argument `b`.*2 unnamed arguments")
})

test_that("choices are matched like match.arg() but fail with a classed error", {
  d <- arg_data()
  # partial matching and the untouched default still work
  expect_identical(gpr_loo(d$x, d$df$y, noise = "unif")$noise, "uniform")
  expect_identical(noisylabels:::match_arg(c("a", "b"), c("a", "b")), "a")
  expect_identical(noisylabels:::match_arg(NULL, c("a", "b")), "a")
  f <- function(type = c("alpha", "beta")) noisylabels:::match_arg(type)
  expect_identical(f(), "alpha")
  expect_identical(f("be"), "beta")
  err <- tryCatch(f("gamma"), error = identity)
  expect_s3_class(err, "noisylabels_error_choice")
  expect_match(cli::ansi_strip(conditionMessage(err)), '`type` must be one of "alpha" or "beta", not "gamma"',
               fixed = TRUE)
  expect_error(f(c("alpha", "beta", "x")), class = "noisylabels_error_choice")
  expect_error(f(NA_character_), class = "noisylabels_error_choice")
  expect_error(f(1), "numeric vector of length 1", class = "noisylabels_error_choice")
  for (g in list(function() sgd_robust(d$x, d$df$cls, loss = "huber"),
                 function() gpr_pursuit(d$x, d$df$y, direction = "sideways"),
                 function() gpc_ep(d$x, d$df$cls, likelihood = "logit"),
                 function() gp_kernel("matern72"))) {
    expect_error(g(), class = "noisylabels_error_choice")
  }
})

test_that("predict() on new data without the formula's variables names them", {
  d <- arg_data()
  fits <- list(
    gpr_loo = gpr_loo(y ~ x1 + x2, data = d$df),
    sgd_robust = suppressWarnings(sgd_robust(cls ~ x1 + x2, data = d$df, epochs = 3, seed = 1)),
    gpc_ep = gpc_ep(cls ~ x1 + x2, data = d$df)
  )
  for (nm in names(fits)) {
    err <- tryCatch(predict(fits[[nm]], newdata = d$df[, "x1", drop = FALSE]), error = identity)
    expect_s3_class(err, "noisylabels_error_newdata")
    expect_match(cli::ansi_strip(conditionMessage(err)), "lacks the variable x2", label = nm)
    # the columns it needs, in any order and with extras, are enough
    expect_equal(predict(fits[[nm]], newdata = d$df[, c("cls", "x2", "x1")]),
                 predict(fits[[nm]], newdata = d$df), label = nm)
  }
  # a new factor level is a classed error too
  df2 <- transform(d$df, g = factor(rep(c("u", "v"), 20)))
  fit <- suppressWarnings(sgd_robust(cls ~ x1 + g, data = df2, epochs = 3, seed = 1))
  expect_error(predict(fit, newdata = data.frame(x1 = 0, g = "w")), "does not fit",
               class = "noisylabels_error_newdata")
})

test_that("call_core() names the routine, keeps the core's message and classes it by kind", {
  # numeric: a Cholesky factorization that fails (noisylabels::NumericalError)
  e <- tryCatch(noisylabels:::call_core(hook("chol_inverse", matrix(c(1, 2, 2, 1), 2), "lapack")),
                error = function(e) e)
  expect_s3_class(e, "noisylabels_error_numeric")
  expect_s3_class(e, "noisylabels_error_core")
  expect_match(conditionMessage(e), "chol_inverse", fixed = TRUE)
  expect_match(conditionMessage(e), "not positive definite", fixed = TRUE)
  # input: the core refusing its arguments (a list without the fields it reads)
  e <- tryCatch(noisylabels:::call_core(noisylabels:::.sgd_fit(list(n = 1), NULL, list())),
                error = function(e) e)
  expect_s3_class(e, "noisylabels_error_input")
  expect_match(conditionMessage(e), "sgd_fit", fixed = TRUE)
  # resource: std::bad_alloc as Rcpp hands it to R
  bad_alloc <- function() {
    stop(structure(class = c("std::bad_alloc", "C++Error", "error", "condition"),
                   list(message = "std::bad_alloc", call = NULL)))
  }
  e <- tryCatch(noisylabels:::call_core(bad_alloc()), error = function(e) e)
  expect_s3_class(e, "noisylabels_error_memory")
  expect_s3_class(e, "noisylabels_error_resource")
  expect_false(inherits(e, "noisylabels_error_numeric"))
  expect_match(conditionMessage(e), "ran out of memory", fixed = TRUE)
})
