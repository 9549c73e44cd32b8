# Methods for gpc_ep fits (and the one-vs-rest wrapper gpc_ep_ovr).

# New inputs -> standardised matrix in the training column order.
gpc_ep_newx <- function(object, newdata, call = parent.frame()) {
  if (!is.null(object$terms) && !is.data.frame(newdata)) {
    abort_input("{.arg newdata} must be a data frame for a formula fit.", call = call)
  }
  xm <- if (!is.null(object$terms) && !is.null(object$design)) {
    # Formula fits: levels are checked against the training ones (factor
    # columns of either kind), then the design is built as in training.
    mf <- newdata_frame(object, newdata, levels = c(object$design$levels, object$xlevels),
                        call = call)
    check_x_matrix(gpc_ep_design_matrix(stats::delete.response(object$terms), mf, object$design),
                   "newdata", call = call)
  } else {
    newdata_design(object, newdata, ncol(object$x), call = call)
  }
  if (!is.null(object$colnames) && !is.null(colnames(xm)) && all(object$colnames %in% colnames(xm))) {
    xm <- xm[, object$colnames, drop = FALSE]
  }
  sweep(sweep(xm, 2, object$x_center, "-"), 2, object$x_scale, "/")
}

gpc_ep_prob <- function(object, mean, var) {
  eps <- object$epsilon
  eps + (1 - 2 * eps) * stats::pnorm(mean / sqrt(object$sigma^2 + var))
}

#' Predictions from an EP Gaussian-process classifier
#'
#' The latent predictive distribution is `N(k*' b, k** - k*' R k*)` with
#' `b = nu - T mu` and `R = T - T Sigma T` (valid for negative site
#' precisions); `k**` includes the nugget. The probability of the positive
#' class is `eps + (1 - 2 eps) Phi(mean / sqrt(s2 + var))` with `s2 = 0` for
#' the step and 1 for the probit likelihood; the class is the sign of the mean.
#'
#' @param object A `gpc_ep` fit.
#' @param newdata New inputs (a data frame for formula fits, else a matrix);
#'   `NULL` or missing gives the training points (posterior marginals).
#' @param type `"class"` (a factor), `"prob"` (probability of the second
#'   level), or `"link"` (latent mean).
#' @param se.fit For `type = "link"`: also return the latent standard deviation.
#' @param ... Unused.
#' @return A factor, a numeric vector, or (with `se.fit`) a list with `fit` and
#'   `se.fit`. For `gpc_ep_ovr` fits `type = "prob"` gives a matrix with one
#'   column per class (normalised to sum to one).
#' @examples
#' set.seed(2)
#' x <- matrix(rnorm(80), ncol = 2)
#' fit <- gpc_ep(x, x[, 1] > 0)
#' predict(fit, matrix(c(-1, 1, 0, 0), 2), type = "prob")
#' @export
predict.gpc_ep <- function(object, newdata = NULL, type = c("class", "prob", "link"),
                           se.fit = FALSE, ...) {
  type <- match_arg(type)
  if (is.null(newdata)) {
    mean <- object$latent_mean
    var <- object$latent_var
  } else {
    xn <- gpc_ep_newx(object, newdata)
    p <- gpc_ep_latent(object, xn)
    mean <- p$mean
    var <- pmax(p$var, 0)
  }
  switch(type,
    class = factor(object$levels[(mean > 0) + 1L], levels = object$levels),
    prob = gpc_ep_prob(object, mean, var),
    link = if (se.fit) list(fit = mean, se.fit = sqrt(var)) else mean)
}

#' @rdname predict.gpc_ep
#' @export
fitted.gpc_ep <- function(object, ...) predict(object, type = "prob")

#' @export
residuals.gpc_ep <- function(object, type = c("response", "pearson"), ...) {
  type <- match_arg(type)
  p <- fitted(object)
  r <- (object$y > 0) - p
  if (type == "pearson") r <- r / sqrt(p * (1 - p))
  r
}

#' @export
coef.gpc_ep <- function(object, ...) {
  c(stats::setNames(exp(object$log_par), object$par_names), epsilon = object$epsilon)
}

#' @export
logLik.gpc_ep <- function(object, ...) {
  df <- sum(object$free) * object$learn_kernel + object$learn_epsilon
  structure(object$log_z, df = df, nobs = object$n, class = "logLik")
}

