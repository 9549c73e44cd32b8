# Methods for label_dist_vb fits.

ld_newdata_matrix <- function(object, newdata, call = parent.frame()) {
  if (is.null(newdata)) return(object$x)
  newdata_design(object, newdata, ncol(object$W), drop_intercept = FALSE, call = call)
}

#' Predict true classes of new instances from a label_dist_vb fit
#'
#' The classifier is the MAP softmax regression: \eqn{p(y = m \mid x) =
#' \mathrm{softmax}(\hat W x)_m}. For the training instances, [fitted()] gives
#' the posterior \eqn{\zeta}, which also uses their groups and is usually more
#' accurate (transductive).
#'
#' @param object A `label_dist_vb` fit.
#' @param newdata Feature matrix (x/y fit) or data frame (formula fit); `NULL`
#'   uses the training features.
#' @param type `"class"` (factor of most probable classes) or `"prob"` (matrix of
#'   class probabilities, one column per class).
#' @param ... Unused.
#' @return A factor (`type = "class"`) or an n x M matrix (`type = "prob"`).
#' @examples
#' set.seed(2)
#' sim <- sim_label_dist(U = 40, N = 200, group_size = 10, alpha_c1 = 100, n_test = 5)
#' fit <- label_dist_vb(sim$x, sim$groups, sim$label_dist, raw_dist = TRUE)
#' predict(fit, sim$x_test, type = "prob")
#' @export
predict.label_dist_vb <- function(object, newdata = NULL, type = c("class", "prob"), ...) {
  check_fit(object, "label_dist_vb")
  type <- match_arg(type)
  xm <- ld_newdata_matrix(object, newdata)
  p <- ld_softmax(xm %*% t(object$W))
  dimnames(p) <- list(NULL, object$classes)
  if (type == "prob") return(p)
  factor(object$classes[max.col(p, ties.method = "first")], levels = object$classes)
}

#' @export
fitted.label_dist_vb <- function(object, ...) {
  check_fit(object, "label_dist_vb")
  object$zeta
}

#' @export
residuals.label_dist_vb <- function(object, ...) {
  check_fit(object, "label_dist_vb")
  object$label_dist - object$reconstructed
}

#' @export
coef.label_dist_vb <- function(object, ...) {
  check_fit(object, "label_dist_vb")
  object$W
}

#' @export
nobs.label_dist_vb <- function(object, ...) {
  check_fit(object, "label_dist_vb")
  object$n_instances
}

#' @export
print.label_dist_vb <- function(x, digits = 3, ...) {
  check_fit(x, "label_dist_vb")
  cli::cat_line(sprintf("Classifier from noisy label distributions (%s, variational EM)",
                        if (x$structured) "structured mean field" else "mean field"))
  cli::cat_line(sprintf("  %d instances, %d groups, %d memberships, %d classes, %d features",
                        x$n_instances, x$n_groups, x$n_pairs, length(x$classes), ncol(x$W)))
  h <- x$hyper
  cli::cat_line(sprintf("  alpha_w = %s, alpha_s = %s, alpha_c0 = %s, alpha_c1 = %s; C by %s",
                        format(h[["alpha_w"]]), format(h[["alpha_s"]]), format(h[["alpha_c0"]]),
                        format(h[["alpha_c1"]]), toupper(x$c_update)))
  cli::cat_line(sprintf("  ELBO %s after %d iteration%s (%s: %s)", format(x$elbo, digits = 8),
                        x$iterations, if (x$iterations == 1) "" else "s",
                        if (x$converged) "converged" else "not converged", x$stop_reason))
  cli::cat_line("Confusion matrix C (rows: true class, columns: noisy label):")
  print(round(x$C, digits))
  invisible(x)
}

