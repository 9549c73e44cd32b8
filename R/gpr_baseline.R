#' Baseline GP regressions for the robustness comparisons
#'
#' The non-robust and heuristic competitors of Ament et al. (2024, §6.1), all
#' built on the same GP core as [gpr_pursuit()] (a fit with an empty
#' support, i.e. a standard exact GP with constant mean and homoskedastic
#' noise):
#' * `"standard"`: the GP on the raw labels;
#' * `"winsorize"`: labels clipped to \[Q1 - 1.5 IQR, Q3 + 1.5 IQR\] (Tukey's
#'   rule, applied to both tails; Ax clips one tail depending on the
#'   optimisation direction, which regression does not have);
#' * `"yeo_johnson"`: labels Yeo-Johnson transformed with lambda chosen by
#'   maximum profile likelihood of a normal model; predictions are the
#'   back-transformed predictive median, densities include the Jacobian;
#' * `"trimmed"`: iterative trimming (Li, Li & Shao 2021): fit, keep the
#'   `ceiling((1 - trim) n)` points with the smallest standardised residuals
#'   `|y_i - mu_i| / sd_i` under the current fit, refit on them, and repeat
#'   until the kept set stops changing (at most `iterations` rounds);
#' * `"trimmed_mll"`: the trimmed marginal likelihood of Andrade & Takeda
#'   (2023): with `k = floor(trim n)` outliers, alternate (a) at the current
#'   hyperparameters, the subset step `min_b (r + b)' K^-1 (r + b)` subject to
#'   at most `k` non-zero `b_i` (residual r = `y - m`, `K = K_f + sigma2 I` over all
#'   points), solved by iterative hard thresholding from `b = -r` with step
#'   `lambda_min(K) / 2` (at most 200 steps, relative tolerance 1e-8); the
#'   support of `b` is the outlier set; and (b) the maximum-likelihood fit on
#'   the other `n - k` points; until the outlier set repeats (at most
#'   `iterations` rounds). `trim = 0` is the standard GP. Like the original,
#'   it has no monotonicity guarantee.
#'
#' Every fit is the [gpr_pursuit()] machinery with an empty support and its
#' defaults (ARD RBF kernel, BoTorch's hyperparameter priors).
#'
#' @param x,y Inputs (matrix) and labels.
#' @param method One of the methods above.
#' @param kernel A [gp_kernel()] or `NULL` (the [gpr_pursuit()] default).
#' @param trim Fraction of points trimmed by `"trimmed"` and `"trimmed_mll"`
#'   (Andrade & Takeda's `nu`, the assumed maximal outlier fraction).
#' @param iterations Maximum trimming rounds (each ends with one refit).
#' @param approx,neighbors,threads Covariance backend, as in [gpr_pursuit()]
#'   (`"auto"`: Vecchia above 2,000 labels). With `"vecchia"` the standard GP
#'   is the homoscedastic Vecchia model: the kernel log-hyperparameters, the
#'   constant mean and the log noise variance are fitted by L-BFGS with the
#'   exact gradients of the Vecchia likelihood, on conditioning sets chosen
#'   in the metric of a first fit's length-scales (see
#'   `pursuit_control(vecchia_pilot)`). `"winsorize"`, `"yeo_johnson"` and
#'   `"trimmed"` work on either backend; `"trimmed_mll"` needs the dense
#'   n x n covariance for its subset step and refuses `"vecchia"` (`"auto"`
#'   keeps it dense).
#' @param control Tuning of the pursuit fit, from [gpr_pursuit_control()].
#' @return A fit of class `c("gpr_baseline", "noisylabels_fit")`, with
#'   `print()`, `summary()`, `predict()`, `fitted()`, `residuals()`,
#'   `logLik()`, [noise_scores()], [label_issues()] (see
#'   [gpr_baseline-fit]), [predictive_loglik()], `tidy()`, `glance()`,
#'   `augment()`, `plot()` (see [gpr_baseline-methods]), and accepted by
#'   [find_label_issues()] (each label against the final GP's held-out
#'   prediction of it). Its parts: `fit` (the underlying
#'   `gpr_pursuit` fit with an empty support), `method`, `lambda`
#'   (Yeo-Johnson), `kept` (rows used by the final fit), `rounds` (trimming
#'   rounds run), `converged` (the trimmed set stopped changing; `TRUE`
#'   for the untrimmed methods), `n`, the training data `x`, `y`, and as
#'   every fit `task` (`"regression"`) and `has_p_wrong` (`TRUE`).
#' @references Li, Z.-Z., Li, L. and Shao, Z. (2021). Robust Gaussian process
#'   regression based on iterative trimming. Astronomy and Computing 36,
#'   100483. \doi{10.1016/j.ascom.2021.100483}
#'
#'   Andrade, D. and Takeda, A. (2023). Robust Gaussian process regression
#'   with the trimmed marginal likelihood. UAI 2023, PMLR 216, 67-76.
#' @examples
#' set.seed(1)
#' s <- sim_friedman(60, corruption = "constant", prob = 0.1)
#' b <- gpr_baseline(s$x, s$y, "winsorize")
#' head(predict(b, s$x))
#' # the homoscedastic Vecchia GP (the default above 2,000 labels)
#' bv <- gpr_baseline(s$x, s$y, approx = "vecchia", neighbors = 15)
#' bv
#' @export
gpr_baseline <- function(x, y, method = c("standard", "winsorize", "yeo_johnson", "trimmed",
                                    "trimmed_mll"),
                         kernel = NULL, trim = 0.2, iterations = 10,
                         approx = c("auto", "dense", "vecchia"), neighbors = 20L,
                         threads = getOption("noisylabels.threads", 1L),
                         control = gpr_pursuit_control()) {
  method <- match_arg(method)
  approx <- match_arg(approx)
  x <- check_x_matrix(x, "x")
  y <- check_y_numeric(y, nrow(x))
  if (length(y) < 5L) {
    abort_input("{.fn gpr_baseline} needs at least 5 observations, not {length(y)}.",
                class = "noisylabels_error_too_few")
  }
  if (method == "trimmed_mll") {
    if (approx == "vecchia") {
      abort_input(c("{.code method = \"trimmed_mll\"} cannot use {.code approx = \"vecchia\"}.",
                    "i" = "Its subset step works on the dense n x n covariance of all points.",
                    "i" = "Use {.code method = \"trimmed\"} (iterative trimming) or {.fn gpr_pursuit} with Vecchia, or {.code approx = \"dense\"}."),
                  class = "noisylabels_error_input")
    }
    approx <- "dense"
  }
  check_number(trim, "trim", 0, 1, open_upper = TRUE)
  iterations <- check_count(iterations, "iterations")
  gp <- function(xx, yy) {
    # refine = FALSE: a standard GP, no outlier variances at all
    gpr_pursuit(xx, yy, kernel = kernel, direction = "forward", n_outliers = 0L,
                refine = FALSE, approx = approx, neighbors = neighbors, threads = threads,
                control = control)
  }
  lambda <- NULL
  kept <- seq_along(y)
  rounds <- 0L
  converged <- TRUE
  if (method == "standard") {
    fit <- gp(x, y)
  } else if (method == "winsorize") {
    q <- stats::quantile(y, c(0.25, 0.75), names = FALSE)
    iqr <- q[2] - q[1]
    fit <- gp(x, pmin(pmax(y, q[1] - 1.5 * iqr), q[2] + 1.5 * iqr))
  } else if (method == "yeo_johnson") {
    lambda <- yeo_johnson_lambda(y)
    fit <- gp(x, yeo_johnson(y, lambda))
  } else if (method == "trimmed") {
    fit <- gp(x, y)
    keep_n <- max(5L, ceiling((1 - trim) * length(y)))
    converged <- keep_n >= length(y)
    for (it in seq_len(if (converged) 0L else iterations)) {
      p <- predict(fit, x, se.fit = TRUE)
      z <- abs(y - p$fit) / p$sd
      new_kept <- sort(order(z)[seq_len(keep_n)])
      if (rounds > 0L && identical(new_kept, kept)) {
        converged <- TRUE
        break
      }
      kept <- new_kept
      rounds <- rounds + 1L
      fit <- gp(x[kept, , drop = FALSE], y[kept])
    }
  } else {
    fit <- gp(x, y)
    n_trim <- as.integer(floor(trim * length(y) + 1e-9))
    if (length(y) - n_trim < 5L) {
      abort_input("{.arg trim} = {trim} leaves fewer than 5 of {length(y)} points.",
                  class = "noisylabels_error_input")
    }
    outliers <- integer()
    converged <- n_trim == 0L
    for (it in seq_len(if (converged) 0L else iterations)) {
      sub <- trimmed_mll_subset(fit, x, y, n_trim)
      if (rounds > 0L && identical(sub$outliers, outliers)) {
        converged <- TRUE
        break
      }
      outliers <- sub$outliers
      kept <- setdiff(seq_along(y), outliers)
      rounds <- rounds + 1L
      fit <- gp(x[kept, , drop = FALSE], y[kept])
    }
  }
  if (!converged) {
    warn_convergence(c("Trimming ({.val {method}}) did not settle on a set within {iterations} round{?s}.",
                       "i" = "Raise {.arg iterations}."))
  }
  new_noisylabels_fit(list(fit = fit, method = method, lambda = lambda, kept = kept, rounds = rounds,
                           converged = converged, n = length(y), x = x, y = y),
                      "gpr_baseline", task = "regression", p_wrong = TRUE)
}