#' @export
nobs.gpc_ep <- function(object, ...) object$n

#' @export
print.gpc_ep <- function(x, digits = 4, ...) {
  cli::cat_line(sprintf("<gpc_ep> EP Gaussian-process classifier, %s likelihood, n = %d",
                        x$likelihood, x$n))
  cli::cat_line(sprintf("  classes: %s (-1) / %s (+1)", x$levels[1], x$levels[2]))
  eps_how <- if (x$learn_epsilon) sprintf("learned, %s rule", x$epsilon_update) else "fixed"
  cli::cat_line(sprintf("  epsilon: %s (%s)", format(signif(x$epsilon, digits)), eps_how))
  cli::cat_line(sprintf("  log Z_EP: %s", format(round(x$log_z, 3), nsmall = 3)))
  cli::cat_line(sprintf("  kernel: %s; %s", x$kernel$type,
                        paste(sprintf("%s = %s", x$par_names,
                                      vapply(signif(exp(x$log_par), 3), format, "")),
                              collapse = ", ")))
  cli::cat_line(sprintf("  flagged labels (P(flip) > 0.5): %d", sum(x$flip_prob > 0.5)))
  cli::cat_line(paste0("  approximation: ", gpc_ep_approx_label(x)))
  cli::cat_line(sprintf("  EP (%s): %d sweeps in the last run%s; outer iterations: %d (%s)",
                        x$control$schedule %||% "sequential",
                        x$sweeps, if (x$ep_converged) "" else " [not converged]",
                        x$outer_iterations, if (x$converged) "converged" else "not converged"))
  invisible(x)
}

#' @export
summary.gpc_ep <- function(object, ...) {
  cls <- predict(object, type = "class")
  par <- data.frame(parameter = object$par_names, value = exp(object$log_par),
                    learned = object$free & object$learn_kernel)
  structure(list(
    likelihood = object$likelihood, n = object$n, levels = object$levels,
    class_counts = table(object$y_factor),
    epsilon = object$epsilon, learn_epsilon = object$learn_epsilon,
    epsilon_update = object$epsilon_update, log_z = object$log_z,
    parameters = par, training_error = mean(cls != object$y_factor),
    flagged = sum(object$flip_prob > 0.5), negative_sites = sum(object$site_tau < 0),
    sweeps = object$sweeps, ep_runs = object$ep_runs, ep_failures = object$ep_failures,
    outer_iterations = object$outer_iterations, converged = object$converged,
    jitter = object$jitter, tau = object$tau, approx = gpc_ep_approx_label(object)),
    class = "summary.gpc_ep")
}

#' @export
print.summary.gpc_ep <- function(x, digits = 4, ...) {
  cli::cat_line("EP Gaussian-process classification with labelling errors (Kim & Ghahramani 2008)")
  cli::cat_line(sprintf("Likelihood: eps + (1 - 2 eps) Phi(y f%s); n = %d (%s)", 
                        if (x$likelihood == "step") " / 0+" else "", x$n,
                        paste(sprintf("%s: %d", names(x$class_counts), as.integer(x$class_counts)),
                              collapse = ", ")))
  cli::cat_line(sprintf("epsilon = %s (%s)", format(signif(x$epsilon, digits)),
                        if (x$learn_epsilon) paste(x$epsilon_update, "M-step") else "fixed"))
  cli::cat_line(sprintf("log Z_EP = %s", format(round(x$log_z, 3), nsmall = 3)))
  if (!is.null(x$approx)) cli::cat_line(paste0("Approximation: ", x$approx))
  cli::cat_line("Kernel hyperparameters:")
  p <- x$parameters
  p$value <- signif(p$value, digits)
  print(p, row.names = FALSE)
  cli::cat_line(sprintf("Training error: %s; labels flagged (P(flip) > 0.5): %d; negative sites: %d",
                        format(signif(x$training_error, 3)), x$flagged, x$negative_sites))
  cli::cat_line(sprintf("Solver: %d outer iterations (%s), %d EP runs (%d without a proper posterior), last EP %d sweeps, tau mode %s, jitter %g",
                        x$outer_iterations, if (x$converged) "converged" else "NOT converged",
                        x$ep_runs, x$ep_failures, x$sweeps, x$tau, x$jitter))
  invisible(x)
}

