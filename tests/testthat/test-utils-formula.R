# The shared model frame of the formula interfaces (R/utils-formula.R) and the
# design predict() rebuilds from newdata.

formula_toy <- function(n = 24) {
  set.seed(3)
  d <- data.frame(x1 = seq(0, 1, length.out = n), x2 = stats::runif(n),
                  f = factor(rep(c("u", "v", "w"), length.out = n)))
  d$y <- sin(4 * d$x1) + stats::rnorm(n, sd = 0.1)
  d$cls <- factor(ifelse(d$x1 + stats::rnorm(n, sd = 0.2) > 0.5, "a", "b"))
  d$ch <- as.character(d$f)
  d
}

# one call per formula interface, with the response it needs
formula_fitters <- function() {
  list(
    gpr_loo = function(f, data, ...) gpr_loo(f, data = data, ...),
    cv_gpr_loo = function(f, data, ...) cv_gpr_loo(f, data = data, ...),
    gpr_pursuit = function(f, data, ...) gpr_pursuit(f, data = data, ...),
    gpc_ep = function(f, data, ...) gpc_ep(f, data = data, ...),
    sgd_robust = function(f, data, ...) sgd_robust(f, data = data, ...),
    cv_sgd_robust = function(f, data, ...) cv_sgd_robust(f, data = data, ...),
    find_label_issues = function(f, data, ...) find_label_issues(f, data = data, ...)
  )
}
formula_response <- c(gpr_loo = "y", cv_gpr_loo = "y", gpr_pursuit = "y", gpc_ep = "cls",
                      sgd_robust = "cls", cv_sgd_robust = "cls", find_label_issues = "y")

test_that("every formula interface refuses bad data at the entry point with a classed error", {
  d <- formula_toy()
  with_list <- d
  with_list$L <- I(as.list(seq_len(nrow(d))))
  with_dup <- d
  names(with_dup)[names(with_dup) == "x2"] <- "x1"
  with_na <- d
  with_na$x1[3] <- NA
  for (m in names(formula_fitters())) {
    fit <- formula_fitters()[[m]]
    r <- formula_response[[m]]
    fm <- function(rhs) stats::as.formula(paste(r, "~", rhs))
    expect_error(fit(fm("x1 + L"), with_list), class = "noisylabels_error_formula",
                 regexp = "list column", info = m)
    expect_error(fit(fm("x1"), with_dup), class = "noisylabels_error_formula",
                 regexp = "more than one column", info = m)
    expect_error(fit(fm("x1 + x2"), d[0, ]), class = "noisylabels_error_formula",
                 regexp = "no rows", info = m)
    expect_error(fit(fm("x1 + not_a_column_zz9"), d), class = "noisylabels_error_formula",
                 regexp = "lacks the variable", info = m)
    expect_error(fit(stats::as.formula("zz ~ x1"), d), class = "noisylabels_error_formula",
                 regexp = "lacks the response", info = m)
    expect_error(fit(~ x1 + x2, d), class = "noisylabels_error_formula",
                 regexp = "no response", info = m)
    expect_error(fit(fm("x1"), NULL), class = "noisylabels_error_formula", info = m)
    expect_error(fit(fm("x1"), list(1, 2)), class = "noisylabels_error_formula", info = m)
    expect_error(fit(fm("x1 + x2"), with_na, na.action = stats::na.fail),
                 class = "noisylabels_error_missing", regexp = "x1", info = m)
  }
  sim <- sim_label_dist(M = 3, U = 12, N = 60, group_size = 6, D = 3, n_test = 10)
  ld <- as.data.frame(sim$x)
  names(ld) <- c("a", "b", "c")
  ld_na <- ld
  ld_na$a[2] <- NA
  ld_dup <- ld
  names(ld_dup)[2] <- "a"
  ldvb <- function(f, data) label_dist_vb(f, data = data, groups = sim$groups, label_dist = sim$label_dist)
  expect_error(ldvb(~ ., ld_dup), class = "noisylabels_error_formula", regexp = "more than one column")
  expect_error(ldvb(y ~ a, cbind(ld, y = 1)), class = "noisylabels_error_formula", regexp = "one-sided")
  expect_error(ldvb(~ a + b, ld_na), class = "noisylabels_error_missing")
})

test_that("character and logical columns enter as factors, in training and in predict()", {
  d <- formula_toy()
  d$lg <- d$x2 > 0.5
  by_char <- suppressWarnings(sgd_robust(cls ~ x1 + ch + lg, data = d, epochs = 3, seed = 1))
  d2 <- d
  d2$ch <- factor(d2$ch)
  d2$lg <- factor(d2$lg)
  by_factor <- suppressWarnings(sgd_robust(cls ~ x1 + ch + lg, data = d2, epochs = 3, seed = 1))
  expect_equal(unname(coef(by_char)), unname(coef(by_factor)))
  expect_identical(predict(by_char, d[1:5, ]), predict(by_factor, d2[1:5, ]))
  # the design is the matrix interface's with dummy columns (treatment contrasts)
  x <- cbind(x1 = d$x1, chv = d$ch == "v", chw = d$ch == "w", lgTRUE = d$lg) * 1
  by_matrix <- suppressWarnings(sgd_robust(x, d$cls, epochs = 3, seed = 1))
  expect_equal(unname(coef(by_char)), unname(coef(by_matrix)))
  # a factor with one level left after dropping rows: a classed error naming it
  one <- d[d$ch == "u", ]
  expect_error(sgd_robust(cls ~ x1 + ch, data = one), class = "noisylabels_error_formula",
               regexp = "ch")
})

test_that("na.omit drops incomplete rows and find_label_issues() reports rows of data", {
  d <- formula_toy(40)
  d$x2[c(4, 9)] <- NA
  res <- find_label_issues(y ~ x1 + x2, data = d, folds = 3)
  expect_setequal(res$label_issues$row, setdiff(1:40, c(4, 9)))
  expect_equal(res$n_data, 40)
})

test_that("predict() on every formula fit refuses newdata of the wrong shape with a classed error", {
  d <- formula_toy()
  fits <- list(
    gpr_loo = gpr_loo(y ~ x1 + f, data = d),
    gpr_pursuit = gpr_pursuit(y ~ x1 + f, data = d, n_outliers = 0:2),
    gpc_ep = gpc_ep(cls ~ x1 + f, data = d),
    sgd_robust = suppressWarnings(sgd_robust(cls ~ x1 + f, data = d, epochs = 3))
  )
  as_text <- d
  as_text$x1 <- as.character(as_text$x1)
  as_text$x1[2] <- "n/a"
  lacking <- d[, c("x2", "f")]
  new_level <- d
  new_level$f <- factor(ifelse(d$f == "u", "z", as.character(d$f)))
  as_factor <- d
  as_factor$x1 <- factor(round(d$x1, 1))
  for (m in names(fits)) {
    fit <- fits[[m]]
    expect_error(predict(fit, as_text), class = "noisylabels_error_newdata",
                 regexp = "another type", info = m)
    expect_error(predict(fit, as_factor), class = "noisylabels_error_newdata",
                 regexp = "another type", info = m)
    expect_error(predict(fit, lacking), class = "noisylabels_error_newdata",
                 regexp = "lacks the variable", info = m)
    expect_error(predict(fit, new_level), class = "noisylabels_error_newdata",
                 regexp = "\"z\"", info = m)
    expect_error(predict(fit, list(1, 2)), class = "noisylabels_error_newdata", info = m)
    # the training rows through newdata give the fitted design back
    expect_equal(length(predict(fit, d[1:4, ])), 4L, info = m)
  }
})
