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
      fit <- ranger::ranger(x = as.data.frame(x[tr, , drop = FALSE]), y = y[tr], probability = TRUE,
                            num.threads = threads, seed = draw_seed())
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
      fit <- if (nlevels(ytr) == 2L) gpc_ep(x[tr, , drop = FALSE], ytr)
             else gpc_ep(x[tr, , drop = FALSE], ytr, multiclass = "ovr")
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

regression_oof <- function(x, y, method, folds, gp_subsample, gp_max_dim, threads, verbose) {
  has_ranger <- requireNamespace("ranger", quietly = TRUE)
  if (method == "forest") require_ranger()
  if (method == "auto" && !has_ranger) method <- "gp"
  forest <- gp <- NULL
  if (method %in% c("auto", "forest")) forest <- forest_oof(x, y, folds, threads, verbose)
  # The dense operator holds three n x n matrices; beyond the memory option
  # "auto" keeps to the forest (a Vecchia operator would lift this).
  dense_ok <- 3 * 8 * as.double(nrow(x))^2 / 2^30 <= getOption("noisylabels.max_gb", 8)
  if (method == "gp" || (method == "auto" && ncol(x) <= gp_max_dim && dense_ok)) {
    gp <- gp_loo_oof(x, y, subsample = gp_subsample, approx = "dense")
  }
  choice <- NULL
  if (method == "auto") {
    mad_forest <- stats::median(abs(y - forest$mean))
    mad_gp <- if (is.null(gp)) NA_real_ else stats::median(abs(y - gp$mean))
    use_gp <- !is.null(gp) && mad_gp < mad_forest
    choice <- data.frame(model = c("forest", "gp"), median_abs_residual = c(mad_forest, mad_gp),
                         dimension_ok = c(TRUE, ncol(x) <= gp_max_dim),
                         memory_ok = c(TRUE, dense_ok),
                         chosen = c(!use_gp, use_gp))
    method <- if (use_gp) "gp" else "forest"
  }
  out <- if (method == "gp") gp else forest
  out$choice <- choice
  out
}

# ranger in k-fold cross-validation with min.node.size = ceiling(sqrt(n))
# (ranger's default is 5): larger leaves average over more labels, so wrong
# labels that cluster in input space are absorbed less into the fit. On the
# air-quality table (n = 7,344, errors clustered) min.node.size 5 / 20 / 50 /
# 100 gave AUROC 0.587 / 0.592 / 0.604 / 0.618 and AUPRC 0.088 / 0.096 /
# 0.107 / 0.120 (one seed; inst/experiments/find_label_issues/README.md).
forest_oof <- function(x, y, folds, threads, verbose, min_node_size = NULL, num_trees = 500L) {
  require_ranger()
  n <- nrow(x)
  min_node_size <- min_node_size %||% max(5L, as.integer(ceiling(sqrt(n))))
  fold_id <- make_folds(NULL, folds, n)
  df <- as.data.frame(x)
  one <- function(f) {
    tr <- fold_id != f
    fit <- ranger::ranger(x = df[tr, , drop = FALSE], y = y[tr], num.trees = num_trees,
                          min.node.size = min_node_size, num.threads = threads, seed = draw_seed())
    list(rows = which(!tr), mean = predict(fit, df[!tr, , drop = FALSE], num.threads = threads)$predictions)
  }
  parts <- run_folds(folds, one, verbose, "Out-of-fold forest predictions")
  mean <- numeric(n)
  for (pt in parts) mean[pt$rows] <- pt$mean
  list(mean = mean, sd = NULL,
       method = sprintf("ranger forest (min.node.size %d), %d-fold out-of-fold predictions",
                        min_node_size, folds))
}

