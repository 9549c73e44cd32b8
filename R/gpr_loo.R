#' Gaussian-process regression with one noise variance per label
#'
#' Fits y_i = f(x_i) + e_i with e_i ~ N(0, sigma_i), f a Gaussian process, and
#' one noise variance sigma_i per training label (Tang, Zhu & de Jong 2021).
#' A label whose leave-one-out error is larger than the model can explain gets
#' a large sigma_i: the fitted variances rank the labels by how likely they are
#' corrupted, and the fit itself is robust because corrupted labels are
#' down-weighted.
#'
#' The objective is the negative log marginal likelihood
#' `J = 1/2 [y' C^-1 y + log|C| + lambda * sum(sigma^p)] + n/2 log(2 pi)` with
#' `C = K + diag(sigma)` (the paper's eq. 3 and 17, halved), minimised over
#' `sigma >= 0` and the kernel hyperparameters by block coordinate descent:
#' the hyperparameters by box-constrained L-BFGS on the log scale with `sigma`
#' fixed, then sweeps over `sigma` with the hyperparameters fixed, until the
#' relative change of `J` over a round is below `control$tol_outer`.
#'
#' Sigma solvers:
#' * `"multiplicative"`: the paper's eq. 8, `sigma_i <- sigma_i * alpha_i^2 / d_i`
#'   (`alpha = C^-1 y`, `d = diag(C^-1)`), or eq. 18 with the l_p penalty.
#' * `"jacobi"` (default): a damped step towards each label's exact optimum with
#'   the others fixed, `sigma_i* = max(0, e_i^2 - v_i)` (e_i the LOO residual,
#'   v_i the LOO variance without sigma_i); with the l_1 penalty the optimum is
#'   the root of `lambda t^2 + t - e_i^2 = 0`, `t = v_i + sigma_i`. Every step
#'   is checked: if `J` would increase the step is halved, then replaced by the
#'   multiplicative step (counted in `fallbacks`). Both cost one Cholesky
#'   factorisation per sweep; the Jacobi step reaches exact zeros and needs
#'   several times fewer sweeps (see `vignette("gpr-loo")`).
#'
#' `noise = "uniform"` fits one shared variance by the paper's Tikhonov update
#' `sigma <- sigma * (alpha'alpha) / tr(C^-1)` ("basic" model); `noise = "none"`
#' fits no noise at all ("plain" model: the GP interpolates).
#'
#' Targets are centred and scaled internally; `noise_var` and all outputs are
#' reported in the units of `y` (variances in squared units). Inputs are not
#' rescaled: the default length-scale is the median pairwise distance.
#'
#' @section Noise scores and flags:
#' `noise_scores()` returns `noise_var`, the fitted sigma_i. `label_issues()`
#' flags label i when its leave-one-out error is improbable for a clean label:
#' `chisq_i = e_i^2 / (v_i + s0) > q`, q the `1 - alpha` quantile of
#' chi-squared(1), e_i the LOO residual, v_i the LOO variance of f_i given the
#' other labels and s0 the homoscedastic noise level of the clean labels
#' (`noise_level`).
#'
#' For the full model, e_i and v_i in this rule are not those of the fitted
#' model (`loo_residual`, `loo_sd`): with one free variance per label, the
#' fitted variances of the other labels can make a clean label's LOO residual
#' much smaller than its noise, and a level measured from those residuals too
#' small (in a 2-D example with 40 labels and 3 outliers the fitted model's
#' own residuals gave s0 = 0.0002 for a true 0.01 and flagged 14 labels).
#' Instead every variance is floored at s0, `max(sigma_i, s0)`: labels with a
#' large fitted variance keep it, so corrupted labels do not distort their
#' neighbours' LOO predictions, and s0 is the level at which the median of
#' `chisq_i` equals the chi-squared(1) median, which clean labels set when
#' fewer than half are corrupted (20-30 root-finding steps, one
#' factorisation each: about 5% of a fit at n = 1000). The uniform model uses
#' its own e_i, v_i and s0 = its noise variance; `noise = "none"` flags
#' nothing. Give `threshold` to
#' flag `noise_var > threshold` instead.
#'
#' @section Choosing lambda:
#' In the -2 log likelihood the l1 penalty `lambda * sum(sigma)` is an
#' exponential prior with mean `2 / lambda` on each variance (standardised
#' scale). Without it, n free variances can absorb clean noise and overfit a
#' small sample. `lambda = "auto"` estimates that mean from the data as the
#' mean of the unpenalised fit's variances (the maximum-likelihood estimate
#' of an exponential mean), so no value is tuned by hand; [cv_gpr_loo()]
#' chooses `lambda` by cross-validation instead. The uniform model's noise
#' level would be a cheaper mean, but with an ARD kernel that model often
#' interpolates gross outliers (its level at the floor), which makes the
#' prior almost a point mass at zero and the fit collapse.
#'
#' On Fig. 2's example 1 (50 draws, `inst/experiments/gpr_loo/kernel_fit.R`)
#' it lowers the MAE against f under both readings of the noise: with
#' `kernel_fit = "uniform"` to 0.289 under the variance reading (unpenalised
#' 0.313, Basic 0.316; below Basic in 33 draws), with the joint fit to 0.168
#' under the sd reading (unpenalised 0.201, Basic 0.253). In the Table 1
#' protocol (yacht, energy, concrete, QM7; 20 cells each) the two-stage fit
#' with `"auto"` has the lowest mean MAE of all five variants (joint and
#' two-stage, with and without the penalty, and Basic) on every set, and is
#' below the unpenalised two-stage fit in 71 of 80 cells. Under gross
#' outliers with an ARD kernel (Friedman-10 and Hartmann-6 in
#' `vignette("gpr-pursuit")`) `kernel_fit = "uniform"` does badly, because
#' the uniform model's kernel is fitted to the outliers; keep the joint fit
#' there.
#'
#' @param x A numeric matrix (or data frame of numeric columns) of inputs, or a
#'   formula `y ~ x1 + x2` with `data`.
#' @param y Numeric response (matrix interface).
#' @param data Data frame for the formula interface.
#' @param kernel A [gp_kernel()]; default isotropic RBF with its length-scale
#'   from the data.
#' @param noise `"full"` (one variance per label), `"uniform"` or `"none"`.
#' @param solver Sigma solver, `"jacobi"` or `"multiplicative"` (see Details).
#' @param penalty `"none"` or `"lp"` (adds `lambda * sum(sigma^p)` to the
#'   objective before halving, eq. 17). The Jacobi step is used with `p = 1`;
#'   other `p` use eq. 18.
#' @param lambda,p Penalty weight (>= 0, on the standardised scale) and
#'   exponent (> 0), or `lambda = "auto"`: the penalty as the prior
#'   `exp(-(sigma_i / s)^p)` on every variance, with `s` the mean variance of
#'   the unpenalised fit with the same settings (fitted first; its
#'   factorisations are counted), `lambda = 2 / s^p`. See "Choosing lambda".
#' @param restarts Number of starts; the fit with the lowest objective is kept.
#'   Start 1 is `kernel` with the noise variances at `sigma_init`; start 2 is
#'   `kernel` with `sigma_init / 10` (from large initial variances the fit can
#'   settle in the optimum that calls every label noise and f almost flat);
#'   further starts perturb the free log hyperparameters by N(0, 1) and scale
#'   `sigma_init` by `10^-u`, u ~ U(0, 2) (R's RNG).
#' @param sigma_init Initial noise variances of the first start (user units,
#'   all > 0; 0 would be absorbing for eq. 8); default `var(y)`. See `restarts`.
#' @param learn_kernel Optimise the kernel hyperparameters (else keep them).
#' @param kernel_fit How the hyperparameters are learned with `noise =
#'   "full"`: `"joint"` (default, the paper's) alternates hyperparameter steps
#'   and variance sweeps; `"uniform"` learns them once under uniform noise
#'   (the Basic model) and keeps them fixed while the per-label variances are
#'   fitted. Joint fitting lets n free variances and the length-scale adapt to
#'   each other, which overfits small samples: on Fig. 2's example 1 (50
#'   draws) `"uniform"` lowered the MAE against f from 0.381 to 0.313
#'   (variance reading; Basic 0.316) and from 0.201 to 0.179 (sd reading;
#'   Basic 0.253), with higher AUC, and matched joint fitting on the 2-D
#'   function with 300 labels (0.0260 against 0.0264, 10 draws;
#'   `inst/experiments/gpr_loo/kernel_fit.R`). In the Table 1 protocol on
#'   yacht, energy, concrete and QM7 (20 cells each) its cross-validated MAE
#'   was below the joint fit's in 63 of 80 cells and lower on average on all
#'   four sets; under gross outliers (relevance-pursuit vignette) it is worse,
#'   because the uniform model's kernel is fitted to them. The default stays
#'   the paper's joint fit, which the reproductions use.
#' @param approx Covariance backend: `"dense"` (the exact GP, one n x n
#'   Cholesky per evaluation), `"vecchia"` (the response Vecchia
#'   approximation: in a random order, each label conditioned on its
#'   `neighbors` nearest earlier labels; O(n m^3) time and O(n m) memory per
#'   evaluation), or `"auto"` (Vecchia above 2,000 labels). The LOO residuals
#'   and variances the update reads are exact for the approximate model; see
#'   the vignette's section "Scaling up". With a learned kernel, the Vecchia
#'   fit floors every variance at a fraction of the dense pilot's clean noise
#'   level (`vecchia_floor` in [gpr_loo_control()]; the floor used is the
#'   result's `sigma_floor`).
#' @param neighbors Size m of each Vecchia conditioning set (ignored by the
#'   dense backend; `neighbors >= n - 1` falls back to dense with a message).
#' @param threads Cores the fit may use (default
#'   `getOption("noisylabels.threads", 1)`): the OpenMP team of the Vecchia
#'   backend's per-label work (the dense backend's BLAS stays on one thread,
#'   see "Threads" in [noisylabels-package]). The same seed and thread count
#'   give the identical fit.
#' @param control Tuning of the solver, from [gpr_loo_control()].
#' @param verbose Show a progress bar over the alternating rounds of every
#'   start? `NULL` (default): in interactive sessions, or when
#'   `options(noisylabels.progress = TRUE)`.
#' @param na.action How the formula interface treats missing values.
#' @param ... Passed from the formula method to the default method.
#' @return An object of class `gpr_loo`: `noise_var`, `loo_residual`,
#'   `loo_sd` (LOO sd of f_i given the other labels, without its own noise),
#'   `fitted.values`, `kernel` (the fitted [gp_kernel()]), `kernel_fit`,
#'   `noise_level` (s0
#'   of "Noise scores and flags", user units), `sigma_floor` (the smallest
#'   variance the fit allowed, user units), `flag_statistic` (chisq_i),
#'   `objective` (J, standardised scale), `loglik` (user scale, without the
#'   penalty), `trace` (J after every sweep and hyperparameter step),
#'   `factorizations` (both stages with `kernel_fit = "uniform"`), `sweeps`,
#'   `fallbacks`, `converged`, `jitter`, and the data.
#' @references Tang, Zhu & de Jong (2021). Detecting label noise via
#'   leave-one-out cross-validation. arXiv:2103.11352.
#' @seealso [noise_scores()], [label_issues()], [predict.gpr_loo()],
#'   [sim_tang1d()], [corrupt_labels()], [detection_metrics()]; [cv_gpr_loo()] chooses `lambda` for the l1 penalty.
#' @examples
#' set.seed(1)
#' d <- sim_tang1d()
#' fit <- gpr_loo(y ~ x, data = d$data)
#' fit
#' head(label_issues(fit))
#' detection_metrics(noise_scores(fit), d$corrupted)
#' @export
gpr_loo <- function(x, ...) UseMethod("gpr_loo")

