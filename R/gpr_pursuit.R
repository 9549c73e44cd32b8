#' Robust Gaussian-process regression by relevance pursuit
#'
#' Fits the extended GP model of Ament et al. (2024),
#' `y ~ N(m, K_f + sigma2 I + diag(rho))`, where the data-point-specific
#' variances `rho_i` are non-zero only on a sparse support `S` (the outliers).
#' The support is found by relevance pursuit over a schedule of support sizes
#' and chosen by Bayesian model selection with an exponential prior on `|S|`.
#' All numerics (factorizations, gradients, the optimizer and the pursuit loop)
#' run in C++.
#'
#' @section Model and algorithm:
#' At each support size the `rho_i` on the support are optimised jointly with
#' the kernel hyperparameters, the constant mean and `sigma2` by projected
#' L-BFGS with analytic gradients. In the default convex parameterisation
#' `rho_i = d_i s_i / (1 - s_i)` with `d_i = k(x_i, x_i) + sigma2` and
#' `s_i` in `[0, s_max]`; `parameterization = "canonical"` optimises `rho_i`
#' directly (in `[0, rho_max]`).
#'
#' * `direction = "backward"` (the default, as in BoTorch) starts with every
#'   point on the support and at each level removes the points with the
#'   smallest `s_i` (or `rho_i`).
#' * `direction = "forward"` starts with an empty support and adds the
#'   inactive points with the largest Lemma-1 value
#'   `rho_i* = max(0, e_i^2 - v_i)` (`e_i` the leave-one-out residual of
#'   `y - m`, `v_i` its leave-one-out variance), only those with
#'   `rho_i* > 0`; it stops when no point qualifies.
#'
#' The levels are `floor(fractions * n)` (or `n_outliers`). Faster than the
#' BoTorch pipeline where the maths allows (see `pursuit_control()`): the
#' `rho` are warm-started across levels, entering points start at their
#' Lemma-1 optimum reached by coordinate steps with rank-one updates of the
#' Cholesky factor, and the factor at each optimum is reused for scoring and
#' for the evidence. The number of dense factorizations is reported.
#'
#' @section Model selection:
#' Each model `t` of the trace gets a score from its total MAP
#' log-likelihood `L_t` (log marginal likelihood + log hyperprior, at the
#' fitted hyperparameters) and its support size `k = |S_t|`:
#'
#' * `"bic"`: `L_t - 0.5 log(n) k`: each outlier must raise the
#'   total log-likelihood by `0.5 log n` nats (2.6 at n = 200).
#' * `"ebic"`: `L_t - 0.5 log(n) k - 0.5 log(choose(n, k))`, the extended BIC
#'   of Chen and Chen (2008) with `gamma = 0.5`. The first outlier costs about
#'   `log n` nats, later ones about `0.5 log n + 0.5 log((n - k) / k)`. It
#'   flags fewer inliers when there are no or few outliers, but misses large
#'   outlier sets more often (see the measurement).
#' * `"botorch"`: BoTorch's rule `L_t / n + log_prior(k)` with the
#'   exponential prior `log_prior(k) = -k / prior_mean - log(prior_mean)`
#'   (mean `prior_mean`, default `max(1, floor(0.2 n))`). The likelihood
#'   enters per datum, so each extra outlier must raise the total
#'   log-likelihood by `n / prior_mean` nats (5 by default). This was the
#'   default before version 0.2 (see NEWS): under 30% outliers it can keep no
#'   outlier at all, because the pursuit's levels also hold inliers.
#' * `"paper"`: the paper's rule read literally, `L_t + log_prior(k)`: each
#'   outlier costs `1 / prior_mean` nats, so it also flags inliers.
#'
#' * `"esd"` (default): a calibrated sequential test instead of a price per outlier
#'   (`R/gpr_pursuit-select.R`). Rosner's generalised ESD test carried over
#'   to the GP as a forward search: with fixed hyperparameters, a clean set
#'   grows from the empty set by the point whose standardised residual
#'   `|z_j| = |y_j - m - mu_j| / sd_j` given the clean set is smallest; the
#'   statistic at clean-set size `m` is that smallest `|z|`, compared with the
#'   Bonferroni value `qt(1 - alpha / (2 (m + 1)), m)`
#'   (`pursuit_control(esd_alpha)`, default 0.05), and the points outside
#'   the smallest clean set (of at least `n / 2` points and `n` minus the
#'   largest support of the schedule) with a significant
#'   statistic are flagged. Predicting each point from points that no
#'   flagged point touched avoids the swamping of a removal path, where an
#'   outlier drags its neighbours' leave-one-out predictions. The
#'   hyperparameters come from a fixed-point iteration (test, refit with the
#'   flagged support, test again until the set repeats) from three starts:
#'   the best model by BIC after the refinement, a fit on the cleanest half
#'   of the data, and the model with an empty support; the fixed points are
#'   compared by the EBIC (the empty support only if no start found
#'   another). Without outliers and with the right hyperparameters the test
#'   flags nothing with probability about `1 - alpha`.
#'
#' `log_prior` replaces the exponential prior of the last two rules.
#' `posterior` is `softmax(score)` over the models visited (for `"botorch"`
#' a tempered one). With `average = TRUE`, predictions average the trace
#' models with these weights (Bayesian model averaging).
#'
#' The levels are coarse (10 fractions by default) and backward pursuit drops
#' points in blocks, so the best level typically holds some inliers or misses
#' some outliers. With `refine = TRUE` (default) the selection is refined:
#' from each of the `pursuit_control(refine_starts)` best models under the
#' BIC (the mildest price, so that a level that overshoots the outlier set is
#' among them), the Lemma-1 gain of every point (the log-likelihood its own
#' optimal `rho_i` adds, the rest of the model fixed) is computed; treating
#' the gains as additive, the support maximising the rule's score is the `k`
#' points of largest gain for the best `k`. The model is refitted at that
#' support (from the current and from the initial hyperparameters, keeping
#' the better), added to the trace (`stage = "refine"`), and the step is
#' repeated from it while the score improves (at most three rounds). The
#' selected model is the best-scoring one of the whole trace. With
#' `selection = "esd"` the refinement uses the BIC's price, the test starts
#' from the best model by BIC (with `refine = FALSE`, of the pursuit levels
#' alone), its refits join the trace as `stage = "esd"`, and the trace's
#' `score` and `posterior` are the BIC's (the selected model is the test's,
#' not necessarily the best-scoring one).
#'
#' The default (`"esd"`) was chosen by measurement over 0-40% outliers of
#' four kinds on Friedman-10, Hartmann-6 and three UCI tables
#' (`inst/experiments/gpr_pursuit/selection.R`, results in the `gpr-pursuit`
#' vignette): it flags the fewest points without outliers and meets the
#' targets at 30% constant outliers on Friedman-10, energy and concrete. It
#' is more conservative than `"bic"` (the default of version 0.2) under
#' uniform and Student-t corruption, where `"bic"` with refinement has the
#' higher recall. Where the GP cannot fit the clean function well
#' (Hartmann-6, yacht at n = 200: leave-one-out residuals with kurtosis
#' 10-14), it still flags a few of the worst-fitted points.
#'
#' @section Noise scores:
#' `noise_scores()` returns `rho_i / (rho_i + sigma2)` of the selected model
#' on its support: the share of point `i`'s noise variance that is outlier
#' variance. Off the support it returns the same share for the point's own
#' optimal `rho_i` in the selected model (Lemma 1, `max(0, e_i^2 - v_i)`), so
#' the scores rank every label, also when the selection flags none (a point
#' can be worth less than the rule's price and still be the most suspect).
#' `label_issues()` flags the selected support (or, with `threshold`, scores
#' above it).
#'
#' @section Vecchia approximation:
#' With `approx = "vecchia"` every likelihood evaluation is the response
#' Vecchia likelihood of the same model (as in [gpr_loo()]), with the noise
#' `sigma2 + rho_i` on the diagonal of each conditioning block. The
#' conditioning sets are chosen by kd-tree in the metric of the length-scales
#' of a homoscedastic Vecchia pilot fit (`pursuit_control(vecchia_pilot)`),
#' which is also the pursuit's starting point. What is exact and what is not:
#'
#' * Exact for the approximate model: its negative log-likelihood and
#'   gradient (in the kernel hyperparameters, the mean, `sigma2` and every
#'   `rho_i`), so every L-BFGS fit, every level's evidence and the model
#'   selection are those of the Vecchia model; and the leave-one-out
#'   residuals `(Q r)_i / Q_ii` and variances `1 / Q_ii` (Q the approximate
#'   precision).
#' * Approximate: Lemma 1's closed form. In the dense GP `rho_i` changes the
#'   covariance by a rank-one term and its one-dimensional optimum and gain
#'   follow from the leave-one-out quantities. In the Vecchia model `rho_i`
#'   also enters the conditioning sets of the later labels that condition on
#'   `i`, so the closed form is only a proposal. It is used to screen: the
#'   forward pursuit ranks inactive points by it, the refinement builds its
#'   candidate supports from it, and the coordinate sweeps move all support
#'   points to their closed-form values at once (a Jacobi step). Every
#'   proposal is then judged by the true Vecchia likelihood: a sweep step is
#'   halved until the likelihood improves (or dropped), and a refined support
#'   enters the trace only through a full refit, selected by its score.
#'   The noise scores off the support use the closed form. Its leave-one-out
#'   variance without `rho_i`, `1 / Q_ii - rho_i`, is floored at `sigma2`
#'   (a bound in the exact GP that the Vecchia model can violate for points
#'   with a large `rho_i`).
#'
#' With every earlier label conditioned on (`neighbors = n - 1`) the model is
#' the exact GP and the Vecchia path reproduces the dense fit (tested).
#' The refinement refits each candidate support from the warm start only
#' (`pursuit_control(refine_cold)`). `predict()` conditions each new point on
#' its `max(5 m, 150)` nearest
#' training labels. `factorizations` then counts passes over the
#' conditioning sets.
#'
#' @param x Numeric matrix or data frame of inputs, or a formula (the
#'   formula method also accepts it by name, `formula = y ~ x1`). Exact
#'   duplicate rows are kept: they are repeated observations.
#' @param y Numeric response (x/y interface).
#' @param data Data frame (formula interface; the model matrix is built
#'   without an intercept).
#' @param kernel A [gp_kernel()]. The default is an ARD RBF kernel whose
#'   length-scales (on standardised inputs) are bounded below by 0.1, so that
#'   the GP cannot explain isolated outliers by wiggling.
#' @param direction `"backward"` or `"forward"` pursuit.
#' @param fractions Increasing outlier fractions in \[0, 1\] defining the levels.
#' @param n_outliers Increasing support sizes (counts), overriding `fractions`.
#' @param parameterization `"convex"` or `"canonical"`.
#' @param selection Model-selection rule: `"esd"` (default), `"bic"`, `"ebic"`,
#'   `"botorch"` or `"paper"` (see Model selection). The `"esd"` test needs the
#'   dense covariance: on the Vecchia path the default becomes `"bic"`, and an
#'   explicit `"esd"` is an error.
#' @param refine Refine the selected support by Lemma-1 gains and refits
#'   (see Model selection)?
#' @param prior_mean Mean of the exponential prior on `|S|` (> 0) of the
#'   `"botorch"` and `"paper"` rules.
#' @param log_prior Optional function of the support size returning the
#'   log-prior of the `"botorch"` and `"paper"` rules; replaces the
#'   exponential prior.
#' @param average Use Bayesian model averaging over the trace in `predict()`?
#' @param standardize_x Centre and scale the (non-categorical) input columns?
#' @param hyperprior Use the log-normal hyperparameter priors of BoTorch's
#'   default model (MAP): length-scales LogNormal(sqrt(2) + log(d)/2, sqrt(3))
#'   for unit-cube inputs (shifted for standardised inputs), noise variance
#'   LogNormal(-4, 1) on the standardised response. They keep the GP from
#'   explaining outliers with short length-scales in higher dimensions.
#' @param approx Covariance backend, as in [gpr_loo()]: `"dense"` (the exact
#'   GP: one n x n Cholesky per evaluation, with the rank-one updates and
#'   Sherman-Morrison sweeps above), `"vecchia"` (the response Vecchia
#'   approximation: in a random order each label conditioned on its
#'   `neighbors` nearest earlier labels, O(n m^3) time and O(n m) memory per
#'   evaluation; see "Vecchia approximation") or `"auto"` (Vecchia above
#'   2,000 labels, the threshold [gpr_loo()] uses).
#' @param neighbors Size m of each Vecchia conditioning set (ignored by the
#'   dense backend; `neighbors >= n - 1` falls back to dense with a message).
#' @param threads OpenMP threads for the Vecchia backend's per-label work
#'   (default `getOption("noisylabels.threads", 1)`).
#' @param control A list from [pursuit_control()].
#' @param verbose Show a progress bar over the pursuit's support sizes? `NULL`
#'   (default): in interactive sessions, or when
#'   `options(noisylabels.progress = TRUE)`.
#' @param ... Unused.
#' @return An object of class `gpr_pursuit`: a list with the selected
#'   `support` (row indices), `rho` (length n, response scale), `s` (convex
#'   values), `sigma2`, `mean`, `kernel` (fitted [gp_kernel()]), `trace` (one
#'   row per fitted model: `stage` (`"pursuit"` or `"refine"`), `size`,
#'   `loglik`, `log_prior`, `score`, `posterior`, `iterations`, `converged`,
#'   ...), `selected` (trace row), `selection`, `refine`,
#'   `factorizations`, `rank_one_updates`, `converged`, `iterations` and what
#'   `predict()` needs.
#' @references Ament, S., Santorella, E., Eriksson, D., Letham, B., Balandat, M.
#'   and Bakshy, E. (2024). Robust Gaussian processes via relevance pursuit.
#'   NeurIPS 2024. \doi{10.48550/arXiv.2410.24222}
#' @seealso [pursuit_control()], [predict.gpr_pursuit()], [gpr_baseline()].
#' @examples
#' set.seed(1)
#' x <- seq(0, 1, length.out = 40)
#' y <- sin(6 * x) + rnorm(40, sd = 0.1)
#' y[c(5, 20, 33)] <- y[c(5, 20, 33)] + 3
#' fit <- gpr_pursuit(x, y, direction = "forward", n_outliers = 0:6)
#' fit
#' label_issues(fit)[1:5, ]
#' predict(fit, data.frame(x = c(0.25, 0.5)))
#' # the Vecchia backend (the default above 2,000 labels)
#' fit_v <- gpr_pursuit(x, y, direction = "forward", n_outliers = 0:6,
#'                      approx = "vecchia", neighbors = 10)
#' fit_v$support
#' @export
gpr_pursuit <- function(x, ...) {
  if (missing(x)) {
    # gpr_pursuit(formula = y ~ x1, data = d): S3 dispatches on `x`, so a
    # formula given by name would otherwise reach no method.
    dots <- list(...)
    if (inherits(dots$formula, "formula")) {
      return(gpr_pursuit.formula(dots$formula, ...))
    }
    abort_input(c("{.fn gpr_pursuit} needs {.arg x}: a formula (with {.arg data}) or a matrix of inputs (with {.arg y}).",
                  "i" = "For example {.code gpr_pursuit(y ~ x1 + x2, data = d)} or {.code gpr_pursuit(x, y)}."),
                class = "noisylabels_error_input")
  }
  UseMethod("gpr_pursuit")
}

