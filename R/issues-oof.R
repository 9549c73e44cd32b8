# Out-of-fold predictions for find_label_issues(): class probabilities and
# numeric means from the package's own or a suggested model, over folds run
# under future.

classification_oof <- function(x, y, method, folds, threads, verbose) {
  n <- nrow(x)
  k <- nlevels(y)
  if (method == "auto") method <- if (requireNamespace("ranger", quietly = TRUE)) "forest" else "gpc_ep"
  if (method == "forest") require_ranger()
  if (method == "gpc_ep") check_dense_memory(n, copies = 4)
  if (method == "sgd_robust" && k != 2L) {
    abort_input(c("{.code method = \"sgd_robust\"} is a binary classifier; {.arg y} has {k} classes.",
                  "i" = "Use {.code method = \"forest\"} or {.code \"gpc_ep\"} (one-vs-rest), or pass your own model's {.arg pred_probs}."))
  }
  fold_id <- make_folds(y, folds)
  one <- function(f) {
    tr <- fold_id != f
    te <- which(!tr)
    if (method == "forest") {
      # a class absent from this training fold (a rare class) is dropped here
      # rather than by ranger with a warning; its probability is 0 below
      fit <- ranger::ranger(x = as.data.frame(x[tr, , drop = FALSE]), y = droplevels(y[tr]), probability = TRUE,
                            num.threads = threads, seed = draw_seed(), verbose = FALSE)
      pr <- predict(fit, as.data.frame(x[te, , drop = FALSE]), num.threads = threads)$predictions
    } else if (method == "sgd_robust") {
      # A linear classifier with a bounded robust loss gives margins, not
      # probabilities: Platt scaling (a logistic regression of the training
      # labels on the training margins) turns them into P(second level).
      ytr <- droplevels(y[tr])
      fit <- sgd_robust(x[tr, , drop = FALSE], ytr)
      link_tr <- predict(fit, x[tr, , drop = FALSE], type = "link")
      platt <- stats::glm.fit(cbind(1, link_tr), as.numeric(ytr == levels(ytr)[2]),
                              family = stats::binomial())
      eta <- drop(cbind(1, predict(fit, x[te, , drop = FALSE], type = "link")) %*% platt$coefficients)
      pr <- cbind(1 - stats::plogis(eta), stats::plogis(eta))
      colnames(pr) <- levels(ytr)
    } else {
      ytr <- droplevels(y[tr])
      fit <- if (nlevels(ytr) == 2L) gpc_ep(x[tr, , drop = FALSE], ytr, threads = threads)
             else gpc_ep(x[tr, , drop = FALSE], ytr, multiclass = "ovr", threads = threads)
      pr <- predict(fit, x[te, , drop = FALSE], type = "prob")
      if (is.null(dim(pr))) pr <- cbind(1 - pr, pr)
      colnames(pr) <- levels(ytr)
    }
    out <- matrix(0, length(te), k, dimnames = list(NULL, levels(y)))
    out[, colnames(pr)] <- pr
    list(rows = te, probs = out)
  }
  parts <- run_folds(folds, one, verbose, "Out-of-fold class probabilities")
  probs <- matrix(0, n, k, dimnames = list(NULL, levels(y)))
  for (pt in parts) probs[pt$rows, ] <- pt$probs
  # A class missing from a training fold leaves rows that do not sum to 1.
  probs <- probs / rowSums(probs)
  list(pred_probs = probs,
       method = sprintf("%s, %d-fold out-of-fold probabilities",
                        switch(method, forest = "ranger probability forest",
                               sgd_robust = "sgd_robust with Platt scaling", gpc_ep = "gpc_ep"),
                        folds))
}

