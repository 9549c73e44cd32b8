#' Learn a classifier from noisy group label distributions (Yoshikawa 2017)
#'
#' Instances carry features but no labels; they are organised in (overlapping)
#' groups, and for each group only a noisy distribution of its members' labels
#' is observed. The model (Yoshikawa 2017) has a softmax classifier
#' \eqn{p(y_u = m \mid x_u) \propto \exp(w_m^\top x_u)}, a confusion matrix
#' \eqn{C} (row \eqn{m}: distribution of the noisy label of an instance whose
#' true class is \eqn{m}) and Gaussian noise on the observed proportions
#' \eqn{s_i}. It is fitted by variational EM on the exact evidence lower bound
#' (ELBO), which corrects the paper's update equations (see
#' `vignette("label-dist-vb")`): closed-form coordinate updates of the label posteriors
#' \eqn{\zeta} (true labels) and \eqn{\eta} (noisy labels, Gauss-Seidel within
#' groups), a MAP update of \eqn{C} (or a Dirichlet \eqn{q(C)}, see `c_update`),
#' and \eqn{W} by L-BFGS, accepted only if it improves. Every block update
#' cannot decrease the ELBO; `debug = TRUE` checks it after every block.
#'
#' The plain mean-field family \eqn{q(y)q(t)} behaves like hard EM (the
#' posterior of each instance becomes one-hot and stays there);
#' `structured = TRUE` uses the structured family \eqn{q(y)q(t \mid y)}
#' (our extension, not in the paper), whose block update is also
#' exact and which keeps graded uncertainty.
#'
#' @section Start and restarts:
#' Restart 1 starts from the deconvolution estimate of every instance's
#' expected noisy label (ridge regression of the group distributions on the
#' membership matrix, solved by conjugate gradients), a
#' diagonal-dominant \eqn{C} (0.7 on the diagonal) and \eqn{W = 0}. Further
#' restarts mix each instance's start with a random Dirichlet(1) draw (weight
#' 0.5). The restart with the highest final ELBO is kept. The true classes are
#' only identified up to relabelling through the prior on \eqn{C}: when
#' `alpha_c1 == alpha_c0` no estimator can name the classes better than chance
#' (the likelihood is invariant under permuting them).
#'
#' @section Membership formats:
#' `groups` can be (a) a list of integer vectors of member rows, one per group
#' (in the row order of `label_dist`); (b) a two-column data frame or matrix
#' (instance, group) of integer indices; (c) a sparse (or dense) `Matrix`
#' incidence matrix with one row per instance and one column per group, any
#' non-zero entry meaning membership. All three give the same fit (members are
#' visited in increasing row order within each group). Empty groups and an
#' instance listed twice in a group are errors. Instances in no group are
#' allowed (their \eqn{\zeta} is then `softmax(W x)`).
#'
#' @section Noise scores:
#' Per instance (`level = "instance"`, the default): \eqn{1 - \max_m \zeta_{um}},
#' the posterior probability that the inferred true label is wrong. Per group
#' (`level = "group"`): the squared distance between the observed \eqn{s_i} and
#' the distribution the fit reconstructs for it,
#' \eqn{\hat r_i = n_i^{-1} \sum_{u \in G_i} \zeta_u C}, divided by its expected
#' value under the model, \eqn{M / \alpha_s + n_i^{-2} \sum_u (1 - \|\zeta_u C\|^2)};
#' about 1 for a group that fits, large for a group whose reported distribution
#' is inconsistent with its members.
#'
#' @param x A numeric feature matrix (U x D) or data frame, or a one-sided
#'   formula `~ features` (then `data` is required).
#' @param groups Group membership; see section "Membership formats".
#' @param label_dist Observed noisy label distributions, an N x M numeric matrix
#'   (one row per group, one column per class; column names are the class names).
#' @param alpha_w Precision of the Gaussian prior on the classifier weights.
#' @param alpha_s Precision of the Gaussian noise on the observed distributions.
#' @param alpha_c0,alpha_c1 Dirichlet prior of each row of \eqn{C}: `alpha_c1` on
#'   the diagonal, `alpha_c0` elsewhere. `alpha_c1 > alpha_c0` encodes "the
#'   noisy label is usually the true one".
#' @param structured Use the structured mean-field family
#'   \eqn{q(y)q(t \mid y)} (see Details).
#' @param exact `TRUE` (default): the exact ELBO, whose noisy-label update is a
#'   closed-form softmax. `FALSE`: the paper's plug-in objective, which drops
#'   the variance term of the Gaussian expectation; it is not a lower bound, its
#'   noisy-label update is solved by a damped fixed-point iteration, and
#'   `elbo`/`elbo_trace` then report that objective. An ablation of the
#'   paper's method, mean field only.
#' @param raw_dist `FALSE`: `label_dist` holds proportions; negative
#'   entries are an error and rows whose sum differs from 1 by more than 0.01
#'   give a warning. `TRUE`: `label_dist` holds raw noisy observations as the
#'   model allows (Gaussian noise, as [sim_label_dist()] generates); only
#'   finiteness is checked. `NULL` (default): `TRUE` when `label_dist` carries
#'   the attribute `raw_dist = TRUE`, which [sim_label_dist()] sets on its
#'   `label_dist`, else `FALSE`. (Subsetting a matrix drops the attribute;
#'   give `raw_dist = TRUE` then.)
#' @param classes Optional class names; if given, the column names of
#'   `label_dist` must be exactly these (in any order).
#' @param tune Optional named list of candidate values for any of `alpha_w`,
#'   `alpha_s`, `alpha_c0`, `alpha_c1`; the grid point with the best held-out
#'   group likelihood (k-fold CV over groups, see `folds`) is used for the final fit.
#' @param folds Number of folds over groups for `tune`.
#' @param threads Cores the fit may use (default
#'   `getOption("noisylabels.threads", 1)`): the OpenMP team of the
#'   \eqn{\eta} sweep. See "Threads" in [noisylabels-package].
#' @param control Tuning of the solver: [label_dist_vb_control()] (restarts,
#'   iterations and stopping rules, the update of \eqn{C}, the L-BFGS steps
#'   of \eqn{W}, the ELBO check). Passing those settings as arguments of
#'   `label_dist_vb()` still works but is deprecated.
#' @param verbose Show a progress bar over the iterations (all restarts), or
#'   over the fits of `tune` (see [noisylabels-progress]). `NULL` (default):
#'   in interactive sessions, or as `options(noisylabels.progress =)` says.
#' @param data Data frame for the formula interface.
#' @param ... For the formula method: arguments passed to the default method
#'   (unknown arguments are an error).
#' @return An object of class `label_dist_vb`: `zeta` (U x M true-label
#'   posterior of the training instances), `C` (M x M confusion matrix: MAP, or
#'   the posterior mean under `c_update = "vb"`), `W` (M x D weights), `eta`
#'   (per-pair noisy-label posteriors), `denoised` (N x M, \eqn{\mu_i}, the
#'   posterior mean of each group's noise-free label proportions),
#'   `reconstructed` (N x M, \eqn{\hat r_i}), `elbo` (final value), `elbo_terms`,
#'   `elbo_trace`, `changes_trace` (argmax changes per iteration), `iterations`,
#'   `converged`, `stop_reason`, `restart_elbo`, `hyper`, `tuning` (if `tune`)
#'   and the data needed by the methods.
#' @references Yoshikawa, Y. (2017). Learning from noisy label distributions.
#'   ICANN 2017, LNCS 10614, 69-77.
#' @seealso [sim_label_dist()], [label_dist_baseline()], [predict.label_dist_vb()].
#' @examples
#' set.seed(1)
#' sim <- sim_label_dist(U = 60, N = 300, group_size = 15, alpha_c1 = 100, alpha_s = 100)
#' fit <- label_dist_vb(sim$x, sim$groups, sim$label_dist, alpha_s = 100,
#'                      alpha_c1 = 100)
#' fit
#' mean(predict(fit, type = "class", newdata = sim$x) == sim$y)
#' mean(colnames(fit$zeta)[max.col(fitted(fit))] == sim$y)
#' @export
label_dist_vb <- function(x, ...) UseMethod("label_dist_vb")

