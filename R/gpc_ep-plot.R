# Plots of gpc_ep fits (base graphics and ggplot2): decision regions with
# two inputs, noise scores, the outer loop's trace; and of one-vs-rest fits.

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
  check_fit(x, "gpc_ep")
  gpc_ep_check_display(grid, threshold)
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

# The display arguments of the plots: grid points per axis and the flip
# probability above which a point is marked.
gpc_ep_check_display <- function(grid, threshold, call = parent.frame()) {
  check_count(grid, "grid", lower = 2, upper = 2000, call = call)
  check_number(threshold, "threshold", 0, 1, call = call)
  invisible()
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
  check_fit(object, "gpc_ep")
  gpc_ep_check_display(grid, threshold)
  require_ggplot2()
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

#' @rdname plot.gpc_ep
#' @export
plot.gpc_ep_ovr <- function(x, type = c("auto", "regions", "scores"), grid = 60,
                            threshold = 0.5, ...) {
  check_fit(x, "gpc_ep_ovr")
  gpc_ep_check_display(grid, threshold)
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
  check_fit(object, "gpc_ep_ovr")
  gpc_ep_check_display(grid, threshold)
  require_ggplot2()
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