# Trimmed-MLL subset step at the hyperparameters of `fit` (a gpr_pursuit fit
# with an empty support, possibly on a subset): r over all n points on the
# fit's standardised scales, K = K_f + sigma2 I formed by the covariance
# operator in C++, then iterative hard thresholding there.
trimmed_mll_subset <- function(fit, x, y, n_trim) {
  st <- fit$steps[[fit$selected]]
  xs <- scale_inputs(x, fit$x_center, fit$x_scale)
  spec <- kernel_spec(kernel_resolve(fit$kernel, xs))
  r <- (y - fit$y_center) / fit$y_scale - st$mean
  call_core(.gpr_trimmed_subset(xs, spec, exp(st$log_noise), r, n_trim, 200L, 1e-8,
                                fit$control$backend))
}

#' @export
print.gpr_baseline <- function(x, ...) {
  check_fit(x, "gpr_baseline")
  on.exit(cli::cat_line("  covariance: ", pursuit_approx_text(x$fit)), add = TRUE)
  cli::cat_line("Baseline GP regression: ", x$method,
                if (!is.null(x$lambda)) sprintf(" (lambda = %.3f)", x$lambda) else "",
                if (x$method %in% c("trimmed", "trimmed_mll")) {
                  sprintf(" (%d of %d points kept, %d round%s)", length(x$kept), x$n,
                          x$rounds, if (x$rounds == 1L) "" else "s")
                } else "")
  invisible(x)
}

