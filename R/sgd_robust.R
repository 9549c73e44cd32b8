#' Linear classifiers trained by SGD with bounded robust losses
#'
#' Fits a binary linear classifier f(x) = w'x + b by stochastic gradient
#' descent on the regularised risk
#' \deqn{G(w) = \frac{\lambda}{2}\|w\|^2 + \frac{1}{n}\sum_i r(y_i f(x_i))}
#' with one of the bounded, smooth, nonconvex losses of Han, Tsang & Chen
#' (2016) or a classical baseline. The whole training loop runs in C++; each
#' update costs O(nnz) of the example (dense matrices or sparse
#' `Matrix::dgCMatrix` input).
#'
#' @section Losses (margin z = y f(x)):
#' * `"smooth_ramp"`: \eqn{r(z) = (1-s)/(1+e^{\alpha(z+\beta)})}. For
#'   `s` in \{-0.7, -1, -2\} the published \eqn{(\alpha, \beta)} are used
#'   ((3, -0.15), (2, -0.03), (1.5, 0.5)); for any other `s` they come from a
#'   least-squares fit to the ramp loss, see [smooth_ramp_params()].
#' * `"gompertz"` (reversed Gompertz): \eqn{r(z) = \exp(-e^{cz})}, `c = 2`.
#' * `"ramp"`: \eqn{\min(1-s, \max(0, 1-z))}.
#' * `"hinge"`: \eqn{\max(0, 1-z)}; `"logistic"`: \eqn{\log(1+e^{-z})}.
#'
#' @section Algorithm:
#' `method = "sgd"` is Algorithm 1 of the paper: w = 0, a fresh random
#' permutation of the rows in every epoch, constant step `eta`, and either the
#' last iterate (`option = "A"`) or the average of the epoch's iterates
#' (`option = "B"`, the next epoch restarting from the average) as the epoch's
#' model. `method = "asgd"` is averaged SGD (Xu 2011, as in Bottou's svmasgd)
#' with \eqn{\eta_t = \eta_0 / (1 + \lambda\eta_0 t)^{0.75}}, averaging the
#' iterates from the end of the first epoch on; the average is returned.
#' `method = "pegasos"` uses \eqn{\eta_t = 1/(\lambda t)} and projects w onto
#' the ball of radius \eqn{1/\sqrt\lambda} after every step (Shalev-Shwartz et
#' al. 2007); it runs `epochs` shuffled passes like the other methods. The
#' step counter t runs over all epochs.
#'
#' When `eta = NULL` the step is chosen as in Bottou's `determineEta0`: start
#' at 1 and double or halve while the objective after one pass over a random
#' sample of `eta_sample` rows improves; it is then halved until
#' \eqn{\eta(\lambda + \max|r''| \max_i\|x_i\|^2) \le 1} (curvature 1
#' for hinge and ramp) and \eqn{\eta\lambda \le 0.5}, and held constant
#' (for ASGD it is \eqn{\eta_0}).
#' The value used is stored in the fit (`fit$eta`).
#'
#' The bias is by default a constant feature 1 appended to x
#' (`bias = "feature"`, regularised like w, as LIBLINEAR's `-B 1`);
#' `bias = "separate"` updates an unregularised b with step `0.01 * eta`
#' (Bottou's svmsgd); `"none"` fits no bias.
#'
#' Convergence: the fit is called converged when the primal objective changed
#' by at most `tol` (relative) over the last epoch (for a single epoch: against
#' the objective at the starting point) and the training error has settled:
#' over the last three epochs (or all of them, if fewer) it moved by at most
#' max(0.01, 2/n, `tol`) (a single epoch is judged by its objective alone), at a
#' level below the error of predicting the most frequent class; otherwise a
#' `noisylabels_warning_convergence` warning says which did not hold.
#'
#' Step guard: when an epoch ends with an objective more than `step_guard`
#' (relative) above the previous epoch's (or the starting point's), or with
#' non-finite weights, the epoch is undone, `eta` is halved and the epoch is
#' run again (at most 20 times per fit). Each such rerun is a row of
#' `fit$step_shrinks` (epoch, eta before and after, the rejected and the
#' previous objective) and is announced by a message of class
#' `noisylabels_message_step_guard`; `fit$eta` is the step in use at the end.
#' Weights that are still non-finite after that stop the fit with an error
#' that suggests a smaller `eta`.
#'
#' Warm start: with a bounded loss (`"smooth_ramp"`, `"ramp"`, `"gompertz"`)
#' and no `init`, the default (`warm_start = "auto"`) first runs one epoch
#' of the hinge loss from w = 0 and starts the bounded loss there. From w = 0
#' on all-positive features with unbalanced classes, the first steps of a
#' bounded loss move every margin along the mean of x into the flat
#' regions: on ijcnn1 (10% positives) the smooth ramp ended at the constant
#' classifier for every seed and every lambda tried. The hinge loss's
#' gradient never vanishes on the wrong side, so it finds the direction first
#' (as CCCP for the ramp loss starts from the hinge solution).
#' `warm_start = "none"` is Algorithm 1 as published.
#'
#' @section Multiclass:
#' With more than two classes (or `multiclass = "ovr"`), one binary model
#' per class (the class against the rest) is trained for every loss; the K
#' models share one epoch loop: each row is read once per epoch and updates
#' the K models in turn, each exactly as the binary fit would (so with K = 2
#' the second model is the binary fit and the first its negative).
#' `multiclass = "multinomial"` (logistic loss only) fits softmax
#' regression instead. [predict()] gives the class with the largest decision
#' value; `type = "prob"` is available for the logistic loss (sigmoids
#' normalised to sum 1 for one-vs-rest, the softmax for multinomial).
#' The noise score of row i with label y is \eqn{z_0 - \min(f_y(x_i), (f_y(x_i) -
#' \max_{k \ne y} f_k(x_i))/2)}: how deep the given class's own margin lies in
#' the flat region of the loss, or how far the best other class beats it
#' (half the gap, so that with K = 2 both equal the binary margin); \eqn{z_0 =
#' 0} for the multinomial model.
#'
#' @section Penalties:
#' The L1 part is applied by the cumulative penalty of Tsuruoka, Tsujii and
#' Ananiadou (2009), as in scikit-learn's SGD: each step clips the weights of
#' the row's non-zero features towards 0 by the penalty they are owed, never
#' across 0, so a step costs O(nnz) and weights become exactly 0; at the end
#' of each pass every weight gets its outstanding penalty. With averaging
#' (option B, ASGD) a weight that was 0 at every iterate of the window
#' averages to exactly 0. `fit$lambda` is the total `lambda`; `lambda_l2` and
#' `lambda_l1` are its two parts.
#'
#' @section Early stopping:
#' With `n_iter_no_change` or `validation_fraction`, training stops when the
#' validation error has not improved (strictly) for `n_iter_no_change`
#' consecutive epochs, and the fit is the model of the epoch with the lowest
#' validation error (`fit$early_stopping`: `best_epoch`, `stopped_early`,
#' `validation_rows`). The held-out rows are drawn from `seed` (the session's
#' random numbers are left alone) and are not trained on; [noise_scores()]
#' and [label_issues()] cover the training rows, whose `row` numbers refer
#' to the rows of `x`. Not available for chunked or file input.
#'
#' @section Out of core:
#' `x` may be the path of a LIBSVM file (plain, gzip, bzip2 or xz) or a
#' vector of paths, read one after the other; `y` is then `NULL` (the labels
#' are in the files). One pass learns the size and the classes; training then
#' streams the files in chunks of `chunk_rows` rows, so memory holds one
#' chunk (plus one margin per row for [noise_scores()]). Every epoch visits
#' the chunks in order and runs one epoch of the core over each, its rows
#' shuffled within the chunk (a shuffle buffer of the chunk's size),
#' continuing the model, the step counter and the step; option B averages
#' per chunk. The step search and the warm start use the first chunk. The
#' trace's objective and training error are progressive: each chunk's value
#' after its own pass, averaged over the rows. `chunk_rows` does the same for
#' data in memory, so a file and the same rows in memory give the same fit;
#' [update()] continues a fit on new rows exactly as one more chunk.
#' [predict()], [noise_scores()] and [label_issues()] also read files.
#'
#' @section Across workers:
#' With `shards = k > 1`, the rows are split at random (from `seed`) into k
#' disjoint shards of equal size (files: chunk c goes to shard (c - 1) mod k +
#' 1, and each worker reads its chunks from the files itself). Every epoch,
#' each shard runs one epoch of the core from the current model as a future
#' ([future.apply::future_mapply()]), under whatever [future::plan()] is set
#' (sequential, multisession, cluster, future.batchtools ...), and the new
#' model is the size-weighted average of the k results: iterative parameter
#' mixing (McDonald, Hall and Mann 2010). The step is the smallest of the
#' shards' (after their step guards), the step counter their weighted mean.
#' In-memory shards are sent to the workers every epoch (futures keep no
#' state between calls), which costs a serialisation of the data per epoch;
#' file shards send only the file names. The trace is progressive (each
#' shard's value after its pass, averaged); `fit$epoch_seconds` has the wall
#' time of each epoch. The warm start and the step search run on the whole
#' data (files: the first chunk) before the shards start.
#'
#' @section Weights:
#' `weights` (one per row, >= 0) and `class_weight` (`"balanced"`: n / (K
#' n_k) for class k, as in scikit-learn; or a named vector, classes not named
#' weigh 1) multiply each row's loss term, so its step. Their product is
#' rescaled to mean 1: the objective is \eqn{\lambda/2 \|w\|^2 + \sum_i
#' v_i r(z_i) / \sum_i v_i}, the same as that of the data with each row
#' repeated in proportion to its weight, and the expected step of a weighted
#' epoch equals that of the repeated data. The automatic step search ignores
#' the weights.
#'
#' @section Noise scores:
#' [noise_scores()] returns, for every training row, how far its margin
#' \eqn{z_i = y_i f(x_i)} (with the given, possibly wrong, label) lies inside
#' the flat region of the loss: \eqn{z_0 - z_i}, where \eqn{z_0} is the margin
#' at which the loss saturates (the point where the tangent at the steepest
#' point reaches the loss's bound): \eqn{s} for the ramp,
#' \eqn{-\beta - 2/\alpha} for the smooth ramp, \eqn{-(e-1)/c} for the
#' Gompertz loss and 0 for the unbounded hinge and logistic losses. A large
#' score means the model confidently predicts the other class, so the point
#' gets almost no gradient from a robust loss: a likely mislabelled point.
#' [label_issues()] flags rows with score > `threshold` (default 0).
#'
#' @param x A numeric matrix, data frame of numeric columns, or sparse
#'   `Matrix::dgCMatrix` (other sparse classes are converted); for the formula
#'   method a formula `label ~ predictors` (an intercept term is dropped: use
#'   `bias`).
#' @param y Labels: a factor (or character / logical vector) with two classes,
#'   or a numeric vector with values -1/+1 or 0/1. The second level (or +1, 1,
#'   `TRUE`) is the positive class.
#' @param data A data frame for the formula method.
#' @param loss One of `"smooth_ramp"`, `"gompertz"`, `"hinge"`, `"logistic"`,
#'   `"ramp"`.
#' @param lambda L2 penalty \eqn{\lambda \ge 0}.
#' @param s Ramp parameter (loss bound 1 - s) for `"ramp"` and
#'   `"smooth_ramp"`.
#' @param alpha,beta Smooth-ramp shape; `NULL` takes the published or refitted
#'   values for `s` (see [smooth_ramp_params()]).
#' @param c Reversed-Gompertz steepness.
#' @param epochs Number of passes over the data (15 as in the paper).
#' @param standardize Standardise the columns of `x` in memory before
#'   training, as [gpc_ep()] and [gpr_pursuit()] do: a dense `x` is centred on
#'   its column means and divided by its column sds (a constant column is only
#'   centred); a sparse `x` is only divided by its sds, so that its zeros stay
#'   zero. `x_valid` and the data of [update()] get the same transformation.
#'   The fit stores it (`centre`, `scale`) and reports `coefficients`,
#'   `weights` and `bias` on the user's columns, so [predict()] takes raw
#'   inputs; `lambda` penalises the weights of the standardised columns and
#'   the objective in `trace` is that of the standardised problem. LIBSVM
#'   files (streamed) are used as they are. With raw inputs on very different
#'   scales SGD from w = 0 can stall far from the optimum (80 iris rows,
#'   versicolor / virginica: training error 0.28 raw, 0.03 standardised), and
#'   on all-positive features with unbalanced classes the first updates move
#'   every margin along the mean of x, which can push a bounded loss into its
#'   flat regions (the constant classifier); centring removes that direction.
#'   `center` is its deprecated old name.
#' @param init Starting point instead of w = 0: a fitted `sgd_robust` model
#'   (e.g. one epoch of the logistic loss), its [coef()] (intercept first),
#'   or the weights alone (intercept 0). On the user's columns, also with
#'   `standardize = TRUE`.
#' @param weights Optional non-negative weight per row (see Weights).
#' @param class_weight `NULL`, `"balanced"` or a named numeric vector of
#'   weights per class (see Weights).
#' @param multiclass `"auto"` (binary for two classes, one-vs-rest for more),
#'   `"ovr"` (one-vs-rest also for two classes) or `"multinomial"` (softmax
#'   regression; logistic loss only). See Multiclass.
#' @param chunk_rows Train in chunks of this many rows (see Out of core);
#'   for files the default is 100000.
#' @param n_features For LIBSVM files: the number of columns (default: the
#'   largest feature index in the files).
#' @param penalty `"l2"` (the paper's \eqn{\lambda/2 \|w\|^2}), `"l1"`
#'   (\eqn{\lambda \|w\|_1}) or `"elasticnet"` (\eqn{\lambda(1-\rho)/2
#'   \|w\|^2 + \lambda\rho\|w\|_1}, \eqn{\rho} = `l1_ratio`). The L1 part
#'   never includes the bias. See Penalties.
#' @param l1_ratio The L1 share \eqn{\rho} of the elastic net.
#' @param shards Train `shards` copies on disjoint parts of the rows under
#'   the current [future::plan()], mixing their parameters after every epoch
#'   (see Across workers). With more shards than chunks of a file, the
#'   chunks are made smaller so that every shard gets rows; shards beyond the
#'   number of rows get none. The rows each shard trained on are
#'   `fit$shard_rows`.
#' @param verbose Progress bar over the epochs: `TRUE`, `FALSE`, or `NULL`
#'   (default: the option `noisylabels.progress` if set, else only in
#'   interactive sessions), as for every fit of the package; as for every cli
#'   bar it appears only once the fit has run for two seconds (option
#'   `cli.progress_show_after`).
#' @param threads Cores the fit may use (default
#'   `getOption("noisylabels.threads", 1)`). The SGD passes are sequential,
#'   so it sets only the BLAS of the evaluation steps; the fit does not
#'   depend on it. See "Threads" in [noisylabels-package].
#' @param control Tuning of the solver: [sgd_robust_control()] (the step,
#'   averaging, bias, warm start, step guard, early stopping). Passing those
#'   settings as arguments of `sgd_robust()` still works but is deprecated.
#' @param x_valid,y_valid Optional validation data; the per-epoch error on
#'   them is traced.
#' @param seed Integer seed of the shuffles; `NULL` draws one from R's RNG, so
#'   [set.seed()] reproduces a fit exactly.
#' @param ... Passed from the formula method to the default method.
#' @return An object of class `sgd_robust`: a list with `coefficients`
#'   (bias first, named `(Intercept)`), `weights`, `bias`, `loss` (name and
#'   parameters), `method`, `option`, `lambda`, `eta`, `eta_auto`, `epochs`,
#'   `trace` (data frame: epoch, objective, train_error, valid_error),
#'   `margins` (training margins with the given labels), `converged`,
#'   `iterations` (epochs run), `seconds` (wall time in the epoch loops,
#'   excluding the step-size search and the per-epoch evaluation),
#'   `cpu_seconds` (process CPU time of the same sections), `eval_seconds`
#'   and `eval_cpu_seconds` (the per-epoch objective and error passes over the
#'   training and validation data, and the final margins), `levels`,
#'   `n`, `d`, `sparse`, `seed`, `call` and, for the formula method, `terms`;
#'   also `eta_initial`, `objective_start` (objective at the starting point),
#'   `step_shrinks`, `warm_start`, `case_weights` (the rescaled row weights or
#'   `NULL`) and `class_weight`. Multiclass fits have `weights` as a d x K
#'   matrix, `bias` and `coefficients` per class (one column each),
#'   `multiclass` (`"ovr"` or `"multinomial"`), `n_classes`, `decision` (the
#'   n x K training decision values), `class_index` and `margins` (the given
#'   class's decision value).
#' @references Han, B., Tsang, I. W. and Chen, L. (2016). On the convergence of
#'   a family of robust losses for stochastic gradient descent. ECML PKDD 2016,
#'   LNAI 9851, 665-680.
#' @seealso [cv_sgd_robust()] to choose `lambda` and `s`; [read_libsvm()],
#'   [flip_labels()].
#' @examples
#' set.seed(1)
#' x <- matrix(rnorm(400), 200, 2)
#' y <- ifelse(x[, 1] + x[, 2] > 0, 1, -1)
#' y_noisy <- flip_labels(y, 0.2)$y
#' fit <- sgd_robust(x, y_noisy, loss = "gompertz", lambda = 1e-3)
#' fit
#' mean(predict(fit, x) == y)
#' head(label_issues(fit))
#' @export
sgd_robust <- function(x, ...) UseMethod("sgd_robust")

