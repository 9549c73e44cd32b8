# The regression simulators of R/sim-regression.R: Tang et al.'s three
# examples, Friedman / Hartmann-6 and the Andrade & Takeda outliers.

test_that("Tang's generators return the documented function, noise and corrupted set", {
  set.seed(1)
  d <- sim_tang1d(n = 40, n_corrupted = 7, noise_var = 0.05, corrupt_var = 0.75)
  x <- seq(-1, 1, length.out = 40)
  expect_equal(d$data$x, x)
  expect_equal(d$f, cos(3 * pi * x) + sin(pi * x) + 2 * x^2)
  expect_equal(d$data$y, d$f + d$noise)
  expect_length(d$corrupted, 7)
  expect_identical(which(d$is_corrupted), d$corrupted)
  # the corrupted labels carry the larger variance (pooled over draws)
  z <- replicate(200, {
    s <- sim_tang1d(n = 24, n_corrupted = 10)
    c(var(s$noise[s$is_corrupted]), var(s$noise[!s$is_corrupted]))
  })
  expect_equal(mean(z[1, ]), 0.75, tolerance = 0.1)
  expect_equal(mean(z[2, ]), 0.05, tolerance = 0.1)

  g <- sim_goldberg(n = 30, n_corrupted = 20)
  expect_equal(g$f, 2 * sin(2 * pi * g$data$x))
  expect_false(is.unsorted(g$data$x))
  expect_length(g$corrupted, 20)
  l <- sim_le(n = 50, n_corrupted = 33)
  xl <- l$data$x
  expect_equal(l$f, 2 * (exp(-30 * (xl - 0.25)^2) + sin(pi * xl^2)) - 2)
  expect_equal(l$data$y - l$f, l$noise)
  expect_identical(which(l$is_corrupted), l$corrupted)
})

test_that("Friedman and Hartmann-6 match their closed forms; corruption follows prob", {
  set.seed(2)
  s <- sim_friedman(400, d = 10, corruption = "constant", prob = 0.3)
  x <- s$x
  expect_equal(dim(x), c(400L, 10L))
  expect_equal(s$f, 10 * sin(pi * x[, 1] * x[, 2]) + 20 * (x[, 3] - 0.5)^2 + 10 * x[, 4] + 5 * x[, 5])
  expect_equal(mean(s$is_corrupted), 0.3, tolerance = 0.2)
  expect_true(all(s$y[s$is_corrupted] == s$y[s$corrupted[1]]))  # one constant
  expect_equal(s$y[!s$is_corrupted], s$y_clean[!s$is_corrupted])
  # Hartmann-6: the known global maximiser of the (negated) function
  xstar <- rbind(c(0.20169, 0.150011, 0.476874, 0.275332, 0.311652, 0.6573))
  expect_equal(hartmann6(xstar), 3.32237, tolerance = 1e-5)
  h <- sim_hartmann6(200)
  expect_true(all(h$f >= 0 & h$f <= 3.32237))
  expect_false(any(h$is_corrupted))
})

test_that("add_outliers corrupts exactly floor(ratio * n) labels by at least 3 sd", {
  set.seed(3)
  x <- matrix(rnorm(200), 100, 2)
  y <- rnorm(100)
  for (type in c("uniform", "asymmetric")) {
    o <- add_outliers(x, y, type, 0.15)
    expect_length(o$corrupted, 15)
    expect_true(all(abs(o$y[o$corrupted] - y[o$corrupted]) >= 3 * sd(y) - 1e-12))
    expect_equal(o$y[-o$corrupted], y[-o$corrupted])
  }
  o <- add_outliers(x, y, "focused", 0.1)
  expect_length(o$corrupted, 10)
  expect_true(all(o$y[o$corrupted] < median(y) - 3 * sd(y) + 1e-12))
})

test_that("the simulators reject bad arguments with classed errors", {
  err <- "noisylabels_error_input"
  expect_error(sim_tang1d(n = 5, n_corrupted = 6), class = err)
  expect_error(sim_tang1d(noise_var = -1), class = err)
  expect_error(sim_goldberg(n_corrupted = -1), class = err)
  expect_error(sim_goldberg(noise_var = -0.1), class = err)
  expect_error(sim_le(n = 10, n_corrupted = 11), class = err)
  expect_error(sim_le(n_corrupted = 2.5), class = err)
  expect_error(sim_friedman(10, d = 4), class = err)
  expect_error(sim_hartmann6(10, prob = 2), class = err)
  expect_error(add_outliers(matrix(1:4, 2), 1:2, ratio = -1), class = err)
})
