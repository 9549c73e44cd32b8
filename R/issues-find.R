#' Find wrong labels with any model
#'
#' One entry point for "which labels are wrong?". It takes either data (a
#' formula and a data frame, or `x` and `y`) and fits out-of-fold models
#' itself, or the out-of-fold output of any model you trained:
#' `find_label_issues(labels = y, pred_probs = P)` for classes and
#' `find_label_issues(labels = y, predictions = yhat, sd = s)` for numbers.
#' A fitted model of this package (class `noisylabels_fit`: `gpr_loo()`,
#' `gpr_pursuit()`, `gpr_baseline()`, `gpc_ep()`, `sgd_robust()`,
#' `label_dist_vb()`) can be passed as `x` or as `method`, and its own noise
#' scores are put into the same result; `label_dist_baseline()`, a baseline
#' for prediction with no model of wrong labels, is refused (class
#' `noisylabels_error_no_method`). Group label distributions (`groups`,
#' `label_dist`) go to [label_dist_vb()].
#'
#' @section Fitted models:
#' Fits whose model gives each label a probability of being wrong follow the
#' same contract as out-of-fold predictions: `p_wrong`, `q_value`, flags at
#' `q_value <= fdr`, the count with its interval, and the suggested fix.
#' `gpr_loo()` and `gpr_pursuit()`: the leave-one-out prediction of each
#' label is the suggested value; the leave-one-out residuals, standardised by
#' the sd a clean label's residual would have, go through the two-group model
#' of "Numeric labels" (for `gpr_loo()` the statistic of its "Noise scores
#' and flags"), or with `tolerance` give `P(|y - T| > tolerance)` from the
#' leave-one-out distribution of the true value. `gpc_ep()`: `p_wrong` is
#' the EP posterior probability that the label was flipped, the suggested
#' class the more probable one (the other one when flagged). One-vs-rest
#' fits use one minus the probability of the given class. `gpr_baseline()`:
#' the held-out prediction of each label by its final GP (leave-one-out for
#' the labels it was fitted on, the plain prediction for trimmed ones)
#' through the same two-group model (see [gpr_baseline()], "Label issues").
#' `sgd_robust()` and `label_dist_vb()` keep their own flag rule. Which of
#' these a fit does is recorded in it (`task`, `has_p_wrong`).
#'
#' @section Classification: confident learning:
#' From out-of-fold probabilities `P` (rows sum to 1, one column per class),
#' confident learning (Northcutt, Jiang and Chuang 2021) estimates per-class
#' thresholds, the confident joint, its calibration to the class counts and
#' the noise matrix P(given | true) (see [confident_joint()]). Every rule
#' below was chosen and measured on real models' out-of-fold probabilities
#' with an answer key (deep nets on 2,831 human-reviewed roman numerals and
#' on 50,000 CIFAR-10 images with 20% known flips, five models each, and the
#' reviewed test sets of four public benchmarks), against cleanlab 2.9 on
#' the same files: `inst/experiments/find_label_issues/real-classes/`.
#'
#' Ranking (`rank_by`): `"posterior"` (default) is the posterior that the
#' given label is right under a noise matrix `T`,
#' `T[s, s] P[i, s] / sum_j T[s, j] P[i, j]`. `T` is confident learning's
#' (off-diagonal cells shrunk toward their column's mean) where it predicts
#' held-out given labels at least 0.10 nats per label better than its
#' uniform version (two-fold cross-fitting on at most 5,000 rows), that
#' uniform version (same mean diagonal, equal off-diagonal cells: the
#' self-confidence order) below 0.05, and a mix in between. Flips between
#' particular classes that the model cannot have learnt give such a gain
#' (0.11-0.13 on the CIFAR-10 files, AUROC 0.9978-0.9999 against
#' self-confidence's 0.9964-0.9996); human noise does not (0.01-0.03 on the
#' roman numerals, where confident learning's `T` would lower the AUROC from
#' 0.79-0.84 to 0.74-0.80). `"self_confidence"` ranks by `P[i, given]`,
#' `"normalized_margin"` by `(P[i, given] - max_{j != given} P[i, j] + 1) /
#' 2`. With `adjust = TRUE` each class's threshold is first subtracted from
#' its column, rows shifted to be non-negative and renormalised (cleanlab's
#' adjustment for class imbalance).
#'
#' How many are wrong (`wrong_count`): two counts bracket the truth. The
#' labels the model confidently puts in another class (the off-diagonal of
#' the confident joint, cleanlab's count) count a memorised error as clean;
#' the labels that are not the model's most probable class count its hard,
#' clean rows as wrong. The bracket held the true count on all 20 real sets
#' measured, while either end alone was off by up to a factor 3.7 (roman
#' numerals: 101-265 and 504-824 for 372 wrong). The estimate is the
#' bracket's midpoint (on the ten files with a full answer key 0.81-1.45 times
#' the truth), the interval the bracket widened by the Poisson sampling noise
#' of each end (`confident_count`, `disagreement_count` in the result); an
#' audit of a sample by a person narrows it (see [estimate_errors()]).
#' The bracket rests on the true class being nearly determined by the
#' inputs, as for the images and texts of those files. Where classes overlap
#' (tabular data whose best model is often wrong), the model's own confident
#' errors enter both counts and the estimate runs high: 1.4-1.8 x the truth
#' on simulated calibrated probabilities with a third of the rows below 0.8
#' for every class, and 7-22% of 3,000 clean labels counted (and, with
#' `flag_by = "fdr"`, up to 2.7% flagged) for five overlapping Gaussian classes;
#' 517 for 250 flips under a forest on 5,000 rows. The ranking is not
#' affected; audit a sample to know the number. `estimated_issues` is the estimate rounded; confident
#' learning's calibrated count is `confident_learning$n_issues`.
#'
#' The probability that a label is wrong (`p_wrong`): the ranking's
#' posterior moved by one shift on the logit scale so that `sum(p_wrong)` is
#' the estimate, so it ranks as the ranking does and its sum is the count;
#' a label of a class with `n_s` labels is at most `n_s / (n_s + 1)` likely
#' wrong. `score = p_wrong`, `label_quality = prob_given = 1 - p_wrong`.
#' `suggested_label` is the model's most probable class other than the given
#' one where the label is flagged or that class gets more of the posterior
#' than the given one (`prob_suggested`: `p_wrong` shared among the other
#' classes as `P` shares them); `model_prob_given` is `P[i, given]` itself.
#' With fewer than 10 labels in a class a classed warning
#' (`noisylabels_warning_small_sample`) says the flags cannot be trusted.
#'
#' Flags (`flag_by`); F1 on the roman numerals / CIFAR-10 files, cleanlab's
#' default 0.28-0.32 / 0.94-0.99:
#' * `"posterior"` (default) flags the labels more likely wrong than right,
#'   `p_wrong > 0.5`: F1 0.43-0.46 / 0.96-0.995, ahead of cleanlab's on each
#'   of the ten files; on the labelerrors test sets as many or more verified
#'   errors as cleanlab's flags except on 20 newsgroups (42 against 55).
#' * `"fdr"` flags `q_value <= fdr`. It flags nothing where the two counts of
#'   the bracket differ by more than a factor 2 (the probabilities then do
#'   not say how calibrated `p_wrong` is; at fdr = 0.1 the roman numerals'
#'   flags had a false discovery proportion up to 0.34): the result says so
#'   and the ranking is the list to review. Elsewhere (CIFAR-10: F1
#'   0.955-0.992) the realised proportion was at most 0.04.
#' * `"expected_f1"` flags the labels of highest `p_wrong`, as many as
#'   maximise the expected F1 `2 sum(p_wrong[flagged]) / (n_flagged +
#'   sum(p_wrong))`: F1 0.44-0.53 / 0.96-0.995, more flags.
#' * `"rank"` flags the `estimated_issues` (or `n_issues`) labels of highest
#'   `p_wrong`: F1 0.45-0.53 / 0.93-0.99.
#' * `"prune_by_noise_rate"` (cleanlab's default rule) flags, for every
#'   off-diagonal cell (given i, true j) of the calibrated joint, that many
#'   labels of class i with the largest margin `P[, j] - P[, i]`: 0.28-0.32 /
#'   0.94-0.99; `"consensus"` the ones of those among the `estimated_issues`
#'   of highest `p_wrong`; `"prune_by_class"` the `sum_{j != i} C[i, j]`
#'   labels of class i with the lowest self-confidence, `"both"` the
#'   intersection of the two pruning rules; `"confident_joint"` the labels
#'   counted off the diagonal of the confident joint (0.18-0.23 / 0.91-0.98).
#'
#' No rule that reads `p_wrong` flags anything where fewer than three labels
#' are confidently in another class (the confident count's own 90% interval
#' then reaches 0) or a class has fewer than 10 labels: nothing then says
#' that any label is wrong (unmodified iris with a forest: 0-2 such labels
#' and no flags on each of eight seeds; three flipped iris labels under LDA:
#' those three flagged). With `pred_probs` a file or a function (below) the pruning rules
#' and `"consensus"` are not available.
#'
#' Probabilities too large for memory: `pred_probs` may be a file, headerless
#' comma-separated text (`.csv`, `.txt`) or raw little-endian doubles in
#' row-major order (any other name; numpy's `p.astype("<f8").tofile(path)`),
#' or a function `f(i)` returning the i-th chunk of rows as a matrix (`NULL`
#' after the last; it is called once per pass and must return the same
#' chunks each time). Three passes (thresholds; confident joint; per-label
#' classes) read `getOption("noisylabels.chunk_rows", 1e6)` rows at a time, and
#' the result equals the in-memory one exactly (`pred_probs` is then not
#' kept in the result). The chunks of a file are future jobs that read their
#' own rows: under `future::plan(multisession)` or a cluster plan
#' (\pkg{future.batchtools}; the file must be readable at the same path on
#' the workers) they run in parallel, with the same result. A chunk function
#' is called in this session, one chunk after the other.
#'
#' @section Regression:
#' With numeric labels, each label's residual `y - prediction` from an
#' out-of-fold model is standardised (by the given `sd`, the GP's
#' leave-one-out sd, or a robust global scale) into `z`, and `score = |z|`.
#' A two-group model is fitted to `z` by EM: clean labels follow a
#' generalised normal `GN(0, a, b)` whose shape `b` is estimated (2 is
#' Gaussian, larger lighter-tailed, smaller heavier-tailed, as when the model
#' misfits), wrong labels a symmetric pair `N(+-mu, tau^2)` (a shifted label;
#' `mu = 0` is a wide zero-mean group), with a Beta(1, 19) prior on the share
#' of wrong labels. The model is fitted twice, with that clean shape and with
#' a Student t of estimated degrees of freedom (residual tails from model
#' misfit look like errors to one shape more than to the other): `p_wrong`
#' is the smaller of the two posteriors of the wrong group (nondecreasing in
#' `|z|`), so a label is flagged only where both call it wrong,
#' `label_quality = 1 - p_wrong`, and `q_value` the expected share of clean
#' labels among all labels at least as suspect. Labels with `q_value <= fdr`
#' are flagged. Where the shape that flags more flags at least twice as many
#' (plus 5) as both agree on, the data cannot support flags at that rate:
#' `flags_supported` is `FALSE` (`flags_by_model` has each shape's count) and
#' print says the ranking is the list to review. `count` gives the mean of
#' the two fits' counts (`wrong_count$estimators`), with a 90% interval from
#' the lowest to the highest end of the two fits' intervals (each with the
#' uncertainty of its fitted share). On the real tables
#' (`inst/experiments/find_label_issues/real-numbers.R`): no false flags on
#' air quality, telomere and BostonHousing2 (air quality's were 73 of 94
#' before), intervals covering the truth. With
#' `n_issues`, the `n_issues` highest scores are flagged instead. The
#' suggested value of every label is the model's prediction, with a 90%
#' interval from the fitted clean residual distribution
#' (`suggested_lower`, `suggested_upper`). How well the flags and count are
#' calibrated on the real and simulated tables is in
#' `inst/experiments/find_label_issues/calibration/README.md`: a weak ranking
#' gives few flags and a wide interval; errors defined as a deviation beyond a
#' tolerance (the telomere table) sit in a smooth tail that the model only
#' partly separates.
#'
#' With `tolerance`, a label is wrong when it is off from the true value by
#' more than `tolerance` (label units), and `p_wrong = P(|y - T| >
#' tolerance)` with `T ~ N(m, v)` the model's predictive distribution of the
#' true value: for the GP path `m` is the leave-one-out mean and `v` the
#' leave-one-out variance of the latent function (the predictive variance
#' minus the fitted label-noise variance, floored at 1e-4 of the predictive
#' variance). Paths that give only one residual scale `s` (the forest, given
#' `predictions` with or without `sd`) cannot split it into model and label
#' noise; they use `v = s^2`, which counts the label noise as uncertainty
#' about the truth: `p_wrong` is pulled toward `P(|N(0, s^2)| > tolerance)`,
#' so flags are fewer than with the split and the count is biased toward that
#' share. Flags, q-values and the count follow as above (no fitted share, so
#' the count's interval is the Poisson-binomial one); the suggested value's
#' 90% interval is `m +- 1.645 sqrt(v)`. On the telomere table, whose errors
#' are exactly deviations beyond 0.1, `tolerance = 0.1` reaches the recall
#' and precision the two-group model cannot (see the calibration README).
#'
#' The out-of-fold model (`method`): `"forest"` is a random forest (package
#' ranger, `min.node.size = ceiling(sqrt(n))`, `num.trees = 500`, 100 above
#' 50,000 rows and 50 above 500,000, where they detect as well with far fewer
#' trees: 10^6 rows x 10 inputs in about 15 minutes and 1 GB on 2 threads;
#' ranger's own output is off, progress is one step per fold) in `folds`-fold
#' cross-validation; `"gp"` is a Gaussian process whose hyperparameters are
#' fitted on a subsample of at most `gp_subsample` rows ([gpr_baseline()],
#' ARD RBF kernel) and whose leave-one-out means and sds at full `n` come
#' from the covariance operator: exact (one dense factorisation) up to
#' `getOption("noisylabels.gp_loo_dense_max", 15000)` rows while its three
#' n x n matrices fit `getOption("noisylabels.max_gb", 8)` (10^4 rows of the
#' telomere table: 34 s on 2 cores, AUPRC 0.997), and a Vecchia
#' approximation with `getOption("noisylabels.gp_loo_neighbors", 150)`
#' neighbours above (exact leave-one-out for the approximate model; on the
#' same table AUPRC 0.975 in 2.2 s, against 0.934 with the earlier 40). With
#' `options(noisylabels.vecchia_pieces = P)` the Vecchia pass runs as `P`
#' future jobs on blocks of rows (each sent only its rows and their
#' neighbours, one thread each), spread by `future::plan()`, with the same
#' result under every plan (equal to the in-process pass up to rounding);
#' by default (`NULL`) it runs in this session on `threads` threads;
#' `"auto"` uses the GP when the inputs have at most `gp_max_dim` columns and
#' its leave-one-out predictions fit better than the forest's (smaller median
#' absolute residual), and the forest otherwise. Above
#' `getOption("noisylabels.choice_rows", 5000)` rows both models are measured
#' on a random subsample of that many rows and only the chosen one runs on
#' all rows (the GP with the hyperparameters fitted for the choice);
#' `model_choice` has the criterion and the rows it was measured on, and
#' `method` says which model was chosen and why. Why the dimension rule: on
#' the air-quality table (16 input columns, errors clustered in feature space)
#' the GP predicts better but absorbs the clustered errors and detects them
#' worse than the forest (AUROC 0.53 against 0.59), so a fit criterion alone
#' picks the wrong model; on the telomere table (2 columns) the GP is far
#' better at both (see `inst/experiments/find_label_issues/README.md`).
#' `"gpr_loo"` and `"gpr_pursuit"` fit those models to all rows and use their
#' own noise scores.
#'
#' Cross-validation folds run through [future.apply::future_lapply()] when
#' future.apply is installed (in parallel under any `future::plan()`), with
#' `future.seed = TRUE`, so `set.seed()` reproduces a result whatever the
#' plan. A progress bar (progressr; the user's `progressr::handlers()` or a
#' cli bar) is shown in interactive sessions or with `verbose = TRUE`, also
#' for folds on parallel workers.
#'
#' @param x A formula, a numeric matrix or data frame of inputs, a fitted model
#'   of this package, or missing (model-agnostic use with `labels`).
#' @param data Data frame for the formula interface.
#' @param y Labels for the matrix interface: a factor, character or logical
#'   vector (classes) or numeric vector (regression).
#' @param labels The given labels, for the model-agnostic entry points.
#' @param pred_probs Out-of-fold class probabilities, n x K, rows summing to 1,
#'   columns named by class (or in the order of the factor levels / 1..K); or
#'   a file or a function giving them in chunks (see "Classification").
#' @param predictions Out-of-fold predictions of numeric labels.
#' @param sd Optional standard deviations of `predictions` (predictive sd of
#'   each label, including its noise), one per label or one number.
#' @param groups,label_dist Group membership and observed noisy label
#'   distributions per group, as for [label_dist_vb()] (with `x` the
#'   instances): the group-label-distribution case, fitted by
#'   [label_dist_vb()]; its instance-level scores (1 - the largest posterior
#'   class probability) go into the result.
#' @param method `"auto"`, `"forest"`, `"gp"` (regression), `"gpc_ep"`
#'   (classification, package GP classifier as the out-of-fold model, one-vs-rest
#'   for more than two classes), `"sgd_robust"` (binary classification, the
#'   package's robust linear classifier with Platt-scaled margins),
#'   `"gpr_loo"`, `"gpr_pursuit"` (fit the model and use its noise scores), or
#'   a fitted model of this package.
#' @param task `"auto"` (numeric labels with more than `max_classes` distinct
#'   values are regression, anything else classification), `"classification"`
#'   or `"regression"`.
#' @param folds Number of cross-validation folds for out-of-fold models.
#' @param rank_by,adjust,flag_by Classification ranking and flags (see
#'   "Classification").
#' @param n_issues Number of labels to flag instead of the estimate (`NULL`).
#' @param fdr Target false discovery rate (default 0.1), in (0, 1]: the
#'   labels with `q_value <= fdr` are flagged (numeric labels, and classes
#'   with `flag_by = "fdr"`).
#' @param tolerance Numeric labels only: a label is wrong when it is off from
#'   the true value by more than this (label units; one number or one per
#'   label). `NULL` (default) uses the two-group model (see "Regression").
#' @param gp_subsample,gp_max_dim Regression GP settings (see "Regression").
#' @param max_classes Numeric labels with at most this many distinct values
#'   are treated as classes by `task = "auto"`.
#' @param threads Cores each model fit may use (default
#'   `getOption("noisylabels.threads", 1)`): ranger's threads, and the
#'   `threads` of the GP and [gpc_ep()] fits (see "Threads" in
#'   [noisylabels-package]). Folds are the unit of parallel work across
#'   processes, spread by `future::plan()`; raise `threads` under a sequential
#'   plan on an otherwise idle machine. Results do not depend on it beyond
#'   the order of floating-point additions.
#' @param verbose Show a progress bar over the folds: `TRUE`, `FALSE`, or
#'   `NULL` (default: the option `noisylabels.progress` if set, else only in
#'   interactive sessions).
#' @param na.action How the formula interface treats missing values.
#' @param ... Passed from methods to the default method. Any method also
#'   takes `audit`: an [audit_sample()] of the same result with the
#'   reviewer's verdicts; the labels are then flagged to a precision of `1 -
#'   fdr` under `p_wrong` recalibrated on it, and the count is the audited
#'   one (see [flag_audited()]).
#' @return An object of class `c("find_label_issues", "noisylabels_result")`
#'   (a result, not a fit: it has no `noisylabels_fit` class and is refused
#'   as `x` or `method`): `label_issues` (data frame,
#'   one row per label, flagged rows first, each part by decreasing score:
#'   `row`, `score`, `flagged`, `given_label`, `suggested_label` (classes),
#'   `p_wrong`, `q_value`, then for classes `label_quality`, `prob_given`,
#'   `prob_suggested`, `model_prob_given`, for regression `label_quality`,
#'   `prediction`, `residual`, `sd`, `z`, `suggested_value`,
#'   `suggested_lower`, `suggested_upper`),
#'   `estimated_issues`, `wrong_count` (the estimated number of wrong labels:
#'   `estimate`, `lower`, `upper`, `rate`, `rate_lower`, `rate_upper`,
#'   `level`; for classes also `confident_count` and `disagreement_count`),
#'   `fdr`, `flags_supported` and `flags_by_model` (numbers: whether the two
#'   clean shapes agree enough to flag, and each one's flags), `fdr_supported` and `evidence` (classes: whether the q-value and
#'   the other p_wrong flags could be given), `noise_model` (classes: the
#'   ranking's noise matrix `noise`, the held-out `gain` and the `weight` of
#'   the uniform matrix), `task`, `method` (what produced the predictions),
#'   `rank_by`, `flag_by`, `tolerance` and `latent_sd` (with a tolerance), `pred_probs` or `predictions`/`sd`,
#'   `confident_learning` (the [confident_joint()] list) or `mixture` (the
#'   fitted two-group model: share `weight` and its `weight_se`, `sd_clean`,
#'   `shape`, `shift`, `sd_wide`), `model_choice` (regression `"auto"`: the criteria
#'   that chose the model), `n`, `time`.
#'   Use [label_issues()], [noise_scores()], `summary()`, `plot()`,
#'   `autoplot()` and [clean_data()] on it.
#' @references Northcutt, C., Jiang, L. and Chuang, I. (2021). Confident
#'   learning: estimating uncertainty in dataset labels. JAIR 70, 1373-1411.
#'
#'   Zhou, W., Mueller, J., Kumar, S., Wang, H. and Lei, J. (2023). Detecting
#'   errors in numerical data via any regression model. arXiv:2305.16583.
#' @seealso [confident_joint()], [clean_data()], [detection_metrics()].
#' @examples
#' # Classification from any model's out-of-fold probabilities
#' set.seed(1)
#' p <- matrix(runif(300), 100, 3); p <- p / rowSums(p)
#' y <- max.col(p); y[1:10] <- (y[1:10] %% 3) + 1
#' res <- find_label_issues(labels = y, pred_probs = p)
#' res
#' head(label_issues(res))
#'
#' # Regression from out-of-fold predictions
#' yhat <- sin(1:200 / 10)
#' y <- yhat + rnorm(200, sd = 0.1); y[c(5, 50)] <- y[c(5, 50)] + 2
#' find_label_issues(labels = y, predictions = yhat)
#' @export
find_label_issues <- function(x, ...) {
  if ("audit" %in% ...names()) return(find_label_issues_audited(x, ...))
  if (missing(x)) return(find_label_issues.default(x = NULL, ...))
  UseMethod("find_label_issues")
}

