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
#' BoTorch pipeline where the maths allows (see `gpr_pursuit_control()`): the
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
#' @param standardize Centre and scale the (non-categorical) input columns?
#'   (The old name `standardize_x` still works, with a deprecation warning.)
#'   A constant column is centred and not scaled.
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
#' @param threads Cores the fit may use (default
#'   `getOption("noisylabels.threads", 1)`): the OpenMP team of the Vecchia
#'   backend's per-label work (see "Threads" in [noisylabels-package]).
#' @param control Tuning of the solver, from [gpr_pursuit_control()].
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
#' @seealso [gpr_pursuit_control()], [predict.gpr_pursuit()], [gpr_baseline()].
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
  # No intercept column: factors get one input column per level.
  design <- formula_design(formula, data, stats::na.fail, intercept = "none")
  fit <- gpr_pursuit.default(design$x, design$y, ...)
  design$terms <- stats::delete.response(design$terms)
  attach_formula(fit, design, match.call())
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
                                standardize = TRUE, hyperprior = TRUE,
                                approx = c("auto", "dense", "vecchia"), neighbors = 20L,
                                threads = getOption("noisylabels.threads", 1L),
                                control = gpr_pursuit_control(), verbose = NULL, ...) {
  call <- match.call()
  selection_given <- !missing(selection)
  dots <- list(...)
  standardize <- renamed_arg(dots, "standardize_x", "standardize", standardize,
                             missing(standardize))
  dots$standardize_x <- NULL
  if (length(dots)) do.call(check_dots_empty, c(list("gpr_pursuit"), dots))
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
  check_flag(standardize, "standardize")
  check_flag(hyperprior, "hyperprior")
  control <- check_control(control, gpr_pursuit_control, "gpr_pursuit_control")
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
  std <- standardize_columns(x, skip = mask | !standardize)
  xs <- std$x
  x_center <- std$center; x_scale <- std$scale
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
  # The glue reads every key; these are NULL unless set below (`[<-` with
  # list(NULL) keeps a key where `$<- NULL` would drop it).
  ctl[c("neighbors", "threads", "prior_mu", "prior_sd", "initial_support")] <-
    list(NULL, backend$threads, NULL, NULL, NULL)
  if (hyperprior) {
    pr <- pursuit_hyperprior(fl, ncol(x), standardize)
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

# Log-normal priors of BoTorch's default SingleTaskGP: length-scales
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
