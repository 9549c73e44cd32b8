#' Outlier-robust Gaussian-process classification by expectation propagation
#'
#' Fits a binary Gaussian-process classifier whose likelihood allows a
#' fraction `epsilon` of labels to be flipped at random (Kim & Ghahramani
#' 2008):
#' \deqn{p(y \mid f) = \epsilon + (1 - 2\epsilon)\,\Phi(y f / \sigma),}
#' with the step function (`likelihood = "step"`, \eqn{\sigma \to 0}, the
#' paper's eq. 6) or the probit (`"probit"`, \eqn{\sigma = 1}). The posterior
#' over the latent function is approximated by sequential expectation
#' propagation (EP) with rank-one updates; after each sweep the posterior is
#' rebuilt, from the sweep's own factors or, every `refresh_every` sweeps,
#' exactly from the kernel matrix (see [gpc_ep_control()]); site precisions
#' may be negative (the likelihood is not log-concave), in which case
#' improper sweeps are undone and the damping halved. The
#' labelling-error rate is learned by EM and the kernel hyperparameters by
#' L-BFGS steps on the EP log marginal likelihood inside the same outer loop.
#' All numerics run in C++.
#'
#' @section Model and identifiability:
#' The default kernel is the paper's eq. 7-8 ([gp_kernel()] type `"mixed"`,
#' ARD): `v0 exp(-1/2 sum_m l_m d_m) + v1 + v2 [same point]`. Under the step
#' likelihood only the sign of `f` matters, so one scale is redundant; the
#' nugget `v2` is therefore fixed (at 1 for `"step"`, which makes the model
#' exactly a probit with unit noise, and at 1e-6 for `"probit"`) unless you
#' pass a kernel that frees it. Inputs are z-scored with the training means
#' and standard deviations (`scale = TRUE`), categorical columns excepted.
#'
#' @section Formula interface and factors:
#' In `gpc_ep(label ~ ., data)` a factor, character or logical predictor is,
#' by default (`factors = "categorical"`), one categorical dimension of the
#' mixed kernel: two points at the same level are at distance 0 in it, at
#' different levels at distance 1, so `d_m = 1 - delta(x_m, z_m)` enters
#' `exp(-1/2 sum_m l_m d_m)` with its own learned precision `l_m` (the
#' paper's eq. 7-8). This is the fit of the x/y method on a matrix of level
#' codes with `gp_kernel("mixed", categorical = <those columns>)`. With
#' `factors = "dummies"` the factors become `model.matrix()` dummy columns and
#' are z-scored like the continuous ones. The training levels are stored in
#' the fit (`fit$design`, `fit$xlevels`); [predict()] accepts new data whose
#' factor-like columns take these levels and stops with an error naming each
#' variable and its unseen levels otherwise.
#'
#' @section Learning epsilon:
#' `epsilon_update = "tilted"` (default) maximises the EP evidence: at the
#' current cavities it sets epsilon to the fixed point of
#' `eps <- mean(eps * Phi(-z_i) / Z_i)`, the expected fraction of flipped
#' labels under the tilted distributions, which is where
#' `d log Z_EP / d eps = 0`. `"paper"` is the rule printed in the paper,
#' `eps <- mean(1 - omega_i)` with `omega_i = Phi(y_i mu_i / sqrt(s2 + Sigma_ii))`
#' the posterior probability that the latent value is on the side of its label
#' (s2 = 0 for the step, 1 for the probit); it does not maximise the evidence
#' and gives epsilon > 0 even without flips. Both are clamped to `[1e-6, 0.49]`.
#'
#' @section Sparse EP:
#' With `approx = "sparse"` the prior covariance `K` is replaced by the FITC
#' approximation `Q + diag(K - Q)`, `Q = K(X, Z) K(Z, Z)^-1 K(Z, X)`, on m
#' inducing inputs `Z` (as GPML's `infFITC_EP`); the nugget is white noise and
#' stays on the diagonal. EP runs the same site updates, in the same order, on
#' an O(n m^2) representation of the posterior, so no n x n matrix is formed;
#' the EM update of epsilon and the evidence-gradient steps on the kernel
#' hyperparameters are those of the dense path. With `Z` equal to the
#' training inputs the sparse fit is the dense one. The inducing inputs are
#' fixed, not optimised: by default k-means++ seeding on the standardised
#' inputs (the first a random training point, each further one a training
#' point drawn with probability proportional to its squared distance from the
#' nearest one already chosen; reproducible with [set.seed()]). The fit's
#' `approx`, `n_inducing` and `inducing_rule` say what was used; [print()] and
#' [summary()] show it. EP on the Vecchia operator of [gpr_loo()] was not
#' chosen: every EP sweep needs the marginal variances
#' `diag((K^-1 + T)^-1)`, which a sparse Cholesky factor of the precision does
#' not give without a selected inverse, whereas the FITC representation gives
#' them in O(n m^2) (see `inst/bench/gpc_ep/README.md`).
#'
#' @section Noise scores:
#' [noise_scores()] returns the posterior probability that the given label was
#' flipped, `P(c_i = 1 | D) = eps Phi(-z_i) / Z_i`, computed from the tilted
#' distribution of each site at convergence. With `epsilon = 0` every score is
#' 0 (the model admits no flips). [label_issues()] flags scores above
#' `threshold = 0.5`.
#'
#' @section One-vs-rest (more than two classes):
#' `multiclass = "ovr"` fits one binary model per class k (k against the
#' rest), each with its own epsilon and kernel. The binary models' predictive
#' probabilities of their class, `p_k(x)`, need not sum to one; the class
#' probabilities are their normalisation, `P(class k | x) = p_k(x) / sum_j
#' p_j(x)` (`predict(type = "prob")`, `fitted()`; at the training points from
#' the posterior marginals). The predicted class is the most probable one.
#'
#' For K classes, [noise_scores()] is the probability that the given label is
#' wrong, `1 - P(class = given | x_i)` with these normalised probabilities
#' (the self-confidence score of confident learning, computed from the robust
#' models), and [label_issues()] flags it above `threshold`; it also lists
#' `prob_label` (= 1 - score) and `flip_own`, the flip probability of the
#' label in its own class's binary problem. The own-class flip probability
#' is not the score because a binary problem whose epsilon is learned at ~0
#' gives every one of its labels a flip probability of ~0, also to labels
#' wrongly moved into that class: on iris and on three 2-D Gaussian classes
#' with 10% of labels moved to another class (six data sets), the score's
#' detection AUC was 0.95-0.997, the own-class flip probability's 0.77-0.999
#' (and 0.85-0.99 for a normalisation of all K flip probabilities, which a
#' model with epsilon ~0 vetoes in the same way).
#'
#' @param x A numeric matrix or data frame of inputs (x/y method), or a
#'   formula `label ~ predictors` (formula method; the first argument is
#'   named `x` so that the method matches the generic).
#' @param y Labels: a factor or character vector with two levels, a logical
#'   vector, or a numeric vector with two distinct values (e.g. -1/+1 or 0/1).
#'   The second level (the larger value) is the positive class. More classes
#'   need `multiclass = "ovr"`.
#' @param data A data frame for the formula method.
#' @param kernel A [gp_kernel()]; `NULL` uses the paper's mixed ARD kernel.
#' @param likelihood `"step"` (the paper) or `"probit"`.
#' @param epsilon `"learn"` (start at `control$epsilon_start`) or a fixed rate
#'   in `[0, 0.5)`; `0` is the paper's "former" model.
#' @param epsilon_update `"tilted"` (maximises the evidence) or `"paper"`.
#' @param tau `"allow"` keeps negative site precisions (Minka's algorithm);
#'   `"clamp"` clamps them at 0 as GPML does, which changes the fixed point.
#' @param learn_kernel Learn the free kernel hyperparameters?
#' @param scale Standardise the continuous inputs?
#' @param multiclass `"none"` (error on more than two classes) or `"ovr"`
#'   (one binary fit per class against the rest).
#' @param approx `"dense"` (EP on the full n x n covariance, O(n^3) time and
#'   O(n^2) memory), `"sparse"` (FITC inducing-point EP, O(n m^2) time and
#'   O(n m) memory; see the section "Sparse EP") or `"auto"` (default): dense
#'   up to 1000 labels, sparse above, and sparse whenever `inducing` is given.
#' @param inducing For the sparse path: `NULL` (default: `min(n, max(100,
#'   ceiling(2 sqrt(n))))` inducing points chosen by k-means++ seeding), a
#'   number of inducing points (at most n), or a numeric matrix of inducing
#'   inputs with the columns of `x` on its original scale (for formula fits,
#'   the columns of the model matrix).
#' @param control A list from [gpc_ep_control()].
#' @param verbose Show a progress bar (see [noisylabels-progress]): the outer
#'   epsilon iterations, or the kernel optimiser's evaluations when epsilon is
#'   fixed; for `multiclass = "ovr"` the classes. `NULL` (default): in
#'   interactive sessions, or as `options(noisylabels.progress =)` says.
#' @param subset,na.action For the formula method: rows to use, and what to do
#'   with missing values (`na.fail` by default: missing values are an error).
#' @param ... For the formula method, arguments passed to the x/y method.
#' @return An object of class `gpc_ep` (`gpc_ep_ovr` for one-vs-rest) with,
#'   among others, `epsilon` (the learned or fixed rate), `kernel` (the fitted
#'   [gp_kernel()]), `log_z` (the EP log marginal likelihood), `latent_mean`
#'   and `latent_var` (posterior marginals of `f` at the training points),
#'   `site_tau`, `site_nu`, `flip_prob` (the noise scores), `converged`,
#'   `ep_converged`, `sweeps`, `outer_iterations`, `trace` (log Z_EP and
#'   epsilon after each outer iteration), `par_trace` (the kernel
#'   hyperparameters after each outer iteration, when epsilon is learned) and
#'   `jitter`; formula fits also `design` (which columns are categorical and
#'   their training levels), `terms` and `xlevels`.
#' @references Kim, H.-C. and Ghahramani, Z. (2008). Outlier robust Gaussian
#'   process classification. Structural, Syntactic, and Statistical Pattern
#'   Recognition, LNCS 5342, 896-905.
#' @seealso [predict.gpc_ep()], [label_issues()], [gp_kernel()].
#' @examples
#' set.seed(1)
#' x <- matrix(rnorm(120), ncol = 2)
#' y <- ifelse(x[, 1] + x[, 2] > 0, "a", "b")
#' y[1:3] <- ifelse(y[1:3] == "a", "b", "a")  # three flipped labels
#' fit <- gpc_ep(x, y)
#' fit
#' head(label_issues(fit))
#' predict(fit, x[1:5, ], type = "prob")
#' # a factor enters the mixed kernel as a categorical dimension
#' df <- data.frame(x1 = x[, 1], side = factor(ifelse(x[, 2] > 0, "up", "down")), y = y)
#' fit2 <- gpc_ep(y ~ x1 + side, data = df)
#' predict(fit2, data.frame(x1 = c(-1, 1), side = c("up", "down")), type = "prob")
#' # the sparse (FITC) path with 15 inducing inputs (k-means++ seeding)
#' fit_s <- gpc_ep(x, y, approx = "sparse", inducing = 15)
#' fit_s$approx
#' @export
gpc_ep <- function(x, ...) UseMethod("gpc_ep")