#' @rdname label_dist_vb
#' @export
label_dist_vb.formula <- function(x, data, groups, label_dist, ...) {
  if (missing(data)) abort_input("The formula interface needs {.arg data}, a data frame.")
  # Rows line up with `groups`: missing values are an error, not dropped.
  design <- formula_design(x, data, stats::na.fail, intercept = "keep", response = "none")
  fit <- label_dist_vb.default(design$x, groups = groups, label_dist = label_dist, ...)
  attach_formula(fit, design, match.call())
}

#' @rdname label_dist_vb
#' @export
label_dist_vb.default <- function(x, groups, label_dist, alpha_w = 1, alpha_s = 10,
                                  alpha_c0 = 1, alpha_c1 = 10, structured = FALSE,
                                  exact = TRUE, raw_dist = NULL, classes = NULL, tune = NULL,
                                  folds = 5, threads = getOption("noisylabels.threads", 1L),
                                  verbose = NULL, control = label_dist_vb_control(), ...) {
  call <- match.call()
  ctl <- control_from_dots(control, list(...), label_dist_vb_control, "label_dist_vb_control",
                           "label_dist_vb", call = call)
  control <- ctl$control
  do.call(check_dots_empty, c(list("label_dist_vb"), ctl$dots))
  x <- check_x_matrix(x, "x")
  prep <- ld_prepare(x, groups, label_dist, raw_dist, classes)
  hyper <- list(alpha_w = alpha_w, alpha_s = alpha_s, alpha_c0 = alpha_c0, alpha_c1 = alpha_c1)
  for (nm in names(hyper)) check_number(hyper[[nm]], nm, 0, open_lower = TRUE)
  hyper <- unlist(hyper)
  check_flag(structured, "structured")
  check_flag(exact, "exact")
  if (!exact && structured) {
    abort_input("The plug-in ablation ({.code exact = FALSE}) exists only for the mean-field family ({.code structured = FALSE}).")
  }
  if (!is.null(verbose)) check_flag(verbose, "verbose")
  c_update <- control$c_update
  opts <- list(structured = structured, exact = exact,
               max_iter = control$max_iter, tol = control$tol,
               stable_iter = control$stable_iter, stable_tol = control$stable_tol,
               lbfgs_max_iter = control$lbfgs_max_iter, restarts = control$restarts,
               threads = check_threads(threads),
               debug = control$debug, init_lambda = 1e-2, init_diag = 0.7)
  tuning <- NULL
  if (!is.null(tune)) {
    tuning <- ld_cv(prep, hyper, opts, c_update, tune, check_count(folds, "folds", 2), verbose)
    best <- tuning$grid[which.max(tuning$grid$heldout_loglik), , drop = FALSE]
    for (nm in names(tune)) hyper[[nm]] <- best[[nm]]
  }
  bar <- progress_bar("label_dist_vb", total = opts$max_iter * opts$restarts, verbose = verbose)
  fit <- ld_fit_prepared(prep, hyper, opts, c_update, progress = bar)
  fit$tuning <- tuning
  fit$call <- call
  fit
}