#' @rdname gpr_loo
#' @export
gpr_loo.formula <- function(x, data, ..., na.action = stats::na.omit) {
  design <- formula_design(x, data, na.action)
  attach_formula(gpr_loo.default(design$x, design$y, ...), design, match.call())
}

#' @rdname gpr_loo
#' @export
gpr_loo.default <- function(x, y, kernel = gp_kernel("rbf"), noise = c("full", "uniform", "none"),
                            solver = c("jacobi", "multiplicative"), penalty = c("none", "lp"),
                            lambda = 0, p = 1, restarts = 5, sigma_init = NULL,
                            learn_kernel = TRUE, kernel_fit = c("joint", "uniform"),
                            approx = c("auto", "dense", "vecchia"), neighbors = 20L,
                            threads = getOption("noisylabels.threads", 1L),
                            control = gpr_loo_control(), verbose = NULL, ...) {
  noise <- match_arg(noise)
  kernel_fit <- match_arg(kernel_fit)
  solver <- match_arg(solver)
  penalty <- match_arg(penalty)
  check_dots_empty("gpr_loo", ...)
  x <- check_x_matrix(x, "x", min_rows = 1L)
  n <- nrow(x)
  if (n < 3) abort_input("{.fn gpr_loo} needs at least 3 observations, got {n}.")
  y <- check_y_numeric(y, n)
  backend <- resolve_approx(approx, n, neighbors, threads)
  if (backend$approx == "dense") check_dense_memory(n, copies = 4, vecchia = TRUE)
  control <- check_control(control, gpr_loo_control, "gpr_loo_control")
  check_count(restarts, "restarts", upper = 1000)
  check_flag(learn_kernel, "learn_kernel")
  auto_lambda <- identical(lambda, "auto")
  if (penalty == "lp") {
    if (!auto_lambda) check_number(lambda, "lambda", 0)
    check_number(p, "p", 0, open_lower = TRUE)
  } else if (auto_lambda) {
    abort_input(c("{.code lambda = \"auto\"} sets the weight of the l_p penalty.",
                  "i" = "Use it with {.code penalty = \"lp\"}."))
  } else {
    lambda <- 0
  }
  kernel <- kernel_resolve(kernel, x)
  call <- match.call()
  frame <- environment()
  args <- list(x = x, y = y, n = n, kernel = kernel, noise = noise, solver = solver,
               penalty = penalty, lambda = lambda, auto_lambda = auto_lambda, p = p,
               restarts = restarts, sigma_init = sigma_init, learn_kernel = learn_kernel,
               kernel_fit = kernel_fit, backend = backend, neighbors = neighbors,
               threads = threads, control = control, verbose = verbose)
  stages <- gpr_loo_kernel_stages(args, frame)
  prob <- gpr_loo_problem(args, stages, frame)
  res <- gpr_loo_run(args, stages, prob, frame)
  gpr_loo_object(args, stages, prob, res, call, frame)
}