#' @rdname gpc_ep
#' @param factors Formula method: how factor, character and logical
#'   predictors enter. `"categorical"` (default): each is one input column of
#'   level codes that the mixed kernel compares by equality, distance
#'   `1 - [x_m = z_m]` with its own precision (Kim & Ghahramani eq. 7-8; such
#'   columns are not scaled). `"dummies"`: `model.matrix()` dummy columns
#'   (treatment contrasts), z-scored like the continuous columns. Factors in
#'   interaction terms always enter as dummy columns.
#' @export
gpc_ep.formula <- function(x, data, ..., factors = c("categorical", "dummies"), subset,
                           na.action = stats::na.fail) {
  factors <- match_arg(factors)
  mf <- match.call(expand.dots = FALSE)
  m <- match(c("x", "data", "subset"), names(mf), 0L)
  mf <- mf[c(1L, m)]
  names(mf)[names(mf) == "x"] <- "formula"
  mf$na.action <- stats::na.pass
  mf$drop.unused.levels <- TRUE
  mf[[1L]] <- quote(stats::model.frame)
  mf <- eval(mf, parent.frame())
  if (!identical(na.action, stats::na.pass)) {
    bad <- !stats::complete.cases(mf)
    if (any(bad)) {
      if (identical(na.action, stats::na.omit) || identical(na.action, "na.omit")) {
        mf <- mf[!bad, , drop = FALSE]
      } else {
        abort_input(c("The data contain missing values (first in row {which(bad)[1]}).",
                      "i" = "Remove them or use {.code na.action = na.omit}."))
      }
    }
  }
  tt <- stats::terms(mf)
  y <- stats::model.response(mf)
  if (is.null(y)) abort_input("The formula has no response (label) on its left-hand side.")
  terms <- stats::delete.response(tt)
  design <- gpc_ep_design(terms, mf, factors)
  xm <- gpc_ep_design_matrix(terms, mf, design)
  # The x/y method with the kernel told which columns are categorical.
  env <- environment()
  fit_xy <- function(kernel = NULL, ...) {
    kernel <- gpc_ep_formula_kernel(kernel, design$categorical, list(...)$likelihood, call = env)
    gpc_ep.default(xm, y, kernel = kernel, ...)
  }
  fit <- fit_xy(...)
  xlevels <- stats::.getXlevels(tt, mf)
  if (inherits(fit, "gpc_ep_ovr")) {
    # each binary fit predicts from data frames on its own
    fit$fits <- lapply(fit$fits, function(f) {
      f$terms <- terms
      f$xlevels <- xlevels
      f$design <- design
      f
    })
  }
  fit$terms <- terms
  fit$xlevels <- xlevels
  fit$design <- design
  fit$call <- match.call()
  fit
}