# Regression: the forest, the GP, or (method = "auto") the one whose
# out-of-fold predictions fit better (smaller median absolute residual) among
# those the dimension and memory rules allow. Up to choice_rows rows both
# models run on all rows; above, both run on a random subsample of
# choice_rows rows and only the chosen one then runs on all rows (the GP
# with the hyperparameters fitted for the choice), so the choice costs a
# 5,000-row fit of each instead of a full-size forest. `choice` (the
# result's model_choice) records the criterion, the rows it was measured on
# and the rules.
regression_oof <- function(x, y, method, folds, gp_subsample, gp_max_dim, threads, verbose) {
  has_ranger <- requireNamespace("ranger", quietly = TRUE)
  if (method == "forest") require_ranger()
  if (method == "auto" && !has_ranger) method <- "gp"
  n <- nrow(x)
  # The leave-one-out pass goes dense or Vecchia by gp_backend("loo") (dense
  # only while it fits the memory limit), so what must fit is the
  # hyperparameter fit on min(n, gp_subsample) rows (four dense matrices).
  memory_ok <- 4 * 8 * as.double(min(n, gp_subsample))^2 / 2^30 <= getOption("noisylabels.max_gb", 8)
  dimension_ok <- ncol(x) <= gp_max_dim
  if (method != "auto") {
    if (method == "forest") return(forest_oof(x, y, folds, threads, verbose))
    return(gp_loo_oof(x, y, subsample = gp_subsample, threads = threads))
  }
  choice_rows <- getOption("noisylabels.choice_rows", 5000L)
  sub <- if (n > choice_rows) sort(sample.int(n, choice_rows)) else seq_len(n)
  xs <- x[sub, , drop = FALSE]
  ys <- y[sub]
  forest <- forest_oof(xs, ys, folds, threads, verbose)
  gp <- if (dimension_ok && memory_ok) gp_loo_oof(xs, ys, subsample = gp_subsample, threads = threads)
  mad_forest <- stats::median(abs(ys - forest$mean))
  mad_gp <- if (is.null(gp)) NA_real_ else stats::median(abs(ys - gp$mean))
  use_gp <- !is.null(gp) && mad_gp < mad_forest
  choice <- data.frame(model = c("forest", "gp"), median_abs_residual = c(mad_forest, mad_gp),
                       rows = length(sub), dimension_ok = c(TRUE, dimension_ok),
                       memory_ok = c(TRUE, memory_ok), chosen = c(!use_gp, use_gp))
  out <- if (length(sub) == n) {
    if (use_gp) gp else forest
  } else if (use_gp) {
    gp_loo_oof(x, y, subsample = gp_subsample, threads = threads, hyper = gp$hyper)
  } else {
    forest_oof(x, y, folds, threads, verbose)
  }
  why <- if (is.null(gp)) {
    sprintf("the GP is ruled out (%s)", if (!dimension_ok) sprintf("%d inputs > gp_max_dim = %d", ncol(x), gp_max_dim)
                                        else "the GP's hyperparameter fit would not fit in memory")
  } else {
    sprintf("median |out-of-fold residual| %.3g (GP) against %.3g (forest) on %s rows",
            mad_gp, mad_forest, if (length(sub) == n) sprintf("all %d", n) else sprintf("%d of %d", length(sub), n))
  }
  out$method <- sprintf("%s; chosen by method = \"auto\": %s", out$method, why)
  out$choice <- choice
  out
}

# ranger in k-fold cross-validation with min.node.size = ceiling(sqrt(n))
# (ranger's default is 5): larger leaves average over more labels, so wrong
# labels that cluster in input space are absorbed less into the fit. On the
# air-quality table (n = 7,344, errors clustered) min.node.size 5 / 20 / 50 /
# 100 gave AUROC 0.587 / 0.592 / 0.604 / 0.618 and AUPRC 0.088 / 0.096 /
# 0.107 / 0.120 (one seed; inst/experiments/find_label_issues/README.md).
# Trees: 500, 100 above forest_many_rows rows and 50 above forest_huge_rows,
# where time grows as n log n per tree and the leaves (>= sqrt(n) labels)
# are averages already. On a 10-input tabular case (inst/bench/
# find_label_issues/forest.R, 2 threads): at 10^5 rows 100 bootstrap trees
# gave AUROC 0.9652 against 0.9658 with 500; at 10^6 rows 50 trees gave
# 0.9755 in 14.6 min and 1.0 GB against 0.9759 in 27.9 min and 1.7 GB with
# 100. Subsamples of 20% per tree were 2.5x faster at 10^5 but lost 0.033
# AUROC, so trees stay on bootstrap samples of all training rows. The engine
# prints nothing (verbose = FALSE); progress is one step per fold.
forest_many_rows <- 50000L
forest_huge_rows <- 500000L

forest_trees <- function(n) {
  if (n > getOption("noisylabels.forest_huge_rows", forest_huge_rows)) return(50L)
  if (n > getOption("noisylabels.forest_many_rows", forest_many_rows)) 100L else 500L
}

forest_oof <- function(x, y, folds, threads, verbose, min_node_size = NULL, num_trees = NULL,
                       sample_fraction = 1) {
  require_ranger()
  n <- nrow(x)
  min_node_size <- min_node_size %||% max(5L, as.integer(ceiling(sqrt(n))))
  num_trees <- num_trees %||% forest_trees(n)
  fold_id <- make_folds(NULL, folds, n)
  df <- as.data.frame(x)
  one <- function(f) {
    tr <- fold_id != f
    fit <- ranger::ranger(x = df[tr, , drop = FALSE], y = y[tr], num.trees = num_trees,
                          min.node.size = min_node_size, sample.fraction = sample_fraction,
                          replace = sample_fraction >= 1, num.threads = threads,
                          seed = draw_seed(), verbose = FALSE)
    list(rows = which(!tr), mean = predict(fit, df[!tr, , drop = FALSE], num.threads = threads)$predictions)
  }
  parts <- run_folds(folds, one, verbose, "Out-of-fold forest predictions")
  mean <- numeric(n)
  for (pt in parts) mean[pt$rows] <- pt$mean
  list(mean = mean, sd = NULL,
       method = sprintf("ranger forest (%d trees, min.node.size %d), %d-fold out-of-fold predictions",
                        num_trees, min_node_size, folds))
}

