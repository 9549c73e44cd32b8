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
#' the objective at the starting point); otherwise a
#' `noisylabels_warning_convergence` warning is given.
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
#' @param method `"sgd"` (Algorithm 1), `"asgd"` or `"pegasos"`.
#' @param lambda L2 penalty \eqn{\lambda \ge 0}.
#' @param s Ramp parameter (loss bound 1 - s) for `"ramp"` and
#'   `"smooth_ramp"`.
#' @param alpha,beta Smooth-ramp shape; `NULL` takes the published or refitted
#'   values for `s` (see [smooth_ramp_params()]).
#' @param c Reversed-Gompertz steepness.
#' @param eta Constant step (`"sgd"`) or \eqn{\eta_0} (`"asgd"`); `NULL` =
#'   chosen automatically (see Algorithm). Ignored by Pegasos.
#' @param epochs Number of passes over the data (15 as in the paper).
#' @param option `"B"` (epoch average, the default) or `"A"` (last iterate),
#'   for `method = "sgd"`. The paper says option A is the usual choice; with
#'   the automatic step, B had the lower mean test error in 23 of 30 settings
#'   of `inst/experiments/sgd_robust/defaults.R` (a7a and ijcnn1; 0, 20 and
#'   40 % flipped labels; five losses; 3 repetitions each), A in 1, and 6 were
#'   ties (both the constant classifier): with a constant step the last
#'   iterate follows the last, often mislabelled, examples.
#' @param bias `"feature"`, `"separate"` or `"none"`.
#' @param bias_step For `bias = "separate"`: the bias step as a fraction of
#'   the weight step (Bottou's svmsgd uses 0.01).
#' @param center Centre the columns of a dense `x` on their means before
#'   training (`x_valid` is shifted by the same means); the reported bias and
#'   [predict()] refer to the original columns. The model class is unchanged,
#'   but SGD from w = 0 behaves differently: on all-positive features (e.g.
#'   scaled to \[0, 1\]) with unbalanced classes the first updates move every
#'   margin towards the majority class along the mean of x, which can push a
#'   bounded loss with a derivative symmetric about its midpoint (the smooth
#'   ramp with s = -1 or -0.7) into its flat regions for every example, i.e.
#'   to the constant classifier. Centring removes that direction. The
#'   objective in `trace` is that of the centred problem.
#' @param init Starting point instead of w = 0: a fitted `sgd_robust` model
#'   (e.g. one epoch of the logistic loss), its [coef()] (intercept first),
#'   or the weights alone (intercept 0). On the user's columns, also with
#'   `center = TRUE`.
#' @param weights Optional non-negative weight per row (see Weights).
#' @param class_weight `NULL`, `"balanced"` or a named numeric vector of
#'   weights per class (see Weights).
#' @param multiclass `"auto"` (binary for two classes, one-vs-rest for more),
#'   `"ovr"` (one-vs-rest also for two classes) or `"multinomial"` (softmax
#'   regression; logistic loss only). See Multiclass.
#' @param warm_start `"auto"` (one hinge epoch first for the bounded losses
#'   when `init` is not given), `"hinge"` (always) or `"none"`.
#' @param step_guard Relative objective increase over an epoch above which
#'   the epoch is undone and `eta` halved (see Algorithm); 0 or `Inf`
#'   switches the guard off. Ignored by Pegasos.
#' @param chunk_rows Train in chunks of this many rows (see Out of core);
#'   for files the default is 100000.
#' @param n_features For LIBSVM files: the number of columns (default: the
#'   largest feature index in the files).
#' @param penalty `"l2"` (the paper's \eqn{\lambda/2 \|w\|^2}), `"l1"`
#'   (\eqn{\lambda \|w\|_1}) or `"elasticnet"` (\eqn{\lambda(1-\rho)/2
#'   \|w\|^2 + \lambda\rho\|w\|_1}, \eqn{\rho} = `l1_ratio`). The L1 part
#'   never includes the bias. See Penalties.
#' @param l1_ratio The L1 share \eqn{\rho} of the elastic net.
#' @param validation_fraction,n_iter_no_change Early stopping: hold out this
#'   fraction of the rows (default 0.1 when only `n_iter_no_change` is given;
#'   or use `x_valid`/`y_valid`) and stop when the validation error has not
#'   improved for `n_iter_no_change` epochs (default 5); the model of the
#'   epoch with the lowest validation error is returned. See Early stopping.
#' @param shards Train `shards` copies on disjoint parts of the rows under
#'   the current [future::plan()], mixing their parameters after every epoch
#'   (see Across workers).
#' @param verbose Show a cli progress bar over the epochs also in
#'   non-interactive sessions (interactive sessions always get one); as for
#'   every cli bar it appears only once the fit has run for two seconds
#'   (option `cli.progress_show_after`).
#' @param x_valid,y_valid Optional validation data; the per-epoch error on
#'   them is traced.
#' @param tol Relative objective change over the last epoch below which the
#'   fit counts as converged.
#' @param eta_sample Rows used by the automatic step search.
#' @param seed Integer seed of the shuffles; `NULL` draws one from R's RNG, so
#'   [set.seed()] reproduces a fit exactly.
#' @param record_iterates Store every iterate (`fit$iterates`, a matrix with
#'   one column per step: the weights including the bias feature, then the
#'   separate bias) and the rows visited (`fit$visit_order`); for tests on tiny
#'   data only. It runs Algorithm 1 as written: no warm start, no step guard.
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
                               method = c("sgd", "asgd", "pegasos"),
                               lambda = 1e-4, s = -1, alpha = NULL, beta = NULL, c = 2,
                               eta = NULL, epochs = 15L, option = c("B", "A"),
                               bias = c("feature", "separate", "none"), bias_step = 0.01,
                               center = FALSE, init = NULL,
                               weights = NULL, class_weight = NULL,
                               multiclass = c("auto", "ovr", "multinomial"),
                               warm_start = c("auto", "hinge", "none"), step_guard = 0.25,
                               chunk_rows = NULL, n_features = NULL,
                               penalty = c("l2", "l1", "elasticnet"), l1_ratio = 0.15,
                               validation_fraction = NULL, n_iter_no_change = NULL,
                               shards = 1L, verbose = FALSE,
                               x_valid = NULL, y_valid = NULL, tol = 1e-2, eta_sample = 1000L,
                               seed = NULL, record_iterates = FALSE, ...) {
  call <- match.call()
  check_dots_empty("sgd_robust", ...)
  loss <- match_arg(loss)
  method <- match_arg(method)
  option <- match_arg(option)
  bias <- match_arg(bias)
  multiclass <- match_arg(multiclass)
  warm_start <- match_arg(warm_start)
  penalty <- match_arg(penalty)
  check_number(lambda, "lambda", lower = 0)
  check_number(l1_ratio, "l1_ratio", lower = 0, upper = 1)
  # lambda splits into the L2 and L1 coefficients of the objective
  lambda_l1 <- switch(penalty, l2 = 0, l1 = lambda, elasticnet = lambda * l1_ratio)
  lambda_l2 <- lambda - lambda_l1
  if (lambda_l1 > 0 && method == "pegasos") {
    abort_input("Pegasos has no L1 penalty; use {.code penalty = \"l2\"}.")
  }
  if (method == "pegasos" && lambda_l2 == 0) {
    abort_input("Pegasos needs {.arg lambda} > 0 (its step is 1/(lambda t)).")
  }
  if (!is.null(eta)) check_number(eta, "eta", lower = 0, open_lower = TRUE)
  epochs <- check_count(epochs, "epochs")
  check_number(tol, "tol", lower = 0)
  check_number(bias_step, "bias_step", lower = 0, open_lower = TRUE)
  if (!is.numeric(step_guard) || length(step_guard) != 1L || is.na(step_guard) || step_guard < 0) {
    abort_input("{.arg step_guard} must be a single number >= 0 (0 or Inf switches the guard off).")
  }
  eta_sample <- check_count(eta_sample, "eta_sample")
  check_flag(record_iterates, "record_iterates")
  loss_spec <- sgd_loss_spec(loss, s = s, alpha = alpha, beta = beta, c = c)
  check_flag(center, "center")
  from_file <- is.character(x)
  if (from_file) {
    files <- check_libsvm_files(x)
    if (!is.null(y)) {
      abort_input("{.arg y} must be {.code NULL} when {.arg x} names LIBSVM files: the labels are read from the files.")
    }
    if (center) abort_input("{.arg center} = TRUE needs the data in memory, not a file.")
    if (record_iterates) abort_input("{.arg record_iterates} needs the data in memory.")
    chunk_rows <- check_count(chunk_rows %||% 100000L, "chunk_rows")
  } else if (!is.null(chunk_rows)) {
    chunk_rows <- check_count(chunk_rows, "chunk_rows")
    if (record_iterates) abort_input("{.arg record_iterates} does not work with {.arg chunk_rows}.")
  }
  if (is.null(y) && !from_file) abort_input("{.arg y} is missing: give one label per row of {.arg x}.")
  if (!is.null(n_features)) n_features <- check_count(n_features, "n_features")
  centre <- NULL
  if (center) {
    if (inherits(x, "sparseMatrix")) {
      abort_input(c("{.arg center} = TRUE needs dense {.arg x}: centring would fill in every zero.",
                    "i" = "Use {.code as.matrix(x)} if it fits in memory, or leave {.arg center} = FALSE."))
    }
    x <- check_x_matrix(x, "x")
    centre <- colMeans(x)
    x <- x - rep(centre, each = nrow(x))
    if (!is.null(x_valid) && !inherits(x_valid, "sparseMatrix")) {
      x_valid <- check_x_matrix(x_valid, "x_valid")
      if (ncol(x_valid) == length(centre)) x_valid <- x_valid - rep(centre, each = nrow(x_valid))
    } else if (!is.null(x_valid)) {
      x_valid <- as.matrix(x_valid) - rep(centre, each = nrow(x_valid))
    }
  }

  shards <- check_count(shards, "shards")
  if (shards > 1L) {
    if (!requireNamespace("future.apply", quietly = TRUE)) {
      abort_input("{.arg shards} > 1 needs the {.pkg future.apply} package.")
    }
    if (!is.null(n_iter_no_change) || !is.null(validation_fraction) || record_iterates) {
      abort_input("{.arg shards} > 1 does not combine with early stopping or {.arg record_iterates}.")
    }
    if (!from_file && !is.null(chunk_rows)) {
      abort_input("Give {.arg shards} or {.arg chunk_rows} for data in memory, not both.")
    }
  }
  # Early stopping: validation data are x_valid/y_valid, or a random
  # validation_fraction of the rows held out from training.
  early_stop <- !is.null(validation_fraction) || !is.null(n_iter_no_change)
  row_index <- NULL
  if (is.null(seed)) seed <- draw_seed()
  seed <- check_count(seed, "seed", lower = 0)
  if (early_stop) {
    patience <- check_count(n_iter_no_change %||% 5L, "n_iter_no_change")
    if (from_file || !is.null(chunk_rows)) {
      abort_input("Early stopping needs the data in memory without {.arg chunk_rows}.")
    }
    if (record_iterates) abort_input("{.arg record_iterates} does not combine with early stopping.")
    if (is.null(x_valid)) {
      validation_fraction <- validation_fraction %||% 0.1
      check_number(validation_fraction, "validation_fraction", lower = 0, upper = 1,
                   open_lower = TRUE, open_upper = TRUE)
      n_all <- NROW(x)
      n_hold <- max(1L, round(validation_fraction * n_all))
      if (n_all - n_hold < 2L) abort_input("{.arg validation_fraction} leaves fewer than 2 training rows.")
      hold <- sgd_holdout_rows(n_all, n_hold, seed)
      row_index <- setdiff(seq_len(n_all), hold)
      x_valid <- x[hold, , drop = FALSE]
      y_valid <- y[hold]
      x <- x[row_index, , drop = FALSE]
      y <- y[row_index]
      if (!is.null(weights)) weights <- weights[row_index]
    } else if (!is.null(validation_fraction)) {
      abort_input("Give {.arg validation_fraction} or {.arg x_valid}, not both.")
    }
  }
  if (from_file) {
    # One pass to learn the size, the classes and their counts.
    scan <- list()
    for (fi in seq_along(files)) {
      scan <- c(scan, libsvm_each_chunk(files[fi], chunk_rows, function(chunk, index) {
        tb <- table(chunk$y)
        list(n = chunk$n, max_index = chunk$max_index, file = fi, index = index,
             labels = stats::setNames(as.vector(tb), names(tb)))
      }))
    }
    n_total <- sum(vapply(scan, function(z) as.double(z$n), 0))
    if (!n_total) abort_input("{.file {files}} contain{?s/} no data lines.", class = "noisylabels_error_file")
    d_file <- max(vapply(scan, function(z) as.integer(z$max_index), 0L))
    if (!is.null(n_features) && n_features < d_file) {
      abort_input("{.arg n_features} = {n_features} but the files have feature index {d_file}.")
    }
    d_total <- n_features %||% d_file
    all_counts <- unlist(lapply(scan, `[[`, "labels"))
    counts <- tapply(all_counts, names(all_counts), sum)
    classes <- sort(as.numeric(names(counts)))
    lab <- sgd_labels(classes, length(classes), multiclass = multiclass)
    lab_counts <- as.vector(counts[as.character(classes)])
  } else {
    train <- sgd_data(x, "x")
    lab <- sgd_labels(y, train$n, multiclass = multiclass)
    n_total <- train$n
    d_total <- train$d
  }
  multi <- lab$multi
  if (multi && multiclass == "multinomial" && loss != "logistic") {
    abort_input(c("{.code multiclass = \"multinomial\"} needs {.code loss = \"logistic\"} (softmax regression).",
                  "i" = "Use {.code multiclass = \"ovr\"} for the other losses."))
  }
  if (multi && multiclass == "multinomial" && method == "pegasos") {
    abort_input("Pegasos has no multinomial form; use {.code multiclass = \"ovr\"}.")
  }
  if (multi && record_iterates) {
    abort_input("{.arg record_iterates} is for binary fits only.")
  }
  if (from_file) {
    # class weights from the counts of the first pass; row weights as given
    case_w <- sgd_case_weights(weights, class_weight,
                               c(lab[setdiff(names(lab), "cls")],
                                 list(cls = rep(seq_along(lab_counts), lab_counts))), n_total)
  } else {
    train <- sgd_set_labels(train, lab)
    case_w <- sgd_case_weights(weights, class_weight, lab, train$n)
    train$weight <- case_w$weight
  }
  valid <- NULL
  if (!is.null(x_valid) || !is.null(y_valid)) {
    if (is.null(x_valid) || is.null(y_valid)) {
      abort_input("Give both {.arg x_valid} and {.arg y_valid}, or neither.")
    }
    valid <- sgd_data(x_valid, "x_valid")
    if (valid$d != d_total) {
      abort_input("{.arg x_valid} has {valid$d} column{?s} but {.arg x} has {d_total}.")
    }
    valid <- sgd_set_labels(valid, sgd_labels(y_valid, valid$n, multiclass = multiclass,
                                              template = lab, arg = "y_valid"))
  }
  if (record_iterates && (d_total + 3) * as.double(n_total) * epochs > 5e7) {
    abort_input("{.arg record_iterates} would store {format((d_total + 3) * as.double(n_total) * epochs)} numbers; it is meant for tiny test problems.")
  }
  # Chunked training (files, or chunk_rows for data in memory): each_chunk()
  # hands the chunks, in the core's layout, to a function.
  chunked <- from_file || (!is.null(chunk_rows) && chunk_rows < n_total)
  if (from_file) {
    make_chunk <- function(chunk, rows) {
      ch <- libsvm_core_data(chunk, d_total)
      ch <- sgd_set_labels(ch, sgd_labels(chunk$y, chunk$n, template = lab))
      if (!is.null(case_w$weight)) ch$weight <- case_w$weight[rows]
      ch
    }
    each_chunk <- function(f) {
      offset <- 0
      libsvm_each_chunk(files, chunk_rows, function(chunk, index) {
        rows <- offset + seq_len(chunk$n)
        offset <<- offset + chunk$n
        f(make_chunk(chunk, rows), index, rows)
      })
      invisible(NULL)
    }
    first <- libsvm_first_chunk(files, chunk_rows)
    train <- make_chunk(first, seq_len(first$n))
  } else if (chunked) {
    memory_chunk <- function(rows) {
      ch <- sgd_data(x[rows, , drop = FALSE], "x")
      ch <- sgd_set_labels(ch, sgd_labels(y[rows], length(rows), template = lab))
      if (!is.null(case_w$weight)) ch$weight <- case_w$weight[rows]
      ch
    }
    starts <- seq(1L, n_total, by = chunk_rows)
    each_chunk <- function(f) {
      for (k in seq_along(starts)) {
        rows <- starts[k]:min(n_total, starts[k] + chunk_rows - 1L)
        f(memory_chunk(rows), k, rows)
      }
      invisible(NULL)
    }
    # the first chunk stands in for the data in the step search and warm start
    train <- memory_chunk(seq_len(chunk_rows))
  }
  n_models <- if (multi) lab$K else 1L
  # record_iterates shows Algorithm 1 exactly as written (tests replay it):
  # no warm start, no step guard.
  guard <- if (record_iterates) 0 else step_guard
  opts <- list(method = method, loss = loss_spec, lambda = lambda_l2, lambda_l1 = lambda_l1,
               early_stop_patience = if (early_stop) patience else 0L, eta = eta %||% 1,
               epochs = epochs, average = option == "B", bias = bias,
               bias_step = bias_step, record_iterates = record_iterates, seed = as.double(seed),
               multinomial = multi && multiclass == "multinomial", guard = as.double(guard),
               guard_max_shrinks = 20L)
  eta_auto <- is.null(eta) && method != "pegasos"
  if (eta_auto) {
    opts$eta <- call_core(.sgd_choose_eta(sgd_eta_data(train, lab), opts, eta_sample))
  } else if (method == "sgd" && opts$eta * lambda_l2 >= 1) {
    abort_input(c("{.arg eta} * {.arg lambda} = {format(opts$eta * lambda)} must be < 1.",
                  "i" = "The shrink step (1 - eta lambda) would wipe out the weights; use a smaller {.arg eta}."))
  } else if (method == "asgd" && opts$eta * lambda_l2 >= 1) {
    abort_input("{.arg eta} * {.arg lambda} must be < 1 for ASGD.")
  }
  if (!is.null(init)) {
    start <- sgd_start(init, train$d, bias, centre, n_models)
    opts$w_init <- start$w
    opts$b_init <- start$b
  }
  # Warm start (bounded losses): one epoch of the hinge loss from the start
  # point, then the bounded loss from there. From w = 0 the first steps of a
  # bounded loss on unbalanced classes can push every margin into the flat
  # regions (a constant classifier: every ijcnn1 seed did so).
  bounded <- loss %in% c("smooth_ramp", "ramp", "gompertz")
  warm <- if (warm_start == "auto") bounded && is.null(init) && method != "pegasos" && !record_iterates
          else warm_start == "hinge"
  if (warm && record_iterates) abort_input("{.arg record_iterates} runs Algorithm 1 as written; use {.code warm_start = \"none\"}.")
  if (warm) {
    wopts <- opts
    wopts$loss <- sgd_loss_spec("hinge")
    wopts$epochs <- 1L
    wopts$multinomial <- FALSE
    wopts$early_stop_patience <- 0L
    wopts$seed <- as.double((seed + 7919L) %% .Machine$integer.max)
    wres <- call_core(.sgd_fit(train, NULL, wopts))
    opts$eta <- wres$eta_final
    opts$w_init <- sgd_core_init(wres, train$d, bias, n_models)
    opts$b_init <- if (bias == "separate") wres$biases else numeric(0)
  }
  check_flag(verbose, "verbose")
  progress <- sgd_progress(epochs, show = verbose || interactive())
  if (shards > 1L) {
    valid_eval <- if (!is.null(valid)) function(res) sgd_res_error(res, valid, n_models) else NULL
    if (from_file) {
      # per chunk of the first pass: its file, its number within that file's
      # shard stream and its first row
      chunk_n <- vapply(scan, function(z) as.double(z$n), 0)
      chunk_file <- vapply(scan, function(z) z$file, 0L)
      chunk_index <- vapply(scan, function(z) z$index, 0L)
      chunk_start <- cumsum(c(0, chunk_n))[seq_along(chunk_n)]
      by_file <- length(files) >= shards
      # blocks per file = the largest block number seen in it; a reader of
      # all files numbers blocks consecutively across them
      per_file <- vapply(seq_along(files), function(f) max(c(0L, chunk_index[chunk_file == f])), 0L)
      chunk_global <- cumsum(c(0L, per_file))[chunk_file] + chunk_index
      shard_of <- if (by_file) (chunk_file - 1L) %% shards + 1L else (chunk_global - 1L) %% shards + 1L
      row_start <- lapply(seq_len(shards), function(s) {
        # index of a chunk as the shard's reader numbers it -> first row
        own <- which(shard_of == s)
        idx <- if (by_file) sgd_reader_index(chunk_file[own], chunk_index[own], files, shards, s)
               else chunk_global[own]
        out <- rep(NA_real_, max(c(idx, 0L)))
        out[idx] <- chunk_start[own]
        out
      })
      inputs <- lapply(seq_len(shards), function(s) {
        list(kind = "file", files = files, chunk_rows = chunk_rows, d = d_total, lab = lab,
             weight = case_w$weight, row_start = if (is.null(case_w$weight)) NULL else row_start,
             shard = s, k = shards)
      })
      sizes <- vapply(seq_len(shards), function(s) sum(chunk_n[shard_of == s]), 0)
    } else {
      part <- sgd_seeded_sample(n_total, n_total, seed)
      blocks <- split(part, cut(seq_len(n_total), shards, labels = FALSE))
      inputs <- lapply(blocks, function(rows) {
        rows <- sort(rows)
        ch <- sgd_data(x[rows, , drop = FALSE], "x")
        ch <- sgd_set_labels(ch, sgd_labels(y[rows], length(rows), template = lab))
        if (!is.null(case_w$weight)) ch$weight <- case_w$weight[rows]
        list(kind = "memory", data = ch)
      })
      sizes <- vapply(blocks, function(b) as.double(length(b)), 0)
      full <- train
      each_chunk <- function(f) f(full, 1L, seq_len(n_total))
    }
    res <- sgd_fit_shards(unname(inputs), sizes, opts, seed, epochs, n_models, d_total,
                          valid_eval = valid_eval, progress = progress)
    train <- sgd_stream_margins(each_chunk, res, n_models, multi, n_total, d_total,
                                sparse = train$sparse)
    res$margins <- train$margins
    res$decision <- train$decision
  } else if (chunked) {
    valid_eval <- if (!is.null(valid)) function(res) sgd_res_error(res, valid, n_models) else NULL
    res <- sgd_fit_chunks(each_chunk, opts, seed, epochs, n_models, d_total, valid_eval = valid_eval,
                          progress = progress)
    train <- sgd_stream_margins(each_chunk, res, n_models, multi, n_total, d_total,
                                sparse = train$sparse)
    res$margins <- train$margins
    res$decision <- train$decision
  } else {
    opts$progress <- progress
    res <- call_core(.sgd_fit(train, valid, opts))
    opts$progress <- NULL
  }
  fit <- sgd_build_fit(res, train, lab, opts, call = call, x = if (from_file) NULL else x,
                       centre = centre,
                extra = list(eta_initial = if (method == "pegasos") NA_real_ else opts$eta,
                             eta_auto = eta_auto, tol = tol, seed = seed, option = option,
                             bias_mode = bias, bias_step = bias_step, epochs = epochs,
                             warm_start = if (warm) "hinge" else "none",
                             step_guard = guard, case_weights = case_w$weight,
                             class_weight = case_w$class_weight,
                             record_iterates = record_iterates, t_final = res$t_final,
                             lambda = lambda, penalty = penalty, lambda_l2 = lambda_l2,
                             lambda_l1 = lambda_l1,
                             l1_ratio = if (penalty == "elasticnet") l1_ratio else NULL,
                             row_index = row_index,
                             early_stopping = if (early_stop) list(
                               n_iter_no_change = patience, best_epoch = res$best_epoch,
                               stopped_early = res$stopped_early,
                               validation_rows = if (!is.null(row_index)) setdiff(seq_len(n_total + length(y_valid)), row_index)) else NULL,
                             chunk_rows = if (chunked) chunk_rows else NULL,
                             shards = shards, epoch_seconds = res$epoch_seconds,
                             source = if (from_file) files else NULL))
  fit
}