# ---- formula design --------------------------------------------------------
# With factors = "categorical", every main-effect term whose variable is a
# factor, character or logical becomes one column of level codes (1, 2, ...
# in the order of the training levels), named by the term; the other terms
# give model.matrix() columns. Columns follow the order of the terms.

gpc_ep_factor_like <- function(v) is.factor(v) || is.character(v) || is.logical(v)

gpc_ep_levels <- function(v) {
  if (is.factor(v)) levels(droplevels(v)) else as.character(sort(unique(v[!is.na(v)])))
}

gpc_ep_design <- function(terms, mf, factors, call = parent.frame()) {
  labels <- attr(terms, "term.labels")
  cat_terms <- character()
  if (factors == "categorical") {
    cat_terms <- labels[vapply(labels, function(l) l %in% names(mf) && gpc_ep_factor_like(mf[[l]]),
                               logical(1))]
  }
  lv <- lapply(stats::setNames(cat_terms, cat_terms), function(l) gpc_ep_levels(mf[[l]]))
  single <- cat_terms[lengths(lv) < 2L]
  if (length(single)) {
    abort_input(c("{cli::qty(length(single))}Factor{?s} {.field {single}} {cli::qty(length(single))}ha{?s/ve} a single level in the data used.",
                  "i" = "Drop {cli::qty(length(single))}{?it/them} from the formula: a constant input carries no information."),
                call = call)
  }
  list(factors = factors, categorical = cat_terms, levels = lv)
}

