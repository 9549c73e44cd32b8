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
  check_count(n_corrupted, "n_corrupted", 0)
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
  check_count(n, "n", 3)
  if (n_corrupted > n) abort_input("{.arg n_corrupted} cannot exceed {.arg n}.")
  x <- sort(stats::runif(n))
  f <- 2 * sin(2 * pi * x)
  bad <- sort(sample.int(n, n_corrupted))
  sd_i <- rep(sqrt(noise_var), n)
  sd_i[bad] <- 0.5 + x[bad]
  sim_regression_result(x, f, stats::rnorm(n, 0, sd_i), bad)
}

#' @rdname sim_tang1d
#' @export
sim_le <- function(n = 50, n_corrupted = 33, noise_var = 0.01) {
  check_count(n, "n", 3)
  if (n_corrupted > n) abort_input("{.arg n_corrupted} cannot exceed {.arg n}.")
  x <- sort(stats::runif(n))
  f <- 2 * (exp(-30 * (x - 0.25)^2) + sin(pi * x^2)) - 2
  bad <- sort(sample.int(n, n_corrupted))
  sd_i <- rep(sqrt(noise_var), n)
  sd_i[bad] <- exp(sin(2 * pi * x[bad]))
  sim_regression_result(x, f, stats::rnorm(n, 0, sd_i), bad)
}

sim_regression_result <- function(x, f, noise, bad) {
  is_bad <- seq_along(x) %in% bad
  list(data = data.frame(x = x, y = f + noise), f = f, noise = noise,
       corrupted = bad, is_corrupted = is_bad)
}