#' @rdname sgd_robust
#' @export
sgd_robust.formula <- function(x, data, ...) {
  design <- formula_design(x, data, stats::na.fail)
  attach_formula(sgd_robust.default(design$x, design$y, ...), design, match.call())
}

#' @rdname sgd_robust
#' @export
sgd_robust.default <- function(x, y = NULL,
                               loss = c("smooth_ramp", "gompertz", "hinge", "logistic", "ramp"),
                               lambda = 1e-4, s = -1, alpha = NULL, beta = NULL, c = 2,
                               epochs = 15L, standardize = TRUE, init = NULL,
                               weights = NULL, class_weight = NULL,
                               multiclass = c("auto", "ovr", "multinomial"),
                               chunk_rows = NULL, n_features = NULL,
                               penalty = c("l2", "l1", "elasticnet"), l1_ratio = 0.15,
                               shards = 1L, x_valid = NULL, y_valid = NULL, seed = NULL,
                               threads = getOption("noisylabels.threads", 1L), verbose = NULL,
                               control = sgd_robust_control(), ...) {
  call <- match.call()
  # checked first: a function given as `c` would be called by every c() here
  if (!is.numeric(c) || length(c) != 1L || is.na(c) || !is.finite(c)) {
    abort_input("{.arg c} must be a single finite number (the Gompertz loss parameter).")
  }
  dots <- list(...)
  if ("center" %in% names(dots)) {
    standardize <- renamed_arg(dots, "center", "standardize", standardize, missing(standardize))
    dots$center <- NULL
  }
  ctl <- control_from_dots(control, dots, sgd_robust_control, "sgd_robust_control", "sgd_robust",
                           call = call)
  control <- ctl$control
  do.call(check_dots_empty, c(list("sgd_robust"), ctl$dots))
  threads <- check_threads(threads)
  verbose <- progress_enabled(verbose)
  loss <- match_arg(loss)
  multiclass <- match_arg(multiclass)
  penalty <- match_arg(penalty)
  cfg <- sgd_settings(loss = loss, method = control$method, option = control$option,
                      bias = control$bias, multiclass = multiclass,
                      warm_start = control$warm_start,
                      penalty = penalty, lambda = lambda, l1_ratio = l1_ratio,
                      s = s, alpha = alpha, beta = beta, c = c, eta = control$eta, epochs = epochs,
                      tol = control$tol, bias_step = control$bias_step,
                      step_guard = control$step_guard, eta_sample = control$eta_sample,
                      record_iterates = control$record_iterates,
                      standardize = standardize, verbose = verbose)
  cfg$threads <- threads
  validation_fraction <- control$validation_fraction
  n_iter_no_change <- control$n_iter_no_change
  inp <- sgd_input(x, y, weights, x_valid, y_valid, chunk_rows, n_features, cfg)
  cfg$shards <- sgd_check_shards(shards, inp, cfg, validation_fraction, n_iter_no_change)
  cfg$seed <- check_count(seed %||% draw_seed(), "seed", lower = 0)
  inp <- sgd_hold_out(inp, cfg, validation_fraction, n_iter_no_change)
  inp <- sgd_training_labels(inp, cfg, class_weight)
  src <- sgd_input_source(inp)
  train <- if (inp$chunked) src$first() else inp$train
  opts <- sgd_core_options(cfg, eta = cfg$eta %||% 1, epochs = cfg$epochs, seed = cfg$seed,
                           multinomial = inp$lab$multi && cfg$multiclass == "multinomial",
                           early_stop_patience = inp$patience)
  opts$eta <- sgd_initial_eta(opts, cfg, train, inp$lab)
  warm <- sgd_use_warm_start(cfg, init)
  opts <- sgd_starting_point(opts, cfg, init, warm, train, inp)
  run <- sgd_run(src, train, opts, cfg, inp)
  sgd_build_fit(run$res, run$train, inp$lab, opts, call = call,
                x = if (inp$from_file) NULL else inp$x, centre = inp$centre, scale = inp$scale,
                extra = sgd_fit_record(run$res, opts, cfg, inp, warm))
}

