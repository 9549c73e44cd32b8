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
  # below about -1e6 the fit's logistic is flat on the grid of z in [-5, 5]
  check_number(s, "s", lower = -1e6, upper = 1, open_upper = TRUE)
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
  warn_unused_loss_params(loss, s, alpha, beta, c, call = call)
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

# Loss parameters given (other than their defaults) for a loss that does not
# read them: say so rather than ignore them silently.
warn_unused_loss_params <- function(loss, s, alpha, beta, c, call = parent.frame()) {
  uses <- switch(loss, smooth_ramp = c("s", "alpha", "beta"), ramp = "s", gompertz = "c",
                 character())
  given <- c(s = !identical(s, -1) && !identical(s, -1L), alpha = !is.null(alpha),
             beta = !is.null(beta), c = !identical(c, 2) && !identical(c, 2L))
  unused <- setdiff(names(given)[given], uses)
  if (length(unused)) {
    users <- c(s = "ramp and smooth_ramp", alpha = "smooth_ramp", beta = "smooth_ramp", c = "gompertz")
    cli::cli_warn(c("{.code loss = \"{loss}\"} does not use {.arg {unused}}; {cli::qty(length(unused))}{?it is/they are} ignored.",
                    stats::setNames(vapply(unused, function(p) cli::format_inline("{.arg {p}} is a parameter of {users[[p]]}."), ""),
                                    rep("i", length(unused)))),
                  class = c("noisylabels_warning_unused_argument", "noisylabels_warning"), call = call)
  }
  invisible(unused)
}
