# label_dist_vb_control(): the solver settings of label_dist_vb() (restarts,
# iterations and stopping rules, the update of C, the W step, the ELBO
# check), with their defaults written once here.

#' Control settings for label_dist_vb()
#'
#' The tuning of the variational solver; the model (its prior
#' hyperparameters, the variational family, the exact or plug-in objective)
#' and the data stay arguments of [label_dist_vb()].
#'
#' @param restarts Number of starts (see "Start and restarts").
#' @param max_iter Maximum number of outer iterations.
#' @param tol Stop when the relative ELBO change is below `tol`.
#' @param stable_iter Also stop when the most probable true labels have been
#'   stable for this many consecutive iterations (0 disables).
#' @param stable_tol An iteration counts as stable when at most
#'   `stable_tol * U` instances changed their most probable label (so, for
#'   U < 10000 at the default, none did).
#' @param c_update `"map"` (point estimate of \eqn{C}), `"vb"` (Dirichlet
#'   \eqn{q(C)}, needed when `alpha_c0 < 1` or `alpha_c1 < 1` since no MAP
#'   exists then) or `"auto"` (MAP when both concentrations are >= 1).
#' @param debug Compute the ELBO after every block and warn if it ever
#'   decreased beyond round-off (\eqn{10^{-8} |L|}).
#' @param lbfgs_max_iter L-BFGS iterations per \eqn{W} update.
#' @return A `label_dist_vb_control` object (a list of these settings, with a
#'   `print()` method), checked again by [label_dist_vb()] when it receives
#'   one.
#' @examples
#' label_dist_vb_control(restarts = 3, max_iter = 500)
#' @export
label_dist_vb_control <- function(restarts = 1, max_iter = 200, tol = 1e-6, stable_iter = 10,
                                  stable_tol = 1e-4, c_update = c("auto", "map", "vb"),
                                  lbfgs_max_iter = 100, debug = FALSE) {
  new_control(list(restarts = check_count(restarts, "restarts"),
                   max_iter = check_count(max_iter, "max_iter"),
                   tol = check_number(tol, "tol", 0),
                   stable_iter = check_count(stable_iter, "stable_iter", 0),
                   stable_tol = check_number(stable_tol, "stable_tol", 0, 1),
                   c_update = match_arg(c_update),
                   lbfgs_max_iter = check_count(lbfgs_max_iter, "lbfgs_max_iter"),
                   debug = check_flag(debug, "debug")),
              "label_dist_vb_control")
}
