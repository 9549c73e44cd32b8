test_that("streaming a LIBSVM file gives the weights of the in-memory fit in the same order", {
  dat <- sgd_toy(n = 150, d = 4, flip = 0.1)
  x <- round(dat$x * (abs(dat$x) > 0.3), 6)
  plain <- write_libsvm_test(x, dat$y, tempfile(fileext = ".svm"))
  gz <- write_libsvm_test(x, dat$y, tempfile(fileext = ".svm.gz"), compress = TRUE)
  on.exit(unlink(c(plain, gz)))
  xs <- Matrix::Matrix(x, sparse = TRUE)
  for (loss in c("smooth_ramp", "logistic")) {
    mem <- suppressMessages(suppressWarnings(
      sgd_robust(xs, dat$y, loss = loss, lambda = 1e-3, epochs = 3, chunk_rows = 40, seed = 8)))
    for (f in c(plain, gz)) {
      fil <- suppressMessages(suppressWarnings(
        sgd_robust(f, loss = loss, lambda = 1e-3, epochs = 3, chunk_rows = 40, seed = 8)))
      expect_identical(unname(coef(fil)), unname(coef(mem)))
      expect_equal(fil$trace, mem$trace)
      expect_equal(noise_scores(fil), noise_scores(mem))
      expect_equal(fil$source, normalizePath(f))
    }
    # a vector of paths is read one after the other
    half1 <- write_libsvm_test(x[1:80, ], dat$y[1:80], tempfile())
    half2 <- write_libsvm_test(x[81:150, ], dat$y[81:150], tempfile())
    two <- suppressMessages(suppressWarnings(
      sgd_robust(c(half1, half2), loss = loss, lambda = 1e-3, epochs = 3, chunk_rows = 40, seed = 8)))
    # chunks restart at the file boundary: 40, 40 | 40, 30 rows, as in memory
    expect_equal(two$n, 150)
    expect_identical(unname(coef(two)), unname(coef(mem)))
    unlink(c(half1, half2))
  }
  # predict() and noise_scores() read files too
  fit <- suppressMessages(suppressWarnings(sgd_robust(xs, dat$y, loss = "logistic", seed = 1)))
  expect_equal(predict(fit, plain, type = "link", chunk_rows = 25),
               predict(fit, xs, type = "link"))
  expect_identical(predict(fit, gz), predict(fit, xs))
  expect_equal(noise_scores(fit, newdata = plain, chunk_rows = 33), noise_scores(fit))
  expect_equal(label_issues(fit, newdata = xs, y = dat$y), label_issues(fit))
  # update() from a file equals update() from the matrix
  u1 <- suppressMessages(update(fit, plain, seed = 4, chunk_rows = 50))
  u2 <- suppressMessages(update(fit, xs, dat$y, seed = 4, chunk_rows = 50))
  expect_identical(coef(u1), coef(u2))
})

test_that("file streaming: missing files and malformed lines are classed errors", {
  expect_error(sgd_robust(tempfile()), class = "noisylabels_error_file")
  expect_error(sgd_robust(tempfile()), class = "noisylabels_error_input")
  f <- tempfile()
  writeLines(c("+1 1:0.5 2:1", "-1 1:1", "+1 2:x", "-1 1:2"), f)
  on.exit(unlink(f))
  expect_error(sgd_robust(f, chunk_rows = 2), class = "noisylabels_error_libsvm", regexp = "line 3")
  expect_error(sgd_robust(f), class = "noisylabels_error_input")
  writeLines(c("+1 1:0.5 2:1", "-1 1:1", "+1 2:3 1:1"), f)
  expect_error(sgd_robust(f, chunk_rows = 1), class = "noisylabels_error_libsvm", regexp = "line 3")
  writeLines(c("+1 1:0.5 2:1", "-1 1:1"), f)
  expect_error(sgd_robust(f, y = c(1, -1)), class = "noisylabels_error_input")
  fit <- suppressMessages(suppressWarnings(sgd_robust(f, loss = "hinge", seed = 1)))
  expect_error(predict(fit, tempfile()), class = "noisylabels_error_file")
  writeLines(c("+1 1:0.5 5:1"), f)
  expect_error(predict(fit, f), class = "noisylabels_error_input", regexp = "feature index")
})

test_that("multiclass fits stream from chunks and files with the automatic step", {
  d3 <- sgd_toy3(n = 150)
  f <- write_libsvm_test(d3$x, as.integer(d3$y), tempfile(fileext = ".svm"))
  on.exit(unlink(f))
  mem <- suppressMessages(suppressWarnings(
    sgd_robust(d3$x, as.integer(d3$y), loss = "hinge", epochs = 2, chunk_rows = 50, seed = 3)))
  fil <- suppressMessages(suppressWarnings(
    sgd_robust(f, loss = "hinge", epochs = 2, chunk_rows = 50, seed = 3)))
  expect_equal(mem$n_classes, 3L)
  expect_identical(unname(coef(fil)), unname(coef(mem)))
  expect_gt(mean(predict(mem, d3$x) == as.integer(d3$y)), 0.8)
})

test_that("a multi-class LIBSVM file gives the in-memory fit of the same rows", {
  dat <- sgd_toy3(n = 150)
  y <- as.integer(dat$y)
  path <- write_libsvm_test(dat$x, y, tempfile(fileext = ".svm"))
  for (chunk in c(40L, 1000L)) {
    from_file <- suppressWarnings(sgd_robust(path, epochs = 3, seed = 5, chunk_rows = chunk))
    in_memory <- suppressWarnings(sgd_robust(dat$x, y, epochs = 3, seed = 5,
                                             chunk_rows = if (chunk < 150) chunk))
    if (chunk < 150) {
      expect_equal(coef(from_file), coef(in_memory), tolerance = 1e-12, ignore_attr = TRUE)
    }
    expect_equal(ncol(coef(from_file)), 3L)
    expect_equal(sort(unique(predict(from_file, dat$x))), 1:3)
  }
})