#' Plot an EP Gaussian-process classifier
#'
#' With two input columns, `type = "regions"` draws the decision regions
#' (shaded by the predicted probability, the 0.5 contour in black), the
#' training points coloured by their given label, and circles around labels
#' flagged as flipped. Otherwise `"scores"` plots the noise scores by
#' observation, and `"trace"` log Z_EP and epsilon over the outer iterations.
#'
#' @param x,object A `gpc_ep` fit.
#' @param type `"auto"` (regions for 2-D inputs, else scores), `"regions"`,
#'   `"scores"` or `"trace"`.
#' @param grid Grid size per axis for the decision regions.
#' @param threshold Flagging threshold marked in the plots.
#' @param ... Passed to the base plotting function.
#' @return `plot()` returns `x` invisibly; `autoplot()` a ggplot object.
#' @examples
#' set.seed(3)
#' x <- matrix(rnorm(100), ncol = 2)
#' y <- x[, 1] > 0
#' y[1:2] <- !y[1:2]
#' fit <- gpc_ep(x, y)
#' plot(fit)
#' plot(fit, type = "scores")
#' @export
plot.gpc_ep <- function(x, type = c("auto", "regions", "scores", "trace"), grid = 60,
                        threshold = 0.5, ...) {
  type <- match_arg(type)
  if (type == "auto") type <- if (gpc_ep_has_regions(x)) "regions" else "scores"
  if (type == "regions") {
    gpc_ep_check_regions(x)
    d <- gpc_ep_region_grid(x, grid)
    xo <- gpc_ep_original_x(x)
    z <- matrix(d$grid$prob, length(d$g1))
    graphics::image(d$g1, d$g2, z, col = grDevices::hcl.colors(20, "Blue-Red 2", rev = TRUE),
                    xlab = x$colnames[1] %||% "x1", ylab = x$colnames[2] %||% "x2",
                    zlim = c(0, 1), ...)
    graphics::contour(d$g1, d$g2, z, levels = 0.5, add = TRUE, drawlabels = FALSE, lwd = 2)
    graphics::points(xo, pch = ifelse(x$y > 0, 17, 16), col = ifelse(x$y > 0, "darkred", "navy"))
    fl <- x$flip_prob > threshold
    if (any(fl)) graphics::points(xo[fl, , drop = FALSE], cex = 2.2, lwd = 2)
    graphics::legend("topright", bty = "n", cex = 0.8,
                     legend = c(x$levels, "suspected flip"), pch = c(16, 17, 1),
                     col = c("navy", "darkred", "black"))
  } else if (type == "scores") {
    s <- x$flip_prob
    graphics::plot(seq_along(s), s, ylim = c(0, 1), pch = 16,
                   col = ifelse(s > threshold, "red", "grey40"),
                   xlab = "observation", ylab = "P(label flipped | data)", ...)
    graphics::abline(h = threshold, lty = 2)
  } else {
    tr <- x$trace
    if (!nrow(tr)) abort_input("Nothing was learned, so there is no trace to plot.")
    op <- graphics::par(mfrow = c(1, 2)); on.exit(graphics::par(op))
    graphics::plot(tr$iteration, tr$log_z, type = "b", xlab = "outer iteration", ylab = "log Z_EP", ...)
    graphics::plot(tr$iteration, tr$epsilon, type = "b", xlab = "outer iteration", ylab = "epsilon", ...)
  }
  invisible(x)
}

# Decision regions are drawn over two continuous inputs.
gpc_ep_has_regions <- function(object) {
  ncol(object$x) == 2L && !any(object$kernel$categorical)
}

gpc_ep_check_regions <- function(object, call = parent.frame()) {
  if (ncol(object$x) != 2L) abort_input("Decision regions need exactly two input columns.", call = call)
  if (any(object$kernel$categorical)) {
    abort_input(c("Decision regions need two continuous inputs; this fit has a categorical one.",
                  "i" = "Use {.code type = \"scores\"}."), call = call)
  }
}

gpc_ep_original_x <- function(object) {
  sweep(sweep(object$x, 2, object$x_scale, "*"), 2, object$x_center, "+")
}

