# gpr_pursuit_control() (alias pursuit_control()) and the support-size schedule of gpr_pursuit().

#' Control settings of the relevance-pursuit fit
#'
#' The defaults are the fast pipeline. `strategy = "botorch"` switches off
#' every speed-up to reproduce what BoTorch does (all `rho` reset to 0 before
#' each level's fit, no Lemma-1 coordinate steps, a fresh factorization for
#' scoring and for the evidence of each model); the benchmark compares both.
#'
#' @param max_iter Maximum L-BFGS iterations per level.
#' @param pgtol,ftol Projected-gradient and relative-decrease tolerances of the
#'   per-datum objective. `ftol = 1e-8` is BoTorch's `MLL_TOL`; BoTorch also
#'   sets its gradient tolerance to 1e-8, which the benchmark's reference
#'   pipeline uses.
#' @param s_max Upper bound of `s` (convex parameterisation).
#' @param rho_max Upper bound of `rho` on the standardised scale (canonical).
#' @param noise_init,noise_lower,noise_upper Initial value and bounds of
#'   `sigma2` on the standardised response scale.
#' @param mean_bound Bound on the absolute constant mean (standardised scale).
#' @param reset_rho Reset all `rho` to 0 before each level's fit (BoTorch's
#'   `reset_parameters = TRUE`)?
#' @param coordinate_steps Use Lemma-1 coordinate steps: entering points
#'   (forward) start at their Lemma-1 optimum via rank-one Cholesky updates,
#'   and each level is fitted by block-coordinate descent (L-BFGS over the
#'   kernel hyperparameters, mean and `sigma2` with `s` fixed, alternated with
#'   exact Lemma-1 coordinate sweeps over the support using Sherman-Morrison
#'   updates of `K^-1`), followed by a joint L-BFGS polish. `FALSE`: one joint
#'   L-BFGS fit per level, as BoTorch.
#' @param max_outer Maximum block-coordinate rounds per level.
#' @param inner_iter Maximum L-BFGS iterations of each round's
#'   hyperparameter step.
#' @param sweeps Lemma-1 sweeps over the support per round.
#' @param polish_iter Maximum iterations of the joint L-BFGS polish.
#' @param block_fraction The block-coordinate fit is used for supports of at
#'   least this fraction of n (the joint L-BFGS crawls on large, nearly
#'   unidentifiable supports but is faster on small ones).
#' @param profiled Fit large supports (see `block_fraction`) by L-BFGS over
#'   the kernel hyperparameters, mean and `sigma2` alone, with the support's
#'   `rho` minimised by Lemma-1 sweeps inside every evaluation (a profiled
#'   objective whose gradient is the partial gradient at the inner optimum),
#'   instead of alternating the two blocks. Opt-in: on the benchmark data
#'   (Friedman-10, n = 200) it needs 3.3 times fewer factorizations and
#'   selects the same model, but stops at lower likelihoods on the large
#'   supports (the inner minimum is approximate, so the outer line search
#'   ends early), which matters when a large support is selected.
#' @param profile_sweeps Maximum Lemma-1 sweeps per evaluation of the
#'   profiled objective.
#' @param reseed_sweeps Backward pursuit, supports below `block_fraction` of
#'   n (fitted by the joint L-BFGS): restart their `s` from 0, as BoTorch
#'   does, and take up to this many Lemma-1 sweeps before the fit; 0 keeps the
#'   previous level's values as the start. The default 10 gave fewer
#'   factorizations and a higher likelihood of the selected model in the
#'   n = 2000 benchmark (`inst/bench/gpr_pursuit/README.md`).
#' @param vecchia_pilot Vecchia fits (`approx = "vecchia"`): choose the
#'   conditioning sets after a homoscedastic Vecchia pilot fit, in the metric
#'   of its length-scales, and start the pursuit from the pilot's
#'   hyperparameters? `FALSE`: the sets use the initial length-scales and the
#'   pursuit starts from the defaults (as the dense path does).
#' @param refine_cold Refit each refined support also from the pursuit's
#'   starting values (a "cold" start, besides the warm start from the model
#'   it came from), keeping the better fit? `NULL` (default): yes on the
#'   dense path, no on the Vecchia path, where the cold refits were half of
#'   the refinement's cost at n = 20,000 (see `inst/bench/gpr_pursuit`).
#' @param refine_starts Number of trace models (the best ones by BIC) from
#'   which the refinement step of the model selection starts (see
#'   [gpr_pursuit()], argument `refine`).
#' @param esd_alpha Level of the forward-search test of
#'   `gpr_pursuit(selection = "esd")` (the probability of flagging any point
#'   of a sample without outliers when the hyperparameters are right).
#' @param reuse_factor Reuse the factor at each optimum for scoring/evidence?
#' @param strategy `"fast"` (defaults) or `"botorch"` (overrides the three
#'   switches above).
#' @param backend Linear-algebra backend, `"lapack"` or `"eigen"`.
#' @return A `gpr_pursuit_control` object (a list of these settings, with a
#'   `print()` method; its classes also include `pursuit_control`), checked
#'   again by [gpr_pursuit()] and [gpr_baseline()] when they receive one.
#'   `pursuit_control()` is the same function under its earlier name.
#' @examples
#' gpr_pursuit_control(max_iter = 500)
#' gpr_pursuit_control(strategy = "botorch")$reset_rho
#' @export
gpr_pursuit_control <- function(max_iter = 1000, pgtol = 1e-5, ftol = 1e-8, s_max = 1 - 1e-3,
                            rho_max = 1e4, noise_init = 0.1, noise_lower = 1e-4,
                            noise_upper = 10, mean_bound = 10, reset_rho = FALSE,
                            coordinate_steps = TRUE, reuse_factor = TRUE,
                            max_outer = 50, sweeps = 3, polish_iter = 30,
                            inner_iter = 10, block_fraction = 0.25,
                            profiled = FALSE, profile_sweeps = 10, reseed_sweeps = 10,
                            refine_starts = 3, esd_alpha = 0.05, refine_cold = NULL,
                            vecchia_pilot = TRUE,
                            strategy = c("fast", "botorch"), backend = c("lapack", "eigen")) {
  strategy <- match_arg(strategy)
  backend <- match_arg(backend)
  max_iter <- check_count(max_iter, "max_iter")
  check_number(pgtol, "pgtol", 0, open_lower = TRUE)
  check_number(ftol, "ftol", 0)
  check_number(s_max, "s_max", 0, 1, open_lower = TRUE, open_upper = TRUE)
  check_number(rho_max, "rho_max", 0, open_lower = TRUE)
  check_number(noise_lower, "noise_lower", 0, open_lower = TRUE)
  check_number(noise_upper, "noise_upper", noise_lower, open_lower = TRUE)
  check_number(noise_init, "noise_init", noise_lower, noise_upper)
  check_number(mean_bound, "mean_bound", 0, open_lower = TRUE)
  check_flag(reset_rho, "reset_rho"); check_flag(coordinate_steps, "coordinate_steps")
  check_flag(reuse_factor, "reuse_factor")
  max_outer <- check_count(max_outer, "max_outer")
  sweeps <- check_count(sweeps, "sweeps")
  polish_iter <- check_count(polish_iter, "polish_iter", lower = 0)
  check_number(block_fraction, "block_fraction", 0, 1)
  inner_iter <- check_count(inner_iter, "inner_iter")
  check_flag(profiled, "profiled")
  profile_sweeps <- check_count(profile_sweeps, "profile_sweeps")
  reseed_sweeps <- check_count(reseed_sweeps, "reseed_sweeps", lower = 0)
  refine_starts <- check_count(refine_starts, "refine_starts")
  check_number(esd_alpha, "esd_alpha", 0, 1, open_lower = TRUE, open_upper = TRUE)
  check_flag(vecchia_pilot, "vecchia_pilot")
  if (!is.null(refine_cold)) check_flag(refine_cold, "refine_cold")
  if (strategy == "botorch") {
    reset_rho <- TRUE; coordinate_steps <- FALSE; reuse_factor <- FALSE
  }
  structure(list(max_iter = as.integer(max_iter), pgtol = pgtol, ftol = ftol, s_max = s_max,
                 rho_max = rho_max, noise_init = noise_init, noise_lower = noise_lower,
                 noise_upper = noise_upper, mean_bound = mean_bound, reset_rho = reset_rho,
                 coordinate_steps = coordinate_steps, reuse_factor = reuse_factor,
                 max_outer = as.integer(max_outer), sweeps = as.integer(sweeps),
                 polish_iter = as.integer(polish_iter),
                 block_fraction = block_fraction, inner_iter = as.integer(inner_iter),
                 profiled = profiled, profile_sweeps = as.integer(profile_sweeps),
                 reseed_sweeps = as.integer(reseed_sweeps),
                 refine_starts = as.integer(refine_starts), esd_alpha = esd_alpha,
                 refine_cold = refine_cold, vecchia_pilot = vecchia_pilot,
                 strategy = strategy, backend = backend),
            class = c("gpr_pursuit_control", "pursuit_control", "noisylabels_control"))
}

