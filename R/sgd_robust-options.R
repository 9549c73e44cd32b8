# Checks the model settings of sgd_robust() and derives the penalty split
# (lambda into its L2 and L1 parts), the loss description and the step guard.
sgd_settings <- function(loss, method, option, bias, multiclass, warm_start, penalty, lambda,
                         l1_ratio, s, alpha, beta, c, eta, epochs, tol, bias_step, step_guard,
                         eta_sample, record_iterates, standardize, verbose, call = parent.frame()) {
  check_number(lambda, "lambda", lower = 0, call = call)
  check_number(l1_ratio, "l1_ratio", lower = 0, upper = 1, call = call)
  lambda_l1 <- switch(penalty, l2 = 0, l1 = lambda, elasticnet = lambda * l1_ratio)
  lambda_l2 <- lambda - lambda_l1
  if (lambda_l1 > 0 && method == "pegasos") {
    abort_input("Pegasos has no L1 penalty; use {.code penalty = \"l2\"}.", call = call)
  }
  if (method == "pegasos" && lambda_l2 == 0) {
    abort_input("Pegasos needs {.arg lambda} > 0 (its step is 1/(lambda t)).", call = call)
  }
  # eta, tol, bias_step, step_guard, eta_sample, record_iterates come from
  # sgd_robust_control(), which checked them
  epochs <- check_count(epochs, "epochs", call = call)
  loss_spec <- sgd_loss_spec(loss, s = s, alpha = alpha, beta = beta, c = c, call = call)
  check_flag(standardize, "standardize", call = call)
  check_flag(verbose, "verbose", call = call)
  list(loss = loss, method = method, option = option, bias = bias, multiclass = multiclass,
       warm_start = warm_start, penalty = penalty, lambda = lambda, l1_ratio = l1_ratio,
       lambda_l1 = lambda_l1, lambda_l2 = lambda_l2, eta = eta, epochs = epochs, tol = tol,
       bias_step = bias_step, eta_sample = eta_sample, record_iterates = record_iterates,
       loss_spec = loss_spec, standardize = standardize, verbose = verbose,
       # record_iterates shows Algorithm 1 exactly as written (tests replay
       # it): no warm start, no step guard.
       guard = if (record_iterates) 0 else step_guard)
}

# The options list the C++ core reads (src/rcpp_sgd.cpp, options_from_list),
# built in one place for sgd_robust() and update(). `cfg` holds the settings
# as sgd_settings() returns them (or sgd_fit_settings() recovers them from a
# fit); the rest is what differs between a fresh fit and a continued one.
sgd_core_options <- function(cfg, eta, epochs, seed, multinomial, early_stop_patience = 0L,
                             t_init = NULL, w_init = NULL, b_init = NULL) {
  opts <- list(method = cfg$method, loss = cfg$loss_spec, lambda = cfg$lambda_l2,
               lambda_l1 = cfg$lambda_l1, early_stop_patience = early_stop_patience, eta = eta,
               epochs = epochs, average = cfg$option == "B", bias = cfg$bias,
               bias_step = cfg$bias_step, record_iterates = isTRUE(cfg$record_iterates),
               seed = as.double(seed), multinomial = multinomial, guard = as.double(cfg$guard),
               guard_max_shrinks = 20L, shuffle = TRUE, t_init = as.double(t_init %||% 0),
               w_init = NULL, b_init = NULL, progress = NULL)
  # list(w_init = NULL) keeps the key; `opts$w_init <- NULL` would drop it
  if (!is.null(w_init)) opts[c("w_init", "b_init")] <- list(w_init, b_init %||% numeric(0))
  opts
}

# The settings of a fit in the shape of sgd_settings(), to continue it.
sgd_fit_settings <- function(object) {
  list(method = object$method, loss_spec = object$loss,
       lambda_l2 = object$lambda_l2 %||% object$lambda, lambda_l1 = object$lambda_l1 %||% 0,
       option = object$option, bias = object$bias_mode, bias_step = object$bias_step,
       guard = object$step_guard %||% 0.25, record_iterates = FALSE)
}