#' @export
summary.label_dist_vb <- function(object, ...) {
  check_fit(object, "label_dist_vb")
  cls <- object$classes[max.col(object$zeta, ties.method = "first")]
  out <- list(
    structured = object$structured, n_instances = object$n_instances, n_groups = object$n_groups,
    n_pairs = object$n_pairs, hyper = object$hyper, elbo = object$elbo, elbo_terms = object$elbo_terms,
    iterations = object$iterations, converged = object$converged,
    class_counts = table(factor(cls, levels = object$classes)),
    mean_max_zeta = mean(apply(object$zeta, 1, max)),
    C = object$C, restart_elbo = object$restart_elbo,
    group_fit = stats::quantile(noise_scores(object, level = "group"), c(0.5, 0.9, 1))
  )
  class(out) <- "summary.label_dist_vb"
  out
}

#' @export
print.summary.label_dist_vb <- function(x, digits = 3, ...) {
  cli::cat_line(sprintf("label_dist_vb (%s): %d instances in %d groups (%d memberships)",
                        if (x$structured) "structured" else "mean field", x$n_instances,
                        x$n_groups, x$n_pairs))
  cli::cat_line(sprintf("ELBO %s, %d iterations, %s", format(x$elbo, digits = 8), x$iterations,
                        if (x$converged) "converged" else "not converged"))
  if (length(x$restart_elbo) > 1) {
    cli::cat_line("Final ELBO per restart: ", paste(format(x$restart_elbo, digits = 8), collapse = ", "))
  }
  cli::cat_line("ELBO terms:")
  print(round(x$elbo_terms, digits))
  cli::cat_line("Inferred true classes of the training instances:")
  print(x$class_counts)
  cli::cat_line(sprintf("Mean posterior probability of the inferred class: %s",
                        format(x$mean_max_zeta, digits = digits)))
  cli::cat_line("Confusion matrix C (rows: true class, columns: noisy label):")
  print(round(x$C, digits))
  cli::cat_line("Group misfit (observed / expected squared distance), quantiles:")
  print(round(x$group_fit, digits))
  invisible(x)
}

#' Noise scores of a label_dist_vb fit
#'
#' See section "Noise scores" of [label_dist_vb()].
#' @param object A `label_dist_vb` fit.
#' @param level `"instance"` (one score per training instance) or `"group"`
#'   (one per group).
#' @param ... Unused.
#' @return A numeric vector (instances or groups in their original order).
#' @examples
#' set.seed(3)
#' sim <- sim_label_dist(U = 40, N = 150, group_size = 10, alpha_c1 = 100)
#' fit <- label_dist_vb(sim$x, sim$groups, sim$label_dist, raw_dist = TRUE)
#' head(noise_scores(fit))
#' head(noise_scores(fit, level = "group"))
#' @export
noise_scores.label_dist_vb <- function(object, level = c("instance", "group"), ...) {
  check_fit(object, "label_dist_vb")
  level <- match_arg(level)
  if (level == "instance") return(1 - apply(object$zeta, 1, max))
  dev <- rowSums((object$label_dist - object$reconstructed)^2)
  expected <- length(object$classes) / object$hyper[["alpha_s"]] + object$group_spread
  unname(dev / expected)
}