#' @rdname gpr_pursuit
#' @export
gpr_pursuit.formula <- function(x, data, ...) {
  formula <- x
  dots <- list(...)
  if (!is.null(dots$formula)) {
    # reached from the generic with formula = given by name
    dots$formula <- NULL
    return(do.call(gpr_pursuit.formula, c(list(formula, data), dots)))
  }
  if (missing(data)) {
    abort_input(c("{.arg data} is missing: the formula interface needs a data frame with the variables of the formula.",
                  "i" = "Call {.code gpr_pursuit(y ~ x1, data = d)}, or {.code gpr_pursuit(x, y)} with a matrix."),
                class = "noisylabels_error_input")
  }
  mf <- stats::model.frame(formula, data, na.action = stats::na.fail)
  tt <- stats::terms(mf)
  attr(tt, "intercept") <- 0L
  x <- stats::model.matrix(tt, mf)
  attr(x, "assign") <- NULL
  attr(x, "contrasts") <- NULL
  y <- stats::model.response(mf)
  fit <- gpr_pursuit.default(x, y, ...)
  fit$terms <- stats::delete.response(tt)
  fit$xlevels <- stats::.getXlevels(tt, mf)
  fit$call <- match.call()
  fit
}

#' @rdname gpr_pursuit
#' @export
gpr_pursuit.default <- function(x, y, kernel = NULL,
                                direction = c("backward", "forward"),
                                fractions = c(0, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1),
                                n_outliers = NULL,
                                parameterization = c("convex", "canonical"),
                                selection = c("esd", "bic", "ebic", "botorch", "paper"),
                                refine = TRUE,
                                prior_mean = NULL, log_prior = NULL, average = FALSE,
                                standardize_x = TRUE, hyperprior = TRUE,
                                approx = c("auto", "dense", "vecchia"), neighbors = 20L,
                                threads = getOption("noisylabels.threads", 1L),
                                control = pursuit_control(), verbose = NULL, ...) {
  call <- match.call()
  selection_given <- !missing(selection)
  check_dots_empty("gpr_pursuit", ...)
  direction <- match_arg(direction)
  parameterization <- match_arg(parameterization)
  selection <- match_arg(selection)
  check_flag(refine, "refine")
  x <- check_x_matrix(x, "x")
  if (is.null(colnames(x))) colnames(x) <- if (ncol(x) == 1L) "x" else paste0("x", seq_len(ncol(x)))
  n <- nrow(x)
  if (n < 5L) {
    abort_input(c("{.fn gpr_pursuit} needs at least 5 observations, not {n}.",
                  "i" = "Relevance pursuit compares models that treat some points as outliers."),
                class = "noisylabels_error_too_few")
  }
  y <- check_y_numeric(y, n, "y")
  check_flag(average, "average")
  check_flag(standardize_x, "standardize_x")
  check_flag(hyperprior, "hyperprior")
  if (!inherits(control, "pursuit_control")) abort_input("{.arg control} must come from {.fn pursuit_control}.")
  # Exact duplicate rows are repeated observations: they stay in the data and
  # count twice in the likelihood. The noise variance sigma2 >= noise_lower
  # keeps K positive definite when inputs repeat.
  backend <- resolve_approx(approx, n, neighbors, threads)
  if (selection == "esd" && backend$approx == "vecchia") {
    # The forward-search test conditions on dense n x n blocks; on the Vecchia
    # path the default rule is the BIC (with refinement).
    if (selection_given) {
      abort_input(c("{.code selection = \"esd\"} needs the dense covariance (its forward search holds an n x n matrix).",
                    "i" = "Use {.code approx = \"dense\"} or another {.arg selection} such as {.val bic}."))
    }
    selection <- "bic"
  }
  if (backend$approx == "dense") check_dense_memory(n, copies = 4, vecchia = TRUE)
  levels <- pursuit_levels(n, fractions, n_outliers)
  if (is.null(log_prior)) {
    prior_mean <- prior_mean %||% max(1, floor(0.2 * n))
    if (!is.numeric(prior_mean) || length(prior_mean) != 1L || is.na(prior_mean) ||
        !is.finite(prior_mean) || prior_mean <= 0) {
      abort_input("{.arg prior_mean} must be a single positive number, not {.val {format(prior_mean)}}.",
                  class = "noisylabels_error_prior")
    }
    mu <- prior_mean
    log_prior <- function(k) -k / mu - log(mu)
  } else if (!is.function(log_prior)) {
    abort_input("{.arg log_prior} must be a function of the support size.", class = "noisylabels_error_prior")
  }

  # Standardise inputs (non-categorical columns) and the response.
  kernel <- kernel %||% gp_kernel("rbf", ard = TRUE, lower = list(lengthscale = 0.1))
  mask <- kernel_resolve(kernel, x)$categorical
  x_center <- rep(0, ncol(x)); x_scale <- rep(1, ncol(x))
  if (standardize_x) {
    cont <- !mask
    x_center[cont] <- colMeans(x[, cont, drop = FALSE])
    sds <- apply(x[, cont, drop = FALSE], 2, stats::sd)
    sds[!is.finite(sds) | sds == 0] <- 1
    x_scale[cont] <- sds
  }
  xs <- scale_inputs(x, x_center, x_scale)
  # Length-scales refer to the standardised inputs (data-driven ones are
  # computed on them).
  kernel <- kernel_resolve(kernel, xs)
  y_center <- mean(y); y_scale <- stats::sd(y)
  ys <- (y - y_center) / y_scale

  fl <- kernel_flatten(kernel)
  klo <- ifelse(fl$free, fl$lower, fl$log_par)
  khi <- ifelse(fl$free, fl$upper, fl$log_par)
  ctl <- control
  ctl$backward <- direction == "backward"
  ctl$convex <- parameterization == "convex"
  ctl$levels <- as.integer(levels)
  if (hyperprior) {
    pr <- pursuit_hyperprior(fl, ncol(x), standardize_x)
    ctl$prior_mu <- pr$mu; ctl$prior_sd <- pr$sd
  }
  bar <- progress_bar("gpr_pursuit", verbose = verbose)
  # The bar follows the pursuit over support sizes; cli closes a bar that
  # reaches its total, so the refinement fits run without one.
  core_fit <- function(log_par, mean0, log_noise0, ctl, progress = NULL) {
    call_core(.gpr_pursuit_fit(xs, ys, kernel_spec(kernel, log_par), klo, khi,
                               mean0, log_noise0, c(-control$mean_bound, control$mean_bound),
                               log(c(control$noise_lower, control$noise_upper)), unclass(ctl),
                               progress))
  }
  start <- list(log_par = fl$log_par, mean = 0, log_noise = log(control$noise_init))
  vecchia <- NULL
  if (backend$approx == "vecchia") {
    vecchia <- pursuit_vecchia_setup(xs, kernel, backend, ctl, start, core_fit,
                                     pilot = control$vecchia_pilot)
    ctl$neighbors <- vecchia$neighbors
    ctl$threads <- backend$threads
    start <- vecchia$start
  }
  raw <- core_fit(start$log_par, start$mean, start$log_noise, ctl, bar)
  raw$stage <- rep("pursuit", length(raw$steps))
  if (refine) {
    raw <- pursuit_refine(raw, xs, ys, kernel, if (selection == "esd") "bic" else selection,
                          log_prior, ctl, core_fit,
                          control$backend, starts = control$refine_starts,
                          cold_start = start,
                          cold = control$refine_cold %||% (backend$approx == "dense"))
  }
  if (selection == "esd") {
    raw <- pursuit_esd(raw, xs, ys, kernel, ctl, core_fit, alpha = control$esd_alpha,
                       max_size = max(levels),
                       cold_start = list(log_par = fl$log_par, mean = 0,
                                         log_noise = log(control$noise_init)))
  }
  progress_done(bar)
  fit <- new_gpr_pursuit(raw, x = xs, y = ys, kernel = kernel, fl = fl, log_prior = log_prior,
                         backend = backend, vecchia = vecchia,
                         selection = selection, refine = refine,
                         prior_mean = if (exists("mu", inherits = FALSE)) mu else NA_real_,
                         x_center = x_center, x_scale = x_scale, y_center = y_center,
                         y_scale = y_scale, direction = direction,
                         parameterization = parameterization, average = average,
                         control = control, levels = levels)
  fit$call <- call
  bad <- !fit$trace$converged
  if (any(bad)) {
    warn_convergence(c("The fit did not converge at {sum(bad)} of {length(bad)} support size{?s} (support {fit$trace$size[bad]}).",
                       "i" = "L-BFGS iterations reached: {fit$trace$iterations[bad]} (limit {control$max_iter} per call; block-coordinate rounds {control$max_outer}).",
                       "i" = "Raise {.code max_iter}, {.code max_outer} or {.code polish_iter} in {.fn pursuit_control}."))
  }
  fit
}

