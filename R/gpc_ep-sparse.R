# Sparse (FITC / inducing-point) EP for gpc_ep(): the choice between the dense
# and the sparse path, the inducing inputs, and the sparse fit and
# predictions. The C++ core is src/core/ep/gpc_ep_sparse.*.

#' Default number of inducing points for the sparse EP path
#'
#' `min(n, max(100, ceiling(2 * sqrt(n))))`: 100 up to n = 2500, 283 at
#' n = 20000, 633 at n = 10^5. Fits cost O(n m^2) time and O(n m) memory.
#' Measured (inst/bench/gpc_ep/README.md): at n = 2000 the AUC of P(label
#' wrong) was 0.9991, 0.9995, 0.9995, 0.9995 for m = 50, 100, 200, 400 (dense
#' 0.9995) at 1.5, 3.7, 11 and 48 s CPU; at n = 20000 an EP sweep costs about
#' 0.5 s CPU with m = 283 and 1.5 s with 4 sqrt(n) = 566, and the fit with
#' m = 283 took 264 s CPU.
#' @param n Number of training labels.
#' @return An integer.
#' @keywords internal
#' @noRd
gpc_ep_default_inducing <- function(n) {
  as.integer(min(n, max(100, ceiling(2 * sqrt(n)))))
}


# Check `inducing` before any fitting: NULL, one count in [1, n], or a
# finite numeric matrix with the columns of x (original input scale).
gpc_ep_check_inducing <- function(inducing, x, approx, call = parent.frame()) {
  if (is.null(inducing)) return(NULL)
  if (approx == "dense") {
    abort_input(c("{.arg inducing} is only used by the sparse path.",
                  "i" = "Drop it, or use {.code approx = \"sparse\"}."), call = call)
  }
  n <- nrow(x)
  if (is.data.frame(inducing)) inducing <- as.matrix(inducing)
  if (is.numeric(inducing) && is.null(dim(inducing)) && length(inducing) == 1L) {
    if (!is.finite(inducing) || inducing < 1 || inducing != round(inducing)) {
      abort_input("{.arg inducing} must be a whole number of inducing points (at least 1), not {.val {format(inducing)}}.",
                  class = "noisylabels_error_inducing", call = call)
    }
    if (inducing > n) {
      abort_input(c("{.arg inducing} = {inducing} is more than the {n} training label{?s}.",
                    "i" = "Use at most n inducing points; with n of them the sparse fit is the dense one."),
                  class = "noisylabels_error_inducing", call = call)
    }
    return(as.integer(inducing))
  }
  if (!is.matrix(inducing) || !is.numeric(inducing)) {
    abort_input("{.arg inducing} must be a number of inducing points or a numeric matrix of inducing inputs, not {.cls {class(inducing)}}.",
                class = "noisylabels_error_inducing", call = call)
  }
  if (ncol(inducing) != ncol(x)) {
    abort_input("{.arg inducing} has {ncol(inducing)} column{?s}; the inputs have {ncol(x)}.",
                class = "noisylabels_error_inducing", call = call)
  }
  if (nrow(inducing) < 1L || nrow(inducing) > n) {
    abort_input(c("{.arg inducing} has {nrow(inducing)} row{?s}; between 1 and n = {n} are allowed.",
                  "i" = "With n inducing inputs at the training points the sparse fit is the dense one."),
                class = "noisylabels_error_inducing", call = call)
  }
  if (any(!is.finite(inducing))) {
    abort_input("{.arg inducing} contains missing or infinite values.",
                class = "noisylabels_error_inducing", call = call)
  }
  storage.mode(inducing) <- "double"
  inducing
}

# k-means++ seeding (Arthur & Vassilvitskii 2007) on the standardised
# inputs: the first centre uniformly at random, each further one a training
# point drawn with probability proportional to its squared distance to the
# nearest centre chosen so far. Returns row indices (fewer than m if the
# inputs have fewer distinct rows). Uses R's RNG.
kmeanspp_rows <- function(xs, m) {
  n <- nrow(xs)
  xt <- t(xs)
  idx <- integer(m)
  idx[1] <- sample.int(n, 1L)
  d2 <- colSums((xt - xs[idx[1], ])^2)
  k <- 1L
  while (k < m) {
    if (!any(d2 > 0)) break
    k <- k + 1L
    idx[k] <- sample.int(n, 1L, prob = d2)
    d2 <- pmin(d2, colSums((xt - xs[idx[k], ])^2))
  }
  idx[seq_len(k)]
}

# Inducing inputs on the standardised scale (rows of a matrix) and a label of
# how they were chosen.
gpc_ep_inducing_inputs <- function(inducing, xs, center, scale) {
  if (is.matrix(inducing)) {
    z <- sweep(sweep(inducing, 2, center, "-"), 2, scale, "/")
    return(list(z = z, rule = "given"))
  }
  m <- inducing %||% gpc_ep_default_inducing(nrow(xs))
  if (m >= nrow(xs)) return(list(z = xs, rule = "all training inputs"))
  rows <- kmeanspp_rows(xs, m)
  list(z = xs[rows, , drop = FALSE], rule = "k-means++ seeding", rows = rows)
}

# Latent predictive mean and variance at standardised new inputs, for either
# path.
gpc_ep_latent <- function(object, xn) {
  spec <- kernel_spec(object$kernel, object$log_par)
  if (identical(object$approx, "sparse")) {
    call_core(.gpc_ep_sparse_predict(object$inducing, xn, spec, object$sparse_beta,
                                     object$sparse_cov))
  } else {
    call_core(.gpc_ep_predict(object$x, xn, spec, object$jitter, object$site_tau,
                              object$site_nu))
  }
}

# One line for print() and summary(): which covariance EP ran on.
gpc_ep_approx_label <- function(object) {
  if (identical(object$approx, "sparse")) {
    sprintf("sparse (FITC, %d inducing inputs: %s, fixed)", object$n_inducing,
            object$inducing_rule)
  } else {
    "dense (exact n x n covariance)"
  }
}