# The steps of gpr_loo.default(). `args` holds its checked arguments,
# `frame` its environment (errors and warnings name gpr_loo()).

# The kernel and penalty the main fit starts from, from up to three earlier
# fits of the same data: the uniform-noise model (kernel_fit = "uniform"),
# the unpenalised fit (lambda = "auto") and the dense pilot on a subsample
# (Vecchia with a learned kernel). Returns the kernel, whether the main fit
# still learns it, lambda, sigma_init and the earlier fits.
gpr_loo_kernel_stages <- function(args, frame) {
  kernel <- args$kernel
  learn_kernel <- args$learn_kernel
  lambda <- args$lambda
  sigma_init <- args$sigma_init
  noise <- args$noise
  control <- args$control
  x <- args$x
  y <- args$y
  # Two-stage fit: the kernel hyperparameters of the uniform-noise model, kept
  # fixed while the per-label variances are fitted.
  stage1 <- NULL
  if (args$kernel_fit == "uniform") {
    if (noise != "full" || !learn_kernel) {
      abort_input(c("{.code kernel_fit = \"uniform\"} learns the kernel under uniform noise and then fits one variance per label with it fixed.",
                    "i" = "It needs {.code noise = \"full\"} and {.code learn_kernel = TRUE}."),
                  call = frame)
    }
    stage1 <- gpr_loo.default(x, y, kernel = kernel, noise = "uniform", solver = args$solver,
                              restarts = args$restarts, learn_kernel = TRUE,
                              approx = args$backend$approx, neighbors = args$neighbors,
                              threads = args$threads, control = control, verbose = args$verbose)
    kernel <- stage1$kernel
    learn_kernel <- FALSE
  }
  # lambda = "auto": the penalty as the exponential prior on every variance
  # whose mean is the mean variance of the unpenalised fit (same settings).
  pilot <- NULL
  if (args$auto_lambda) {
    pilot <- gpr_loo.default(x, y, kernel = kernel, noise = noise, solver = args$solver,
                             restarts = args$restarts, sigma_init = sigma_init,
                             learn_kernel = learn_kernel, approx = args$backend$approx,
                             neighbors = args$neighbors, threads = args$threads,
                             control = control, verbose = args$verbose)
    level <- max(mean(pilot$noise_var) / stats::sd(y)^2, control$sigma_floor)
    lambda <- 2 / level^args$p
  }
  # Vecchia: the kernel hyperparameters come from a dense fit of the same
  # model on a random subsample (control$vecchia_pilot labels); the
  # conditioning sets are then chosen in the metric of the fitted
  # length-scales, and the per-label variances of all n labels are fitted with
  # the kernel fixed. Alternating theta and sigma on the Vecchia objective
  # itself converged too slowly to be the default (see inst/bench/gpr_loo_vecchia).
  vecchia_pilot <- NULL
  if (args$backend$approx == "vecchia" && learn_kernel && noise != "none") {
    pilot_idx <- sort(sample.int(args$n, min(args$n, control$vecchia_pilot)))
    # A warning of the pilot says that it is the pilot's (the fit's own
    # convergence is reported separately).
    vecchia_pilot <- withCallingHandlers(
      gpr_loo.default(x[pilot_idx, , drop = FALSE], y[pilot_idx], kernel = kernel,
                      noise = noise, solver = args$solver, restarts = args$restarts,
                      learn_kernel = TRUE, approx = "dense", control = control,
                      verbose = args$verbose),
      noisylabels_warning_convergence = function(w) {
        warn_convergence(c("The dense pilot fit that learns the kernel ({length(pilot_idx)} labels) did not converge:",
                           "i" = conditionMessage(w)))
        invokeRestart("muffleWarning")
      })
    kernel <- vecchia_pilot$kernel
    learn_kernel <- FALSE
    if (is.null(sigma_init)) sigma_init <- stats::median(vecchia_pilot$noise_var)
  }
  list(kernel = kernel, learn_kernel = learn_kernel, lambda = lambda, sigma_init = sigma_init,
       stage1 = stage1, pilot = pilot, vecchia_pilot = vecchia_pilot)
}