gpc_ep_region_grid <- function(object, grid) {
  xo <- gpc_ep_original_x(object)
  r1 <- range(xo[, 1]); r2 <- range(xo[, 2])
  pad1 <- 0.05 * diff(r1); pad2 <- 0.05 * diff(r2)
  g1 <- seq(r1[1] - pad1, r1[2] + pad1, length.out = grid)
  g2 <- seq(r2[1] - pad2, r2[2] + pad2, length.out = grid)
  gr <- as.matrix(expand.grid(g1, g2))
  colnames(gr) <- object$colnames
  tmp <- object
  tmp$terms <- NULL  # grid is already a matrix in the model's columns
  gr_df <- data.frame(x1 = gr[, 1], x2 = gr[, 2], prob = predict(tmp, gr, type = "prob"))
  list(g1 = g1, g2 = g2, grid = gr_df)
}

#' @rdname plot.gpc_ep
#' @exportS3Method ggplot2::autoplot
autoplot.gpc_ep <- function(object, type = c("auto", "regions", "scores", "trace"), grid = 60,
                            threshold = 0.5, ...) {
  if (!requireNamespace("ggplot2", quietly = TRUE)) {
    abort_input("{.fn autoplot} needs the {.pkg ggplot2} package.")
  }
  type <- match_arg(type)
  if (type == "auto") type <- if (gpc_ep_has_regions(object)) "regions" else "scores"
  if (type == "regions") {
    gpc_ep_check_regions(object)
    d <- gpc_ep_region_grid(object, grid)
    xo <- gpc_ep_original_x(object)
    pts <- data.frame(x1 = xo[, 1], x2 = xo[, 2], label = object$y_factor,
                      flagged = object$flip_prob > threshold)
    ggplot2::ggplot(d$grid, ggplot2::aes(.data$x1, .data$x2)) +
      ggplot2::geom_raster(ggplot2::aes(fill = .data$prob)) +
      ggplot2::geom_contour(ggplot2::aes(z = .data$prob), breaks = 0.5, colour = "black") +
      ggplot2::geom_point(data = pts, ggplot2::aes(shape = .data$label, colour = .data$label)) +
      ggplot2::geom_point(data = pts[pts$flagged, , drop = FALSE], shape = 1, size = 5) +
      ggplot2::scale_fill_gradient2(low = "navy", mid = "white", high = "darkred", midpoint = 0.5,
                                    limits = c(0, 1), name = paste0("P(", object$levels[2], ")")) +
      ggplot2::labs(x = object$colnames[1] %||% "x1", y = object$colnames[2] %||% "x2",
                    caption = "circled: P(label flipped) > threshold")
  } else if (type == "scores") {
    df <- data.frame(row = seq_len(object$n), score = object$flip_prob,
                     flagged = object$flip_prob > threshold)
    ggplot2::ggplot(df, ggplot2::aes(.data$row, .data$score, colour = .data$flagged)) +
      ggplot2::geom_point() + ggplot2::geom_hline(yintercept = threshold, linetype = 2) +
      ggplot2::scale_colour_manual(values = c(`FALSE` = "grey40", `TRUE` = "red")) +
      ggplot2::labs(x = "observation", y = "P(label flipped | data)")
  } else {
    tr <- object$trace
    long <- data.frame(iteration = rep(tr$iteration, 2),
                       value = c(tr$log_z, tr$epsilon),
                       what = rep(c("log Z_EP", "epsilon"), each = nrow(tr)))
    ggplot2::ggplot(long, ggplot2::aes(.data$iteration, .data$value)) +
      ggplot2::geom_line() + ggplot2::geom_point() +
      ggplot2::facet_wrap(~what, scales = "free_y") + ggplot2::labs(x = "outer iteration", y = NULL)
  }
}

#' Tidy, glance and augment an EP classifier
#'
#' @param x A `gpc_ep` fit.
#' @param data For `augment()`: the original data (rows in training order);
#'   `NULL` uses the training inputs.
#' @param ... Unused.
#' @return `tidy()`: one row per hyperparameter (`term`, `estimate`, `learned`)
#'   plus epsilon. `glance()`: one row with `n`, `log_z`, `epsilon`,
#'   `training_error`, `n_flagged`, `converged`, `outer_iterations`, `sweeps`.
#'   `augment()`: the data with `.fitted` (probability of the second class),
#'   `.class`, `.latent_mean`, `.latent_sd`, `.noise_score` and `.flagged`.
#' @examples
#' set.seed(4)
#' x <- matrix(rnorm(60), ncol = 2)
#' fit <- gpc_ep(x, x[, 2] > 0)
#' tidy(fit)
#' glance(fit)
#' head(augment(fit))
#' @name tidy.gpc_ep
NULL