gpc_ep_design_matrix <- function(terms, mf, design) {
  labels <- attr(terms, "term.labels")
  cat_terms <- design$categorical
  other <- setdiff(labels, cat_terms)
  mm <- NULL
  if (length(other) || !length(labels)) {
    t2 <- if (length(cat_terms)) {
      stats::drop.terms(terms, match(cat_terms, labels), keep.response = FALSE)
    } else terms
    mm <- stats::model.matrix(t2, mf)
    asg <- attr(mm, "assign")
    labels2 <- attr(t2, "term.labels")
  }
  cols <- lapply(labels, function(l) {
    if (l %in% cat_terms) {
      codes <- match(as.character(mf[[l]]), design$levels[[l]])
      matrix(as.numeric(codes), ncol = 1L, dimnames = list(NULL, l))
    } else {
      mm[, asg == match(l, labels2), drop = FALSE]
    }
  })
  xm <- do.call(cbind, cols)
  if (is.null(xm)) abort_input("The formula has no predictors on its right-hand side.")
  rownames(xm) <- rownames(mf)
  xm
}

# The kernel of a formula fit: the given one (default: the paper's mixed
# kernel) with the factor columns marked categorical.
gpc_ep_formula_kernel <- function(kernel, categorical, likelihood, call = parent.frame()) {
  if (!length(categorical)) return(kernel)
  kernel <- kernel %||% gpc_ep_default_kernel(match_arg(likelihood, c("step", "probit"), call = call))
  if (!inherits(kernel, "gp_kernel")) return(kernel)  # gpc_ep.default says what is wrong
  if (kernel$type != "mixed") {
    abort_input(c("{cli::qty(length(categorical))}Categorical input{?s} {.field {categorical}} {cli::qty(length(categorical))}need{?s/} the {.val mixed} kernel, not {.val {kernel$type}}.",
                  "i" = "Use {.code gp_kernel(\"mixed\", ...)} or {.code factors = \"dummies\"}."),
                call = call)
  }
  given <- kernel$categorical
  if (!is.null(given) && !is.character(given)) {
    abort_input(c("With factors in the formula, name the kernel's {.arg categorical} columns instead of giving indices.",
                  "i" = "Factor columns are categorical automatically."), call = call)
  }
  kernel$categorical <- union(given, categorical)
  kernel
}

