# autoplot() is exported by noisylabels and reaches every fit's method.

test_that("autoplot is exported and dispatches to the method of every fit class", {
  skip_if_not_installed("ggplot2")
  expect_true("autoplot" %in% getNamespaceExports("noisylabels"))
  set.seed(1)
  d <- sim_tang1d(n = 20, n_corrupted = 4)
  fits <- list(
    gpr_loo = gpr_loo(y ~ x, data = d$data),
    gpr_pursuit = gpr_pursuit(y ~ x, data = d$data),
    label_dist_vb = {
      sim <- sim_label_dist(U = 15, N = 30, group_size = 5, D = 2, n_test = 0)
      suppressWarnings(label_dist_vb(sim$x, sim$groups, sim$label_dist, control = label_dist_vb_control(max_iter = 5)))
    },
    gpc_ep = {
      x <- matrix(rnorm(40), 20)
      gpc_ep(x, factor(ifelse(x[, 1] > 0, "a", "b")))
    },
    sgd_robust = {
      x <- matrix(rnorm(100), 50)
      suppressWarnings(sgd_robust(x, ifelse(x[, 1] + x[, 2] > 0, 1, -1), epochs = 3))
    }
  )
  for (cl in names(fits)) {
    p <- noisylabels::autoplot(fits[[cl]])
    expect_s3_class(p, "ggplot")
    # the same plot as ggplot2's generic draws through the registered method
    expect_identical(p$labels, ggplot2::autoplot(fits[[cl]])$labels, label = cl)
  }
  expect_error(noisylabels::autoplot(structure(list(), class = "not_a_fit")),
               "autoplot")
})

test_that("library(noisylabels); autoplot(fit) works without attaching ggplot2", {
  skip_on_cran()
  skip_if_not_installed("ggplot2")
  # Needs the package installed (not loaded from source with pkgload).
  path <- getNamespaceInfo("noisylabels", "path")
  skip_if_not(file.exists(file.path(path, "Meta", "package.rds")), "package not installed")
  code <- paste(
    "suppressPackageStartupMessages(library(noisylabels))",
    "set.seed(1); d <- sim_tang1d(n = 15, n_corrupted = 3)",
    "p <- autoplot(gpr_loo(y ~ x, data = d$data))",
    "cat(inherits(p, 'ggplot'), 'package:ggplot2' %in% search(), '\\n')",
    sep = "; ")
  rscript <- file.path(R.home("bin"), "Rscript")
  libs <- paste(c(dirname(path), .libPaths()), collapse = .Platform$path.sep)
  out <- withr::with_envvar(c(R_LIBS = libs),
                            system2(rscript, c("--vanilla", "-e", shQuote(code)), stdout = TRUE, stderr = TRUE))
  expect_identical(trimws(utils::tail(out, 1)), "TRUE FALSE")
})
