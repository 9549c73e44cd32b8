# Held-out error against a cross-validation grid: one line per group (the
# ramp parameter s of cv_sgd_robust(); a single group for cv_gpr_loo()), bars
# of one standard error, the chosen setting circled. The grid is plotted at
# equal spacing (it is log-spaced in practice and may hold 0). Graphical
# parameters in `...` go to plot() and override the defaults. Returns the
# plotted values invisibly.
plot_cv_curve <- function(lambda, error, se, group, chosen, default_ylab, default_main, ...) {
  grid <- sort(unique(lambda))
  pos <- match(lambda, grid)
  groups <- unique(group)
  lower <- error - se
  upper <- error + se
  yl <- range(c(error, lower, upper), finite = TRUE)
  # The user's graphical parameters (main, ylab, ylim, ...) win over ours.
  args <- utils::modifyList(list(x = range(pos), y = yl, type = "n", xaxt = "n", xlab = "lambda",
                                 ylab = default_ylab, main = default_main), list(...))
  do.call(graphics::plot, args)
  graphics::axis(1, at = seq_along(grid), labels = signif(grid, 3))
  for (k in seq_along(groups)) {
    rows <- which(group == groups[k])
    rows <- rows[order(pos[rows])]
    graphics::lines(pos[rows], error[rows], type = "b", pch = 19, col = k)
    bars <- rows[is.finite(se[rows]) & se[rows] > 0]
    if (length(bars)) {
      graphics::arrows(pos[bars], lower[bars], pos[bars], upper[bars], angle = 90, code = 3,
                       length = 0.03, col = k)
    }
  }
  graphics::points(pos[chosen], error[chosen], cex = 2.2, lwd = 2, col = "red")
  if (length(groups) > 1) {
    graphics::legend("topleft", legend = paste("s =", groups), col = seq_along(groups), lty = 1,
                     pch = 19, bty = "n")
  }
  invisible(data.frame(lambda = lambda, group = group, error = error, lower = lower,
                       upper = upper, chosen = seq_along(lambda) == chosen))
}

# Which rows of a cross-validation result's grid hold the chosen setting:
# cv_gpr_loo() chooses a lambda, cv_sgd_robust() a (lambda, s) pair.
cv_chosen <- function(x) {
  r <- x$results
  if (is.list(x$best)) r$lambda == x$best$lambda & r$s == x$best$s else r$lambda == x$best
}
