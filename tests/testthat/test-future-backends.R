# The folds of find_label_issues() are future jobs: the same seeded call gives
# the same answer in one process, on multisession workers and on a batchtools
# back end (here batchtools' local back end; a Slurm or SGE plan runs the same
# jobs through future.batchtools with no change to the call).

fold_answer <- function(plan, ...) {
  oplan <- future::plan(plan, ...)
  on.exit(future::plan(oplan), add = TRUE)
  set.seed(5)
  n <- 120
  x <- matrix(stats::runif(n * 3), n, 3)
  y <- sin(4 * x[, 1]) + x[, 2] + stats::rnorm(n, sd = 0.1)
  y[1:6] <- y[1:6] + 3
  res <- find_label_issues(x = x, y = y, method = "forest", folds = 3, threads = 1, verbose = FALSE)
  res$label_issues
}

test_that("folds give the seeded single-process answer under multisession and batchtools", {
  skip_on_cran()
  skip_if_not_installed("future")
  skip_if_not_installed("future.apply")
  skip_if_not_installed("ranger")
  ref <- fold_answer(future::sequential)
  expect_identical(fold_answer(future::multisession, workers = 2), ref)
  skip_if_not_installed("future.batchtools")
  dir <- withr::local_tempdir()
  withr::local_dir(dir)
  expect_identical(fold_answer(future.batchtools::batchtools_local), ref)
})
