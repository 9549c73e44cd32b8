# Simulated data for the sparse-EP benchmarks: d = 5 standard normal inputs,
# a smooth non-linear boundary, and a fraction `flip` of training labels
# flipped uniformly at random (test labels clean).
sim_gpc_sparse <- function(n, n_test = 2000, d = 5, flip = 0.1) {
  f <- function(x) sin(1.5 * x[, 1]) + 0.5 * x[, 2]^2 - 0.5 - x[, 3] + 0.5 * x[, 4] * x[, 5]
  x <- matrix(stats::rnorm(n * d), n, d)
  xt <- matrix(stats::rnorm(n_test * d), n_test, d)
  y <- ifelse(f(x) > 0, "pos", "neg")
  flipped <- sample.int(n, round(flip * n))
  y[flipped] <- ifelse(y[flipped] == "pos", "neg", "pos")
  list(x = x, y = factor(y, levels = c("neg", "pos")), truth = seq_len(n) %in% flipped,
       x_test = xt, y_test = factor(ifelse(f(xt) > 0, "pos", "neg"), levels = c("neg", "pos")))
}
