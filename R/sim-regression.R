# Regression problems with known corrupted labels: the three examples of
# Tang, Zhu & de Jong (2021, Fig. 2), the test problems of Ament et al. (2024,
# §6.1) and the outlier generators of Andrade & Takeda (2023) used in the UCI
# experiments. (One file: the Tang generators used to live in
# R/sim-regression.R next to this one.)

corrupt_regression <- function(f, y, corruption, prob, scale, constant) {
  n <- length(y)
  bad <- stats::runif(n) < prob
  k <- sum(bad)
  y_obs <- y
  if (k > 0) {
    y_obs[bad] <- switch(corruption,
      none = y[bad],
      uniform = stats::runif(k, min(f) - scale, max(f) + scale),
      constant = constant,
      student_t = f[bad] + scale * stats::rt(k, df = 2))
  }
  if (corruption == "none") bad[] <- FALSE
  list(y = y_obs, is_corrupted = bad, corrupted = which(bad))
}

#' Friedman and Hartmann-6 regression problems with corrupted labels
#'
#' `sim_friedman()`: x ~ U\[0, 1\]^d (d >= 5), f = 10 sin(pi x1 x2) +
#' 20 (x3 - 0.5)^2 + 10 x4 + 5 x5 (the remaining columns are irrelevant;
#' Friedman 1991, "Friedman10" for d = 10). `sim_hartmann6()`: x ~ U\[0, 1\]^6
#' and f the negative of the six-dimensional Hartmann function scaled as in the
#' BO literature (range about \[0, 3.32\]).
#'
#' Each label is independently corrupted with probability `prob` (BoTorch's
#' `CorruptedTestProblem` pattern) by
#' * `"uniform"`: a value drawn uniformly on \[min f - scale, max f + scale\];
#' * `"constant"`: the value `constant`;
#' * `"student_t"`: f + scale * t_2 (heavy-tailed noise around the truth).
#' The paper's exact constants were lost; these are our documented defaults:
#' `scale` = sd(f) and `constant` = max(f) + 3 sd(f) of the drawn sample
#' (sd(f) taken as 0 for a single point). A given `scale` or `constant` must
#' be a finite number (`scale` >= 0).
#'
#' @param n Number of points.
#' @param d Input dimension of the Friedman problem.
#' @param noise_sd Standard deviation of the Gaussian observation noise.
#' @param corruption `"none"`, `"uniform"`, `"constant"` or `"student_t"`.
#' @param prob Corruption probability per label.
#' @param scale,constant Corruption parameters (see Details); `NULL` = default.
#' @return A list: `x` (n x d matrix), `y` (observed, corrupted labels),
#'   `f` (noise-free function values), `y_clean` (labels before corruption),
#'   `is_corrupted` (logical), `corrupted` (indices).
#' @examples
#' set.seed(1)
#' s <- sim_friedman(50, corruption = "constant", prob = 0.1)
#' table(s$is_corrupted)
#' h <- sim_hartmann6(20)
#' range(h$f)
#' @export
sim_friedman <- function(n, d = 10, noise_sd = 1,
                         corruption = c("none", "uniform", "constant", "student_t"),
                         prob = 0, scale = NULL, constant = NULL) {
  corruption <- match_arg(corruption)
  n <- check_count(n, "n")
  d <- check_count(d, "d", lower = 5)
  check_allocation(8 * 4 * as.double(n) * (d + 3), "The simulated data")
  check_number(noise_sd, "noise_sd", 0)
  check_number(prob, "prob", 0, 1)
  x <- matrix(stats::runif(n * d), n, d, dimnames = list(NULL, paste0("x", seq_len(d))))
  f <- 10 * sin(pi * x[, 1] * x[, 2]) + 20 * (x[, 3] - 0.5)^2 + 10 * x[, 4] + 5 * x[, 5]
  sim_finish(x, f, noise_sd, corruption, prob, scale, constant)
}

#' @rdname sim_friedman
#' @export
sim_hartmann6 <- function(n, noise_sd = 0.05,
                          corruption = c("none", "uniform", "constant", "student_t"),
                          prob = 0, scale = NULL, constant = NULL) {
  corruption <- match_arg(corruption)
  n <- check_count(n, "n")
  check_allocation(8 * 4 * as.double(n) * 9, "The simulated data")
  check_number(noise_sd, "noise_sd", 0)
  check_number(prob, "prob", 0, 1)
  x <- matrix(stats::runif(n * 6), n, 6, dimnames = list(NULL, paste0("x", 1:6)))
  f <- hartmann6(x)
  sim_finish(x, f, noise_sd, corruption, prob, scale, constant)
}