#' @rdname tidy.gpc_ep
#' @export
tidy.gpc_ep <- function(x, ...) {
  data.frame(term = c(x$par_names, "epsilon"),
             estimate = c(exp(x$log_par), x$epsilon),
             learned = c(x$free & x$learn_kernel, x$learn_epsilon),
             stringsAsFactors = FALSE)
}

#' @rdname tidy.gpc_ep
#' @export
glance.gpc_ep <- function(x, ...) {
  data.frame(n = x$n, log_z = x$log_z, epsilon = x$epsilon,
             training_error = mean(predict(x, type = "class") != x$y_factor),
             n_flagged = sum(x$flip_prob > 0.5), converged = x$converged,
             outer_iterations = x$outer_iterations, sweeps = x$sweeps)
}

#' @rdname tidy.gpc_ep
#' @export
augment.gpc_ep <- function(x, data = NULL, ...) {
  out <- if (is.null(data)) as.data.frame(gpc_ep_original_x(x)) else as.data.frame(data)
  if (nrow(out) != x$n) abort_input("{.arg data} has {nrow(out)} rows; the fit has {x$n}.")
  out$.label <- x$y_factor
  out$.fitted <- fitted(x)
  out$.class <- predict(x, type = "class")
  out$.latent_mean <- x$latent_mean
  out$.latent_sd <- sqrt(x$latent_var)
  out$.noise_score <- x$flip_prob
  out$.flagged <- x$flip_prob > 0.5
  out
}

# ---- one-vs-rest -----------------------------------------------------------
# A gpc_ep_ovr object holds one binary gpc_ep fit per class ("class" against
# "not class"). Class probabilities are the binary probabilities of each
# class normalised to sum to one; a label's noise score is one minus the
# normalised probability of its given class (see ?gpc_ep, "One-vs-rest").

#' @export
print.gpc_ep_ovr <- function(x, digits = 4, ...) {
  cli::cat_line(sprintf("<gpc_ep_ovr> %d one-vs-rest EP classifiers, %s likelihood, n = %d",
                        length(x$fits), x$fits[[1]]$likelihood, x$n))
  for (lv in x$levels) {
    f <- x$fits[[lv]]
    cli::cat_line(sprintf("  %-12s epsilon = %s, log Z_EP = %s, flagged = %d", lv,
                          format(signif(f$epsilon, digits)), format(round(f$log_z, 3), nsmall = 3),
                          sum(f$flip_prob > 0.5)))
  }
  cli::cat_line(sprintf("  labels flagged (P(given class wrong) > 0.5): %d",
                        sum(noise_scores(x) > 0.5)))
  invisible(x)
}

#' @export
summary.gpc_ep_ovr <- function(object, ...) {
  cls <- predict(object, type = "class")
  per_class <- data.frame(
    class = object$levels,
    n_class = vapply(object$levels, function(lv) sum(object$y == lv), integer(1)),
    epsilon = vapply(object$fits, `[[`, numeric(1), "epsilon"),
    log_z = vapply(object$fits, `[[`, numeric(1), "log_z"),
    flagged = vapply(object$fits, function(f) sum(f$flip_prob > 0.5), integer(1)),
    sweeps = vapply(object$fits, `[[`, integer(1), "sweeps"),
    converged = vapply(object$fits, `[[`, logical(1), "converged"),
    row.names = NULL, stringsAsFactors = FALSE)
  structure(list(n = object$n, levels = object$levels, likelihood = object$fits[[1]]$likelihood,
                 per_class = per_class, training_error = mean(cls != object$y),
                 flagged = sum(noise_scores(object) > 0.5)),
            class = "summary.gpc_ep_ovr")
}

#' @export
print.summary.gpc_ep_ovr <- function(x, digits = 4, ...) {
  cli::cat_line("One-vs-rest EP Gaussian-process classification with labelling errors")
  cli::cat_line(sprintf("%d classes, n = %d, %s likelihood", length(x$levels), x$n, x$likelihood))
  pc <- x$per_class
  pc$epsilon <- signif(pc$epsilon, digits)
  pc$log_z <- round(pc$log_z, 3)
  print(pc, row.names = FALSE)
  cli::cat_line(sprintf("Training error: %s; labels flagged (P(given class wrong) > 0.5): %d",
                        format(signif(x$training_error, 3)), x$flagged))
  invisible(x)
}