# Margins (binary) or decision values (multiclass) of every row of a chunked
# source, with the labels, in the shape sgd_build_fit() reads as `train`.
sgd_stream_margins <- function(each_chunk, res, n_models, multi, n, d, sparse) {
  # filled in place, chunk by chunk: one n-vector each, no list of parts
  if (multi) {
    decision <- matrix(0, n, n_models)
    label <- integer(n)
  } else {
    margins <- numeric(n)
    y <- numeric(n)
  }
  offset <- 0
  each_chunk(function(ch, index, rows) {
    f <- sgd_res_decision(res, ch, n_models)
    at <- offset + seq_len(ch$n)
    offset <<- offset + ch$n
    if (multi) {
      decision[at, ] <<- f
      label[at] <<- ch$label
    } else {
      margins[at] <<- ch$y * f[, 1]
      y[at] <<- ch$y
    }
    NULL
  })
  out <- list(n = n, d = d, sparse = sparse)
  if (multi) {
    out$decision <- as.double(decision)
    out$label <- label
  } else {
    out$margins <- margins
    out$y <- y
  }
  out
}

# Starting weights for the core, in its layout (per model: d weights, plus the
# bias feature's weight), from a core result.
sgd_core_init <- function(res, d, bias, n_models) {
  W <- matrix(res$weights, d, n_models)
  if (bias == "feature") W <- rbind(W, res$biases)
  as.double(W)
}

