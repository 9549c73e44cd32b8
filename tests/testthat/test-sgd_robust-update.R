test_that("update() on the second half after a fit on the first equals a two-chunk stream", {
  dat <- sgd_toy(n = 120, d = 3, flip = 0.1)
  x1 <- dat$x[1:60, ]; y1 <- dat$y[1:60]
  x2 <- dat$x[61:120, ]; y2 <- dat$y[61:120]
  for (cfg in list(list(loss = "smooth_ramp", method = "sgd", option = "B"),
                   list(loss = "hinge", method = "sgd", option = "A"),
                   list(loss = "logistic", method = "asgd", option = "B"),
                   list(loss = "gompertz", method = "sgd", option = "B", bias = "separate"))) {
    args <- c(cfg, list(lambda = 1e-3, epochs = 1L, seed = 17))
    first <- suppressMessages(suppressWarnings(do.call(sgd_robust, c(list(x1, y1), args))))
    up <- suppressMessages(update(first, x2, y2, seed = noisylabels:::sgd_chunk_seed(17, 1, 2)))
    stream <- suppressMessages(suppressWarnings(
      do.call(sgd_robust, c(list(dat$x, dat$y), args, list(chunk_rows = 60L)))))
    expect_identical(coef(up), coef(stream), label = cfg$loss)
    expect_equal(up$n_seen, 120)
    expect_equal(nrow(up$trace), 2L)
    expect_equal(up$margins, stream$margins[61:120], tolerance = 1e-12)
    # and it moved: the second half changed the model
    expect_false(isTRUE(all.equal(coef(first), coef(up))))
  }
})

test_that("update() refuses new classes, other columns and negative weights", {
  dat <- sgd_toy(n = 60, d = 3)
  fit <- suppressWarnings(sgd_robust(dat$x, dat$y, loss = "hinge", seed = 1))
  expect_error(update(fit, dat$x[1:5, ], c(1, -1, 2, 1, 1)),
               class = "noisylabels_error_unknown_class")
  expect_error(update(fit, dat$x[1:5, ], c(1, -1, 2, 1, 1)), class = "noisylabels_error_input")
  expect_error(update(fit, dat$x[1:5, 1:2], c(1, -1, 1, 1, 1)), class = "noisylabels_error_input")
  expect_error(update(fit, dat$x[1:5, ], c(1, -1, 1, 1, 1), weights = c(1, 1, -1, 1, 1)),
               class = "noisylabels_error_input")
  d3 <- sgd_toy3(n = 90)
  f3 <- suppressWarnings(sgd_robust(d3$x, d3$y, loss = "hinge", seed = 1))
  expect_error(update(f3, d3$x[1:3, ], c("a", "d", "b")), class = "noisylabels_error_unknown_class",
               regexp = "d")
  # a single-class chunk is fine
  up <- suppressMessages(update(f3, d3$x[d3$y == "a", ], d3$y[d3$y == "a"], seed = 2))
  expect_s3_class(up, "sgd_robust")
  expect_equal(up$n_seen, 90 + sum(d3$y == "a"))
})
