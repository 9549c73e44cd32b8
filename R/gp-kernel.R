#' Covariance functions for the Gaussian-process models
#'
#' `gp_kernel()` describes a covariance function and which of its
#' hyperparameters are learned. The same object is accepted by every GP model
#' of the package ([gpr_loo()] and the other GP fitters). Hyperparameters are
#' optimised on the log scale within `lower`/`upper`; those named in `fixed`
#' stay at their given values.
#'
#' Types, with d the number of input columns:
#' * `"rbf"`: `variance * exp(-r^2 / 2)`, r the distance scaled by `lengthscale`;
#' * `"matern12"`, `"matern32"`, `"matern52"`: the Matern family of that
#'   smoothness, `variance * exp(-r)`, `variance * (1 + sqrt(3) r) exp(-sqrt(3) r)`,
#'   `variance * (1 + sqrt(5) r + 5 r^2 / 3) exp(-sqrt(5) r)`;
#' * `"linear"`: `bias + variance * sum(x * z)`;
#' * `"mixed"`: Kim & Ghahramani (2008, eq. 7-8),
#'   `variance * exp(-1/2 sum_m precision_m d_m) + bias + nugget * [same point]`,
#'   with `d_m = (x_m - z_m)^2` for continuous and `1 - [x_m == z_m]` for
#'   categorical columns (named by `categorical`). The nugget acts on the
#'   diagonal of the training covariance and on a test point's own variance.
#'
#' With `ard = TRUE` there is one length-scale (or precision) per input column,
#' otherwise one shared value. A `NULL` length-scale is set from the data when
#' the model is fitted (the median pairwise distance, per column with ARD; a
#' `NULL` precision is one over its square, and 1 for a categorical column of
#' an ARD mixed kernel).
#'
#' @param type Kernel type, see Details.
#' @param variance Signal variance (`v0` of the mixed kernel), on the scale of
#'   the standardised targets.
#' @param lengthscale Length-scale(s) of the stationary kernels, or `NULL`.
#' @param ard One length-scale per input column?
#' @param bias Constant term of `"linear"` and `"mixed"` (`v1`).
#' @param nugget Nugget `v2` of `"mixed"`.
#' @param precision Inverse squared length-scale(s) `l_m` of `"mixed"`, or `NULL`.
#' @param categorical Columns (names or indices) treated as categorical by the
#'   `"mixed"` kernel.
#' @param fixed Names of hyperparameters to keep fixed, e.g. `"variance"`.
#' @param lower,upper Named lists or vectors of bounds on the natural scale
#'   (e.g. `lower = c(lengthscale = 0.05)`); unnamed defaults are used otherwise.
#' @return An object of class `gp_kernel`.
#' @seealso [kernel_matrix()] to evaluate it.
#' @examples
#' k <- gp_kernel("matern52", lengthscale = 0.3)
#' k
#' kernel_matrix(k, matrix(c(0, 0.1, 0.5), ncol = 1))
#' gp_kernel("rbf", ard = TRUE, fixed = "variance")
#' @export
gp_kernel <- function(type = c("rbf", "matern52", "matern32", "matern12", "linear", "mixed"),
                      variance = 1, lengthscale = NULL, ard = FALSE, bias = NULL,
                      nugget = NULL, precision = NULL, categorical = NULL,
                      fixed = character(), lower = NULL, upper = NULL) {
  type <- match_arg(type)
  check_flag(ard, "ard")
  pos <- function(v, arg) {
    if (is.null(v)) return(v)
    if (!is.numeric(v) || length(v) < 1 || anyNA(v) || any(!is.finite(v)) || any(v <= 0)) {
      abort_input("Kernel hyperparameter {.arg {arg}} must be positive and finite, not {.val {format(v)}}.",
                  call = parent.frame(2))
    }
    as.numeric(v)
  }
  variance <- pos(variance, "variance")
  if (length(variance) != 1) abort_input("{.arg variance} must be a single number.")
  par <- switch(type,
    linear = list(variance = variance, bias = pos(bias %||% 1, "bias")),
    mixed = list(variance = variance, bias = pos(bias %||% 0.1, "bias"),
                 nugget = pos(nugget %||% 1, "nugget"), precision = pos(precision, "precision")),
    list(variance = variance, lengthscale = pos(lengthscale, "lengthscale"))
  )
  if (!is.character(fixed)) abort_input("{.arg fixed} must be a character vector of hyperparameter names.")
  unknown <- setdiff(fixed, names(par))
  if (length(unknown)) {
    abort_input(c("Unknown hyperparameter{?s} in {.arg fixed}: {.val {unknown}}.",
                  "i" = "A {.val {type}} kernel has {.val {names(par)}}."))
  }
  if (!is.null(categorical) && type != "mixed") {
    abort_input("{.arg categorical} is only used by the {.val mixed} kernel.")
  }
  bnd <- function(b, arg) {
    if (is.null(b)) return(list())
    b <- as.list(b)
    if (is.null(names(b)) || any(!names(b) %in% names(par))) {
      abort_input("{.arg {arg}} must be named by hyperparameters of the kernel: {.val {names(par)}}.",
                  call = parent.frame(2))
    }
    for (nm in names(b)) pos(b[[nm]], paste0(arg, "$", nm))
    b
  }
  structure(list(type = type, par = par, ard = ard, categorical = categorical,
                 fixed = fixed, lower = bnd(lower, "lower"), upper = bnd(upper, "upper"),
                 dim = NULL),
            class = "gp_kernel")
}