#' @rdname gpr_baseline
#' @param object A `gpr_baseline` fit.
#' @param newdata Matrix of new inputs.
#' @param se.fit Return a data frame with `fit` and predictive `sd` (on the
#'   transformed scale for Yeo-Johnson)?
#' @param ... Unused.
#' @export
predict.gpr_baseline <- function(object, newdata = NULL, se.fit = FALSE, ...) {
  check_fit(object, "gpr_baseline")
  check_flag(se.fit, "se.fit")
  p <- predict(object$fit, newdata, se.fit = TRUE)
  if (!is.null(object$lambda)) {
    p$fit_transformed <- p$fit
    p$fit <- yeo_johnson_inverse(p$fit, object$lambda)
  }
  if (se.fit) p else p$fit
}

yeo_johnson <- function(y, lambda) {
  out <- numeric(length(y))
  pos <- y >= 0
  out[pos] <- if (abs(lambda) < 1e-8) log1p(y[pos]) else ((y[pos] + 1)^lambda - 1) / lambda
  out[!pos] <- if (abs(lambda - 2) < 1e-8) -log1p(-y[!pos]) else
    -((1 - y[!pos])^(2 - lambda) - 1) / (2 - lambda)
  out
}

yeo_johnson_inverse <- function(z, lambda) {
  out <- numeric(length(z))
  pos <- z >= 0
  # Beyond the transform's range (lambda z + 1 <= 0 for lambda < 0, or
  # 1 - (2 - lambda) z <= 0 for lambda > 2) the inverse is clamped to its limit.
  out[pos] <- if (abs(lambda) < 1e-8) expm1(z[pos]) else
    pmax(lambda * z[pos] + 1, .Machine$double.eps)^(1 / lambda) - 1
  out[!pos] <- if (abs(lambda - 2) < 1e-8) -expm1(-z[!pos]) else
    1 - pmax(1 - (2 - lambda) * z[!pos], .Machine$double.eps)^(1 / (2 - lambda))
  out
}

# Maximum profile likelihood of a normal model for the transformed labels.
yeo_johnson_lambda <- function(y) {
  n <- length(y)
  jac <- sum(sign(y) * log1p(abs(y)))
  prof <- function(l) {
    z <- yeo_johnson(y, l)
    -n / 2 * log(mean((z - mean(z))^2)) + (l - 1) * jac
  }
  stats::optimize(prof, c(-3, 5), maximum = TRUE)$maximum
}
