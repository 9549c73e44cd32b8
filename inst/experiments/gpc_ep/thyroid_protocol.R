# The Table-1 protocol of Kim & Ghahramani (2008) on mclust::thyroid, as
# functions shared by thyroid_table1.R (the full run) and the gpc-ep vignette
# (a live reduced run). See thyroid_table1.R for the description.

thyroid_data <- function() {
  thyroid <- NULL
  utils::data("thyroid", package = "mclust", envir = environment())
  list(x = as.matrix(thyroid[, -1]),
       label = factor(ifelse(thyroid$Diagnosis == "Normal", "normal", "not normal"),
                      levels = c("normal", "not normal")))
}

thyroid_models <- list(former = list(epsilon = 0, rule = "tilted"),
                       paper = list(epsilon = "learn", rule = "paper"),
                       tilted = list(epsilon = "learn", rule = "tilted"))

# One split: 21 test points, the rest for training; flips nested along one
# random permutation of the training set. One row per (flips, model).
thyroid_split <- function(split, flip_levels = c(0, 1, 3, 5, 7, 9),
                          models = names(thyroid_models), data = thyroid_data(),
                          control = noisylabels::gpc_ep_control(min_sweeps = 1, tol_outer = 1e-3)) {
  x_all <- data$x
  lab <- data$label
  set.seed(1000 + split)
  test <- sample(nrow(x_all), 21)
  train <- setdiff(seq_len(nrow(x_all)), test)
  perm <- sample(length(train))
  rows <- list()
  for (k in flip_levels) {
    y <- lab[train]
    idx <- perm[seq_len(k)]
    y[idx] <- ifelse(y[idx] == "normal", "not normal", "normal")
    for (m in models) {
      set.seed(split * 100 + k)
      tm <- system.time(fit <- withCallingHandlers(
        noisylabels::gpc_ep(x_all[train, ], y, epsilon = thyroid_models[[m]]$epsilon,
                            epsilon_update = thyroid_models[[m]]$rule, control = control),
        warning = function(w) invokeRestart("muffleWarning")))
      err <- mean(stats::predict(fit, x_all[test, ]) != lab[test])
      s <- noisylabels::noise_scores(fit)
      rows[[length(rows) + 1]] <- data.frame(
        split = split, flips = k, model = m, log_z = fit$log_z, test_error = err,
        epsilon = fit$epsilon, flagged = sum(s > 0.5), flagged_true = sum(s[idx] > 0.5),
        test_normal = sum(lab[test] == "normal"), converged = fit$converged,
        outer_iterations = fit$outer_iterations, seconds = unname(tm[3]))
    }
  }
  do.call(rbind, rows)
}