#' Instances with uncertain true labels and groups that do not fit
#'
#' Instance level: flagged when the posterior probability that the inferred
#' true label is wrong, \eqn{1 - \max_m \zeta_{um}}, exceeds `threshold`
#' (default 0.5). Group level: flagged when the group's misfit ratio (see
#' [label_dist_vb()], "Noise scores") exceeds `threshold`, by default
#' \eqn{\chi^2_{M, 0.99} / M}, the 99% point if the misfit were a scaled
#' chi-square with M degrees of freedom (an approximation).
#'
#' @param object A `label_dist_vb` fit.
#' @param level `"instance"` or `"group"`.
#' @param threshold Flagging threshold on the score (see above).
#' @param ... Unused.
#' @return The shared label-issues data frame (see [label_issues()]); instance
#'   level adds `label` (inferred true class) and `predicted` (class from the
#'   classifier alone); group level adds `size`.
#' @examples
#' set.seed(3)
#' sim <- sim_label_dist(U = 40, N = 150, group_size = 10, alpha_c1 = 100)
#' fit <- label_dist_vb(sim$x, sim$groups, sim$label_dist, raw_dist = TRUE)
#' label_issues(fit, level = "group")
#' @export
label_issues.label_dist_vb <- function(object, level = c("instance", "group"), threshold = NULL, ...) {
  check_fit(object, "label_dist_vb")
  level <- match_arg(level)
  score <- noise_scores(object, level = level)
  M <- length(object$classes)
  if (is.null(threshold)) threshold <- if (level == "instance") 0.5 else stats::qchisq(0.99, M) / M
  check_number(threshold, "threshold")
  if (level == "instance") {
    # Instances carry no given label of their own (only their group's
    # distribution): `label` is the estimated true class.
    new_label_issues(seq_along(score), score, score > threshold, given_label = NA,
                     label = factor(object$classes[max.col(object$zeta, ties.method = "first")],
                                    levels = object$classes),
                     predicted = predict(object, type = "class"))
  } else {
    new_label_issues(seq_along(score), score, score > threshold, size = object$group_sizes)
  }
}

#' Tidy, glance and augment a label_dist_vb fit
#'
#' @param x A `label_dist_vb` fit.
#' @param matrix `"W"` (classifier weights: columns `class`, `term`,
#'   `estimate`) or `"C"` (confusion matrix: `true`, `noisy`, `estimate`).
#' @param data For `augment()`: optional data frame of the training instances to
#'   bind the columns to (defaults to the feature matrix).
#' @param ... Unused.
#' @return `tidy()`: a long data frame. `glance()`: one row with `n_instances`,
#'   `n_groups`, `n_pairs`, `n_classes`, `elbo`, `iterations`, `converged`,
#'   `structured` and the hyperparameters. `augment()`: one row per training
#'   instance with `.class` (inferred true class), `.prob_<class>` (posterior
#'   \eqn{\zeta}), `.uncertainty` (noise score) and `.pred` (classifier only).
#' @examples
#' set.seed(4)
#' sim <- sim_label_dist(U = 40, N = 150, group_size = 10, alpha_c1 = 100)
#' fit <- label_dist_vb(sim$x, sim$groups, sim$label_dist, raw_dist = TRUE)
#' tidy(fit, matrix = "C")
#' glance(fit)
#' head(augment(fit))
#' @name tidy.label_dist_vb
#' @export
tidy.label_dist_vb <- function(x, matrix = c("W", "C"), ...) {
  check_fit(x, "label_dist_vb")
  matrix <- match_arg(matrix)
  if (matrix == "W") {
    W <- x$W
    data.frame(class = rep(rownames(W), times = ncol(W)), term = rep(colnames(W), each = nrow(W)),
               estimate = as.vector(W), stringsAsFactors = FALSE)
  } else {
    C <- x$C
    data.frame(true = rep(rownames(C), times = ncol(C)), noisy = rep(colnames(C), each = nrow(C)),
               estimate = as.vector(C), stringsAsFactors = FALSE)
  }
}

#' @rdname tidy.label_dist_vb
#' @export
glance.label_dist_vb <- function(x, ...) {
  check_fit(x, "label_dist_vb")
  h <- x$hyper
  data.frame(n_instances = x$n_instances, n_groups = x$n_groups, n_pairs = x$n_pairs,
             n_classes = length(x$classes), elbo = x$elbo, iterations = x$iterations,
             converged = x$converged, structured = x$structured, alpha_w = h[["alpha_w"]],
             alpha_s = h[["alpha_s"]], alpha_c0 = h[["alpha_c0"]], alpha_c1 = h[["alpha_c1"]])
}