# Assemble the fitted object from the core's result.
sgd_build_fit <- function(res, train, lab, opts, call, x, centre, extra) {
  multi <- lab$multi
  K <- if (multi) lab$K else 1L
  d <- train$d
  nm <- colnames(x) %||% paste0("x", seq_len(d))
  obj <- res$objective
  k <- length(obj)
  prev <- if (k >= 2) obj[k - 1] else res$objective_start
  rel_change <- if (k >= 1) abs(obj[k] - prev) / max(1, abs(obj[k])) else NA_real_
  converged <- isTRUE(rel_change <= extra$tol)
  if (!converged) {
    warn_convergence(c("SGD did not converge in {k} epoch{?s}: the objective changed by {format(rel_change, digits = 3)} (relative) in the last epoch.",
                       "i" = "Raise {.arg epochs}, lower {.arg eta}, or raise {.arg tol} (was {extra$tol})."))
  }
  shrinks <- as.data.frame(res$shrinks)
  if (nrow(shrinks)) {
    cli::cli_inform(c("i" = "SGD step guard: {nrow(shrinks)} epoch{?s} ended with a much worse objective and {?was/were} rerun with a halved step (eta {format(shrinks$eta_from[1], digits = 3)} -> {format(res$eta_final, digits = 3)}); see {.code fit$step_shrinks}."),
                    class = "noisylabels_message_step_guard")
  }
  trace <- data.frame(epoch = seq_len(k), objective = obj, train_error = res$train_error,
                      valid_error = if (length(res$valid_error)) res$valid_error else NA_real_)
  W <- matrix(res$weights, d, K, dimnames = list(nm, if (multi) lab$class_names else NULL))
  b <- res$biases
  # Centred fit: w'(x - m) + b = w'x + (b - w'm); report the bias on the user's scale.
  if (!is.null(centre)) b <- b - colSums(W * centre)
  fit <- list(loss = opts$loss, method = opts$method, lambda = opts$lambda,
              eta = if (opts$method == "pegasos") NA_real_ else res$eta_final,
              centre = centre, trace = trace, converged = converged,
              iterations = res$epochs_run, rel_change = rel_change,
              objective_start = res$objective_start, step_shrinks = shrinks,
              seconds = res$seconds_train, cpu_seconds = res$cpu_seconds_train,
              eval_seconds = res$seconds_evaluate, eval_cpu_seconds = res$cpu_seconds_evaluate,
              renormalisations = res$renormalisations,
              levels = lab$levels, label_kind = lab$kind, n = train$n, d = d,
              sparse = train$sparse, call = call)
  fit[names(extra)] <- extra
  if (!multi) {
    fit$weights <- stats::setNames(W[, 1], nm)
    fit$bias <- b[1]
    fit$coefficients <- c("(Intercept)" = fit$bias, fit$weights)
    fit$margins <- res$margins
    fit$y <- train$y
  } else {
    fit$multiclass <- if (isTRUE(opts$multinomial)) "multinomial" else "ovr"
    fit$n_classes <- K
    fit$weights <- W
    fit$bias <- stats::setNames(b, lab$class_names)
    fit$coefficients <- rbind("(Intercept)" = fit$bias, W)
    dec <- matrix(res$decision, train$n, K, dimnames = list(NULL, lab$class_names))
    fit$decision <- dec
    fit$class_index <- train$label + 1L
    fit$margins <- dec[cbind(seq_len(train$n), fit$class_index)]
  }
  if (isTRUE(extra$record_iterates)) {
    it <- matrix(res$iterates, nrow = length(res$iterates) / (k * train$n))
    fit$visit_order <- it[1, ] + 1
    fit$iterates <- it[-1, , drop = FALSE]
  }
  new_sgd_robust(fit)
}

