test_that("shards = 2 is iterative parameter mixing of per-shard epochs, the same under any plan", {
  skip_if_not_installed("future.apply")
  dat <- sgd_toy(n = 300, d = 3, flip = 0.1)
  old <- future::plan("sequential")
  on.exit(future::plan(old), add = TRUE)
  fit <- suppressMessages(suppressWarnings(sgd_robust(dat$x, dat$y, loss = "hinge", epochs = 1, seed = 21,
                                                      shards = 2, control = sgd_robust_control(eta = 0.1, option = "A"))))
  # one epoch by hand: the seeded split, one fit per shard, size-weighted average
  perm <- noisylabels:::sgd_seeded_sample(300, 300, 21)
  blocks <- split(perm, cut(seq_len(300), 2, labels = FALSE))
  parts <- lapply(1:2, function(s) {
    rows <- sort(blocks[[s]])
    coef(suppressWarnings(sgd_robust(dat$x[rows, ], dat$y[rows], loss = "hinge", epochs = 1,
                                     seed = noisylabels:::sgd_chunk_seed(21, 1, s), control = sgd_robust_control(eta = 0.1, option = "A"))))
  })
  expect_equal(coef(fit), (parts[[1]] * 150 + parts[[2]] * 150) / 300, tolerance = 1e-14)
  expect_false(isTRUE(all.equal(parts[[1]], parts[[2]])))
  # several epochs: the same under a multisession plan as sequentially
  seq_fit <- suppressMessages(suppressWarnings(sgd_robust(dat$x, dat$y, epochs = 4, seed = 3,
                                                          shards = 2)))
  expect_length(seq_fit$epoch_seconds, 4L)
  expect_lt(mean(predict(seq_fit, dat$x) != dat$y), 0.2)
  skip_on_cran()
  future::plan("multisession", workers = 2)
  par_fit <- suppressMessages(suppressWarnings(sgd_robust(dat$x, dat$y, epochs = 4, seed = 3,
                                                          shards = 2)))
  expect_identical(coef(par_fit), coef(seq_fit))
  expect_error(sgd_robust(dat$x, dat$y, shards = 2, control = sgd_robust_control(n_iter_no_change = 2)),
               class = "noisylabels_error_input")
})

test_that("file shards read their own chunks and agree with in-memory chunk mixing", {
  skip_if_not_installed("future.apply")
  dat <- sgd_toy(n = 200, d = 3, flip = 0.1)
  f <- write_libsvm_test(round(dat$x, 6), dat$y, tempfile())
  on.exit(unlink(f))
  fit <- suppressMessages(suppressWarnings(sgd_robust(f, loss = "logistic", epochs = 3, seed = 2,
                                                      shards = 2, chunk_rows = 50)))
  expect_equal(fit$n, 200)
  expect_equal(fit$shards, 2L)
  expect_lt(mean(predict(fit, f) != dat$y), 0.2)
})

test_that("a file with fewer chunks than shards is cut so that every shard trains on rows", {
  skip_if_not_installed("future.apply")
  old <- future::plan("sequential")
  on.exit(future::plan(old), add = TRUE)
  dat <- sgd_toy(n = 120, d = 3, flip = 0.1)
  path <- write_libsvm_test(dat$x, dat$y, tempfile(fileext = ".svm"))
  # one file of 120 rows, 4 shards: chunks of 30 rows, shard s reads chunk s
  fit <- suppressWarnings(sgd_robust(path, loss = "hinge", epochs = 1,
                                     seed = 21, shards = 4, control = sgd_robust_control(eta = 0.1, option = "A")))
  expect_equal(fit$shard_rows, rep(30, 4))
  # the mixed model is the average of the four shards' one-epoch fits, each
  # seeded as the shard's reader seeds its chunk
  parts <- lapply(1:4, function(s) {
    rows <- (s - 1) * 30 + 1:30
    seed <- noisylabels:::sgd_chunk_seed(noisylabels:::sgd_chunk_seed(21, 1, s), 1, s)
    coef(suppressWarnings(sgd_robust(dat$x[rows, ], dat$y[rows], loss = "hinge", epochs = 1, seed = seed, control = sgd_robust_control(eta = 0.1, option = "A"))))
  })
  expect_equal(as.vector(coef(fit)), as.vector(Reduce(`+`, parts) / 4), tolerance = 1e-12)
  # more shards than rows: the empty shards take no part
  small <- write_libsvm_test(dat$x[1:6, ], dat$y[1:6], tempfile(fileext = ".svm"))
  fit8 <- suppressWarnings(sgd_robust(small, loss = "hinge", epochs = 1, seed = 2,
                                      shards = 8, control = sgd_robust_control(eta = 0.1)))
  expect_equal(sum(fit8$shard_rows), 6)
  expect_true(all(is.finite(coef(fit8))))
})