# find_label_issues(..., audit = ): the result, then flag_audited() at a
# precision of 1 - fdr.
find_label_issues_audited <- function(x, ..., audit, fdr = 0.1) {
  res <- if (missing(x)) find_label_issues(..., fdr = fdr) else find_label_issues(x, ..., fdr = fdr)
  if (is.null(audit)) return(res)
  flag_audited(res, audit, precision = 1 - fdr)
}

# A result given again: say what to do with it instead of treating it as data.
#' @export
find_label_issues.noisylabels_result <- function(x, ...) {
  abort_input(c("{.arg x} is already a result of {.fn find_label_issues}.",
                "i" = "Use {.code label_issues(x)} for its table, or {.fn flag_audited} to flag it with an audit."),
              class = "noisylabels_error_no_method")
}

#' @rdname find_label_issues
#' @export
find_label_issues.formula <- function(x, data, ..., na.action = stats::na.omit) {
  if (missing(data)) abort_input("The formula interface needs {.arg data}, a data frame.")
  design <- formula_design(x, data, na.action)
  n_drop <- length(design$na.action)
  if (n_drop > 0L) {
    cli::cli_inform(c("i" = "Dropped {n_drop} row{?s} with a missing label or input ({.arg na.action}): row{?s} {utils::head(as.integer(design$na.action), 10)}{if (n_drop > 10) ', ...' else ''} of {.arg data}.",
                      " " = "The result's {.field row} numbers refer to the rows of {.arg data}."),
                    class = "noisylabels_message_dropped_rows")
  }
  xm <- design$x
  y <- design$y
  res <- find_label_issues.default(xm, y, ...)
  # Rows dropped by na.action: report issues by the row numbers of `data`.
  kept <- seq_len(nrow(design$frame) + length(design$na.action))
  if (!is.null(design$na.action)) kept <- kept[-design$na.action]
  res$label_issues$row <- kept[res$label_issues$row]
  res$data_rows <- kept
  res$n_data <- length(kept) + length(design$na.action)
  res$response <- all.vars(x)[1]
  res$call <- match.call()
  res
}