#' @rdname tidy.label_dist_vb
#' @export
augment.label_dist_vb <- function(x, data = NULL, ...) {
  check_fit(x, "label_dist_vb")
  out <- if (is.null(data)) as.data.frame(x$x) else as.data.frame(data)
  if (nrow(out) != x$n_instances) {
    abort_input("{.arg data} has {nrow(out)} row{?s}; the fit has {x$n_instances} instances.")
  }
  out$.class <- factor(x$classes[max.col(x$zeta, ties.method = "first")], levels = x$classes)
  for (m in seq_along(x$classes)) out[[paste0(".prob_", x$classes[m])]] <- x$zeta[, m]
  out$.uncertainty <- noise_scores(x)
  out$.pred <- predict(x, type = "class")
  out
}

#' Plot a label_dist_vb fit
#'
#' `type = "elbo"`: the ELBO after every outer iteration. `type = "confusion"`:
#' a heat map of the estimated confusion matrix.
#' @param x,object A `label_dist_vb` fit.
#' @param type `"elbo"` or `"confusion"`.
#' @param ... Passed to the base graphics call.
#' @return `plot()`: `x`, invisibly. `autoplot()`: a ggplot object.
#' @examples
#' set.seed(5)
#' sim <- sim_label_dist(U = 40, N = 150, group_size = 10, alpha_c1 = 100)
#' fit <- label_dist_vb(sim$x, sim$groups, sim$label_dist, raw_dist = TRUE)
#' plot(fit)
#' plot(fit, type = "confusion")
#' if (requireNamespace("ggplot2", quietly = TRUE)) ggplot2::autoplot(fit, type = "confusion")
#' @export
plot.label_dist_vb <- function(x, type = c("elbo", "confusion"), ...) {
  check_fit(x, "label_dist_vb")
  type <- match_arg(type)
  if (type == "elbo") {
    it <- seq_along(x$elbo_trace) - 1L
    graphics::plot(it, x$elbo_trace, type = "b", pch = 20, xlab = "iteration", ylab = "ELBO",
                   main = "Evidence lower bound", ...)
  } else {
    C <- x$C
    M <- nrow(C)
    graphics::image(seq_len(M), seq_len(M), t(C)[, M:1, drop = FALSE], zlim = c(0, 1),
                    col = grDevices::hcl.colors(50, "Blues", rev = TRUE), axes = FALSE,
                    xlab = "noisy label", ylab = "true class", main = "Confusion matrix C", ...)
    graphics::axis(1, seq_len(M), colnames(C))
    graphics::axis(2, seq_len(M), rev(rownames(C)), las = 1)
    graphics::text(rep(seq_len(M), each = M), rep(M:1, times = M), sprintf("%.2f", as.vector(C)))
  }
  invisible(x)
}

#' @rdname plot.label_dist_vb
#' @exportS3Method ggplot2::autoplot
autoplot.label_dist_vb <- function(object, type = c("elbo", "confusion"), ...) {
  check_fit(object, "label_dist_vb")
  require_ggplot2()
  type <- match_arg(type)
  if (type == "elbo") {
    df <- data.frame(iteration = seq_along(object$elbo_trace) - 1L, elbo = object$elbo_trace)
    ggplot2::ggplot(df, ggplot2::aes(.data$iteration, .data$elbo)) +
      ggplot2::geom_line() + ggplot2::geom_point(size = 0.8) +
      ggplot2::labs(x = "iteration", y = "ELBO", title = "Evidence lower bound")
  } else {
    df <- tidy(object, matrix = "C")
    df$true <- factor(df$true, levels = rev(object$classes))
    df$noisy <- factor(df$noisy, levels = object$classes)
    ggplot2::ggplot(df, ggplot2::aes(.data$noisy, .data$true, fill = .data$estimate)) +
      ggplot2::geom_tile() +
      ggplot2::geom_text(ggplot2::aes(label = sprintf("%.2f", .data$estimate))) +
      ggplot2::scale_fill_gradient(low = "white", high = "steelblue", limits = c(0, 1)) +
      ggplot2::labs(x = "noisy label", y = "true class", fill = "C", title = "Confusion matrix")
  }
}