#' @export
print.gp_kernel <- function(x, ...) {
  cli::cat_line(sprintf("<gp_kernel> %s%s", x$type, if (x$ard) " (ARD)" else ""))
  for (nm in names(x$par)) {
    v <- x$par[[nm]]
    val <- if (is.null(v)) "<from data>" else paste(format(signif(v, 4)), collapse = " ")
    tag <- if (nm %in% x$fixed) " [fixed]" else ""
    cli::cat_line(sprintf("  %-12s %s%s", nm, val, tag))
  }
  if (!is.null(x$categorical)) {
    cli::cat_line("  categorical: ", paste(x$categorical, collapse = ", "))
  }
  invisible(x)
}

# Which parameter groups are length-scale-like (one entry per column with ARD).
kernel_scale_group <- function(type) if (type == "mixed") "precision" else if (type == "linear") character() else "lengthscale"

# Fill data-dependent defaults, check dimensions, and return the kernel with
# `dim`, `categorical` (logical per column) and every parameter set.
kernel_resolve <- function(kernel, x, call = parent.frame()) {
  if (!inherits(kernel, "gp_kernel")) {
    abort_input("{.arg kernel} must be made by {.fn gp_kernel}, not {.cls {class(kernel)}}.", call = call)
  }
  d <- ncol(x)
  if (!is.null(kernel$dim) && kernel$dim != d) {
    abort_input("The kernel was built for {kernel$dim} input column{?s} but the data have {d}.", call = call)
  }
  cat_mask <- rep(FALSE, d)
  if (!is.null(kernel$categorical)) {
    cc <- kernel$categorical
    if (is.character(cc)) {
      miss <- setdiff(cc, colnames(x))
      if (length(miss)) abort_input("Categorical column{?s} {.val {miss}} not found in the data.", call = call)
      cat_mask[match(cc, colnames(x))] <- TRUE
    } else if (is.logical(cc) && length(cc) == d) {
      cat_mask <- cc
    } else {
      if (any(cc < 1 | cc > d)) abort_input("Categorical column indices must lie in 1..{d}.", call = call)
      cat_mask[cc] <- TRUE
    }
  }
  grp <- kernel_scale_group(kernel$type)
  if (length(grp)) {
    q <- if (kernel$ard) d else 1L
    v <- kernel$par[[grp]]
    if (is.null(v)) {
      md <- median_distance(x, per_column = kernel$ard)
      v <- if (grp == "precision") 1 / md^2 else md
      v <- rep_len(v, q)
      # A categorical column's distance is 0 or 1 whatever its codes: start
      # its precision at 1 (different levels correlate by exp(-1/2)).
      if (grp == "precision" && kernel$ard) v[cat_mask] <- 1
    } else if (length(v) == 1L && q > 1L) {
      v <- rep(v, q)
    } else if (length(v) != q) {
      k <- length(v)
      msg <- if (kernel$ard) {
        c("The kernel has {k} value{?s} of {grp} but the data have {d} column{?s}.",
          "i" = "With {.code ard = TRUE} give one per column.")
      } else {
        c("A kernel with {.code ard = FALSE} takes a single {grp}, got {k} values.",
          "i" = "Give one value, or {.code ard = TRUE} for one per column.")
      }
      abort_input(msg, call = call)
    }
    kernel$par[[grp]] <- v
  }
  kernel$dim <- d
  kernel$categorical <- cat_mask
  kernel
}