# What the core fit is given: the variance floor, the standardised labels,
# the starting variances and log-hyperparameters of every restart with their
# bounds, the options list (every key the glue reads) and, for Vecchia, the
# conditioning sets and the storage order of the labels.
gpr_loo_problem <- function(args, stages, frame) {
  control <- args$control
  n <- args$n
  y <- args$y
  noise <- args$noise
  restarts <- args$restarts
  learn_kernel <- stages$learn_kernel
  sigma_init <- stages$sigma_init
  vecchia_pilot <- stages$vecchia_pilot
  # On the Vecchia path the floor is a fraction of the pilot's clean noise
  # level: below it the likelihood keeps falling as clusters of clean labels
  # are given near-zero variances and interpolated, which the variance fit
  # chased for thousands of passes without changing the ranking (measured in
  # inst/bench/gpr_loo_vecchia).
  sigma_floor <- control$sigma_floor
  if (!is.null(vecchia_pilot) && noise == "full") {
    sigma_floor <- max(sigma_floor, control$vecchia_floor * vecchia_pilot$noise_level / stats::var(y))
  }
  if (args$backend$approx == "vecchia" && !learn_kernel) restarts <- 1L
  y_center <- mean(y)
  y_scale <- stats::sd(y)
  ys <- (y - y_center) / y_scale
  if (is.null(sigma_init)) {
    sigma0 <- rep(1, n)
  } else {
    if (!is.numeric(sigma_init) || !length(sigma_init) %in% c(1L, n) || anyNA(sigma_init) ||
        any(!is.finite(sigma_init)) || any(sigma_init <= 0)) {
      abort_input("{.arg sigma_init} must be positive and finite, of length 1 or {n}.", call = frame)
    }
    sigma0 <- rep_len(sigma_init, n) / y_scale^2
  }
  flat <- kernel_flatten(stages$kernel)
  lower <- ifelse(flat$free, flat$lower, flat$log_par)
  upper <- ifelse(flat$free, flat$upper, flat$log_par)
  if (!learn_kernel) {
    lower <- flat$log_par
    upper <- flat$log_par
  }
  starts <- matrix(flat$log_par, nrow = restarts, ncol = length(flat$log_par), byrow = TRUE)
  sigma_scale <- restart_sigma_scale(restarts)
  if (restarts > 2) {
    jit <- matrix(stats::rnorm((restarts - 2) * ncol(starts)), restarts - 2)
    jit <- sweep(jit, 2, as.numeric(upper > lower), "*")
    starts[-(1:2), ] <- starts[-(1:2), , drop = FALSE] + jit
    starts <- pmin(pmax(starts, rep(lower, each = restarts)), rep(upper, each = restarts))
  }
  sigma0 <- outer(sigma0, sigma_scale)
  opts <- list(noise = noise, solver = args$solver, lambda = stages$lambda, p = args$p,
               sigma_floor = sigma_floor, damping = control$damping,
               max_sweeps = control$max_sweeps, max_outer = control$max_outer,
               max_hyper_iter = control$max_hyper_iter, tol_sweep = control$tol_sweep,
               tol_outer = control$tol_outer, learn_hyper = learn_kernel,
               tol_stationary = control$tol_stationary,
               jitter = control$jitter, backend = control$backend, threads = args$backend$threads,
               screen_rounds = control$screen_rounds,
               screen_hyper_iter = control$screen_hyper_iter,
               adaptive_sweeps = control$adaptive_sweeps, neighbors = NULL)
  # Vecchia: the C++ fit sees the labels in the set-up's storage order
  # (`lay`, see vecchia_setup()); per-label results are put back later.
  vecchia <- NULL
  lay <- NULL
  if (args$backend$approx == "vecchia") {
    vecchia <- vecchia_setup(args$x, stages$kernel, args$backend$m, layout = TRUE)
    lay <- vecchia$layout
    opts$neighbors <- if (is.null(lay)) vecchia$neighbors else vecchia$layout_neighbors
  }
  list(sigma_floor = sigma_floor, y_center = y_center, y_scale = y_scale, ys = ys,
       sigma0 = sigma0, lower = lower, upper = upper, starts = starts, opts = opts,
       vecchia = vecchia, lay = lay,
       x_fit = stored_rows(args$x, lay), ys_fit = stored_rows(ys, lay))
}