# Leave-one-out means and sds of a GP at full n. Hyperparameters come from
# `hyper` (list(fit, rows): a gpr_baseline() fit and its number of rows) or a
# standard GP fitted to a random subsample of at most `subsample` rows
# ([gpr_baseline()]: ARD RBF kernel, constant mean, homoscedastic noise);
# the LOO quantities at full n come from the covariance operator in C++
# (gp_loo()): dense or Vecchia as gp_backend("loo") decides (conditioning
# sets chosen in the metric of the fitted length-scales).
gp_loo_oof <- function(x, y, subsample = 2000, approx = c("auto", "dense", "vecchia"),
                       threads = 1L, hyper = NULL) {
  approx <- match_arg(approx)
  n <- nrow(x)
  if (approx == "auto") approx <- gp_backend("loo", n)
  if (approx == "dense") check_dense_memory(n, copies = 3)
  if (is.null(hyper)) {
    sub <- if (n > subsample) sort(sample.int(n, subsample)) else seq_len(n)
    hyper <- list(fit = gpr_baseline(x[sub, , drop = FALSE], y[sub], "standard", threads = threads)$fit,
                  rows = length(sub))
  }
  base <- hyper$fit
  xs <- scale_inputs(x, base$x_center, base$x_scale)
  ys <- (y - base$mean) / base$y_scale
  kernel <- kernel_resolve(base$kernel, xs)
  m <- getOption("noisylabels.gp_loo_neighbors", gp_loo_neighbors)
  neighbors <- if (approx == "vecchia") vecchia_setup(xs, kernel, m)$neighbors
  loo <- gp_loo(xs, ys, kernel, base$sigma2 / base$y_scale^2 + 1e-8, neighbors, threads)
  what <- if (approx == "dense") "exact leave-one-out"
          else sprintf("Vecchia leave-one-out (%d neighbours)", m)
  list(mean = y - loo$residual * base$y_scale, sd = loo$sd * base$y_scale,
       method = sprintf("GP (ARD RBF, hyperparameters from %d rows), %s at n = %d",
                        hyper$rows, what, n),
       kernel = base$kernel, noise_var = base$sigma2, hyper = hyper)
}

# Leave-one-out residuals y_i - E[y_i | y_-i] and sds (noise included) of a
# GP with this kernel and noise variances: with Q the precision of the
# covariance operator's model (C^-1, or the Vecchia approximation's),
# residual (Q y)_i / Q_ii and variance 1 / Q_ii (Rasmussen and Williams
# eq. 5.12). `neighbors`: the Vecchia conditioning sets (n x m, 0-based), or
# NULL for the exact GP.
# With Vecchia neighbours and getOption("noisylabels.vecchia_pieces") set, the
# pass runs as that many future jobs (R/gp-pieces.R), each on one thread.
gp_loo <- function(x, y, kernel, noise_var, neighbors = NULL, threads = 1L) {
  kernel <- kernel_resolve(kernel, x)
  noise_var <- rep_len(as.numeric(noise_var), length(y))
  pieces <- if (!is.null(neighbors)) vecchia_pieces_option(length(y))
  # call_core() scopes the BLAS threads and turns Ctrl-C into R's interrupt;
  # a failure of the pass is reworded for this caller.
  res <- tryCatch(
    if (is.null(pieces)) call_core(.gp_loo(x, y, kernel_spec(kernel), noise_var, neighbors, as.integer(threads)))
    else vecchia_loo_pieces(x, y, kernel_spec(kernel), noise_var, neighbors, pieces),
    error = function(e) {
      if (is_time_limit_error(e)) stop(e)
      abort_numeric(c("The GP covariance is not positive definite.", "x" = e$core_message %||% conditionMessage(e),
                      "i" = "Duplicated inputs with a tiny noise variance cause this; try {.code method = \"forest\"}."))
    })
  list(residual = res$residual, sd = res$sd)
}

# Fold assignment from R's RNG: stratified by class for factors (every class
# spread over the folds), else a random permutation of 1..folds.
make_folds <- function(y, folds, n = length(y)) {
  if (is.factor(y)) {
    id <- integer(n)
    for (lev in levels(y)) {
      rows <- which(y == lev)
      # not sample(v): for a class of one row, v is a single number k and
      # sample(k) would permute 1..k
      v <- rep_len(sample.int(folds), length(rows))
      id[rows] <- v[sample.int(length(v))]
    }
    id
  } else {
    sample(rep_len(seq_len(folds), n))
  }
}

# Folds under future (any plan), one progress step per fold when `verbose`
# (lapply_folds() owns the bar; fits inside a fold show none of their own).
run_folds <- function(folds, fun, verbose, label) {
  lapply_folds(folds, fun, future_seed = TRUE, verbose = verbose, name = label)
}

require_ranger <- function(call = parent.frame()) {
  if (!requireNamespace("ranger", quietly = TRUE)) {
    abort_input(c("The forest needs the {.pkg ranger} package.",
                  "i" = "Install it with {.code install.packages(\"ranger\")}, choose another {.arg method}, or pass your own model's out-of-fold output."),
                class = "noisylabels_error_missing_package", call = call)
  }
}