#' @rdname gpr_pursuit_control
#' @export
pursuit_control <- gpr_pursuit_control

# Support sizes from fractions or counts, with the schedule checks.
pursuit_levels <- function(n, fractions, n_outliers, call = parent.frame()) {
  bad_sched <- function(msg) abort_input(msg, class = "noisylabels_error_schedule", call = call)
  if (!is.null(n_outliers)) {
    if (!is.numeric(n_outliers) || !length(n_outliers) || anyNA(n_outliers) ||
        any(n_outliers != round(n_outliers))) {
      bad_sched("{.arg n_outliers} must be whole numbers.")
    }
    if (any(n_outliers < 0 | n_outliers > n)) bad_sched("{.arg n_outliers} must lie in [0, n] = [0, {n}].")
    if (is.unsorted(n_outliers, strictly = TRUE)) bad_sched("{.arg n_outliers} must be strictly increasing.")
    return(as.integer(n_outliers))
  }
  if (!is.numeric(fractions) || !length(fractions) || anyNA(fractions)) {
    bad_sched("{.arg fractions} must be a numeric vector without NA.")
  }
  if (any(fractions < 0 | fractions > 1)) {
    bad_sched("{.arg fractions} must lie in [0, 1]; got {.val {fractions[fractions < 0 | fractions > 1]}}.")
  }
  if (is.unsorted(fractions, strictly = TRUE)) bad_sched("{.arg fractions} must be strictly increasing.")
  unique(as.integer(floor(fractions * n + 1e-9)))
}
