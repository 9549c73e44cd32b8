# Settings of gpr_loo(): gpr_loo_control() and the starting variances of the
# restarts.

#' Control settings for gpr_loo()
#'
#' @param max_outer Maximum alternating rounds (hyperparameters, then sigma).
#' @param max_sweeps Maximum sigma sweeps per round (on the Vecchia path,
#'   25 times as many quasi-Newton iterations of the variance fit).
#' @param max_hyper_iter Maximum L-BFGS iterations per hyperparameter step.
#' @param tol_sweep Relative change of the objective that ends the sweeps.
#' @param tol_outer Relative change over a round that ends the fit.
#' @param tol_stationary Stopping rule of the Vecchia backend's variance fit
#'   (a box L-BFGS step on the variances in curvature-scaled units): it ends
#'   when the decrease of `J` that a diagonal quadratic model predicts from the
#'   current point, half the squared norm of the scaled projected gradient, is
#'   at most `tol_stationary * (1 + |J|)`. Each scaled gradient component is
#'   `(1 - g_i / d_i) / sqrt(2)`, the distance of the multiplicative factor of
#'   eq. 8 from its fixed point 1, so the rule bounds the root-mean-square of
#'   that distance over the labels (labels at the floor whose factor is below
#'   1 count as converged). The dense backend stops on `tol_sweep`. The
#'   default 1e-6 (it was 1e-7; see NEWS) ends the default fit of 10^5
#'   labels with 20% fewer passes, J less than 1e-4 (relative) above its
#'   value at 1e-7 and the same ranking of the labels (AUROC to four digits).
#' @param sigma_floor Smallest noise variance on the standardised scale
#'   (0 is absorbing for the multiplicative update).
#' @param damping Step size of the Jacobi solver, in (0, 1].
#' @param jitter Jitter always added to the covariance diagonal (standardised
#'   scale); more is added, and reported as `jitter`, if a factorisation fails.
#' @param backend Cholesky backend, `"lapack"` (default; the BLAS R uses) or `"eigen"`.
#' @param vecchia_pilot Size of the random subsample on which a Vecchia fit
#'   (`approx = "vecchia"`) learns the kernel hyperparameters with the dense
#'   model, before the per-label variances of all labels are fitted.
#' @param vecchia_floor On the Vecchia path with a learned kernel, every
#'   per-label variance is at least `vecchia_floor` times the pilot's clean
#'   noise level (`noise_level` of the pilot fit), or `sigma_floor` if that is
#'   larger; `0` keeps `sigma_floor` alone. Below a small fraction of the
#'   clean level the approximate likelihood keeps decreasing as clusters of
#'   clean labels are interpolated, and the variance fit did not converge at
#'   10^5 labels in 3 inputs (5,000 iterations); at 10^4 the floor cut the
#'   fit's iterations about sixfold for the same ranking.
#' @param screen_rounds Alternating rounds every restart runs before only the
#'   best one is continued to convergence; `0` runs every restart to the end
#'   (the rule before version 0.2.0, about `restarts` times the work).
#' @param screen_hyper_iter L-BFGS iterations of the hyperparameter step in
#'   a screening round (it only has to rank the starts).
#' @param adaptive_sweeps If `TRUE`, the sigma sweeps of a round stop once the
#'   objective changes by less than 1% of what that round's hyperparameter
#'   step changed it (never looser than needed: the last rounds, where the
#'   hyperparameters have settled, sweep to `tol_sweep`). `FALSE` sweeps every
#'   round to `tol_sweep`.
#' @return A `gpr_loo_control` object (a list of these settings, with a
#'   `print()` method), checked again by [gpr_loo()] when it receives one.
#' @examples
#' gpr_loo_control(max_outer = 10)
#' @export
gpr_loo_control <- function(max_outer = 30, max_sweeps = 200, max_hyper_iter = 50,
                            tol_sweep = 1e-10, tol_outer = 1e-8, tol_stationary = 1e-6,
                            sigma_floor = 1e-8,
                            damping = 0.8, jitter = 1e-8, backend = c("lapack", "eigen"),
                            screen_rounds = 1L, screen_hyper_iter = 10L, adaptive_sweeps = TRUE,
                            vecchia_pilot = 1000L, vecchia_floor = 0.01) {
  check_count(max_outer, "max_outer")
  check_count(max_sweeps, "max_sweeps")
  check_count(max_hyper_iter, "max_hyper_iter")
  check_number(tol_sweep, "tol_sweep", 0)
  check_number(tol_outer, "tol_outer", 0)
  check_number(tol_stationary, "tol_stationary", 0)
  check_number(sigma_floor, "sigma_floor", 0, open_lower = TRUE)
  check_number(damping, "damping", 0, 1, open_lower = TRUE)
  check_number(jitter, "jitter", 0)
  check_count(screen_rounds, "screen_rounds", lower = 0)
  check_count(screen_hyper_iter, "screen_hyper_iter")
  check_flag(adaptive_sweeps, "adaptive_sweeps")
  check_count(vecchia_pilot, "vecchia_pilot", lower = 10)
  check_number(vecchia_floor, "vecchia_floor", 0, 1)
  new_control(list(max_outer = as.integer(max_outer), max_sweeps = as.integer(max_sweeps),
                   max_hyper_iter = as.integer(max_hyper_iter), tol_sweep = tol_sweep,
                   tol_outer = tol_outer, tol_stationary = tol_stationary, sigma_floor = sigma_floor,
                   damping = damping, jitter = jitter, backend = match_arg(backend),
                   screen_rounds = as.integer(screen_rounds),
                   screen_hyper_iter = as.integer(screen_hyper_iter), adaptive_sweeps = adaptive_sweeps,
                   vecchia_pilot = as.integer(vecchia_pilot), vecchia_floor = vecchia_floor),
              "gpr_loo_control")
}

# Scale of the initial noise variances per start (see `restarts`): the first
# start as given, the second a tenth of it, the rest 10^-U(0, 2).
restart_sigma_scale <- function(restarts) {
  c(1, 0.1, 10^-stats::runif(max(restarts - 2, 0), 0, 2))[seq_len(restarts)]
}
