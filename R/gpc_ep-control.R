# gpc_ep_control() and what it turns into: the option list the C++ glue
# reads, and the default kernel of each likelihood.

#' Control settings for gpc_ep()
#'
#' @param max_sweeps,min_sweeps Bounds on EP sweeps per EP run.
#' @param tol_logz EP stops when log Z_EP changes by less than this between
#'   sweeps ...
#' @param tol_site ... and no site parameter changed by more than
#'   `tol_site * damping`.
#' @param damping EP damping in (0, 1]; 1 = none. In `tau = "allow"` mode it is
#'   halved automatically after a sweep that makes the posterior improper.
#' @param max_outer Maximum outer iterations (EP, epsilon M-step, L-BFGS steps);
#'   with epsilon fixed, the kernel optimiser gets `max_outer * lbfgs_steps`
#'   L-BFGS iterations in one run. A fit that stops here warns
#'   (`noisylabels_warning_convergence`) with what still moved over its last
#'   five iterations: the change of log Z_EP, of epsilon, and of the
#'   log-hyperparameter that moved most, each with its last step and its
#'   tolerance (see `tol_outer`).
#' @param lbfgs_steps L-BFGS iterations on the kernel hyperparameters per
#'   outer iteration.
#' @param tol_outer The outer loop stops when log Z_EP changes by less than
#'   `tol_outer` between outer iterations, or when epsilon moves by less than
#'   `tol_outer / 10` and every log-hyperparameter by less than `tol_outer * 10`.
#'   (Nested EP runs are converged to about 1e-5 in log Z, so a tighter
#'   outer tolerance only adds iterations.)
#' @param epsilon_start Starting value when `epsilon = "learn"` (the paper
#'   uses 0.01-0.03).
#' @param joint_epsilon With the tilted rule and a learned kernel: after each
#'   EM step for epsilon, the L-BFGS steps move `log(epsilon)` together with
#'   the kernel hyperparameters, with the exact gradient
#'   `d log Z_EP / d eps = sum_i (1 - 2 Phi(z_i)) / Z_i`. Both rules share their
#'   fixed points (the tilted EM step maximises log Z_EP in epsilon), but EM
#'   alone converges linearly at a rate close to 1 when epsilon and the
#'   kernel's scale trade off, as they do for overlapping classes: on two
#'   overlapping Gaussian classes (n = 200, 10% flips) it crept down by about
#'   0.0015 in epsilon and 2e-4 in log Z_EP per outer iteration for 89
#'   iterations. `FALSE` keeps the plain EM step. `NULL` (default): `TRUE`
#'   for dense EP, `FALSE` for sparse EP, where epsilon is pinned down by
#'   many labels and EM alone converges quickly: on the sparse benchmark
#'   (n = 3,000, d = 5, 10% flips, 110 inducing points) the joint steps took
#'   122 EP runs against 66 for a log Z_EP higher by 0.46 and the same
#'   epsilon to 3e-4.
#' @param schedule `"sequential"` (default): sites are updated one at a time
#'   in random order, each seeing the posterior left by the previous ones
#'   (Rasmussen & Williams Alg. 3.5). `"parallel"`: every site is updated from
#'   the same posterior, then the posterior is recomputed once; a sweep is
#'   cheaper (between sweeps only the marginal variances are needed) but more
#'   sweeps are needed and damping is required, so `damping` defaults to 0.8
#'   here (as in GPstuff). Both converge to the same EP fixed points.
#' @param block_size Sequential sweeps apply their rank-one updates in blocks
#'   of this many sites with matrix-matrix products (same iterates as
#'   one-at-a-time updates, up to rounding); 0 updates the full posterior
#'   covariance after every site (slower; kept as a reference).
#' @param refresh_every Sequential blocked sweeps with at least 128
#'   training points: the posterior covariance is recomputed exactly from the
#'   kernel matrix and the sites after every `refresh_every`-th sweep, and
#'   after the others it is taken from the sweep's own factors (a quarter
#'   fewer operations per sweep; the iterates and the returned posterior agree
#'   with an exact refresh after every sweep up to rounding, about 1e-13,
#'   and the periodic exact refresh bounds the drift). 1 refreshes exactly
#'   after every sweep (the behaviour before this option existed); 0 never
#'   after the start. Sparse EP (`approx = "sparse"`) follows the same rule
#'   for its m x m matrix `M = I + U diag(w) U'`: rebuilt from the inputs'
#'   projections and the sites after every `refresh_every`-th sweep, taken
#'   from the sweep's own block updates after the others (one n m^2 product
#'   fewer per sweep; iterates equal to rounding).
#' @return A `gpc_ep_control` object (a list of these settings, with a
#'   `print()` method), checked again by [gpc_ep()] when it receives one.
#' @examples
#' gpc_ep_control(max_sweeps = 50)
#' @export
gpc_ep_control <- function(max_sweeps = 100, min_sweeps = 2, tol_logz = 1e-6, tol_site = 1e-4,
                           damping = 1, max_outer = 50, lbfgs_steps = 5, tol_outer = 1e-4,
                           epsilon_start = 0.01, schedule = c("sequential", "parallel"),
                           block_size = 64, refresh_every = 10, joint_epsilon = NULL) {
  schedule <- match_arg(schedule)
  if (missing(damping) && schedule == "parallel") damping <- 0.8
  check_count(max_sweeps, "max_sweeps")
  check_count(min_sweeps, "min_sweeps")
  check_number(tol_logz, "tol_logz", 0, open_lower = TRUE)
  check_number(tol_site, "tol_site", 0, open_lower = TRUE)
  check_number(damping, "damping", 0, 1, open_lower = TRUE)
  check_count(max_outer, "max_outer")
  check_count(lbfgs_steps, "lbfgs_steps")
  check_number(tol_outer, "tol_outer", 0, open_lower = TRUE)
  check_number(epsilon_start, "epsilon_start", 0, 0.5, open_lower = TRUE, open_upper = TRUE)
  check_number(block_size, "block_size", 0)
  check_number(refresh_every, "refresh_every", 0)
  if (!is.null(joint_epsilon)) check_flag(joint_epsilon, "joint_epsilon")
  structure(list(max_sweeps = as.integer(max_sweeps), min_sweeps = as.integer(min_sweeps),
                 tol_logz = tol_logz, tol_site = tol_site, damping = damping,
                 max_outer = as.integer(max_outer), lbfgs_steps = as.integer(lbfgs_steps),
                 tol_outer = tol_outer, epsilon_start = epsilon_start,
                 schedule = schedule, block_size = as.integer(block_size),
                 refresh_every = as.integer(refresh_every), joint_epsilon = joint_epsilon),
            class = c("gpc_ep_control", "noisylabels_control"))
}


# joint_epsilon = NULL (default): joint steps on the dense path, plain EM on
# the sparse one (see gpc_ep_control()).
gpc_ep_ep_options <- function(control, tau, joint_default = TRUE) {
  list(max_sweeps = control$max_sweeps, min_sweeps = control$min_sweeps,
       tol_logz = control$tol_logz, tol_site = control$tol_site,
       damping = control$damping, clamp = identical(tau, "clamp"),
       schedule = control$schedule, block_size = control$block_size,
       refresh_every = control$refresh_every,
       tol_outer_eps = control$tol_outer / 10, tol_outer_theta = control$tol_outer * 10,
       tol_outer_logz = control$tol_outer, joint_epsilon = control$joint_epsilon %||% joint_default)
}

# The paper's covariance (eq. 7-8) with the nugget fixed for identifiability.
gpc_ep_default_kernel <- function(likelihood) {
  if (likelihood == "step") {
    gp_kernel("mixed", ard = TRUE, variance = 1, bias = 0.1, nugget = 1, fixed = "nugget")
  } else {
    gp_kernel("mixed", ard = TRUE, variance = 1, bias = 0.1, nugget = 1e-6, fixed = "nugget",
              lower = c(nugget = 1e-10))
  }
}