# The step: given, or found by the automatic search (on a binary problem, see
# sgd_eta_data()), and checked against the shrink step's limit.
sgd_initial_eta <- function(opts, cfg, train, lab, call = parent.frame()) {
  if (is.null(cfg$eta) && cfg$method != "pegasos") {
    return(call_core(.sgd_choose_eta(sgd_spec(sgd_eta_data(train, lab)), opts, cfg$eta_sample), call = call, threads = cfg$threads))
  }
  if (cfg$method == "sgd" && opts$eta * cfg$lambda_l2 >= 1) {
    abort_input(c("{.arg eta} * {.arg lambda} = {format(opts$eta * cfg$lambda)} must be < 1.",
                  "i" = "The shrink step (1 - eta lambda) would wipe out the weights; use a smaller {.arg eta}."),
                call = call)
  } else if (cfg$method == "asgd" && opts$eta * cfg$lambda_l2 >= 1) {
    abort_input("{.arg eta} * {.arg lambda} must be < 1 for ASGD.", call = call)
  }
  opts$eta
}

# Warm start (bounded losses): one epoch of the hinge loss from the start
# point, then the bounded loss from there. From w = 0 the first steps of a
# bounded loss on unbalanced classes can push every margin into the flat
# regions (a constant classifier: every ijcnn1 seed did so).
sgd_use_warm_start <- function(cfg, init, call = parent.frame()) {
  bounded <- cfg$loss %in% c("smooth_ramp", "ramp", "gompertz")
  warm <- if (cfg$warm_start == "auto") {
    bounded && is.null(init) && cfg$method != "pegasos" && !cfg$record_iterates
  } else cfg$warm_start == "hinge"
  if (warm && cfg$record_iterates) {
    abort_input("{.arg record_iterates} runs Algorithm 1 as written; use {.code warm_start = \"none\"}.",
                call = call)
  }
  warm
}