#' @rdname gpc_ep
#' @export
gpc_ep.default <- function(x, y, kernel = NULL, likelihood = c("step", "probit"),
                           epsilon = "learn", epsilon_update = c("tilted", "paper"),
                           tau = c("allow", "clamp"), learn_kernel = TRUE, scale = TRUE,
                           multiclass = c("none", "ovr"), approx = c("auto", "dense", "sparse"),
                           inducing = NULL, control = gpc_ep_control(),
                           verbose = NULL, ...) {
  call <- match.call()
  check_dots_empty("gpc_ep", ...)
  likelihood <- match_arg(likelihood)
  epsilon_update <- match_arg(epsilon_update)
  tau <- match_arg(tau)
  multiclass <- match_arg(multiclass)
  approx <- match_arg(approx)
  check_flag(learn_kernel, "learn_kernel")
  check_flag(scale, "scale")
  if (!is.null(verbose)) check_flag(verbose, "verbose")
  if (!inherits(control, "gpc_ep_control")) {
    abort_input("{.arg control} must be made by {.fn gpc_ep_control}.")
  }
  learn_eps <- identical(epsilon, "learn")
  if (!learn_eps) {
    if (!is.numeric(epsilon) || length(epsilon) != 1L || is.na(epsilon) ||
        epsilon < 0 || epsilon >= 0.5) {
      abort_input(c("{.arg epsilon} must be {.val learn} or a single number in [0, 0.5), not {.val {format(epsilon)}}.",
                    "i" = "It is the probability that a label was flipped at random; 0.5 would make labels pure noise."),
                  class = "noisylabels_error_epsilon")
    }
  }
  x <- check_x_matrix(x, "x", min_rows = 2L)
  inducing <- gpc_ep_check_inducing(inducing, x, approx)
  approx <- gpc_ep_resolve_approx(approx, nrow(x), inducing)
  labels <- gpc_ep_labels(y, nrow(x))
  if (length(labels$levels) > 2L) {
    if (multiclass == "none") {
      abort_input(c("{.arg y} has {length(labels$levels)} classes ({.val {labels$levels}}); {.fn gpc_ep} is a binary classifier.",
                    "i" = "Use {.code multiclass = \"ovr\"} to fit one classifier per class against the rest."),
                  class = "noisylabels_error_labels")
    }
    cli::cli_inform("Fitting {length(labels$levels)} one-vs-rest classifiers.")
    # One bar over the classes; the binary fits show none of their own.
    bar <- progress_bar("gpc_ep one-vs-rest", total = length(labels$levels), verbose = verbose)
    old <- options(noisylabels.progress_nested = TRUE)
    on.exit(options(old), add = TRUE)
    fits <- lapply(seq_along(labels$levels), function(k) {
      lv <- labels$levels[k]
      yy <- factor(ifelse(labels$factor == lv, lv, paste0("not ", lv)),
                   levels = c(paste0("not ", lv), lv))
      f <- gpc_ep.default(x, yy, kernel = kernel, likelihood = likelihood, epsilon = epsilon,
                          epsilon_update = epsilon_update, tau = tau, learn_kernel = learn_kernel,
                          scale = scale, approx = approx, inducing = inducing, control = control)
      if (!is.null(bar)) bar(k, length(labels$levels))
      f
    })
    names(fits) <- labels$levels
    return(structure(list(fits = fits, levels = labels$levels, y = labels$factor,
                          n = nrow(x), call = call), class = "gpc_ep_ovr"))
  }
  n <- nrow(x)
  if (approx == "dense") check_dense_memory(n, copies = 4)

  kernel <- kernel %||% gpc_ep_default_kernel(likelihood)
  kernel <- kernel_resolve_scaled(kernel, x, scale)
  xs <- kernel$xs
  kern <- kernel$kernel
  flat <- kernel_flatten(kern)
  sigma <- if (likelihood == "step") 0 else 1
  eps0 <- if (learn_eps) control$epsilon_start else epsilon
  # Progress: outer epsilon iterations, or kernel-optimiser evaluations.
  ind <- if (approx == "sparse") gpc_ep_inducing_inputs(inducing, xs, kernel$center, kernel$scale)
  bar <- progress_bar("gpc_ep", total = if (learn_eps) control$max_outer else NA, verbose = verbose)
  core_args <- list(labels$y, kernel_spec(kern, flat$log_par), eps0, sigma, learn_eps, epsilon_update,
    learn_kernel, as.integer(which(flat$free) - 1L), flat$lower, flat$upper,
    as.integer(control$max_outer), as.integer(control$lbfgs_steps),
    gpc_ep_ep_options(control, tau, joint_default = approx != "sparse"),
    draw_seed(), progress = bar)
  res <- if (approx == "sparse") {
    call_core(do.call(.gpc_ep_sparse_fit, c(list(xs, ind$z), core_args)))
  } else {
    call_core(do.call(.gpc_ep_fit, c(list(xs), core_args)))
  }
  progress_done(bar)
  st <- res$state
  kern <- kernel_unflatten(kern, res$log_par)
  fit <- structure(list(
    call = call, x = xs, x_center = kernel$center, x_scale = kernel$scale,
    y = labels$y, y_factor = labels$factor, levels = labels$levels, n = n,
    rownames = rownames(x) %||% as.character(seq_len(n)), colnames = colnames(x),
    kernel = kern, log_par = res$log_par, par_names = flat$names, free = flat$free,
    likelihood = likelihood, sigma = sigma, tau = tau,
    epsilon = res$epsilon, learn_epsilon = learn_eps, epsilon_update = epsilon_update,
    learn_kernel = learn_kernel,
    log_z = st$log_z, latent_mean = st$mu, latent_var = st$var,
    site_tau = st$site_tau, site_nu = st$site_nu, b = st$b, z = st$z,
    flip_prob = st$flip_prob, jitter = res$jitter,
    converged = res$converged, ep_converged = st$converged, sweeps = st$sweeps,
    reverts = st$reverts, damping = st$damping, negative_tau = st$negative_tau,
    outer_iterations = res$outer_iterations, ep_runs = res$ep_runs,
    ep_failures = res$ep_failures, ep_not_converged = res$ep_not_converged,
    trace = data.frame(iteration = seq_along(res$logz_trace), log_z = res$logz_trace,
                       epsilon = res$eps_trace),
    par_trace = if (nrow(res$par_trace)) {
      structure(exp(res$par_trace), dimnames = list(NULL, flat$names))
    },
    ep_trace = st$trace, message = res$message, control = control,
    approx = approx, inducing = ind$z, inducing_rule = ind$rule,
    n_inducing = if (approx == "sparse") nrow(ind$z) else NULL,
    sparse_beta = res$beta, sparse_cov = res$pred_cov),
    class = "gpc_ep")
  if (!st$converged) {
    warn_convergence(c("EP did not converge after {st$sweeps} sweep{?s} (the maximum is {control$max_sweeps}).",
                       "i" = "Raise {.code max_sweeps} or lower {.code damping} in {.fn gpc_ep_control}."))
  }
  if ((learn_eps || (learn_kernel && any(flat$free))) && !res$converged) {
    if (startsWith(res$message, "stopped")) {
      warn_convergence(c("The hyperparameter/epsilon loop stopped after {res$outer_iterations} iteration{?s} without converging.",
                         "i" = "EP found no proper posterior at the next step ({res$ep_failures} failed EP run{?s}); the fit is the last proper one. Try other starting hyperparameters or {.code tau = \"clamp\"}."))
    } else {
      warn_convergence(c("The hyperparameter/epsilon loop stopped after {res$outer_iterations} iteration{?s} without converging.",
                         gpc_ep_still_moving(fit),
                         "i" = "Raise {.code max_outer} in {.fn gpc_ep_control}."))
    }
  }
  fit
}

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
#'   after the start.
#' @return A list of class `gpc_ep_control`.
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
            class = "gpc_ep_control")
}