sim_finish <- function(x, f, noise_sd, corruption, prob, scale, constant,
                       call = parent.frame()) {
  n <- length(f)
  if (!is.null(scale)) check_number(scale, "scale", 0, call = call)
  if (!is.null(constant)) check_number(constant, "constant", call = call)
  y <- f + stats::rnorm(n, sd = noise_sd)
  # sd() of a single point is NA: its spread is then 0, not a missing label
  sd_f <- if (n > 1L) stats::sd(f) else 0
  scale <- scale %||% sd_f
  constant <- constant %||% (max(f) + 3 * sd_f)
  cr <- corrupt_regression(f, y, corruption, prob, scale, constant)
  list(x = x, y = cr$y, f = f, y_clean = y, is_corrupted = cr$is_corrupted,
       corrupted = cr$corrupted)
}

# Hartmann-6 (Dixon & Szego 1978), negated so larger is better: max 3.32237.
hartmann6 <- function(x) {
  alpha <- c(1.0, 1.2, 3.0, 3.2)
  A <- rbind(c(10, 3, 17, 3.5, 1.7, 8), c(0.05, 10, 17, 0.1, 8, 14),
             c(3, 3.5, 1.7, 10, 17, 8), c(17, 8, 0.05, 10, 0.1, 14))
  P <- 1e-4 * rbind(c(1312, 1696, 5569, 124, 8283, 5886), c(2329, 4135, 8307, 3736, 1004, 9991),
                    c(2348, 1451, 3522, 2883, 3047, 6650), c(4047, 8828, 8732, 5743, 1091, 381))
  out <- numeric(nrow(x))
  for (j in 1:4) {
    out <- out + alpha[j] * exp(-colSums(A[j, ] * (t(x) - P[j, ])^2))
  }
  out
}

#' Outliers of Andrade & Takeda (2023) for the UCI experiments
#'
#' Exactly `floor(ratio * n)` random points are corrupted, with `s_y = sd(y)`:
#' * `"uniform"`: u ~ U(0, 12 s_y); the label is shifted by `-u - 3 s_y` if
#'   `u < 6 s_y`, else by `u - 3 s_y` (|shift| in \[3, 9\] s_y);
#' * `"asymmetric"`: shift `-0.5 u - 3 s_y` for all corrupted points (the sign
#'   of all shifts flipped with probability 1/2);
#' * `"focused"`: the inputs are moved to the per-column median plus jitter
#'   `0.1 d MAD (U - 1/2)` and the label set to `median(y) - 3 s_y -
#'   0.1 MAD(y) U`.
#'
#' @param x Numeric input matrix.
#' @param y Numeric labels.
#' @param type `"uniform"`, `"asymmetric"` or `"focused"`.
#' @param ratio Fraction of points to corrupt.
#' @return A list: `x`, `y` (corrupted), `is_corrupted`, `corrupted`.
#' @examples
#' set.seed(1)
#' o <- add_outliers(matrix(rnorm(40), 20), rnorm(20), "focused", 0.2)
#' o$corrupted
#' @export
add_outliers <- function(x, y, type = c("uniform", "asymmetric", "focused"), ratio = 0.1) {
  type <- match_arg(type)
  x <- check_x_matrix(x, "x")
  y <- check_y_numeric(y, nrow(x))
  check_number(ratio, "ratio", 0, 1)
  n <- length(y); d <- ncol(x)
  k <- floor(ratio * n)
  idx <- sort(sample.int(n, k))
  sy <- stats::sd(y)
  if (k > 0) {
    if (type == "uniform") {
      u <- stats::runif(k, 0, 12 * sy)
      y[idx] <- y[idx] + ifelse(u < 6 * sy, -u - 3 * sy, u - 6 * sy + 3 * sy)
    } else if (type == "asymmetric") {
      u <- stats::runif(k, 0, 12 * sy)
      shift <- -0.5 * u - 3 * sy
      if (stats::runif(1) < 0.5) shift <- -shift
      y[idx] <- y[idx] + shift
    } else {
      med <- apply(x, 2, stats::median)
      mad <- apply(x, 2, stats::mad)
      for (i in idx) x[i, ] <- med + 0.1 * d * mad * (stats::runif(d) - 0.5)
      y[idx] <- stats::median(y) - 3 * sy - 0.1 * stats::mad(y) * stats::runif(k)
    }
  }
  bad <- logical(n); bad[idx] <- TRUE
  list(x = x, y = y, is_corrupted = bad, corrupted = idx)
}

