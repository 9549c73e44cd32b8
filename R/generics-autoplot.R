#' Plot a fit with ggplot2
#'
#' `autoplot()` draws any noisylabels fit (or cross-validation result) as a
#' ggplot. It is exported from noisylabels, so `library(noisylabels)` is enough:
#' `autoplot(fit)` works whether or not \pkg{ggplot2} is attached, and
#' `noisylabels::autoplot(fit)` works without attaching anything. It hands the
#' object to [ggplot2::autoplot()], where the methods of this package are
#' registered when \pkg{ggplot2} is loaded (\pkg{ggplot2} is only suggested),
#' so objects of other packages plot as they would with ggplot2's own
#' `autoplot()`. Attaching \pkg{ggplot2} after noisylabels masks this function
#' with ggplot2's generic, which dispatches to the same methods.
#'
#' The methods and their arguments are documented with each class:
#' [autoplot.gpr_loo()], [autoplot.gpr_pursuit()], [autoplot.gpc_ep()] and
#' [autoplot.gpc_ep_ovr()], [autoplot.sgd_robust()],
#' [autoplot.label_dist_vb()], and [autoplot.noisylabels_cv()] for
#' [cv_gpr_loo()] and [cv_sgd_robust()] results.
#'
#' @param object A fitted model (`gpr_loo`, `gpr_pursuit`, `gpc_ep`,
#'   `gpc_ep_ovr`, `sgd_robust`, `label_dist_vb`) or a cross-validation result.
#' @param ... Passed to the method (e.g. `type =`).
#' @return A ggplot object.
#' @examples
#' if (requireNamespace("ggplot2", quietly = TRUE)) {
#'   set.seed(1)
#'   d <- sim_tang1d()
#'   fit <- gpr_loo(y ~ x, data = d$data)
#'   autoplot(fit)
#' }
#' @export
autoplot <- function(object, ...) {
  require_ggplot2()
  ggplot2::autoplot(object, ...)
}

# The one check every autoplot() method starts with (ggplot2 is only
# suggested).
require_ggplot2 <- function(call = parent.frame()) {
  if (!requireNamespace("ggplot2", quietly = TRUE)) {
    abort_input(c("{.fn autoplot} needs the {.pkg ggplot2} package.",
                  "i" = "Install it with {.code install.packages(\"ggplot2\")}, or use {.fn plot}."),
                class = "noisylabels_error_missing_package", call = call)
  }
  invisible(TRUE)
}