#' @rdname predict.gpc_ep
#' @export
predict.gpc_ep_ovr <- function(object, newdata = NULL, type = c("class", "prob"), ...) {
  type <- match_arg(type)
  p <- vapply(object$fits, function(f) predict(f, newdata, type = "prob"),
              numeric(if (is.null(newdata)) object$n else NROW(newdata)))
  if (is.null(dim(p))) p <- matrix(p, nrow = 1, dimnames = list(NULL, object$levels))
  p <- p / rowSums(p)
  if (type == "prob") return(p)
  factor(object$levels[max.col(p, ties.method = "first")], levels = object$levels)
}

#' @rdname predict.gpc_ep
#' @export
fitted.gpc_ep_ovr <- function(object, ...) predict(object, type = "prob")

#' @export
coef.gpc_ep_ovr <- function(object, ...) {
  vapply(object$fits, coef, numeric(length(coef(object$fits[[1]]))))
}

#' @export
nobs.gpc_ep_ovr <- function(object, ...) object$n

#' @export
noise_scores.gpc_ep_ovr <- function(object, ...) {
  p <- predict(object, type = "prob")
  1 - p[cbind(seq_len(object$n), match(as.character(object$y), object$levels))]
}

# Each label's flip probability in its own class's binary problem.
gpc_ep_ovr_flip_own <- function(object) {
  s <- vapply(object$fits, noise_scores, numeric(object$n))
  s[cbind(seq_len(object$n), match(as.character(object$y), object$levels))]
}

#' @export
label_issues.gpc_ep_ovr <- function(object, threshold = 0.5, ...) {
  check_number(threshold, "threshold", 0, 1)
  s <- noise_scores(object)
  p <- predict(object, type = "prob")
  new_label_issues(seq_len(object$n), s, s > threshold, label = object$y,
                   predicted = factor(object$levels[max.col(p, ties.method = "first")],
                                      levels = object$levels),
                   prob_label = 1 - s, flip_own = gpc_ep_ovr_flip_own(object))
}

#' @rdname tidy.gpc_ep
#' @export
tidy.gpc_ep_ovr <- function(x, ...) {
  out <- do.call(rbind, lapply(x$levels, function(lv) {
    cbind(class = lv, tidy(x$fits[[lv]]), stringsAsFactors = FALSE)
  }))
  rownames(out) <- NULL
  out
}

#' @rdname tidy.gpc_ep
#' @export
glance.gpc_ep_ovr <- function(x, ...) {
  data.frame(n = x$n, n_classes = length(x$levels),
             training_error = mean(predict(x, type = "class") != x$y),
             n_flagged = sum(noise_scores(x) > 0.5),
             converged = all(vapply(x$fits, `[[`, logical(1), "converged")),
             sweeps = sum(vapply(x$fits, `[[`, integer(1), "sweeps")))
}

#' @rdname tidy.gpc_ep
#' @export
augment.gpc_ep_ovr <- function(x, data = NULL, ...) {
  out <- if (is.null(data)) as.data.frame(gpc_ep_original_x(x$fits[[1]])) else as.data.frame(data)
  if (nrow(out) != x$n) abort_input("{.arg data} has {nrow(out)} rows; the fit has {x$n}.")
  p <- predict(x, type = "prob")
  out$.label <- x$y
  for (lv in x$levels) out[[paste0(".prob_", lv)]] <- unname(p[, lv])
  out$.class <- factor(x$levels[max.col(p, ties.method = "first")], levels = x$levels)
  s <- noise_scores(x)
  out$.noise_score <- s
  out$.flagged <- s > 0.5
  out
}

