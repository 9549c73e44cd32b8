# sgd_robust_control(): the tuning settings of sgd_robust() (the step, the
# averaging, the bias, the warm start and step guard, early stopping), with
# their defaults written once here; sgd_settings() derives the rest.

#' Control settings for sgd_robust()
#'
#' The tuning of the SGD solver; the model (loss and its shape, penalty,
#' epochs, classes, weights) and the data stay arguments of [sgd_robust()].
#'
#' @param method `"sgd"` (Algorithm 1), `"asgd"` or `"pegasos"`.
#' @param eta Constant step (`"sgd"`) or \eqn{\eta_0} (`"asgd"`); `NULL` =
#'   chosen automatically (see Algorithm). Ignored by Pegasos.
#' @param option `"B"` (epoch average, the default) or `"A"` (last iterate),
#'   for `method = "sgd"`. The paper says option A is the usual choice; with
#'   the automatic step, B had the lower mean test error in 23 of 30 settings
#'   of `inst/experiments/sgd_robust/defaults.R` (a7a and ijcnn1; 0, 20 and
#'   40 % flipped labels; five losses; 3 repetitions each), A in 1, and 6 were
#'   ties (both the constant classifier): with a constant step the last
#'   iterate follows the last, often mislabelled, examples.
#' @param bias `"feature"`, `"separate"` or `"none"`.
#' @param bias_step For `bias = "separate"`: the bias step as a fraction of
#'   the weight step (Bottou's svmsgd uses 0.01).
#' @param warm_start `"auto"` (one hinge epoch first for the bounded losses
#'   when `init` is not given), `"hinge"` (always) or `"none"`.
#' @param step_guard Relative objective increase over an epoch above which
#'   the epoch is undone and `eta` halved (see Algorithm); 0 or `Inf`
#'   switches the guard off. Ignored by Pegasos.
#' @param validation_fraction,n_iter_no_change Early stopping: hold out this
#'   fraction of the rows (default 0.1 when only `n_iter_no_change` is given;
#'   or use `x_valid`/`y_valid`) and stop when the validation error has not
#'   improved for `n_iter_no_change` epochs (default 5); the model of the
#'   epoch with the lowest validation error is returned. See Early stopping.
#' @param tol Relative objective change over the last epoch below which the
#'   fit counts as converged.
#' @param eta_sample Rows used by the automatic step search.
#' @param record_iterates Store every iterate (`fit$iterates`, a matrix with
#'   one column per step: the weights including the bias feature, then the
#'   separate bias) and the rows visited (`fit$visit_order`); for tests on tiny
#'   data only. It runs Algorithm 1 as written: no warm start, no step guard.
#' @return An `sgd_robust_control` object (a list of these settings, with a
#'   `print()` method), checked again by [sgd_robust()] and
#'   [cv_sgd_robust()] when they receive one.
#' @examples
#' sgd_robust_control(method = "asgd", eta = 0.05)
#' @export
sgd_robust_control <- function(method = c("sgd", "asgd", "pegasos"), eta = NULL,
                               option = c("B", "A"), bias = c("feature", "separate", "none"),
                               bias_step = 0.01, warm_start = c("auto", "hinge", "none"),
                               step_guard = 0.25, tol = 1e-2, eta_sample = 1000L,
                               validation_fraction = NULL, n_iter_no_change = NULL,
                               record_iterates = FALSE) {
  method <- match_arg(method)
  option <- match_arg(option)
  bias <- match_arg(bias)
  warm_start <- match_arg(warm_start)
  if (!is.null(eta)) check_number(eta, "eta", lower = 0, open_lower = TRUE)
  check_number(bias_step, "bias_step", lower = 0, open_lower = TRUE)
  if (!is.numeric(step_guard) || length(step_guard) != 1L || is.na(step_guard) || step_guard < 0) {
    abort_input("{.arg step_guard} must be a single number >= 0 (0 or Inf switches the guard off).")
  }
  check_number(tol, "tol", lower = 0)
  eta_sample <- check_count(eta_sample, "eta_sample")
  if (!is.null(validation_fraction)) {
    check_number(validation_fraction, "validation_fraction", 0, 1, open_lower = TRUE, open_upper = TRUE)
  }
  if (!is.null(n_iter_no_change)) n_iter_no_change <- check_count(n_iter_no_change, "n_iter_no_change")
  check_flag(record_iterates, "record_iterates")
  new_control(list(method = method, eta = eta, option = option, bias = bias, bias_step = bias_step,
                   warm_start = warm_start, step_guard = step_guard, tol = tol,
                   eta_sample = eta_sample, validation_fraction = validation_fraction,
                   n_iter_no_change = n_iter_no_change, record_iterates = record_iterates),
              "sgd_robust_control")
}