scale_inputs <- function(x, center, scale) {
  sweep(sweep(x, 2, center, "-"), 2, scale, "/")
}

# Log-normal priors of BoTorch's default SingleTaskGP (spec §5): length-scales
# LogNormal(sqrt(2) + log(d)/2, sqrt(3)) for inputs in the unit cube (shifted
# by log(sqrt(12)) for standardised inputs, whose sd is sqrt(12) times that of
# a uniform unit-cube column), noise variance LogNormal(-4, 1) on the
# standardised response. Other parameters have none (sd = 0).
pursuit_hyperprior <- function(fl, d, standardized) {
  p <- length(fl$log_par)
  mu <- numeric(p + 2); sd <- numeric(p + 2)
  ls <- grepl("^lengthscale", fl$names) & fl$free
  mu[seq_len(p)][ls] <- sqrt(2) + log(d) / 2 + if (standardized) log(sqrt(12)) else 0
  sd[seq_len(p)][ls] <- sqrt(3)
  mu[p + 2] <- -4; sd[p + 2] <- 1
  list(mu = mu, sd = sd)
}

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
#' @return A list of class `pursuit_control`.
#' @examples
#' pursuit_control(max_iter = 500)
#' pursuit_control(strategy = "botorch")$reset_rho
#' @export
pursuit_control <- function(max_iter = 1000, pgtol = 1e-5, ftol = 1e-8, s_max = 1 - 1e-3,
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
            class = "pursuit_control")
}

