test_that("read_libsvm reads plain and compressed files", {
  lines <- c("+1 1:0.5 3:1", "# a comment line", "-1 2:2   4:-1.5 # trailing comment", "", "1 1:1e-3")
  ref <- matrix(c(0.5, 0, 1, 0, 0, 2, 0, -1.5, 1e-3, 0, 0, 0), 3, 4, byrow = TRUE)
  for (comp in c("none", "gzip", "bzip2", "xz")) {
    f <- tempfile()
    con <- switch(comp, none = file(f, "w"), gzip = gzfile(f, "w"), bzip2 = bzfile(f, "w"),
                  xz = xzfile(f, "w"))
    writeLines(lines, con); close(con)
    d <- read_libsvm(f)
    expect_s4_class(d$x, "dgCMatrix")
    expect_equal(as.matrix(d$x), ref, ignore_attr = TRUE, label = comp)
    expect_equal(d$y, c(1, -1, 1))
  }
  f <- tempfile(); writeLines(lines, f)
  expect_equal(ncol(read_libsvm(f, n_features = 10)$x), 10)
  expect_error(read_libsvm(f, n_features = 2), class = "noisylabels_error_input")
})

test_that("malformed LIBSVM lines give an error with the line number", {
  f <- tempfile()
  writeLines(c("+1 1:0.5", "-1 2:2", "+1 3-1", "-1 1:1"), f)
  err <- expect_error(read_libsvm(f), class = "noisylabels_error_libsvm")
  expect_equal(err$line, 3L)
  expect_match(conditionMessage(err), "line 3")
  writeLines(c("+1 1:0.5", "abc 2:2"), f)
  err <- expect_error(read_libsvm(f), class = "noisylabels_error_libsvm")
  expect_equal(err$line, 2L)
  writeLines(c("+1 1:0.5", "-1 2:1", "+1 3:1 2:1"), f)
  err <- expect_error(read_libsvm(f), class = "noisylabels_error_input", regexp = "increasing")
  expect_equal(err$line, 3L)
  writeLines(c("+1 0:0.5"), f)
  expect_error(read_libsvm(f), class = "noisylabels_error_libsvm")
  writeLines(c("+1 1:abc"), f)
  expect_error(read_libsvm(f), class = "noisylabels_error_libsvm")
  expect_error(read_libsvm(tempfile()), class = "noisylabels_error_input")
})

test_that("read_libsvm reads the a7a files when the shared data are present", {
  path <- shared_data_path("a7a", "a7a.xz")
  skip_if(is.null(path), "shared data (a7a) not present")
  d <- read_libsvm(path, n_features = 123)
  expect_equal(dim(d$x), c(16100L, 123L))
  expect_equal(as.vector(table(d$y)), c(12182L, 3918L))
  expect_true(all(d$x@x == 1))  # one-hot coded Adult attributes
  expect_true(all(Matrix::rowSums(d$x) <= 14))  # at most one of 123 indicators per attribute group
})