#' @rdname plot.gpc_ep
#' @export
plot.gpc_ep_ovr <- function(x, type = c("auto", "regions", "scores"), grid = 60,
                            threshold = 0.5, ...) {
  type <- match_arg(type)
  f1 <- x$fits[[1]]
  if (type == "auto") type <- if (gpc_ep_has_regions(f1)) "regions" else "scores"
  s <- noise_scores(x)
  if (type == "regions") {
    d <- gpc_ep_ovr_region_grid(x, grid)
    cols <- grDevices::hcl.colors(length(x$levels), "Dark 3")
    z <- matrix(as.integer(d$grid$class), length(d$g1))
    graphics::image(d$g1, d$g2, z, col = grDevices::adjustcolor(cols, 0.35),
                    breaks = seq(0.5, length(x$levels) + 0.5),
                    xlab = f1$colnames[1] %||% "x1", ylab = f1$colnames[2] %||% "x2", ...)
    xo <- gpc_ep_original_x(f1)
    graphics::points(xo, pch = 16, col = cols[as.integer(x$y)])
    fl <- s > threshold
    if (any(fl)) graphics::points(xo[fl, , drop = FALSE], cex = 2.2, lwd = 2)
    graphics::legend("topright", bty = "n", cex = 0.8, legend = c(x$levels, "suspected flip"),
                     pch = c(rep(16, length(x$levels)), 1), col = c(cols, "black"))
  } else {
    graphics::plot(seq_along(s), s, ylim = c(0, 1), pch = 16,
                   col = ifelse(s > threshold, "red", "grey40"),
                   xlab = "observation", ylab = "P(label flipped | data)", ...)
    graphics::abline(h = threshold, lty = 2)
  }
  invisible(x)
}

gpc_ep_ovr_region_grid <- function(object, grid) {
  f1 <- object$fits[[1]]
  gpc_ep_check_regions(f1)
  xo <- gpc_ep_original_x(f1)
  r1 <- range(xo[, 1]); r2 <- range(xo[, 2])
  g1 <- seq(r1[1] - 0.05 * diff(r1), r1[2] + 0.05 * diff(r1), length.out = grid)
  g2 <- seq(r2[1] - 0.05 * diff(r2), r2[2] + 0.05 * diff(r2), length.out = grid)
  gr <- as.matrix(expand.grid(g1, g2))
  colnames(gr) <- f1$colnames
  tmp <- object
  tmp$fits <- lapply(object$fits, function(f) { f$terms <- NULL; f })
  list(g1 = g1, g2 = g2,
       grid = data.frame(x1 = gr[, 1], x2 = gr[, 2], class = predict(tmp, gr, type = "class")))
}

#' @rdname plot.gpc_ep
#' @exportS3Method ggplot2::autoplot
autoplot.gpc_ep_ovr <- function(object, type = c("auto", "regions", "scores"), grid = 60,
                                threshold = 0.5, ...) {
  if (!requireNamespace("ggplot2", quietly = TRUE)) {
    abort_input("{.fn autoplot} needs the {.pkg ggplot2} package.")
  }
  type <- match_arg(type)
  f1 <- object$fits[[1]]
  if (type == "auto") type <- if (gpc_ep_has_regions(f1)) "regions" else "scores"
  s <- noise_scores(object)
  if (type == "regions") {
    d <- gpc_ep_ovr_region_grid(object, grid)
    xo <- gpc_ep_original_x(f1)
    pts <- data.frame(x1 = xo[, 1], x2 = xo[, 2], label = object$y, flagged = s > threshold)
    ggplot2::ggplot(d$grid, ggplot2::aes(.data$x1, .data$x2)) +
      ggplot2::geom_raster(ggplot2::aes(fill = .data$class), alpha = 0.35) +
      ggplot2::geom_point(data = pts, ggplot2::aes(colour = .data$label)) +
      ggplot2::geom_point(data = pts[pts$flagged, , drop = FALSE], shape = 1, size = 5) +
      ggplot2::labs(x = f1$colnames[1] %||% "x1", y = f1$colnames[2] %||% "x2",
                    fill = "predicted", colour = "label",
                    caption = "circled: P(label flipped) > threshold")
  } else {
    df <- data.frame(row = seq_len(object$n), score = s, flagged = s > threshold)
    ggplot2::ggplot(df, ggplot2::aes(.data$row, .data$score, colour = .data$flagged)) +
      ggplot2::geom_point() + ggplot2::geom_hline(yintercept = threshold, linetype = 2) +
      ggplot2::scale_colour_manual(values = c(`FALSE` = "grey40", `TRUE` = "red")) +
      ggplot2::labs(x = "observation", y = "P(label flipped | data)")
  }
}

# ggplot2's .data pronoun in aes() (ggplot2 is in Suggests).
utils::globalVariables(".data")
