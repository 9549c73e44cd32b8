# Independent plain-R reference implementations used by the GP tests.

ref_kernel <- function(type, x, z, par, categorical = rep(FALSE, ncol(x))) {
  x <- as.matrix(x); z <- as.matrix(z)
  out <- matrix(0, nrow(x), nrow(z))
  for (i in seq_len(nrow(x))) for (j in seq_len(nrow(z))) {
    a <- x[i, ]; b <- z[j, ]
    if (type == "linear") {
      out[i, j] <- par$bias + par$variance * sum(a * b)
    } else if (type == "mixed") {
      dm <- ifelse(categorical, as.numeric(a != b), (a - b)^2)
      out[i, j] <- par$variance * exp(-0.5 * sum(par$precision * dm)) + par$bias
    } else {
      r <- sqrt(sum(((a - b) / par$lengthscale)^2))
      out[i, j] <- par$variance * switch(type,
        rbf = exp(-r^2 / 2),
        matern12 = exp(-r),
        matern32 = (1 + sqrt(3) * r) * exp(-sqrt(3) * r),
        matern52 = (1 + sqrt(5) * r + 5 * r^2 / 3) * exp(-sqrt(5) * r))
    }
  }
  out
}

# Central finite-difference gradient of f at x.
fd_grad <- function(f, x, h = 1e-5) {
  vapply(seq_along(x), function(j) {
    e <- replace(numeric(length(x)), j, h)
    (f(x + e) - f(x - e)) / (2 * h)
  }, numeric(1))
}

gauss_nll <- function(A, r) {
  R <- chol(A)
  a <- backsolve(R, forwardsolve(t(R), r))
  0.5 * sum(r * a) + sum(log(diag(R))) + 0.5 * length(r) * log(2 * pi)
}

# Conditioning sets by brute force: the m nearest earlier points (order 1..n).
brute_neighbors <- function(x, m) {
  n <- nrow(x)
  t(vapply(seq_len(n), function(i) {
    prev <- seq_len(i - 1L)
    take <- if (i > 1) prev[order(colSums((t(x[prev, , drop = FALSE]) - x[i, ])^2))][seq_len(min(m, i - 1L))] else integer()
    c(as.integer(take - 1L), rep(-1L, m - length(take)))
  }, integer(m)))
}
