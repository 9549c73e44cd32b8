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
#' and standard deviations (`standardize = TRUE`), categorical columns excepted.
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
#' @param standardize Standardise the continuous inputs (z-scores with the
#'   training means and standard deviations)? Categorical columns are left
#'   as they are. `scale` is its deprecated old name (it warns).
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
#' @param control Tuning of the solver, from [gpc_ep_control()].
#' @param threads Cores the fit may use (default
#'   `getOption("noisylabels.threads", 1)`; capped at the available cores).
#'   The EP sweeps and refreshes are matrix products and triangular solves
#'   made from one thread, so they become the threads of the BLAS (OpenBLAS,
#'   BLIS or MKL) inside the fit; the option `noisylabels.blas_threads`, if
#'   set, takes precedence. See "Threads" in [noisylabels-package].
#' @param verbose Show a progress bar (see [noisylabels-progress]): the outer
#'   epsilon iterations, or the kernel optimiser's evaluations when epsilon is
#'   fixed; for `multiclass = "ovr"` the classes. `NULL` (default): in
#'   interactive sessions, or as `options(noisylabels.progress =)` says.
#' @param subset,na.action For the formula method: rows to use, and what to do
#'   with missing values (`na.fail` by default: missing values are an error).
#' @param ... For the formula method, arguments passed to the x/y method.
#' @return A fit of class `c("gpc_ep", "noisylabels_fit")` (`gpc_ep_ovr` for one-vs-rest) with,
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
  if (missing(data)) abort_input("The formula interface needs {.arg data}, a data frame.")
  # `subset` is evaluated in `data`, as model.frame() would.
  rows <- if (missing(subset)) NULL else {
    tryCatch(eval(substitute(subset), as.data.frame(data), parent.frame()), error = function(e) {
      abort_input(c("Could not evaluate {.arg subset} in {.arg data}.", "x" = conditionMessage(e)),
                  class = "noisylabels_error_formula")
    })
  }
  frame <- model_frame(x, data, na.action, subset = rows)
  mf <- frame$frame
  tt <- frame$terms
  y <- frame$y
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
  xlevels <- frame$xlevels
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

#' @rdname gpc_ep
#' @export
gpc_ep.default <- function(x, y, kernel = NULL, likelihood = c("step", "probit"),
                           epsilon = "learn", epsilon_update = c("tilted", "paper"),
                           tau = c("allow", "clamp"), learn_kernel = TRUE, standardize = TRUE,
                           multiclass = c("none", "ovr"), approx = c("auto", "dense", "sparse"),
                           inducing = NULL, control = gpc_ep_control(),
                           threads = getOption("noisylabels.threads", 1L), verbose = NULL, ...) {
  call <- match.call()
  if ("scale" %in% ...names()) {
    dots <- list(...)
    standardize <- renamed_arg(dots, "scale", "standardize", standardize, missing(standardize))
    dots$scale <- NULL
    do.call(check_dots_empty, c(list("gpc_ep"), dots))
  } else {
    check_dots_empty("gpc_ep", ...)
  }
  likelihood <- match_arg(likelihood)
  epsilon_update <- match_arg(epsilon_update)
  tau <- match_arg(tau)
  multiclass <- match_arg(multiclass)
  approx <- match_arg(approx)
  check_flag(learn_kernel, "learn_kernel")
  check_flag(standardize, "standardize")
  if (!is.null(verbose)) check_flag(verbose, "verbose")
  control <- check_control(control, gpc_ep_control, "gpc_ep_control")
  learn_eps <- identical(epsilon, "learn")
  if (!learn_eps) {
    if (!is.numeric(epsilon) || length(epsilon) != 1L || is.na(epsilon) ||
        epsilon < 0 || epsilon >= 0.5) {
      abort_input(c("{.arg epsilon} must be {.val learn} or a single number in [0, 0.5), not {.val {format(epsilon)}}.",
                    "i" = "It is the probability that a label was flipped at random; 0.5 would make labels pure noise."),
                  class = "noisylabels_error_epsilon")
    }
  }
  threads <- check_threads(threads)
  x <- check_x_matrix(x, "x", min_rows = 2L)
  inducing <- gpc_ep_check_inducing(inducing, x, approx)
  if (approx == "auto") approx <- gp_backend("classify", nrow(x), inducing = inducing)
  labels <- gpc_ep_labels(y, nrow(x))
  args <- list(kernel = kernel, likelihood = likelihood, epsilon = epsilon,
               epsilon_update = epsilon_update, tau = tau, learn_kernel = learn_kernel,
               standardize = standardize, approx = approx, inducing = inducing,
               control = control, threads = threads)
  if (length(labels$levels) > 2L) {
    if (multiclass == "none") {
      abort_input(c("{.arg y} has {length(labels$levels)} classes ({.val {labels$levels}}); {.fn gpc_ep} is a binary classifier.",
                    "i" = "Use {.code multiclass = \"ovr\"} to fit one classifier per class against the rest."),
                  class = "noisylabels_error_labels")
    }
    return(gpc_ep_fit_ovr(x, labels, args, verbose, call))
  }
  gpc_ep_fit_binary(x, labels, args, verbose, call, frame = environment())
}

# The noise scores and label issues of a fit, documented with gpc_ep()
# (its "Noise scores" section).
#' @rdname gpc_ep
#' @param object A `gpc_ep` fit.
#' @export
noise_scores.gpc_ep <- function(object, ...) {
  check_fit(object, "gpc_ep")
  object$flip_prob
}

#' @rdname gpc_ep
#' @param fdr Flag the labels whose q-value (computed from the posterior flip
#'   probabilities, see [find_label_issues()]) is at most this false
#'   discovery rate (default).
#' @param threshold `NULL` or a number in \[0, 1\]: flag labels whose posterior
#'   flip probability exceeds it instead.
#' @export
label_issues.gpc_ep <- function(object, fdr = 0.1, threshold = NULL, ...) {
  check_fit(object, "gpc_ep")
  s <- noise_scores(object)
  q <- fdr_qvalues(s)
  flag <- probability_flags(s, q, fdr, threshold)
  do.call(new_label_issues, c(
    list(seq_len(object$n), s, flag, label = object$y_factor,
         predicted = predict(object, type = "class"), prob_positive = fitted(object),
         latent_mean = object$latent_mean, site_tau = object$site_tau),
    binary_wrong_columns(s, object$y_factor, flag)))
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