# The starting point in the core's options: `init`, then the warm start.
sgd_starting_point <- function(opts, cfg, init, warm, train, inp, call = parent.frame()) {
  n_models <- inp$n_models
  if (!is.null(init)) {
    start <- sgd_start(init, train$d, cfg$bias, inp$centre, n_models, scale = inp$scale)
    opts$w_init <- start$w
    opts$b_init <- start$b
  }
  if (!warm) return(opts)
  wopts <- opts
  wopts$loss <- sgd_loss_spec("hinge")
  wopts$epochs <- 1L
  wopts$multinomial <- FALSE
  wopts$early_stop_patience <- 0L
  wopts$seed <- as.double((cfg$seed + 7919L) %% .Machine$integer.max)
  wres <- call_core(.sgd_fit(sgd_spec(train), NULL, wopts), call = call, threads = cfg$threads)
  opts$eta <- wres$eta_final
  opts$w_init <- sgd_core_init(wres, train$d, cfg$bias, n_models)
  opts$b_init <- if (cfg$bias == "separate") wres$biases else numeric(0)
  opts
}

# Trains: shards (parameter mixing), chunks (a stream of chunks) or one call
# of the core. Returns the core-shaped result and the training rows as
# sgd_build_fit() reads them.
sgd_run <- function(src, train, opts, cfg, inp, call = parent.frame()) {
  n_models <- inp$n_models
  progress <- progress_bar("SGD epochs", total = cfg$epochs, verbose = cfg$verbose, force = TRUE)
  valid_eval <- if (!is.null(inp$valid)) function(res) sgd_res_error(res, inp$valid, n_models)
  if (cfg$shards > 1L) {
    k <- min(cfg$shards, inp$n_total)  # at most one shard per row
    shard <- if (inp$from_file) {
      sgd_file_shard_inputs(inp$scan, inp$files, k, inp$chunk_rows, inp$d_total, inp$lab,
                            inp$case_w$weight)
    } else {
      sgd_memory_shard_inputs(inp$x, inp$y, inp$lab, inp$case_w$weight, k, cfg$seed)
    }
    # shards without rows (more shards than rows or chunks) take no part
    shard$inputs <- shard$inputs[shard$sizes > 0]
    shard$sizes <- shard$sizes[shard$sizes > 0]
    res <- sgd_fit_shards(shard$inputs, shard$sizes, opts, cfg$seed, cfg$epochs, n_models,
                          inp$d_total, valid_eval = valid_eval, progress = progress)
  } else if (inp$chunked) {
    res <- sgd_fit_chunks(src, opts, cfg$seed, cfg$epochs, n_models, inp$d_total,
                          valid_eval = valid_eval, progress = progress)
  } else {
    opts["progress"] <- list(progress)  # keeps the key when NULL
    res <- call_core(.sgd_fit(sgd_spec(train), sgd_spec(inp$valid), opts), call = call, threads = cfg$threads)
    return(list(res = res, train = train))
  }
  train <- sgd_stream_margins(src, res, n_models, inp$lab$multi, inp$n_total, inp$d_total)
  res$margins <- train$margins
  res$decision <- train$decision
  list(res = res, train = train)
}
