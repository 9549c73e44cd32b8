# Hyperparameter tuning for label_dist_vb(tune = ): held-out group likelihood
# over folds of groups.

# Approximate log-likelihood of held-out groups: each member's noisy label has
# distribution p_u = softmax(W x_u) C, so by the central limit theorem s_i is
# about N(mean(p_u), n_i^-2 sum_u (diag p_u - p_u p_u') + alpha_s^-1 I).
ld_heldout_loglik <- function(fit, x, s, groups) {
  pc <- ld_softmax(x %*% t(fit$W)) %*% fit$C
  M <- ncol(s)
  alpha_s <- fit$hyper[["alpha_s"]]
  vapply(seq_len(nrow(s)), function(i) {
    p <- pc[groups[[i]], , drop = FALSE]
    n <- nrow(p)
    mu <- colMeans(p)
    S <- (diag(colSums(p), M) - crossprod(p)) / n^2 + diag(1 / alpha_s, M)
    R <- chol(S)
    z <- backsolve(R, s[i, ] - mu, transpose = TRUE)
    -0.5 * sum(z^2) - sum(log(diag(R))) - 0.5 * M * log(2 * pi)
  }, numeric(1))
}

#' Held-out group likelihood for choosing hyperparameters
#'
#' `label_dist_vb(..., tune = list(...))` calls this: the groups are split into
#' `folds` folds; for every grid point and fold the model is fitted on the
#' other folds' groups (all instances are kept, since they are unlabelled), and
#' each held-out group's distribution is scored by a Gaussian approximation to
#' its predictive density: the members' noisy labels have distributions
#' \eqn{p_u = \mathrm{softmax}(\hat W x_u) \hat C}, so \eqn{s_i} is about normal
#' with mean \eqn{\bar p} and covariance
#' \eqn{n_i^{-2} \sum_u (\mathrm{diag}\, p_u - p_u p_u^\top) + \alpha_s^{-1} I}.
#' Internal; documented for the method.
#' @param prep,hyper,opts,c_update,tune,folds Internal.
#' @return A list: `grid` (data frame of grid points with `heldout_loglik`, the
#'   mean held-out log-likelihood per group) and `folds`.
#' @keywords internal
ld_cv <- function(prep, hyper, opts, c_update, tune, folds, verbose = NULL) {
  if (!is.list(tune) || is.null(names(tune)) || !all(names(tune) %in% names(hyper))) {
    abort_input("{.arg tune} must be a named list with elements among {.val {names(hyper)}}.")
  }
  for (nm in names(tune)) {
    v <- tune[[nm]]
    if (!is.numeric(v) || !length(v) || anyNA(v) || any(v <= 0)) {
      abort_input("{.arg tune${nm}} must hold positive numbers.")
    }
  }
  if (folds > prep$N) abort_input("{.arg folds} ({folds}) exceeds the number of groups ({prep$N}).")
  grid <- expand.grid(tune, KEEP.OUT.ATTRS = FALSE)
  fold_id <- sample(rep_len(seq_len(folds), prep$N))
  grp <- rep.int(seq_len(prep$N), prep$sizes)
  members <- split(prep$pair_unit + 1L, grp)
  opts$debug <- FALSE
  bar <- progress_bar("label_dist_vb tuning", total = nrow(grid) * folds, verbose = verbose)
  grid$heldout_loglik <- vapply(seq_len(nrow(grid)), function(g) {
    h <- hyper
    for (nm in names(tune)) h[[nm]] <- grid[[nm]][g]
    total <- 0
    for (f in seq_len(folds)) {
      train <- which(fold_id != f)
      sub <- prep
      sub$s <- prep$s[train, , drop = FALSE]
      sub$N <- length(train)
      sub$sizes <- prep$sizes[train]
      sub$group_ptr <- c(0L, cumsum(sub$sizes))
      sub$pair_unit <- unlist(members[train], use.names = FALSE) - 1L
      fit <- suppressWarnings(ld_fit_prepared(sub, h, opts, c_update))
      test <- which(fold_id == f)
      total <- total + sum(ld_heldout_loglik(fit, prep$x, prep$s[test, , drop = FALSE], members[test]))
      if (!is.null(bar)) bar((g - 1) * folds + f, nrow(grid) * folds)
    }
    total / prep$N
  }, numeric(1))
  progress_done(bar)
  list(grid = grid, folds = folds)
}

ld_softmax <- function(a) {
  a <- a - apply(a, 1, max)
  e <- exp(a)
  e / rowSums(e)
}