#' @export
print.pursuit_control <- function(x, ...) {
  cli::cat_line("<pursuit_control> ", x$strategy)
  utils::str(unclass(x)[setdiff(names(x), "strategy")], give.head = FALSE, no.list = TRUE)
  invisible(x)
}

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

# Log-prior of a support of size k in units of the total log-likelihood:
# the score of a model is map_loglik + pursuit_log_prior_total(|S|), except
# for "botorch", whose score is that divided by n (see "Model selection" in
# ?gpr_pursuit).
pursuit_log_prior_total <- function(k, n, selection, log_prior) {
  switch(selection,
    ebic = -0.5 * log(n) * k - 0.5 * lchoose(n, k),
    bic = ,
    esd = -0.5 * log(n) * k,
    botorch = n * vapply(k, function(kk) as.numeric(log_prior(kk)), numeric(1)),
    paper = vapply(k, function(kk) as.numeric(log_prior(kk)), numeric(1)))
}

# Scores of the trace models under a selection rule. `map_loglik` is the
# total MAP log-likelihood on the standardised scale (log marginal likelihood
# + log hyperprior), `size` the support sizes, `log_prior` the prior on |S|
# of the "botorch" and "paper" rules. Returns the score and the log-prior
# term of each model (as it enters the score).
pursuit_scores <- function(map_loglik, size, n, selection, log_prior) {
  lp <- pursuit_log_prior_total(size, n, selection, log_prior)
  if (any(is.na(lp))) abort_input("{.arg log_prior} returned NA/NaN.", class = "noisylabels_error_prior")
  if (selection == "botorch") {
    # BoTorch: per-datum MAP likelihood + log-prior of |S|
    lp <- lp / n
    score <- map_loglik / n + lp
  } else {
    score <- map_loglik + lp
  }
  list(score = score, log_prior = lp)
}