# Labels for binary or multiclass fits. Binary fits (two classes and
# multiclass = "auto") keep the +-1 coding of sgd_encode_labels(); otherwise
# the classes are coded 0..K-1 for the core. `template` (a previous result)
# fixes the classes, e.g. for validation data.
sgd_labels <- function(y, n, multiclass = "auto", template = NULL, arg = "y",
                       call = parent.frame()) {
  if (!is.null(template) && !template$multi) {
    out <- sgd_encode_labels(y, n, levels = template$levels, arg = arg, call = call)
    return(c(out, list(multi = FALSE, K = 2L, class_names = as.character(template$levels),
                       cls = ifelse(out$y > 0, 2L, 1L))))
  }
  y <- sgd_check_label_vector(y, n, arg, call)
  if (is.numeric(y) && any(!is.finite(y))) abort_input("{.arg {arg}} contains infinite values.", call = call)
  if (is.null(template)) {
    present <- if (is.factor(y)) levels(droplevels(y)) else sort(unique(y))
    if (length(present) < 2) {
      abort_input("{.arg {arg}} has a single class ({.val {as.character(present)}}); two are needed.",
                  call = call)
    }
    if (length(present) == 2L && multiclass == "auto") {
      out <- sgd_encode_labels(y, n, arg = arg, call = call)
      return(c(out, list(multi = FALSE, K = 2L, class_names = as.character(out$levels),
                         cls = ifelse(out$y > 0, 2L, 1L))))
    }
    kind <- if (is.factor(y)) "factor" else if (is.logical(y)) "logical" else if (is.character(y)) "character" else if (is.numeric(y)) "numeric" else "other"
    if (kind == "other") abort_input("{.arg {arg}} has unsupported type {.cls {class(y)}}.", call = call)
    levels <- present
  } else {
    levels <- template$levels
    kind <- template$kind
  }
  idx <- match(as.character(y), as.character(levels))
  if (anyNA(idx)) {
    bad <- unique(as.character(y)[is.na(idx)])
    abort_input(c("{.arg {arg}} has {cli::qty(length(bad))}label{?s} {.val {bad}} that the fit does not know.",
                  "i" = "The fit's classes are {.val {as.character(levels)}}."),
                class = "noisylabels_error_unknown_class", call = call)
  }
  list(multi = TRUE, K = length(levels), levels = levels, kind = kind,
       class_names = as.character(levels), cls = idx, label = idx - 1L)
}

sgd_set_labels <- function(data, lab) {
  if (lab$multi) {
    data$label <- as.integer(lab$label)
    data$n_classes <- lab$K
    data$y <- NULL
  } else {
    data$y <- lab$y
  }
  data
}

# The automatic step search runs on a binary problem: the data's own labels,
# or for multiclass fits the last class against the rest (for K = 2 exactly
# the binary coding).
sgd_eta_data <- function(train, lab) {
  if (!lab$multi) return(train)
  train$y <- ifelse(lab$cls == lab$K, 1, -1)
  train$label <- NULL
  train$weight <- NULL
  train
}