#' @rdname find_label_issues
#' @export
find_label_issues.default <- function(x = NULL, y = NULL, labels = NULL, pred_probs = NULL,
                                      predictions = NULL, sd = NULL, groups = NULL,
                                      label_dist = NULL, method = "auto",
                                      task = c("auto", "classification", "regression"),
                                      folds = 5, rank_by = c("posterior", "self_confidence", "normalized_margin"),
                                      adjust = FALSE,
                                      flag_by = c("posterior", "fdr", "consensus", "expected_f1", "rank",
                                                  "prune_by_noise_rate", "prune_by_class", "both",
                                                  "confident_joint"),
                                      fdr = 0.1, n_issues = NULL, tolerance = NULL, gp_subsample = 2000, gp_max_dim = 10,
                                      max_classes = 10, threads = getOption("noisylabels.threads", 1L), verbose = NULL, ...) {
  call <- match.call()
  check_dots_empty("find_label_issues", ...)
  task <- match_arg(task)
  rank_by <- match_arg(rank_by)
  flag_by <- match_arg(flag_by)
  check_flag(adjust, "adjust")
  verbose <- progress_enabled(verbose)
  threads <- check_threads(threads)
  if (!is.null(n_issues)) n_issues <- check_count(n_issues, "n_issues", lower = 0)
  check_fdr(fdr)
  check_tolerance(tolerance)
  start <- proc.time()[["elapsed"]]
  no_tolerance <- function(what) {
    if (!is.null(tolerance)) {
      abort_input(c("{.arg tolerance} applies to numeric labels with out-of-fold predictions; {what} has none.",
                    "i" = "Leave {.arg tolerance} at {.code NULL}."),
                  class = "noisylabels_error_tolerance", call = call)
    }
  }
  if (inherits(method, "noisylabels_fit")) {
    return(issues_from_given_fit(method, n_issues, fdr, tolerance, arg = "method", call = call,
                                 frame = call))
  }
  if (!is.null(label_dist) || !is.null(groups)) {
    # Group label distributions: the only model for them is label_dist_vb().
    if (is.null(label_dist) || is.null(groups) || is.null(x)) {
      abort_input(c("Group label distributions need {.arg x} (instances), {.arg groups} and {.arg label_dist} together.",
                    "i" = "See {.fn label_dist_vb} for their formats."))
    }
    if (!identical(method, "auto") && !identical(method, "label_dist_vb")) {
      abort_input("With {.arg label_dist} the method is {.fn label_dist_vb}; leave {.arg method} at {.val auto}.")
    }
    fit <- label_dist_vb(x, groups, label_dist)
    res <- issues_from_fit(fit, n_issues = n_issues, call = call)
    res$time <- proc.time()[["elapsed"]] - start
    return(res)
  }
  if (!is.null(pred_probs) || !is.null(predictions)) {
    if (!is.null(pred_probs) && !is.null(predictions)) {
      abort_input(c("Give {.arg pred_probs} (classes) or {.arg predictions} (numbers), not both."))
    }
    if (!is.null(x) || !is.null(y)) {
      abort_input(c("With {.arg pred_probs} or {.arg predictions}, pass the labels as {.arg labels} and no {.arg x} or {.arg y}.",
                    "i" = "The model-agnostic entry points need only the labels and the model's out-of-fold output."))
    }
    if (is.null(labels)) abort_input("{.arg labels} is missing: the given labels, one per row of the predictions.")
    if (!identical(method, "auto")) {
      abort_input("{.arg method} chooses a model to fit; with {.arg pred_probs} or {.arg predictions} there is nothing to fit, so leave it at {.val auto}.")
    }
    if (!is.null(pred_probs)) no_tolerance("classification")
    check_tolerance(tolerance, length(labels))
    res <- if (!is.null(pred_probs)) {
      issues_classification(labels, pred_probs, rank_by, adjust, flag_by, n_issues,
                            method = "given pred_probs", fdr = fdr)
    } else {
      issues_regression(labels, predictions, sd, n_issues, method = "given predictions", fdr = fdr,
                        tolerance = tolerance)
    }
    res$time <- proc.time()[["elapsed"]] - start
    res$call <- call
    return(res)
  }
  if (!is.null(labels)) {
    if (!is.null(y)) abort_input("Give the labels once, as {.arg y} or {.arg labels}.")
    y <- labels
  }
  if (is.null(x) || is.null(y)) {
    abort_input(c("Nothing to work on.",
                  "i" = "Call {.code find_label_issues(labels = y, pred_probs = P)} with a model's out-of-fold class probabilities,",
                  " " = "{.code find_label_issues(labels = y, predictions = yhat)} with out-of-fold predictions,",
                  " " = "or {.code find_label_issues(y ~ ., data)} / {.code find_label_issues(x, y)} to let the package fit the models."))
  }
  x <- check_x_matrix(x, "x", min_rows = 2L)
  n <- nrow(x)
  if (length(y) != n) {
    abort_input("{.arg y} has length {length(y)} but {.arg x} has {n} row{?s}.",
                class = "noisylabels_error_length")
  }
  if (anyNA(y)) {
    abort_input(c("{.arg y} contains {sum(is.na(y))} NA value{?s}.", "i" = "Drop the unlabelled rows first."),
                class = "noisylabels_error_na")
  }
  folds <- check_count(folds, "folds", lower = 2)
  if (folds > n) abort_input("{.arg folds} ({folds}) is larger than the number of rows ({n}).")
  if (task == "auto") {
    task <- if (is.numeric(y) && !is.logical(y) && length(unique(y)) > max_classes) "regression"
            else "classification"
  }
  named <- if (is.character(method) && length(method) == 1L) method else ""
  allowed <- if (task == "regression") c("auto", "forest", "gp", "gpr_loo", "gpr_pursuit")
             else c("auto", "forest", "gpc_ep", "sgd_robust")
  if (!named %in% allowed) {
    abort_input(c("{.arg method} must be one of {.or {.val {allowed}}} for {task}, or a fitted model of this package.",
                  "i" = "A fitted model of this package (class {.cls noisylabels_fit}, e.g. from {.fn gpr_loo} or {.fn gpc_ep}) can be passed as {.arg method}."),
                class = "noisylabels_error_choice")
  }
  if (task != "regression") no_tolerance("classification")
  check_tolerance(tolerance, n)
  if (named %in% c("gpr_loo", "gpr_pursuit")) {
    y <- check_y_numeric(y, n)
    fit <- if (named == "gpr_loo") gpr_loo(x, y) else gpr_pursuit(x, y)
    res <- issues_from_fit(fit, n_issues = n_issues, fdr = fdr, tolerance = tolerance, call = call)
    res$time <- proc.time()[["elapsed"]] - start
    return(res)
  }
  if (task == "regression") {
    y <- check_y_numeric(y, n)
    oof <- regression_oof(x, y, method = named, folds = folds, gp_subsample = gp_subsample,
                          gp_max_dim = gp_max_dim, threads = threads, verbose = verbose)
    latent <- if (!is.null(oof$noise_var)) gp_latent_sd(oof$sd, oof$noise_var)
    res <- issues_regression(y, oof$mean, oof$sd, n_issues, method = oof$method, fdr = fdr,
                             tolerance = tolerance, latent_sd = latent)
    res$model_choice <- oof$choice
  } else {
    yf <- if (is.factor(y)) droplevels(y) else factor(y)
    if (nlevels(yf) < 2L) abort_input("{.arg y} has a single class; there is nothing to compare.")
    probs <- classification_oof(x, yf, method = named, folds = folds, threads = threads,
                                verbose = verbose)
    res <- issues_classification(yf, probs$pred_probs, rank_by, adjust, flag_by, n_issues,
                                 method = probs$method, fdr = fdr)
  }
  res$time <- proc.time()[["elapsed"]] - start
  res$call <- call
  res
}