#' Synthetic regression data with known corrupted labels (Tang et al., Fig. 2)
#'
#' Generators for the three examples of Tang, Zhu & de Jong (2021, Fig. 2).
#' Each returns the data, the clean function values, and which labels were
#' corrupted, so that detection can be scored with [detection_metrics()].
#'
#' * `sim_tang1d()`: f(x) = cos(3 pi x) + sin(pi x) + 2 x^2 on `n` grid points
#'   in \[-1, 1\]; every label has N(0, `noise_var`) noise, except
#'   `n_corrupted` random labels whose noise is N(0, `corrupt_var`) instead
#'   (variances, following the paper's N(0, sigma_i) convention).
#' * `sim_goldberg()`: Goldberg, Williams & Bishop (1998): x ~ U(0, 1),
#'   f(x) = 2 sin(2 pi x); `n_corrupted` labels carry Goldberg's
#'   heteroscedastic noise with sd 0.5 + x, the others N(0, `noise_var`).
#' * `sim_le()`: the Yuan & Wahba (2004) function used by Le, Smola & Canu
#'   (2005): f(x) = 2 (exp(-30 (x - 0.25)^2) + sin(pi x^2)) - 2, x ~ U(0, 1);
#'   `n_corrupted` labels carry noise with sd exp(sin(2 pi x)), the others
#'   N(0, `noise_var`).
#'
#' The paper does not say how examples 2 and 3 were "contaminated"; mixing a
#' small homoscedastic noise with the published heteroscedastic one on a random
#' subset is our reading.
#'
#' @param n Number of points.
#' @param n_corrupted Number of corrupted labels.
#' @param noise_var Noise variance of the clean labels.
#' @param corrupt_var Noise variance of the corrupted labels (`sim_tang1d()`).
#' @return A list: `data` (data frame with `x`, `y`), `f` (clean function
#'   values), `noise` (the noise added), `corrupted` (indices) and
#'   `is_corrupted` (logical).
#' @examples
#' set.seed(1)
#' d <- sim_tang1d()
#' plot(d$data, pch = ifelse(d$is_corrupted, 4, 16))
#' @export
sim_tang1d <- function(n = 24, n_corrupted = 10, noise_var = 0.05, corrupt_var = 0.75) {
  check_count(n, "n", 3)
  check_allocation(8 * 8 * as.double(n), "The simulated data")
  check_count(n_corrupted, "n_corrupted", 0)
  check_number(noise_var, "noise_var", 0)
  check_number(corrupt_var, "corrupt_var", 0)
  if (n_corrupted > n) abort_input("{.arg n_corrupted} cannot exceed {.arg n}.")
  x <- seq(-1, 1, length.out = n)
  f <- cos(3 * pi * x) + sin(pi * x) + 2 * x^2
  bad <- sort(sample.int(n, n_corrupted))
  noise <- stats::rnorm(n, 0, sqrt(noise_var))
  noise[bad] <- stats::rnorm(n_corrupted, 0, sqrt(corrupt_var))
  sim_regression_result(x, f, noise, bad)
}

#' @rdname sim_tang1d
#' @export
sim_goldberg <- function(n = 30, n_corrupted = 20, noise_var = 0.01) {
  sim_heteroscedastic(n, n_corrupted, noise_var, f = function(x) 2 * sin(2 * pi * x),
                      sd_bad = function(x) 0.5 + x)
}

#' @rdname sim_tang1d
#' @export
sim_le <- function(n = 50, n_corrupted = 33, noise_var = 0.01) {
  sim_heteroscedastic(n, n_corrupted, noise_var,
                      f = function(x) 2 * (exp(-30 * (x - 0.25)^2) + sin(pi * x^2)) - 2,
                      sd_bad = function(x) exp(sin(2 * pi * x)))
}

# Shared by sim_goldberg() and sim_le(): x ~ U(0, 1) sorted, noise sd
# sqrt(noise_var) except at `n_corrupted` random points, where it is
# sd_bad(x). The draws come in the order runif, sample.int, rnorm.
sim_heteroscedastic <- function(n, n_corrupted, noise_var, f, sd_bad, call = parent.frame()) {
  check_count(n, "n", 3, call = call)
  check_allocation(8 * 8 * as.double(n), "The simulated data", call = call)
  check_count(n_corrupted, "n_corrupted", 0, call = call)
  check_number(noise_var, "noise_var", 0, call = call)
  if (n_corrupted > n) abort_input("{.arg n_corrupted} cannot exceed {.arg n}.", call = call)
  x <- sort(stats::runif(n))
  bad <- sort(sample.int(n, n_corrupted))
  sd_i <- rep(sqrt(noise_var), n)
  sd_i[bad] <- sd_bad(x[bad])
  sim_regression_result(x, f(x), stats::rnorm(n, 0, sd_i), bad)
}

sim_regression_result <- function(x, f, noise, bad) {
  is_bad <- seq_along(x) %in% bad
  list(data = data.frame(x = x, y = f + noise), f = f, noise = noise,
       corrupted = bad, is_corrupted = is_bad)
}
