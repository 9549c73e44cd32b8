#' Regression baselines for learning from group label distributions
#'
#' The two baselines of Culotta et al. (2015) as used by Yoshikawa (2017),
#' with the settings of Yoshikawa's comparison: one row per group, whose
#' features are the mean of its members' features,
#' \eqn{\bar x_i = n_i^{-1} \sum_{u \in G_i} x_u}, and whose targets are the
#' observed distribution \eqn{s_i}. A new instance is assigned
#' \eqn{\arg\max_l (\hat b_l + x^\top \hat B_{\cdot l})}.
#'
#' * `"ridge"`: independent ridge regressions with an unpenalised intercept,
#'   minimising \eqn{\|S_c - F_c B\|^2 + \lambda \|B\|^2} on centred data
#'   (scikit-learn's `Ridge(alpha = lambda)`); default `lambda = 0.1`.
#' * `"mten"`: multi-task elastic net through `glmnet(family = "mgaussian",
#'   alpha = 0.5, standardize = FALSE)` along a decreasing path from 1 to
#'   `lambda` (default `1e-5`), i.e. scikit-learn's
#'   `MultiTaskElasticNet(alpha = lambda, l1_ratio = 0.5)`. Needs the
#'   \pkg{glmnet} package.
#'
#' @inheritParams label_dist_vb
#' @param x Numeric feature matrix (U x D) or data frame.
#' @param method `"ridge"` or `"mten"`.
#' @param lambda Penalty (see above); `NULL` uses the method's default.
#' @return A fit of class `c("label_dist_baseline", "noisylabels_fit")` with
#'   `coefficients` (D x M), `intercept` (length M), `method`, `lambda`,
#'   `classes`, the group-mean design `group_x`, and as every fit `task`
#'   (`"classification"`) and `has_p_wrong` (`FALSE`). It is a baseline for
#'   predicting instance classes: it has no model of wrong labels, so
#'   [label_issues()], [noise_scores()] and [find_label_issues()] refuse it
#'   with an error of class `noisylabels_error_no_method`; [label_dist_vb()]
#'   scores instances and groups.
#' @references Culotta, A., Kumar, N. R. and Cutler, J. (2015). Predicting the
#'   demographics of Twitter users from website traffic data. AAAI 2015.
#' @examples
#' set.seed(1)
#' sim <- sim_label_dist(U = 60, N = 300, group_size = 15, alpha_c1 = 100)
#' base <- label_dist_baseline(sim$x, sim$groups, sim$label_dist)
#' mean(predict(base, sim$x) == sim$y)
#' @export
label_dist_baseline <- function(x, groups, label_dist, method = c("ridge", "mten"),
                                lambda = NULL, raw_dist = NULL, classes = NULL) {
  method <- match_arg(method)
  x <- check_x_matrix(x, "x")
  prep <- ld_prepare(x, groups, label_dist, raw_dist, classes)
  lambda <- lambda %||% if (method == "ridge") 0.1 else 1e-5
  check_number(lambda, "lambda", 0)
  grp <- rep.int(seq_len(prep$N), prep$sizes)
  fmean <- rowsum(x[prep$pair_unit + 1L, , drop = FALSE], grp, reorder = TRUE) / prep$sizes
  s <- prep$s
  if (method == "ridge") {
    fbar <- colMeans(fmean)
    sbar <- colMeans(s)
    fc <- sweep(fmean, 2, fbar)
    sc <- sweep(s, 2, sbar)
    B <- solve(crossprod(fc) + diag(lambda, ncol(fc)), crossprod(fc, sc))
    b <- sbar - drop(fbar %*% B)
  } else {
    if (!requireNamespace("glmnet", quietly = TRUE)) {
      abort_input("{.code method = \"mten\"} needs the {.pkg glmnet} package.")
    }
    if (lambda <= 0) abort_input("{.arg lambda} must be positive for {.code method = \"mten\"}.")
    path <- exp(seq(log(max(1, lambda)), log(lambda), length.out = 60))
    gf <- glmnet::glmnet(fmean, s, family = "mgaussian", alpha = 0.5, lambda = path,
                         standardize = FALSE, intercept = TRUE)
    cf <- stats::coef(gf, s = lambda)
    full <- vapply(cf, function(v) as.numeric(v), numeric(ncol(x) + 1L))
    b <- full[1, ]
    B <- full[-1, , drop = FALSE]
  }
  dimnames(B) <- list(colnames(x) %||% paste0("x", seq_len(ncol(x))), prep$classes)
  names(b) <- prep$classes
  new_noisylabels_fit(list(coefficients = B, intercept = b, method = method, lambda = lambda,
                           classes = prep$classes, group_x = fmean, x = x, n_groups = prep$N),
                      "label_dist_baseline", task = "classification", p_wrong = FALSE)
}