# The core fit (with a progress bar), its per-label results in the user's
# order, and the convergence warning.
gpr_loo_run <- function(args, stages, prob, frame) {
  control <- args$control
  lay <- prob$lay
  bar <- progress_bar("gpr_loo", verbose = args$verbose)
  res <- call_core(.gpr_loo_fit(prob$x_fit, prob$ys_fit, kernel_spec(stages$kernel),
                                stored_rows(prob$sigma0, lay), prob$starts,
                                prob$lower, prob$upper, prob$opts, bar), call = frame)
  progress_done(bar)
  for (v in c("sigma", "inverse_diagonal", "alpha")) res[[v]] <- original_rows(as.numeric(res[[v]]), lay)
  if (!res$converged) {
    # Rounds left over (e.g. the Vecchia path's one round with the pilot's
    # kernel): the variance iterations of a round ran out.
    hint <- if (res$outer_iterations >= control$max_outer) {
      "Raise {.code control = gpr_loo_control(max_outer = )} or check the data."
    } else {
      "Raise {.code control = gpr_loo_control(max_sweeps = )} (variance iterations per round) or check the data."
    }
    warn_convergence(c("{.fn gpr_loo} did not converge in {res$outer_iterations} round{?s} ({res$sweeps} sweeps).",
                       "i" = hint))
  }
  res
}