# Refinement candidates: with the Lemma-1 gains g (each point's own optimal
# rho, the rest of the model fixed) taken as additive, the support of size k
# that maximises the rule's score is the k points of largest gain, and k
# maximises cumsum(sorted g)[k] + log-prior(k).
pursuit_candidates <- function(gain, n, selection, log_prior) {
  ord <- order(gain, decreasing = TRUE)
  k <- 0:(n - 1)
  total <- c(0, cumsum(gain[ord]))[k + 1] + pursuit_log_prior_total(k, n, selection, log_prior)
  sort(ord[seq_len(k[which.max(total)])])
}

pursuit_map_loglik <- function(steps) {
  vapply(steps, function(s) -s$nll - s$penalty, numeric(1))
}

# Refinement of the selection: the pursuit visits only a few support sizes,
# and its best level can hold inliers (backward pursuit drops points in
# blocks) or miss outliers. From each of the `starts` best models (by BIC),
# the candidate support is the one that maximises the rule's score with the
# Lemma-1 gains taken as additive (pursuit_candidates()); the model is
# refitted there from a warm and a cold start, the better refit joins the
# trace, and the step is repeated from it while its score improves on the
# model it came from (at most `rounds` times), stopping at a support already
# fitted. The caller selects the best-scoring model of the whole trace.
pursuit_refine <- function(raw, xs, ys, kernel, selection, log_prior, ctl, core_fit, backend,
                           cold_start, starts = 3L, rounds = 3L, cold = TRUE) {
  n <- length(ys)
  size_of <- function(steps) vapply(steps, function(s) length(s$support), integer(1))
  score_of <- function(steps) {
    pursuit_scores(pursuit_map_loglik(steps), size_of(steps), n, selection, log_prior)$score
  }
  score <- score_of(raw$steps)
  visited <- lapply(raw$steps, function(s) sort(s$support))
  # Starts: the best pursuit models under the mildest price (BIC), so that a
  # level which overshoots the outlier set (backward pursuit drops points in
  # blocks) is among them even when the rule's own price would rank it low.
  bic <- pursuit_scores(pursuit_map_loglik(raw$steps), size_of(raw$steps), n, "bic", NULL)$score
  for (t0 in utils::head(order(bic, decreasing = TRUE), starts)) {
    cur <- t0
    for (round in seq_len(rounds)) {
      st <- raw$steps[[cur]]
      gain <- call_core(.gpr_pursuit_gain(xs, ys, kernel_spec(kernel, st$log_par), st$mean,
                                          exp(st$log_noise), st$rho, backend, ctl$neighbors,
                                          ctl$threads %||% 1L))
      cand <- pursuit_candidates(gain, n, selection, log_prior)
      if (length(cand) >= n || any(vapply(visited, identical, logical(1), cand))) break
      visited <- c(visited, list(cand))
      ctl_ref <- ctl
      ctl_ref$backward <- FALSE
      ctl_ref$levels <- integer(0)
      ctl_ref$initial_support <- as.integer(cand)
      # Two starts: warm (this model's hyperparameters) and cold (the
      # pursuit's initial values). With a clean support the cold start can
      # leave a poor basin that the backward pursuit fell into at full
      # support (e.g. a relevant input given a huge length-scale).
      warm <- core_fit(st$log_par, st$mean, st$log_noise, ctl_ref)
      cold_fit <- if (cold) core_fit(cold_start$log_par, cold_start$mean, cold_start$log_noise, ctl_ref)
      ref <- if (!is.null(cold_fit) && score_of(cold_fit$steps) > score_of(warm$steps)) cold_fit else warm
      raw$steps <- c(raw$steps, ref$steps)
      raw$stage <- c(raw$stage, "refine")
      raw$factorizations <- raw$factorizations + warm$factorizations + (cold_fit$factorizations %||% 0)
      raw$rank_one_updates <- raw$rank_one_updates + warm$rank_one_updates +
        (cold_fit$rank_one_updates %||% 0)
      score <- c(score, score_of(ref$steps))
      if (score[length(score)] <= score[cur]) break
      cur <- length(score)
    }
  }
  raw
}