ld_resolve_c_update <- function(c_update, hyper) {
  if (c_update == "auto") c_update <- if (min(hyper[["alpha_c0"]], hyper[["alpha_c1"]]) >= 1) "map" else "vb"
  if (c_update == "map" && min(hyper[["alpha_c0"]], hyper[["alpha_c1"]]) < 1) {
    abort_input(c("The MAP estimate of {.arg C} does not exist when a Dirichlet concentration is below 1.",
                  "i" = "Use {.code c_update = \"vb\"} (or {.code \"auto\"})."))
  }
  c_update
}

ld_fit_prepared <- function(prep, hyper, opts, c_update, progress = NULL) {
  c_update <- ld_resolve_c_update(c_update, hyper)
  opts$vb_c <- c_update == "vb"
  opts$seed <- as.double(draw_seed())
  core <- call_core(.ld_fit(prep$x, prep$s, as.integer(prep$group_ptr), as.integer(prep$pair_unit),
                            hyper, opts, progress = progress))
  progress_done(progress)
  st <- core$state
  cl <- prep$classes
  C <- if (opts$vb_c) st$cpar / rowSums(st$cpar) else st$cpar
  dimnames(C) <- list(true = cl, noisy = cl)
  zeta <- st$zeta
  colnames(zeta) <- cl
  W <- st$w
  dimnames(W) <- list(cl, colnames(prep$x) %||% paste0("x", seq_len(prep$D)))
  grp <- rep.int(seq_len(prep$N), prep$sizes)
  denoised <- rowsum(st$eta, grp, reorder = TRUE) / prep$sizes
  pc <- zeta %*% C  # each instance's expected noisy label
  pair_inst <- prep$pair_unit + 1L
  recon <- rowsum(pc[pair_inst, , drop = FALSE], grp, reorder = TRUE) / prep$sizes
  spread <- rowsum(1 - rowSums(pc[pair_inst, , drop = FALSE]^2), grp, reorder = TRUE)[, 1] / prep$sizes^2
  dimnames(denoised) <- dimnames(recon) <- list(rownames(prep$s), cl)
  colnames(st$eta) <- cl
  if (opts$debug && length(core$block_deltas)) {
    worst <- min(core$block_deltas / pmax(abs(core$elbo[["total"]]), 1))
    if (worst < -1e-8) {
      cli::cli_warn("The ELBO decreased in a block update (relative change {format(worst, digits = 3)}).",
                    class = c("noisylabels_warning_numeric", "noisylabels_warning"))
    }
  }
  if (!core$converged) {
    warn_convergence("{.fn label_dist_vb} stopped at {core$iterations} iteration{?s} without converging (max_iter = {opts$max_iter}).")
  }
  new_noisylabels_fit(list(
    zeta = zeta, C = C, W = W, log_c = core$log_c, eta = st$eta, eta_cond = st$eta_cond,
    c_param = st$cpar, denoised = denoised, reconstructed = recon, group_spread = spread,
    elbo = core$elbo[["total"]], elbo_terms = core$elbo, elbo_trace = core$elbo_trace,
    changes_trace = core$changes_trace,
    block_deltas = stats::setNames(core$block_deltas, core$block_names),
    iterations = core$iterations, converged = core$converged, stop_reason = core$stop_reason,
    restart_elbo = core$restart_elbo, best_restart = core$best_restart,
    lbfgs_evaluations = core$lbfgs_evaluations,
    hyper = hyper, c_update = c_update, structured = opts$structured, options = opts,
    x = prep$x, label_dist = prep$s, group_ptr = prep$group_ptr, pair_unit = prep$pair_unit,
    group_sizes = prep$sizes, classes = cl, n_instances = prep$U, n_groups = prep$N,
    n_pairs = length(prep$pair_unit)
  ), "label_dist_vb", task = "classification", p_wrong = FALSE)
}