issues_classification <- function(labels, pred_probs, rank_by, adjust, flag_by, n_issues,
                                  method, fdr = 0.1) {
  if (is.character(pred_probs) || is.function(pred_probs)) {
    return(issues_classification_chunked(labels, pred_probs, rank_by, adjust, flag_by,
                                         n_issues, method, fdr, call = parent.frame(2)))
  }
  chk <- check_pred_probs(labels, pred_probs, call = parent.frame(2))
  lab <- chk$labels
  p <- chk$pred_probs
  cl <- cl_estimate(lab, p, chk$classes)
  fit <- cl_fit_rows(length(lab))
  model <- cl_rank_model(lab[fit], p[fit, , drop = FALSE], cl$calibrated_joint)
  sc <- cl_score_block(lab, p, cl, model, rank_by, adjust)
  flagged <- switch(flag_by,
    consensus = cl_prune_by_noise_rate(lab, p, cl$calibrated_joint),
    prune_by_noise_rate = cl_prune_by_noise_rate(lab, p, cl$calibrated_joint),
    prune_by_class = cl_prune_by_class(lab, p, cl$calibrated_joint),
    both = cl_prune_by_noise_rate(lab, p, cl$calibrated_joint) &
      cl_prune_by_class(lab, p, cl$calibrated_joint),
    NULL)
  cl_result(labels, chk, sc, flagged, cl, model, rank_by, adjust, flag_by, n_issues, fdr,
            method, pred_probs = p)
}