# What still moved over the last (up to 5) outer iterations of a fit that
# did not converge, against the tolerances of the convergence test: log Z_EP,
# epsilon and the largest log-hyperparameter change (named). Bullets for
# warn_convergence(); numbers pre-formatted (3 significant digits).
gpc_ep_still_moving <- function(fit, last = 5L) {
  tr <- fit$trace
  ctl <- fit$control
  k <- min(last, nrow(tr) - 1L)
  if (k < 1L) return(character())
  idx <- seq(nrow(tr) - k, nrow(tr))
  f <- function(v) format(signif(v, 3))
  dz <- diff(tr$log_z[idx])
  out <- c("*" = sprintf("log Z_EP changed by %s over the last %d iteration%s (last step %s; tolerance %s).",
                         f(tr$log_z[idx[k + 1L]] - tr$log_z[idx[1]]), k, if (k == 1L) "" else "s", f(dz[k]), f(ctl$tol_outer)))
  if (fit$learn_epsilon) {
    de <- diff(tr$epsilon[idx])
    out <- c(out, "*" = sprintf("epsilon moved by %s (from %s to %s; last step %s; tolerance %s).",
                                f(tr$epsilon[idx[k + 1L]] - tr$epsilon[idx[1]]), f(tr$epsilon[idx[1]]), f(tr$epsilon[idx[k + 1L]]),
                                f(de[k]), f(ctl$tol_outer / 10)))
  }
  pt <- fit$par_trace
  if (!is.null(pt) && nrow(pt) == nrow(tr) && any(fit$free) && fit$learn_kernel) {
    lp <- log(pt[idx, fit$free, drop = FALSE])
    step <- abs(lp[k + 1L, ] - lp[k, ])
    j <- which.max(abs(lp[k + 1L, ] - lp[1L, ]))
    out <- c(out, "*" = sprintf("log %s moved by %s (the largest log-hyperparameter change; last step of any: %s; tolerance %s).",
                                colnames(lp)[j], f(lp[k + 1L, j] - lp[1L, j]), f(max(step)),
                                f(ctl$tol_outer * 10)))
  }
  # already formatted: keep cli from reading braces
  gsub("}", "}}", gsub("{", "{{", out, fixed = TRUE), fixed = TRUE)
}