# Row weights: `weights` times the class weights, rescaled to mean 1 (only
# their ratios matter: weights of 2 on some rows equal those rows twice in
# the data, in expectation). NULL when every row weighs the same.
sgd_case_weights <- function(weights, class_weight, lab, n, call = parent.frame()) {
  w <- rep(1, n)
  if (!is.null(weights)) {
    if (!is.numeric(weights) || length(weights) != n || anyNA(weights) || any(!is.finite(weights))) {
      abort_input("{.arg weights} must be a finite numeric vector with one entry per row ({n}).",
                  class = "noisylabels_error_weights", call = call)
    }
    if (any(weights < 0)) {
      abort_input(c("{.arg weights} must be >= 0.",
                    "x" = "{sum(weights < 0)} weight{?s} {?is/are} negative (e.g. {weights[weights < 0][1]})."),
                  class = "noisylabels_error_weights", call = call)
    }
    w <- as.double(weights)
  }
  cw <- NULL
  if (!is.null(class_weight)) {
    cls <- lab$cls
    counts <- tabulate(cls, nbins = length(lab$class_names))
    if (is.character(class_weight) && length(class_weight) == 1L && is.null(names(class_weight))) {
      if (class_weight != "balanced") {
        abort_input("{.arg class_weight} must be {.val balanced} or a named numeric vector.",
                    class = "noisylabels_error_weights", call = call)
      }
      cw <- ifelse(counts > 0, n / (length(counts) * pmax(counts, 1)), 0)
      names(cw) <- lab$class_names
    } else {
      if (!is.numeric(class_weight) || is.null(names(class_weight)) || anyNA(class_weight) ||
          any(!is.finite(class_weight)) || any(class_weight < 0)) {
        abort_input("{.arg class_weight} must be {.val balanced} or a named vector of finite weights >= 0.",
                    class = "noisylabels_error_weights", call = call)
      }
      unknown <- setdiff(names(class_weight), lab$class_names)
      if (length(unknown)) {
        abort_input(c("{.arg class_weight} names class{?es} {.val {unknown}} that {.arg y} does not have.",
                      "i" = "The classes are {.val {lab$class_names}}."),
                    class = c("noisylabels_error_unknown_class", "noisylabels_error_weights"), call = call)
      }
      cw <- stats::setNames(rep(1, length(lab$class_names)), lab$class_names)
      cw[names(class_weight)] <- class_weight
    }
    w <- w * unname(cw[cls])
  }
  if (!any(w > 0)) {
    abort_input("Every row has weight 0; there is nothing to learn from.",
                class = "noisylabels_error_weights", call = call)
  }
  w <- w / mean(w)
  list(weight = if (all(w == 1)) NULL else w, class_weight = cw)
}

# Starting weights for the core from `init` (coefficients with the intercept
# first, as coef() returns them, the weights alone, or a fitted sgd_robust
# model), on the scale of the (possibly centred) training columns.
sgd_start <- function(init, d, bias, centre, n_models = 1L) {
  if (inherits(init, "sgd_robust")) init <- stats::coef(init)
  if (n_models > 1L) {
    ok <- is.numeric(init) && is.matrix(init) && ncol(init) == n_models &&
      nrow(init) %in% c(d, d + 1L) && all(is.finite(init))
    if (!ok) {
      abort_input(c("{.arg init} for a fit of {n_models} classes must be a fitted multiclass {.cls sgd_robust} model or a finite matrix with {n_models} columns and {d} rows (weights) or {d + 1} (intercept first).",
                    "x" = "Got {if (is.matrix(init)) paste(nrow(init), 'x', ncol(init), 'matrix') else class(init)[1]}."))
    }
    b <- if (nrow(init) == d + 1L) init[1, ] else rep(0, n_models)
    W <- if (nrow(init) == d + 1L) init[-1, , drop = FALSE] else init
    storage.mode(W) <- "double"
    if (!is.null(centre)) b <- b + colSums(W * centre)
    if (bias == "none" && any(b != 0)) {
      abort_input("{.arg init} has intercepts but {.code bias = \"none\"} fits none.")
    }
    return(list(w = as.double(if (bias == "feature") rbind(W, b) else W),
                b = if (bias == "separate") as.double(b) else numeric(0)))
  }
  if (is.matrix(init) && ncol(init) == 1L) init <- init[, 1]
  if (!is.numeric(init) || is.matrix(init) || !(length(init) %in% c(d, d + 1L)) || any(!is.finite(init))) {
    abort_input(c("{.arg init} must be a fitted {.cls sgd_robust} model or a finite numeric vector of {d} weights, or {d + 1} coefficients with the intercept first.",
                  "x" = "Got {if (is.numeric(init)) paste(length(init), 'number(s)') else class(init)[1]}."))
  }
  b <- if (length(init) == d + 1L) init[[1]] else 0
  w <- as.double(if (length(init) == d + 1L) init[-1] else init)
  # w'x + b = w'(x - m) + (b + w'm) on centred columns.
  if (!is.null(centre)) b <- b + sum(w * centre)
  if (bias == "none" && b != 0) {
    abort_input("{.arg init} has an intercept but {.code bias = \"none\"} fits none.")
  }
  list(w = if (bias == "feature") c(w, b) else w, b = if (bias == "separate") b else numeric(0))
}

new_sgd_robust <- function(fit) {
  stopifnot(is.list(fit), is.numeric(fit$weights), is.numeric(fit$margins))
  structure(fit, class = "sgd_robust")
}

#' Smooth-ramp parameters for a given s
#'
#' Han, Tsang & Chen (2016, section 5.1) publish \eqn{(\alpha, \beta)} for
#' three values of s: (-0.7: 3, -0.15), (-1: 2, -0.03), (-2: 1.5, 0.5). For
#' any other s (or with `refit = TRUE`) they are fitted here by least squares
#' between the smooth ramp and the ramp loss \eqn{\min(1-s, \max(0, 1-z))} on
#' a grid of 2001 points over \[-5, 5\] (Nelder-Mead from
#' \eqn{\alpha = 4/(1-s)}, \eqn{\beta = -(1+s)/2}). The paper does not say
#' which criterion it used; the refit does not reproduce the published alphas
#' (e.g. s = -0.7 gives about (3.12, -0.15)).
#'
#' @param s Ramp parameter, s < 1.
#' @param refit Fit even when published values exist.
#' @return A named numeric vector `c(s, alpha, beta)`.
#' @examples
#' smooth_ramp_params(-1)
#' smooth_ramp_params(-1, refit = TRUE)
#' smooth_ramp_params(-0.5)
#' @export
smooth_ramp_params <- function(s, refit = FALSE) {
  check_number(s, "s", upper = 1, open_upper = TRUE)
  check_flag(refit, "refit")
  published <- list(c(-0.7, 3, -0.15), c(-1, 2, -0.03), c(-2, 1.5, 0.5))
  if (!refit) {
    for (p in published) {
      if (isTRUE(all.equal(p[1], s))) return(c(s = s, alpha = p[2], beta = p[3]))
    }
  }
  z <- seq(-5, 5, length.out = 2001)
  ramp <- pmin(1 - s, pmax(0, 1 - z))
  sse <- function(par) {
    u <- par[1] * (z + par[2])
    sum(((1 - s) * stats::plogis(-u) - ramp)^2)
  }
  opt <- stats::optim(c(4 / (1 - s), -(1 + s) / 2), sse, control = list(reltol = 1e-12, maxit = 5000))
  c(s = s, alpha = opt$par[1], beta = opt$par[2])
}

# Loss description passed to C++.
sgd_loss_spec <- function(loss, s = -1, alpha = NULL, beta = NULL, c = 2, call = parent.frame()) {
  check_number(c, "c", lower = 0, open_lower = TRUE, call = call)
  if (loss %in% c("ramp", "smooth_ramp")) {
    check_number(s, "s", upper = 1, open_upper = TRUE, call = call)
  } else {
    s <- -1
  }
  if (loss == "smooth_ramp") {
    par <- smooth_ramp_params(s)
    alpha <- alpha %||% unname(par["alpha"])
    beta <- beta %||% unname(par["beta"])
    check_number(alpha, "alpha", lower = 0, open_lower = TRUE, call = call)
    check_number(beta, "beta", call = call)
  } else {
    alpha <- 2
    beta <- -0.03
  }
  list(name = loss, s = s, alpha = alpha, beta = beta, c = c)
}