# The fit object: the variances, leave-one-out quantities and the flag
# statistic on the user's scale.
gpr_loo_object <- function(args, stages, prob, res, call, frame) {
  noise <- args$noise
  lay <- prob$lay
  y_center <- prob$y_center
  y_scale <- prob$y_scale
  ys <- prob$ys
  lambda <- stages$lambda
  p <- args$p
  kernel <- kernel_unflatten(stages$kernel, res$log_par)
  sigma_s <- as.numeric(res$sigma)
  if (noise == "none") sigma_s[] <- 0
  d <- res$inverse_diagonal
  alpha <- res$alpha
  loo_res <- alpha / d
  loo_var_f <- pmax(1 / d - sigma_s, 0)
  fitted_s <- ys - pmax(sigma_s, 0) * alpha
  # The flag statistic: squared LOO residual over its variance for a clean
  # label, e^2 / (v + s0). For the full model, e and v are taken at the clean
  # level s0 with every variance floored at it (see "Noise scores and flags").
  if (noise == "full") {
    clean <- call_core(.gpr_loo_clean_level(prob$x_fit, prob$ys_fit, kernel_spec(kernel),
                                            stored_rows(sigma_s, lay), prob$opts), call = frame)
    noise_level <- clean$level
    flag_stat <- original_rows(clean$statistic, lay)
  } else {
    noise_level <- if (noise == "uniform") sigma_s[1] else 0
    flag_stat <- loo_res^2 / (loo_var_f + noise_level)
  }
  loglik_s <- -(res$objective - 0.5 * lambda * sum(sigma_s^p))
  backend <- args$backend
  new_noisylabels_fit(list(
    call = call,
    noise_var = sigma_s * y_scale^2,
    loo_residual = loo_res * y_scale,
    loo_sd = sqrt(loo_var_f) * y_scale,
    fitted.values = y_center + fitted_s * y_scale,
    residuals = args$y - (y_center + fitted_s * y_scale),
    noise_level = noise_level * y_scale^2,
    sigma_floor = prob$sigma_floor * y_scale^2,
    flag_statistic = as.numeric(flag_stat),
    kernel = kernel,
    noise = noise, solver = args$solver, penalty = args$penalty, lambda = lambda, p = p,
    lambda_rule = if (args$auto_lambda) "auto" else "fixed",
    objective = res$objective,
    loglik = loglik_s - args$n * log(y_scale),
    trace = res$trace, trace_factorizations = res$trace_factorizations,
    factorizations = sum(res$factorizations, stages$stage1$factorizations,
                         stages$pilot$factorizations, stages$vecchia_pilot$factorizations),
    vecchia_pilot = length(stages$vecchia_pilot$y),
    sweeps = res$sweeps,
    outer_iterations = res$outer_iterations, iterations = res$outer_iterations,
    fallbacks = res$fallbacks,
    converged = res$converged, jitter = res$jitter * y_scale^2,
    restart = res$restart, restart_objectives = res$restart_objectives,
    n_free = if (is.null(stages$stage1)) sum(prob$upper > prob$lower) else stages$stage1$n_free,
    kernel_fit = args$kernel_fit,
    approx = backend$approx, neighbors = if (backend$approx == "vecchia") backend$m else NA_integer_,
    threads = backend$threads, vecchia_order = prob$vecchia$order,
    x = args$x, y = args$y, y_center = y_center, y_scale = y_scale,
    control = args$control
  ), "gpr_loo", task = "regression", p_wrong = TRUE)
}