#' @rdname label_dist_baseline
#' @param object A `label_dist_baseline` fit.
#' @param newdata Feature matrix; `NULL` uses the training instances.
#' @param type `"class"` (argmax) or `"score"` (the regression outputs).
#' @param ... Unused.
#' @export
predict.label_dist_baseline <- function(object, newdata = NULL, type = c("class", "score"), ...) {
  check_fit(object, "label_dist_baseline")
  type <- match_arg(type)
  xm <- if (is.null(newdata)) object$x else check_x_matrix(newdata, "newdata")
  if (ncol(xm) != nrow(object$coefficients)) {
    abort_input("{.arg newdata} has {ncol(xm)} column{?s}; the fit used {nrow(object$coefficients)}.")
  }
  sc <- sweep(xm %*% object$coefficients, 2, object$intercept, "+")
  if (type == "score") return(sc)
  factor(object$classes[max.col(sc, ties.method = "first")], levels = object$classes)
}

#' @export
coef.label_dist_baseline <- function(object, ...) {
  check_fit(object, "label_dist_baseline")
  rbind(`(Intercept)` = object$intercept, object$coefficients)
}

#' @export
print.label_dist_baseline <- function(x, ...) {
  check_fit(x, "label_dist_baseline")
  cli::cat_line(sprintf("Group-mean %s baseline (lambda = %s): %d groups, %d features, %d classes",
                        if (x$method == "ridge") "ridge" else "multi-task elastic net",
                        format(x$lambda), x$n_groups, nrow(x$coefficients), length(x$classes)))
  invisible(x)
}

#' @rdname label_dist_baseline
#' @param x A `label_dist_baseline` fit (for `tidy()`, `glance()`,
#'   `augment()`).
#' @param data For `augment()`: a data frame of the training instances'
#'   other columns to bind the predictions to (`NULL`: the features).
#' @return `tidy()`: one row per coefficient (`term`, `class`, `estimate`,
#'   the intercept first); `glance()`: one row with `method`, `lambda`,
#'   `n_groups`, `n_instances`, `n_features` and `n_classes`; `augment()`: the
#'   training instances with `.pred` (the argmax class) and one `.score_<class>`
#'   column per class.
#' @export
tidy.label_dist_baseline <- function(x, ...) {
  check_fit(x, "label_dist_baseline")
  cf <- coef(x)
  data.frame(term = rep(rownames(cf), ncol(cf)), class = rep(colnames(cf), each = nrow(cf)),
             estimate = as.vector(cf), stringsAsFactors = FALSE)
}

#' @rdname label_dist_baseline
#' @export
glance.label_dist_baseline <- function(x, ...) {
  check_fit(x, "label_dist_baseline")
  data.frame(method = x$method, lambda = x$lambda, n_groups = x$n_groups %||% NA_integer_,
             n_instances = NROW(x$x), n_features = nrow(x$coefficients),
             n_classes = length(x$classes), stringsAsFactors = FALSE)
}

#' @rdname label_dist_baseline
#' @export
augment.label_dist_baseline <- function(x, data = NULL, ...) {
  check_fit(x, "label_dist_baseline")
  if (!is.matrix(x$x)) abort_input("This {.cls label_dist_baseline} fit has no training features to augment.")
  base <- if (is.null(data)) as.data.frame(x$x) else as.data.frame(data)
  if (nrow(base) != nrow(x$x)) {
    abort_input("{.arg data} has {nrow(base)} row{?s}; the fit has {nrow(x$x)} training instances.",
                class = "noisylabels_error_dimension")
  }
  sc <- predict(x, type = "score")
  base$.pred <- factor(x$classes[max.col(sc, ties.method = "first")], levels = x$classes)
  for (k in seq_along(x$classes)) base[[paste0(".score_", x$classes[k])]] <- sc[, k]
  base
}