# Validated data in the layout the core reads: dense -> d x n matrix (rows of
# x contiguous); sparse -> the slots of t(x) as dgCMatrix = CSR arrays of x.
sgd_data <- function(x, arg = "x", call = parent.frame()) {
  if (inherits(x, "sparseMatrix")) {
    if (nrow(x) == 0L || ncol(x) == 0L) {
      abort_input("{.arg {arg}} is an empty sparse matrix ({nrow(x)} x {ncol(x)}).", call = call)
    }
    x <- methods::as(methods::as(x, "CsparseMatrix"), "generalMatrix")
    if (!methods::is(x, "dgCMatrix")) x <- methods::as(x, "dMatrix")
    if (length(x@x) == 0L || all(x@x == 0)) {
      abort_input(c("{.arg {arg}} is an empty sparse matrix: it has no non-zero entries.",
                    "i" = "There is nothing to learn from."), call = call)
    }
    if (anyNA(x@x)) {
      abort_input(c("{.arg {arg}} contains NA/NaN values.", "i" = "Remove or impute them first."),
                  call = call)
    }
    if (any(!is.finite(x@x))) abort_input("{.arg {arg}} contains infinite values.", call = call)
    tx <- Matrix::t(x)
    return(list(n = nrow(x), d = ncol(x), dense = NULL, p = tx@p, j = tx@i,
                x = as.double(tx@x), sparse = TRUE))
  }
  x <- check_x_matrix(x, arg, call = call)
  list(n = nrow(x), d = ncol(x), dense = t(x), p = NULL, j = NULL, x = NULL, sparse = FALSE)
}

# A label vector of length n without NA (a one-column matrix is dropped to a
# vector); shared by the binary and the multiclass label encoders.
sgd_check_label_vector <- function(y, n, arg, call) {
  if (is.matrix(y) && ncol(y) == 1L) y <- drop(y)
  if (!is.atomic(y) || !is.null(dim(y))) {
    abort_input("{.arg {arg}} must be a vector or factor of labels.", call = call)
  }
  if (length(y) != n) {
    abort_input("{.arg {arg}} has length {length(y)} but the data have {n} row{?s}.", call = call)
  }
  if (anyNA(y)) abort_input("{.arg {arg}} contains NA labels.", call = call)
  y
}

# Labels -> +-1 doubles. `levels` = c(negative, positive) as given by the user.
sgd_encode_labels <- function(y, n, levels = NULL, arg = "y", call = parent.frame()) {
  y <- sgd_check_label_vector(y, n, arg, call)
  kind <- if (is.factor(y)) "factor" else if (is.logical(y)) "logical" else if (is.character(y)) "character" else if (is.numeric(y)) "numeric" else "other"
  if (kind == "other") abort_input("{.arg {arg}} has unsupported type {.cls {class(y)}}.", call = call)
  if (is.null(levels)) {
    if (kind == "numeric") {
      if (any(!is.finite(y))) abort_input("{.arg {arg}} contains infinite values.", call = call)
      u <- sort(unique(y))
      if (all(u %in% c(-1, 1))) levels <- c(-1, 1)
      else if (all(u %in% c(0, 1))) levels <- c(0, 1)
      else {
        abort_input(c("Numeric {.arg {arg}} must hold -1/+1 or 0/1 labels; it has {length(u)} distinct value{?s}.",
                      "i" = if (length(u) > 2) "For more than two classes fit one classifier per class (one-vs-rest)." else "Recode it to -1/+1 or pass a factor."),
                    call = call)
      }
      present <- u
    } else if (kind == "logical") {
      levels <- c(FALSE, TRUE)
      present <- unique(y)
    } else {
      f <- droplevels(as.factor(y))
      present <- levels(f)
      levels <- present
      if (length(levels) > 2) {
        abort_input(c("{.arg {arg}} has {length(levels)} classes; {.fn sgd_robust} is a binary classifier.",
                      "i" = "Fit one classifier per class (one-vs-rest), e.g. {.code sgd_robust(x, y == cls)} for each class."),
                    call = call)
      }
    }
    if (length(present) < 2) {
      abort_input("{.arg {arg}} has a single class ({.val {as.character(present)}}); two are needed.",
                  call = call)
    }
  }
  pos <- if (kind == "factor" || kind == "character") as.character(y) == as.character(levels[2]) else y == levels[2]
  neg <- if (kind == "factor" || kind == "character") as.character(y) == as.character(levels[1]) else y == levels[1]
  if (!all(pos | neg)) {
    abort_input(c("{.arg {arg}} has labels other than {.val {as.character(levels)}}.",
                  "x" = "Unknown: {.val {unique(as.character(y)[!(pos | neg)])}}."),
                class = "noisylabels_error_unknown_class", call = call)
  }
  list(y = ifelse(pos, 1, -1), levels = levels, kind = kind)
}

#' Choose lambda and s for a robust-loss SGD classifier by cross-validation
#'
#' k-fold cross-validation over a grid of `lambda` and (for the ramp and
#' smooth-ramp losses) `s`, as in Han, Tsang & Chen (2016, section 5.1:
#' lambda in \{1e-6, ..., 10\}, s among the three published tuples). The
#' folds run in parallel through [future.apply::future_lapply()] when the
#' `future.apply` package is installed (set a plan, e.g.
#' `future::plan("multisession")`); otherwise sequentially. The best setting
#' (lowest mean held-out error; ties go to the larger lambda) is refitted on
#' all data.
#'
#' @inheritParams sgd_robust
#' @param x A numeric matrix, data frame of numeric columns or sparse
#'   matrix (with `y`), or a formula `label ~ predictors` (with `data`).
#' @param lambda Candidate penalties.
#' @param s Candidate ramp parameters (ignored for other losses).
#' @param folds Number of folds.
#' @param ... Further arguments of [sgd_robust()] (e.g. `method`, `epochs`,
#'   `eta`). The formula method passes them, with the grid, to the default
#'   method.
#' @return An object of class `cv_sgd_robust` (and `noisylabels_cv`, see
#'   [cv-methods]): `results` (data frame of
#'   lambda, s, mean_error, sd_error, failed fits), `best` (list of lambda and
#'   s), `fit` (the refitted `sgd_robust` model), `folds` (fold of each row).
#'   `predict()`, `coef()`, `fitted()`, `noise_scores()` and `label_issues()`
#'   use `fit`; `plot()` and `autoplot()` show the cross-validation curve (or,
#'   with `which = "fit"`, the refitted model); `tidy()` returns
#'   `results` with a `chosen` column, `glance()` one row (`n`, `folds`,
#'   `loss`, `lambda`, `s`, `mean_error`, `failed`).
#' @examples
#' set.seed(7)
#' x <- matrix(rnorm(600), 300, 2)
#' y <- ifelse(x[, 1] + 0.5 * x[, 2] > 0, 1, -1)
#' cv <- cv_sgd_robust(x, flip_labels(y, 0.2)$y, loss = "smooth_ramp",
#'                     lambda = c(1e-4, 1e-2), folds = 3, epochs = 5)
#' cv
#' cv <- cv_sgd_robust(label ~ ., data = data.frame(x, label = factor(y)),
#'                     loss = "hinge", lambda = c(1e-4, 1e-2), folds = 3, epochs = 5)
#' head(predict(cv, data.frame(x)))
#' plot(cv)
#' @export
cv_sgd_robust <- function(x, ...) UseMethod("cv_sgd_robust")

#' @rdname cv_sgd_robust
#' @export
cv_sgd_robust.formula <- function(x, data, ...) {
  design <- formula_design(x, data, stats::na.fail)
  cv <- cv_sgd_robust.default(design$x, design$y, ...)
  cv$fit <- attach_formula(cv$fit, design, cv$fit$call)
  cv$call <- match.call()
  cv
}

