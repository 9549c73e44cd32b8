# Folds, chunks and Vecchia pieces of find_label_issues() are future jobs:
# the same seeded call gives the same answer in one process, on multisession
# workers and on a batchtools back end (here batchtools' local back end; a
# Slurm or SGE plan runs the same jobs through future.batchtools with no
# change to the call).

# `call()` under each plan: sequential, multisession (2 workers), and
# batchtools_local (in a temporary directory, which holds its registries).
under_plans <- function(call) {
  run <- function(plan, ...) {
    oplan <- future::plan(plan, ...)
    on.exit(future::plan(oplan), add = TRUE)
    call()
  }
  out <- list(sequential = run(future::sequential),
              multisession = run(future::multisession, workers = 2))
  if (requireNamespace("future.batchtools", quietly = TRUE)) {
    withr::with_dir(withr::local_tempdir(), {
      out$batchtools <- run(future.batchtools::batchtools_local)
    })
  }
  out
}

skip_without_future <- function() {
  skip_on_cran()
  skip_if_not_installed("future")
  skip_if_not_installed("future.apply")
}

fold_answer <- function() {
  set.seed(5)
  n <- 120
  x <- matrix(stats::runif(n * 3), n, 3)
  y <- sin(4 * x[, 1]) + x[, 2] + stats::rnorm(n, sd = 0.1)
  y[1:6] <- y[1:6] + 3
  res <- find_label_issues(x = x, y = y, method = "forest", folds = 3, threads = 1, verbose = FALSE)
  res$label_issues
}

test_that("folds give the seeded single-process answer under multisession and batchtools", {
  skip_without_future()
  skip_if_not_installed("ranger")
  out <- under_plans(fold_answer)
  for (ans in out[-1]) expect_identical(ans, out$sequential)
})

test_that("chunks of a binary or text file give the in-memory answer under every plan", {
  skip_without_future()
  withr::local_seed(7)
  n <- 700
  k <- 3
  true <- sample.int(k, n, TRUE)
  l <- matrix(stats::rnorm(n * k), n, k)
  l[cbind(seq_len(n), true)] <- l[cbind(seq_len(n), true)] + 2
  p <- exp(l) / rowSums(exp(l))
  given <- ifelse(stats::runif(n) < 0.2, sample.int(k, n, TRUE), true)
  bin <- withr::local_tempfile(fileext = ".bin")
  writeBin(as.double(t(p)), bin)
  csv <- withr::local_tempfile(fileext = ".csv")
  # 17 significant digits: the text holds the doubles exactly.
  utils::write.table(format(p, digits = 17), csv, sep = ",", quote = FALSE, row.names = FALSE,
                     col.names = FALSE)
  withr::local_options(noisylabels.chunk_rows = 400)  # 2 chunks, the second of 300 rows
  mem <- find_label_issues(labels = given, pred_probs = p, flag_by = "fdr")
  for (path in c(bin, csv)) {
    out <- under_plans(function() find_label_issues(labels = given, pred_probs = path, flag_by = "fdr"))
    expect_gte(length(out), 2)
    for (ans in out) {
      expect_identical(ans$label_issues, mem$label_issues)
      expect_identical(ans$confident_learning, mem$confident_learning)
      expect_identical(ans$noise_model, mem$noise_model)
    }
  }
})

vecchia_answer <- function(pieces, threads = 1L) {
  withr::local_options(noisylabels.gp_loo_dense_max = 100, noisylabels.vecchia_pieces = pieces)
  set.seed(11)
  n <- 300
  x <- matrix(stats::runif(n * 2), n, 2)
  y <- sin(5 * x[, 1]) + x[, 2] + stats::rnorm(n, sd = 0.1)
  y[1:15] <- y[1:15] + 1
  res <- find_label_issues(x = x, y = y, method = "gp", gp_subsample = 150, threads = threads)
  expect_match(res$method, "Vecchia")
  res$label_issues
}

test_that("Vecchia pieces give the same answer under every plan, and the in-process one to 1e-10", {
  skip_without_future()
  out <- under_plans(function() vecchia_answer(pieces = 3))
  expect_gte(length(out), 2)
  for (ans in out[-1]) expect_identical(ans, out$sequential)
  # The in-process OpenMP pass adds the same per-point terms in another order.
  omp <- vecchia_answer(pieces = NULL, threads = 2L)
  pcs <- out$sequential
  omp <- omp[order(omp$row), ]
  pcs <- pcs[order(pcs$row), ]
  for (col in c("score", "prediction", "residual", "sd", "p_wrong")) {
    expect_type(omp[[col]], "double")
    expect_equal(pcs[[col]], omp[[col]], tolerance = 1e-10)
  }
  # One piece visits the points in the in-process order on one thread: the
  # same additions, so the same numbers.
  expect_identical(vecchia_answer(pieces = 1), vecchia_answer(pieces = NULL))
})

test_that("a bad number of Vecchia pieces is an input error", {
  withr::local_options(noisylabels.vecchia_pieces = 0)
  x <- matrix(stats::runif(40), 20, 2)
  k <- noisylabels:::kernel_resolve(gp_kernel("rbf"), x)
  nn <- matrix(-1L, 20, 2)
  expect_error(noisylabels:::gp_loo(x, x[, 1], k, 0.1, nn), class = "noisylabels_error_input")
})