# Leave-one-out means and sds of a GP at full n. Hyperparameters come from a
# standard GP fitted to a random subsample of at most `subsample` rows
# ([gpr_baseline()]: ARD RBF kernel, constant mean, homoscedastic noise);
# the LOO quantities at full n come from the covariance operator `approx`.
# "dense" is one Cholesky factorisation and its inverse: with Q = C^-1,
# LOO mean y_i - (Q y)_i / Q_ii and LOO variance 1 / Q_ii (Rasmussen and
# Williams eq. 5.12), the variance including the label's noise. This is the
# one place a Vecchia operator (Q = U U', same two formulas) plugs in.
gp_loo_oof <- function(x, y, subsample = 2000, approx = c("dense")) {
  approx <- match_arg(approx)
  n <- nrow(x)
  check_dense_memory(n, copies = 3)
  sub <- if (n > subsample) sort(sample.int(n, subsample)) else seq_len(n)
  base <- gpr_baseline(x[sub, , drop = FALSE], y[sub], "standard")$fit
  xs <- scale_inputs(x, base$x_center, base$x_scale)
  ys <- (y - base$mean) / base$y_scale
  cov <- kernel_matrix(base$kernel, xs)
  diag(cov) <- diag(cov) + base$sigma2 / base$y_scale^2 + 1e-8
  loo <- loo_dense(cov, ys)
  rm(cov)
  list(mean = y - loo$residual * base$y_scale, sd = loo$sd * base$y_scale,
       method = sprintf("GP (ARD RBF, hyperparameters from %d rows), exact leave-one-out at n = %d",
                        length(sub), n),
       kernel = base$kernel, noise_var = base$sigma2)
}

loo_dense <- function(cov, ys) {
  u <- tryCatch(chol(cov), error = function(e) {
    abort_numeric(c("The GP covariance is not positive definite.", "x" = conditionMessage(e),
                    "i" = "Duplicated inputs with a tiny noise variance cause this; try {.code method = \"forest\"}."))
  })
  q <- chol2inv(u)
  rm(u)
  alpha <- drop(q %*% ys)
  d <- diag(q)
  list(residual = alpha / d, sd = sqrt(1 / d))
}

# Fold assignment from R's RNG: stratified by class for factors (every class
# spread over the folds), else a random permutation of 1..folds.
make_folds <- function(y, folds, n = length(y)) {
  if (is.factor(y)) {
    id <- integer(n)
    for (lev in levels(y)) {
      rows <- which(y == lev)
      id[rows] <- sample(rep_len(sample.int(folds), length(rows)))
    }
    id
  } else {
    sample(rep_len(seq_len(folds), n))
  }
}

# Folds under future (any plan) with a progressr bar when asked for. When
# lapply_folds() reports progress itself (it takes `verbose`, as on the
# progress-bar branch), it is left to do so, so that merging both gives one
# bar; otherwise the folds are wrapped in a progressr progressor here. Fits
# inside a fold never show a bar of their own (noisylabels.progress_nested).
run_folds <- function(folds, fun, verbose, label) {
  if ("verbose" %in% names(formals(lapply_folds))) {
    return(lapply_folds(folds, fun, future_seed = TRUE, verbose = verbose, name = label))
  }
  old <- options(noisylabels.progress_nested = TRUE, progressr.enable = getOption("progressr.enable"))
  on.exit(options(old), add = TRUE)
  use_progress <- verbose && requireNamespace("progressr", quietly = TRUE)
  body <- function() {
    tick <- if (use_progress) progressr::progressor(steps = folds) else function(...) invisible()
    lapply_folds(folds, function(f) {
      out <- fun(f)
      tick(message = sprintf("fold %d", f))
      out
    }, future_seed = TRUE)
  }
  if (!use_progress) return(body())
  # progressr enables handlers in interactive sessions only; progress was
  # asked for (verbose = TRUE in a script), so enable them for this call.
  options(progressr.enable = TRUE)
  handlers <- getOption("progressr.handlers") %||%
    list(progressr::handler_cli(enable = TRUE,
                                format = paste(label, "{cli::pb_bar} {cli::pb_current}/{cli::pb_total}")))
  progressr::with_progress(body(), handlers = handlers, enable = TRUE)
}

# verbose = NULL: the option noisylabels.progress if set, else interactive().
resolve_verbose <- function(verbose, call = parent.frame()) {
  if (is.null(verbose)) {
    opt <- getOption("noisylabels.progress")
    return(if (is.null(opt)) interactive() else isTRUE(opt))
  }
  check_flag(verbose, "verbose", call = call)
  verbose
}

require_ranger <- function(call = parent.frame()) {
  if (!requireNamespace("ranger", quietly = TRUE)) {
    abort_input(c("The forest needs the {.pkg ranger} package.",
                  "i" = "Install it with {.code install.packages(\"ranger\")}, choose another {.arg method}, or pass your own model's out-of-fold output."),
                class = "noisylabels_error_missing_package", call = call)
  }
}