# Vecchia set-up of a pursuit (approx = "vecchia"): the conditioning sets
# are chosen in the metric of the kernel's length-scales. With `pilot`, a
# homoscedastic Vecchia fit (the pursuit's model with an empty support) on
# conditioning sets chosen with the initial length-scales gives fitted
# length-scales; the sets are chosen again in their metric, and the pursuit
# starts from the pilot's hyperparameters, mean and sigma2 (a better start
# than the defaults; with an empty initial support it is the first model's
# optimum on the pilot's sets). Returns the 0-based neighbour matrix, the
# ordering, the start and the pilot's cost.
pursuit_vecchia_setup <- function(xs, kernel, backend, ctl, start, core_fit, pilot = TRUE) {
  vs <- vecchia_setup(xs, kernel, backend$m)
  evaluations <- 0
  if (isTRUE(pilot)) {
    ctl_pilot <- ctl
    ctl_pilot$backward <- FALSE
    ctl_pilot$levels <- integer(0)
    ctl_pilot$initial_support <- NULL
    ctl_pilot$neighbors <- vs$neighbors
    ctl_pilot$threads <- backend$threads
    pil <- core_fit(start$log_par, start$mean, start$log_noise, ctl_pilot)
    st <- pil$steps[[1]]
    evaluations <- pil$factorizations
    vs <- vecchia_setup(xs, kernel_unflatten(kernel, st$log_par), backend$m)
    start <- list(log_par = st$log_par, mean = st$mean, log_noise = st$log_noise)
  }
  list(neighbors = vs$neighbors, order = vs$order, start = start, evaluations = evaluations,
       pilot = isTRUE(pilot))
}