#' @rdname cv_sgd_robust
#' @export
cv_sgd_robust.default <- function(x, y, loss = c("smooth_ramp", "gompertz", "hinge", "logistic", "ramp"),
                          lambda = 10^(-6:1), s = c(-0.7, -1, -2), folds = 10L, seed = NULL,
                          ...) {
  call <- match.call()
  loss <- match_arg(loss)
  if (!is.numeric(lambda) || !length(lambda) || anyNA(lambda) || any(lambda < 0) ||
      any(!is.finite(lambda))) {
    abort_input("{.arg lambda} must be a vector of finite numbers >= 0.")
  }
  folds <- check_count(folds, "folds", lower = 2)
  if (!loss %in% c("ramp", "smooth_ramp")) s <- -1
  n <- if (inherits(x, "sparseMatrix") || is.matrix(x) || is.data.frame(x)) nrow(x) else length(x)
  if (length(y) != n) abort_input("{.arg y} has length {length(y)} but {.arg x} has {n} row{?s}.")
  if (folds > n) abort_input("{.arg folds} = {folds} exceeds the number of rows ({n}).")
  grid <- expand.grid(lambda = lambda, s = s)
  fold_id <- sample(rep_len(seq_len(folds), n))
  seeds <- vapply(seq_len(folds), function(k) draw_seed(), integer(1))
  if (is.null(seed)) seed <- draw_seed()
  one_fold <- function(k) {
    test <- fold_id == k
    xtr <- x[!test, , drop = FALSE]
    xte <- x[test, , drop = FALSE]
    vapply(seq_len(nrow(grid)), function(g) {
      fit <- tryCatch(
        withCallingHandlers(
          sgd_robust.default(xtr, y[!test], loss = loss, lambda = grid$lambda[g], s = grid$s[g],
                             seed = seeds[k], ...),
          noisylabels_warning_convergence = function(w) invokeRestart("muffleWarning")),
        noisylabels_error_numeric = function(e) NULL)
      if (is.null(fit)) return(NA_real_)
      pred <- predict(fit, xte)
      mean(as.character(pred) != as.character(y[test]))
    }, numeric(1))
  }
  errs <- lapply_folds(folds, one_fold)
  err <- do.call(cbind, errs)
  grid$mean_error <- rowMeans(err, na.rm = TRUE)
  grid$sd_error <- apply(err, 1, stats::sd, na.rm = TRUE)
  grid$failed <- rowSums(is.na(err))
  ok <- which(is.finite(grid$mean_error))
  if (!length(ok)) abort_numeric("Every cross-validation fit diverged; give a smaller {.arg eta}.")
  cand <- grid[ok, ]
  cand <- cand[order(cand$mean_error, -cand$lambda), ]
  best <- list(lambda = cand$lambda[1], s = cand$s[1])
  fit <- sgd_robust.default(x, y, loss = loss, lambda = best$lambda, s = best$s, seed = seed, ...)
  structure(list(results = grid, best = best, fit = fit, folds = fold_id, loss = loss, call = call),
            class = c("cv_sgd_robust", "noisylabels_cv"))
}

#' @export
print.cv_sgd_robust <- function(x, ...) {
  cli::cat_line(sprintf("%d-fold cross-validation of sgd_robust(loss = \"%s\")",
                        max(x$folds), x$loss))
  print(x$results, row.names = FALSE, digits = 4)
  cli::cat_line(sprintf("Best: lambda = %g%s", x$best$lambda,
                        if (x$loss %in% c("ramp", "smooth_ramp")) sprintf(", s = %g", x$best$s) else ""))
  invisible(x)
}

#' @export
coef.cv_sgd_robust <- function(object, ...) coef(object$fit)

#' @export
glance.cv_sgd_robust <- function(x, ...) {
  r <- x$results[cv_chosen(x), ]
  data.frame(n = length(x$folds), folds = max(x$folds), loss = x$loss, lambda = x$best$lambda,
             s = x$best$s, mean_error = r$mean_error, failed = sum(x$results$failed))
}


# Seed of the shuffle of chunk `chunk` in epoch `epoch` of a chunked fit.
# Chunk 1 of epoch 1 uses the fit's seed, so a fit on the first chunk alone
# starts exactly like the chunked fit.
sgd_chunk_seed <- function(seed, epoch, chunk) {
  as.integer((as.double(seed) + 7919 * (chunk - 1) + 104723 * (epoch - 1)) %% .Machine$integer.max)
}

# Training in chunks: every epoch visits the chunks in order and runs one
# epoch of the core over each (its rows shuffled within the chunk, i.e. a
# shuffle buffer of the chunk's size), continuing the model, the step counter
# and the step. `each_chunk(f)` calls f(train, index, rows) for every chunk,
# where `train` is the chunk in the core's layout with labels and weights
# set. Returns a list shaped like the core's result; `objective` and
# `train_error` per epoch are progressive (each chunk's value after its own
# pass, averaged over the rows).
sgd_fit_chunks <- function(each_chunk, opts, seed, epochs, n_models, d, valid = NULL,
                           valid_eval = NULL, progress = NULL) {
  state <- list(w_init = opts$w_init, b_init = opts$b_init, t = opts$t_init %||% 0,
                eta = opts$eta)
  objective <- train_error <- valid_error <- numeric(0)
  shrinks <- list()
  secs <- cpu <- esecs <- ecpu <- renorm <- 0
  objective_start <- NA_real_
  last <- NULL
  epoch_seconds <- numeric(0)
  for (e in seq_len(epochs)) {
    t_epoch <- proc.time()[["elapsed"]]
    acc_obj <- acc_err <- acc_n <- 0
    each_chunk(function(train, index, rows) {
      copts <- opts
      copts$epochs <- 1L
      copts$seed <- as.double(sgd_chunk_seed(seed, e, index))
      copts$t_init <- state$t
      copts$eta <- state$eta
      copts$w_init <- state$w_init
      copts$b_init <- state$b_init %||% numeric(0)
      res <- call_core(.sgd_fit(train, NULL, copts))
      if (is.na(objective_start)) objective_start <<- res$objective_start
      state$w_init <<- sgd_core_init(res, d, opts$bias, n_models)
      state$b_init <<- if (opts$bias == "separate") res$biases else numeric(0)
      state$t <<- res$t_final
      state$eta <<- res$eta_final
      if (nrow(as.data.frame(res$shrinks))) {
        sh <- as.data.frame(res$shrinks)
        sh$epoch <- e
        sh$chunk <- index
        shrinks[[length(shrinks) + 1L]] <<- sh
      }
      acc_obj <<- acc_obj + res$objective * train$n
      acc_err <<- acc_err + res$train_error * train$n
      acc_n <<- acc_n + train$n
      secs <<- secs + res$seconds_train
      cpu <<- cpu + res$cpu_seconds_train
      esecs <<- esecs + res$seconds_evaluate
      ecpu <<- ecpu + res$cpu_seconds_evaluate
      renorm <<- renorm + res$renormalisations
      last <<- res
      NULL
    })
    objective <- c(objective, acc_obj / acc_n)
    train_error <- c(train_error, acc_err / acc_n)
    if (!is.null(valid_eval)) valid_error <- c(valid_error, valid_eval(last))
    epoch_seconds <- c(epoch_seconds, proc.time()[["elapsed"]] - t_epoch)
    if (!is.null(progress)) progress(e, epochs)
  }
  shrinks <- if (length(shrinks)) do.call(rbind, shrinks) else as.data.frame(last$shrinks)
  list(weights = last$weights, biases = last$biases, bias = last$biases[1],
       objective = objective, train_error = train_error, valid_error = valid_error,
       objective_start = objective_start, epochs_run = epochs, shrinks = shrinks,
       eta_final = state$eta, t_final = state$t, renormalisations = renorm,
       seconds_train = secs, cpu_seconds_train = cpu, seconds_evaluate = esecs,
       cpu_seconds_evaluate = ecpu, epoch_seconds = epoch_seconds)
}

# Decision values (n x K) of the core-space model in `res` on data in the
# core's layout.
sgd_res_decision <- function(res, data, n_models) {
  .sgd_decision(data, as.double(res$weights), as.double(res$biases))
}

# Error of the model in `res` on labelled data in the core's layout.
sgd_res_error <- function(res, data, n_models) {
  f <- sgd_res_decision(res, data, n_models)
  if (n_models == 1L) return(mean(data$y * f[, 1] <= 0))
  mean(max.col(f, ties.method = "first") != data$label + 1L)
}

# Rows held out for early stopping: a uniform sample drawn from `seed`
# without touching the session's random numbers.
sgd_holdout_rows <- function(n, m, seed) sort(sgd_seeded_sample(n, m, seed))