# joint_epsilon = NULL (default): joint steps on the dense path, plain EM on
# the sparse one (see gpc_ep_control()).
gpc_ep_ep_options <- function(control, tau, joint_default = TRUE) {
  list(max_sweeps = control$max_sweeps, min_sweeps = control$min_sweeps,
       tol_logz = control$tol_logz, tol_site = control$tol_site,
       damping = control$damping, clamp = identical(tau, "clamp"),
       schedule = control$schedule %||% "sequential", block_size = control$block_size %||% 64L,
       refresh_every = control$refresh_every %||% 1L,
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

# Standardise the continuous columns (standardize_columns(); constant ones
# are an error here) and resolve the kernel on the standardised inputs.
kernel_resolve_scaled <- function(kernel, x, scale, call = parent.frame()) {
  k0 <- kernel_resolve(kernel, x, call = call)
  std <- standardize_columns(x, skip = k0$categorical | !scale)
  if (length(std$constant)) {
    const <- (colnames(x) %||% paste0("x", seq_len(ncol(x))))[std$constant]
    abort_input(c("Constant input column(s): {.val {const}}.",
                  "i" = "Drop them: a constant input carries no information."), call = call)
  }
  xs <- std$x
  list(kernel = kernel_resolve(kernel, xs, call = call), xs = xs, center = std$center,
       scale = std$scale)
}

# Labels -> list(y = +-1, factor, levels).
gpc_ep_labels <- function(y, n, call = parent.frame()) {
  if (is.data.frame(y) || (is.matrix(y) && ncol(y) != 1L)) {
    abort_input("{.arg y} must be a vector of labels.", call = call)
  }
  if (length(y) != n) {
    abort_input("{.arg y} has length {length(y)} but {.arg x} has {n} row{?s}.", call = call)
  }
  if (anyNA(y)) abort_input("{.arg y} contains missing labels.", call = call)
  if (is.numeric(y)) {
    if (any(!is.finite(y))) abort_input("{.arg y} contains infinite values.", call = call)
    u <- sort(unique(as.numeric(y)))
    if (length(u) > 2L && (length(u) > 20L || any(u != round(u)))) {
      abort_input(c("{.arg y} looks continuous ({length(u)} distinct values); {.fn gpc_ep} needs class labels.",
                    "i" = "Use a factor for several classes, or a regression model for a numeric response."),
                  class = "noisylabels_error_labels", call = call)
    }
    f <- factor(as.numeric(y), levels = u, labels = format(u, trim = TRUE))
  } else if (is.logical(y)) {
    f <- factor(y, levels = c(FALSE, TRUE))
    f <- droplevels(f)
  } else if (is.factor(y) || is.character(y)) {
    f <- droplevels(as.factor(y))
  } else {
    abort_input("{.arg y} must be a factor, character, logical or numeric vector, not {.cls {class(y)}}.",
                class = "noisylabels_error_labels", call = call)
  }
  lv <- levels(f)
  if (length(lv) < 2L) {
    abort_input(c("{.arg y} has a single class ({.val {lv}}); a classifier needs two.",
                  "i" = "Check the labels or the subset used."),
                class = "noisylabels_error_labels", call = call)
  }
  yy <- if (length(lv) == 2L) ifelse(as.integer(f) == 2L, 1, -1) else NULL
  list(y = yy, factor = f, levels = lv)
}