new_gpr_pursuit <- function(raw, x, y, kernel, fl, log_prior, selection, refine, prior_mean,
                            x_center, x_scale, y_center, y_scale, direction, parameterization,
                            average, control, levels, backend = NULL, vecchia = NULL) {
  n <- length(y)
  is_vecchia <- identical(backend$approx, "vecchia")
  steps <- raw$steps
  size <- vapply(steps, function(s) length(s$support), integer(1))
  nll <- vapply(steps, function(s) s$nll, numeric(1))
  penalty <- vapply(steps, function(s) s$penalty, numeric(1))
  loglik_std <- -nll
  sc <- pursuit_scores(loglik_std - penalty, size, n, selection, log_prior)
  score <- sc$score
  lp <- sc$log_prior
  post <- exp(score - max(score)); post <- post / sum(post)
  # "esd" selects by its test (pursuit_esd()); its scores are the BIC's
  sel <- raw$selected %||% which.max(score)
  trace <- data.frame(step = seq_along(steps), stage = raw$stage %||% rep("pursuit", length(steps)),
                      size = size,
                      loglik = loglik_std - n * log(y_scale), log_hyperprior = -penalty,
                      log_prior = lp, score = score,
                      posterior = post,
                      iterations = vapply(steps, function(s) s$iterations, integer(1)),
                      evaluations = vapply(steps, function(s) s$evaluations, integer(1)),
                      converged = vapply(steps, function(s) s$converged, logical(1)),
                      sigma2 = vapply(steps, function(s) exp(s$log_noise), numeric(1)) * y_scale^2)
  st <- steps[[sel]]
  kern <- kernel_unflatten(kernel, st$log_par)
  # Lemma-1 optimal rho of every point in the selected model (one more
  # factorization): the noise score off the support.
  rho_star <- call_core(.gpr_pursuit_lemma1(x, y, kernel_spec(kernel, st$log_par), st$mean,
                                            exp(st$log_noise), st$rho, vecchia$neighbors,
                                            backend$threads %||% 1L))
  rho_star[st$support] <- st$rho[st$support]
  structure(list(
    support = sort(st$support), rho = st$rho * y_scale^2, rho_star = rho_star * y_scale^2,
    s = if (parameterization == "convex") st$value else NULL,
    sigma2 = exp(st$log_noise) * y_scale^2, mean = y_center + y_scale * st$mean,
    kernel = kern, trace = trace, selected = sel, steps = steps,
    factorizations = raw$factorizations + 1 + (vecchia$evaluations %||% 0),
    rank_one_updates = raw$rank_one_updates,
    approx = backend$approx %||% "dense",
    neighbors = if (is_vecchia) backend$m else NA_integer_,
    threads = backend$threads %||% 1L,
    vecchia_neighbors = vecchia$neighbors, vecchia_order = vecchia$order,
    vecchia_pilot = isTRUE(vecchia$pilot), jitter = raw$jitter %||% 0,
    stopped_early = raw$stopped_early, converged = all(trace$converged),
    iterations = sum(trace$iterations), n = n, n_par = sum(fl$free) + 2L,
    x = x, y = y, x_center = x_center, x_scale = x_scale, y_center = y_center, y_scale = y_scale,
    direction = direction, parameterization = parameterization, selection = selection,
    refine = refine, prior_mean = prior_mean,
    average = average, control = control, levels = levels, kernel_std = kernel, fl = fl),
    class = "gpr_pursuit")
}