# sample.int(n, m) drawn from `seed`, leaving the session's RNG state as it was.
sgd_seeded_sample <- function(n, m, seed) {
  if (exists(".Random.seed", envir = globalenv())) {
    old <- get(".Random.seed", envir = globalenv())
    on.exit(assign(".Random.seed", old, envir = globalenv()))
  } else {
    on.exit(rm(".Random.seed", envir = globalenv()))
  }
  set.seed(seed)
  sample.int(n, m)
}

# Iterative parameter mixing (McDonald, Hall and Mann 2010): every epoch,
# each of the k shards runs one epoch of the core from the current mixed
# model on its own rows (as a future, under the session's future::plan()),
# and the new model is the average of the k results weighted by shard size.
# `inputs[[s]]` is what sgd_shard_run() needs for shard s (its rows in the
# core's layout, or a description of its chunks of LIBSVM files); each
# future receives only its own shard. Trace values are progressive, as in
# sgd_fit_chunks().
sgd_fit_shards <- function(inputs, sizes, opts, seed, epochs, n_models, d, valid_eval = NULL,
                           progress = NULL) {
  k <- length(inputs)
  state <- list(w_init = opts$w_init, b_init = opts$b_init, t = opts$t_init %||% 0,
                eta = opts$eta)
  objective <- train_error <- valid_error <- epoch_seconds <- numeric(0)
  shrinks <- list()
  objective_start <- NA_real_
  wts <- sizes / sum(sizes)
  secs <- cpu <- 0
  # The function each future runs; its environment is the namespace, so no
  # local data travel with it.
  run <- function(input, seed, copts) {
    copts$seed <- seed
    sgd_shard_run(input, copts)
  }
  environment(run) <- asNamespace("noisylabels")
  for (e in seq_len(epochs)) {
    t0 <- proc.time()[["elapsed"]]
    copts <- opts
    copts$epochs <- 1L
    copts$t_init <- state$t
    copts$eta <- state$eta
    copts$w_init <- state$w_init
    copts$b_init <- state$b_init %||% numeric(0)
    seeds <- vapply(seq_len(k), function(s) as.double(sgd_chunk_seed(seed, e, s)), 0)
    results <- future.apply::future_mapply(run, inputs, seeds, MoreArgs = list(copts = copts),
                                           SIMPLIFY = FALSE, future.seed = NULL,
                                           future.packages = "noisylabels",
                                           future.chunk.size = 1)
    W <- Reduce(`+`, Map(function(r, w) w * sgd_core_init(r, d, opts$bias, n_models), results, wts))
    state$w_init <- W
    state$b_init <- if (opts$bias == "separate") {
      Reduce(`+`, Map(function(r, w) w * r$biases, results, wts))
    } else numeric(0)
    state$t <- sum(vapply(results, function(r) as.double(r$t_final), 0) * wts)
    state$eta <- min(vapply(results, function(r) r$eta_final, 0))
    if (is.na(objective_start)) {
      objective_start <- sum(vapply(results, function(r) r$objective_start, 0) * wts)
    }
    objective <- c(objective, sum(vapply(results, function(r) r$objective[length(r$objective)], 0) * wts))
    train_error <- c(train_error,
                     sum(vapply(results, function(r) r$train_error[length(r$train_error)], 0) * wts))
    for (s in seq_len(k)) {
      sh <- as.data.frame(results[[s]]$shrinks)
      if (nrow(sh)) { sh$epoch <- e; sh$shard <- s; shrinks[[length(shrinks) + 1L]] <- sh }
    }
    secs <- secs + sum(vapply(results, function(r) r$seconds_train, 0))
    cpu <- cpu + sum(vapply(results, function(r) r$cpu_seconds_train, 0))
    mixed <- sgd_mixed_result(state, d, opts$bias, n_models)
    if (!is.null(valid_eval)) valid_error <- c(valid_error, valid_eval(mixed))
    epoch_seconds <- c(epoch_seconds, proc.time()[["elapsed"]] - t0)
    if (!is.null(progress)) progress(e, epochs)
  }
  mixed <- sgd_mixed_result(state, d, opts$bias, n_models)
  c(mixed, list(objective = objective, train_error = train_error, valid_error = valid_error,
                objective_start = objective_start, epochs_run = epochs,
                shrinks = if (length(shrinks)) do.call(rbind, shrinks) else as.data.frame(results[[1]]$shrinks),
                eta_final = state$eta, t_final = state$t, renormalisations = NA_real_,
                seconds_train = secs, cpu_seconds_train = cpu,
                seconds_evaluate = NA_real_, cpu_seconds_evaluate = NA_real_,
                epoch_seconds = epoch_seconds))
}

# A core-like result (weights d x K, biases) from core-layout starting values.
sgd_mixed_result <- function(state, d, bias, n_models) {
  dim_k <- d + (bias == "feature")
  W <- matrix(state$w_init, dim_k, n_models)
  biases <- if (bias == "feature") W[d + 1L, ] else if (bias == "separate") state$b_init else rep(0, n_models)
  list(weights = as.double(W[seq_len(d), , drop = FALSE]), biases = biases, bias = biases[1])
}

# One shard's epoch (runs on a worker): rows in memory in the core's layout,
# or the chunks of LIBSVM files that belong to the shard (chunk c goes to
# shard (c - 1) %% k + 1; the worker reads the files itself).
sgd_shard_run <- function(input, copts) {
  if (identical(input$kind, "memory")) return(call_core(.sgd_fit(input$data, NULL, copts)))
  # The shard's rows: whole files when there are at least k files (file f
  # goes to shard (f - 1) %% k + 1, so a worker reads only its own files),
  # otherwise every k-th chunk. Row numbers (for weights) come from the
  # chunk sizes of the first pass.
  mine <- if (length(input$files) >= input$k) {
    (seq_along(input$files) - 1L) %% input$k + 1L == input$shard
  } else rep(TRUE, length(input$files))
  by_chunk <- length(input$files) < input$k
  each_chunk <- function(f) {
    libsvm_each_chunk(input$files[mine], input$chunk_rows, function(chunk, index) {
      rows <- if (is.null(input$weight)) NULL else input$row_start[[input$shard]][index] + seq_len(chunk$n)
      ch <- libsvm_core_data(chunk, input$d)
      ch <- sgd_set_labels(ch, sgd_labels(chunk$y, chunk$n, template = input$lab))
      if (!is.null(input$weight)) ch$weight <- input$weight[rows]
      f(ch, index, rows)
    }, keep = if (by_chunk) function(index) (index - 1L) %% input$k + 1L == input$shard else NULL)
    invisible(NULL)
  }
  n_models <- if (input$lab$multi) input$lab$K else 1L
  sgd_fit_chunks(each_chunk, copts, copts$seed, 1L, n_models, input$d)
}

# Per-epoch progress: a cli progress bar over the epochs, shown when
# `show` (verbose or interactive) and, by cli's rule
# (option cli.progress_show_after, 2 s), only once the fit has run longer
# than two seconds. Returns NULL (no bar) or a function(epoch, total).
sgd_progress <- function(epochs, show) {
  if (!show) return(NULL)
  env <- environment()
  id <- NULL
  function(epoch, total) {
    if (is.null(id)) {
      id <<- cli::cli_progress_bar("SGD epochs", total = epochs, clear = TRUE, .envir = env)
    }
    # force: one update per epoch is rare enough not to need throttling
    cli::cli_progress_update(id = id, set = epoch, force = TRUE, .envir = env)
    if (epoch >= epochs) cli::cli_progress_done(id = id, .envir = env)
    invisible(NULL)
  }
}

# The number a shard's reader gives a chunk (it reads its own files one after
# the other and numbers their chunks consecutively) from the chunk's file
# and its number within that file.
sgd_reader_index <- function(chunk_file, chunk_index, files, shards, s) {
  own_files <- which((seq_along(files) - 1L) %% shards + 1L == s)
  # chunks per own file = the largest index seen in it (numbered blocks)
  per_file <- vapply(own_files, function(f) max(c(0L, chunk_index[chunk_file == f])), 0L)
  offset <- stats::setNames(cumsum(c(0L, per_file))[seq_along(own_files)], own_files)
  offset[as.character(chunk_file)] + chunk_index
}