# Median pairwise Euclidean distance (per column with per_column = TRUE), on
# at most 500 rows; zero distances fall back to 1.
median_distance <- function(x, per_column = FALSE) {
  n <- nrow(x)
  idx <- if (n > 500) round(seq(1, n, length.out = 500)) else seq_len(n)
  xs <- x[idx, , drop = FALSE]
  md <- if (per_column) {
    apply(xs, 2, function(col) {
      dd <- as.numeric(stats::dist(col))
      m <- stats::median(dd[dd > 0])
      if (is.na(m)) 1 else m
    })
  } else {
    dd <- as.numeric(stats::dist(xs))
    m <- stats::median(dd[dd > 0])
    if (is.na(m)) 1 else m
  }
  md
}

# Default bounds (natural scale) for one parameter group given its value.
kernel_default_bounds <- function(name, value) {
  switch(name,
    variance = c(1e-6, 1e4),
    bias = c(1e-8, 1e4),
    nugget = c(1e-8, 1e4),
    lengthscale = c(1e-3, 1e3) * max(value),
    precision = c(1e-6, 1e6) * max(value)
  )
}

# Flatten a resolved kernel into the C++ parameter vector (log scale) with
# bounds and a free mask, in the order documented in src/core/gp/kernels.h.
kernel_flatten <- function(kernel) {
  nm <- character(); val <- numeric(); lo <- numeric(); hi <- numeric(); free <- logical()
  for (g in names(kernel$par)) {
    v <- kernel$par[[g]]
    b <- kernel_default_bounds(g, v)
    l <- kernel$lower[[g]] %||% b[1]
    u <- kernel$upper[[g]] %||% b[2]
    if (any(l > u)) abort_input("Lower bound of {.field {g}} exceeds its upper bound.")
    k <- length(v)
    nm <- c(nm, if (k == 1) g else paste0(g, seq_len(k)))
    val <- c(val, v)
    lo <- c(lo, rep_len(l, k)); hi <- c(hi, rep_len(u, k))
    free <- c(free, rep(!(g %in% kernel$fixed), k))
  }
  # Start values outside user bounds are moved inside.
  val <- pmin(pmax(val, lo), hi)
  list(names = nm, log_par = log(val), lower = log(lo), upper = log(hi), free = free)
}

# Put a C++ log-parameter vector back into the kernel object.
kernel_unflatten <- function(kernel, log_par) {
  i <- 0L
  for (g in names(kernel$par)) {
    k <- length(kernel$par[[g]])
    kernel$par[[g]] <- exp(log_par[i + seq_len(k)])
    i <- i + k
  }
  kernel
}

# The list the C++ glue reads (src/rcpp_common.h).
kernel_spec <- function(kernel, log_par = kernel_flatten(kernel)$log_par) {
  list(type = kernel$type, dim = as.integer(kernel$dim), ard = kernel$ard,
       log_par = as.numeric(log_par), categorical = as.logical(kernel$categorical))
}

#' Evaluate a covariance function
#'
#' @param kernel A [gp_kernel()] (a `NULL` length-scale is set from `x`).
#' @param x Numeric matrix of inputs (rows are points).
#' @param z Optional second matrix; `NULL` gives the training covariance
#'   `K(x, x)` including any nugget.
#' @return The matrix `K(x, z)`.
#' @examples
#' kernel_matrix(gp_kernel("rbf", lengthscale = 1), cbind(1:3))
#' @export
kernel_matrix <- function(kernel, x, z = NULL) {
  x <- check_x_matrix(x, "x")
  kernel <- kernel_resolve(kernel, x)
  spec <- kernel_spec(kernel)
  if (is.null(z)) {
    # the core's n x n matrix and R's copy of it
    check_allocation(2 * 8 * as.double(nrow(x))^2,
                     cli::format_inline("The {nrow(x)} x {nrow(x)} kernel matrix"))
    return(call_core(.kernel_gram(x, spec)))
  }
  z <- check_x_matrix(z, "z")
  if (ncol(z) != ncol(x)) abort_input("{.arg x} and {.arg z} must have the same number of columns.")
  check_allocation(2 * 8 * as.double(nrow(x)) * nrow(z),
                   cli::format_inline("The {nrow(x)} x {nrow(z)} kernel matrix"))
  call_core(.kernel_cross(x, z, spec))
}
