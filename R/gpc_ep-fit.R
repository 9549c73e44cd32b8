# The fitting steps behind gpc_ep.default(): one binary fit (the C++ outer
# loop, then the gpc_ep object and its convergence warnings) or one binary
# fit per class (one-vs-rest), and the label handling they share.

# One-vs-rest: one binary fit per class against the rest, each through
# gpc_ep.default() with the same (already resolved) arguments `args`.
gpc_ep_fit_ovr <- function(x, labels, args, verbose, call) {
  kernel <- args$kernel; likelihood <- args$likelihood; epsilon <- args$epsilon
  epsilon_update <- args$epsilon_update; tau <- args$tau; learn_kernel <- args$learn_kernel
  standardize <- args$standardize; approx <- args$approx; inducing <- args$inducing
  control <- args$control
  threads <- args$threads
  cli::cli_inform("Fitting {length(labels$levels)} one-vs-rest classifiers.")
  # One bar over the classes; the binary fits show none of their own.
  bar <- progress_bar("gpc_ep one-vs-rest", total = length(labels$levels), verbose = verbose)
  local_nested_progress()
  fits <- lapply(seq_along(labels$levels), function(k) {
    lv <- labels$levels[k]
    yy <- factor(ifelse(labels$factor == lv, lv, paste0("not ", lv)),
                 levels = c(paste0("not ", lv), lv))
    f <- gpc_ep.default(x, yy, kernel = kernel, likelihood = likelihood, epsilon = epsilon,
                        epsilon_update = epsilon_update, tau = tau, learn_kernel = learn_kernel,
                        standardize = standardize, approx = approx, inducing = inducing,
                        control = control, threads = threads)
    if (!is.null(bar)) bar(k, length(labels$levels))
    f
  })
  names(fits) <- labels$levels
  new_noisylabels_fit(list(fits = fits, levels = labels$levels, y = labels$factor,
                           n = nrow(x), call = call),
                      "gpc_ep_ovr", task = "classification", p_wrong = TRUE)
}

# A binary fit: standardise the inputs, run the dense or sparse outer loop
# in C++, build the gpc_ep object and warn if EP or the outer loop did not
# converge. `frame` is gpc_ep.default()'s frame, named in input errors.
gpc_ep_fit_binary <- function(x, labels, args, verbose, call, frame) {
  n <- nrow(x)
  approx <- args$approx
  control <- args$control
  if (approx == "dense") check_dense_memory(n, copies = 4, call = frame)
  kernel <- args$kernel %||% gpc_ep_default_kernel(args$likelihood)
  kernel <- kernel_resolve_scaled(kernel, x, args$standardize, call = frame)
  learn_eps <- identical(args$epsilon, "learn")
  res <- gpc_ep_run_core(kernel, labels, args, learn_eps, verbose, frame)
  fit <- gpc_ep_new(res, x, kernel, labels, args, learn_eps, call)
  if (learn_eps && gpc_ep_epsilon_collapsed(fit, x)) {
    restart <- gpc_ep_epsilon_restart(fit, x, labels, args, frame, call)
    if (!is.null(restart)) return(restart)
  }
  gpc_ep_warn_unconverged(fit, res, learn_eps, args$learn_kernel, control)
  fit
}

# Epsilon at its lower bound (the core's eps_min, 1e-6) while the fit's
# predictions at the training inputs disagree with more than max(10 %, 2/n)
# of the training labels: the fit explains those labels by the latent
# function's own noise (the kernel's nugget, which the training posterior
# includes and a prediction does not) instead of flips, so its flip
# probabilities are all ~0 while its latent scores still rank the
# disagreeing labels (issue 40: 100 iris rows with 10 flips, 15 % training
# error, 0 flagged).
gpc_ep_epsilon_collapsed <- function(fit, x) {
  fit$epsilon <= 1e-5 && gpc_ep_train_error(fit, x) > max(0.1, 2 / length(fit$y))
}

gpc_ep_train_error <- function(fit, x) {
  mean(sign(predict(fit, x, type = "link")) != fit$y)
}

# Restart a collapsed fit from a data-driven epsilon: the kernel learned
# with epsilon fixed at the training error rate, then epsilon and the kernel
# learned together from there. The restart is kept when its epsilon stays
# off the bound (with a message giving both log Z_EP); if it collapses
# too, the first fit is kept (NULL) and a classed warning says so.
gpc_ep_epsilon_restart <- function(fit, x, labels, args, frame, call) {
  train_error <- gpc_ep_train_error(fit, x)
  e0 <- min(0.45, max(0.01, train_error))
  local_nested_progress()
  a1 <- args
  a1$epsilon <- e0
  k1 <- kernel_resolve_scaled(args$kernel %||% gpc_ep_default_kernel(args$likelihood), x,
                              args$standardize, call = frame)
  r1 <- gpc_ep_run_core(k1, labels, a1, FALSE, FALSE, frame)
  f1 <- gpc_ep_new(r1, x, k1, labels, a1, FALSE, call)
  a2 <- args
  a2$control$epsilon_start <- min(0.45, max(1e-3, f1$epsilon))
  # f1's kernel is on the standardised inputs; resolving it again on x
  # standardises x the same way
  k2 <- kernel_resolve_scaled(f1$kernel, x, args$standardize, call = frame)
  r2 <- gpc_ep_run_core(k2, labels, a2, TRUE, FALSE, frame)
  f2 <- gpc_ep_new(r2, x, k2, labels, a2, TRUE, call)
  if (f2$epsilon <= 1e-5) {
    cli::cli_warn(c("The learned epsilon collapsed to its lower bound (1e-6) although the fit disagrees with {format(100 * train_error, digits = 3)}% of the training labels.",
                    "i" = "Its flip probabilities and flags are then all near 0; a restart from epsilon = {format(e0, digits = 3)} (the training error rate) collapsed too.",
                    "i" = "Rank by {.fn noise_scores}, or fix {.arg epsilon} (e.g. {.code epsilon = {format(e0, digits = 2)}})."),
                  class = c("noisylabels_warning_epsilon_collapse", "noisylabels_warning"))
    return(NULL)
  }
  f2$epsilon_restart <- list(collapsed_log_z = fit$log_z, log_z = f2$log_z,
                             epsilon_start = e0, train_error = train_error)
  cli::cli_inform(c("i" = "The learned epsilon collapsed to its lower bound while the fit disagreed with {format(100 * train_error, digits = 3)}% of the training labels; restarted from epsilon = {format(e0, digits = 3)} (the training error rate): epsilon = {format(f2$epsilon, digits = 3)}.",
                    " " = "log Z_EP {format(f2$log_z, digits = 5)} (collapsed fit: {format(fit$log_z, digits = 5)}); see {.code fit$epsilon_restart}."),
                  class = "noisylabels_message_epsilon_restart")
  gpc_ep_warn_unconverged(f2, r2, TRUE, args$learn_kernel, args$control)
  f2
}

# The C++ outer loop (dense or FITC sparse) on the standardised inputs;
# returns its result list with the flattened kernel (`flat`) and the
# inducing inputs (`ind`) added.
gpc_ep_run_core <- function(kernel, labels, args, learn_eps, verbose, frame) {
  control <- args$control
  approx <- args$approx
  xs <- kernel$xs
  kern <- kernel$kernel
  flat <- kernel_flatten(kern)
  probit_scale <- if (args$likelihood == "step") 0 else 1
  eps0 <- if (learn_eps) control$epsilon_start else args$epsilon
  ind <- if (approx == "sparse") gpc_ep_inducing_inputs(args$inducing, xs, kernel$center, kernel$scale)
  # Progress: outer epsilon iterations, or kernel-optimiser evaluations.
  bar <- progress_bar("gpc_ep", total = if (learn_eps) control$max_outer else NA, verbose = verbose,
                      .envir = frame)
  core_args <- list(labels$y, kernel_spec(kern, flat$log_par), eps0, probit_scale, learn_eps,
    args$epsilon_update, args$learn_kernel, as.integer(which(flat$free) - 1L), flat$lower,
    flat$upper, as.integer(control$max_outer), as.integer(control$lbfgs_steps),
    gpc_ep_ep_options(control, args$tau, joint_default = approx != "sparse"),
    draw_seed(), progress = bar)
  res <- if (approx == "sparse") {
    call_core(do.call(.gpc_ep_sparse_fit, c(list(xs, ind$z), core_args)), call = frame, threads = args$threads)
  } else {
    call_core(do.call(.gpc_ep_fit, c(list(xs), core_args)), call = frame, threads = args$threads)
  }
  progress_done(bar)
  res$flat <- flat
  res$ind <- ind
  res
}

# The gpc_ep object from the core's result.
gpc_ep_new <- function(res, x, kernel, labels, args, learn_eps, call) {
  st <- res$state
  flat <- res$flat
  ind <- res$ind
  n <- nrow(x)
  new_noisylabels_fit(list(
    call = call, x = kernel$xs, x_center = kernel$center, x_scale = kernel$scale,
    y = labels$y, y_factor = labels$factor, levels = labels$levels, n = n,
    rownames = rownames(x) %||% as.character(seq_len(n)), colnames = colnames(x),
    kernel = kernel_unflatten(kernel$kernel, res$log_par), log_par = res$log_par,
    par_names = flat$names, free = flat$free,
    likelihood = args$likelihood, sigma = if (args$likelihood == "step") 0 else 1,
    tau = args$tau, epsilon = res$epsilon, learn_epsilon = learn_eps,
    epsilon_update = args$epsilon_update, learn_kernel = args$learn_kernel,
    log_z = st$log_z, latent_mean = st$mu, latent_var = st$var,
    site_tau = st$site_tau, site_nu = st$site_nu, b = st$b, z = st$z,
    flip_prob = st$flip_prob, jitter = res$jitter,
    converged = res$converged, ep_converged = st$converged, sweeps = st$sweeps,
    reverts = st$reverts, damping = st$damping, negative_tau = st$negative_tau,
    outer_iterations = res$outer_iterations, ep_runs = res$ep_runs,
    ep_failures = res$ep_failures, ep_not_converged = res$ep_not_converged,
    trace = data.frame(iteration = seq_along(res$logz_trace), log_z = res$logz_trace,
                       epsilon = res$eps_trace),
    par_trace = if (nrow(res$par_trace)) {
      structure(exp(res$par_trace), dimnames = list(NULL, flat$names))
    },
    ep_trace = st$trace, message = res$message, control = args$control,
    approx = args$approx, inducing = ind$z, inducing_rule = ind$rule,
    n_inducing = if (args$approx == "sparse") nrow(ind$z) else NULL,
    sparse_beta = res$beta, sparse_cov = res$pred_cov),
    "gpc_ep", task = "classification", p_wrong = TRUE)
}

# Warnings for a fit whose last EP run or whose outer loop did not converge.
gpc_ep_warn_unconverged <- function(fit, res, learn_eps, learn_kernel, control) {
  st <- res$state
  flat <- res$flat
  if (!st$converged) {
    warn_convergence(c("EP did not converge after {st$sweeps} sweep{?s} (the maximum is {control$max_sweeps}).",
                       "i" = "Raise {.code max_sweeps} or lower {.code damping} in {.fn gpc_ep_control}."))
  }
  if ((learn_eps || (learn_kernel && any(flat$free))) && !res$converged) {
    if (startsWith(res$message, "stopped")) {
      warn_convergence(c("The hyperparameter/epsilon loop stopped after {res$outer_iterations} iteration{?s} without converging.",
                         "i" = "EP found no proper posterior at the next step ({res$ep_failures} failed EP run{?s}); the fit is the last proper one. Try other starting hyperparameters or {.code tau = \"clamp\"}."))
    } else {
      warn_convergence(c("The hyperparameter/epsilon loop stopped after {res$outer_iterations} iteration{?s} without converging.",
                         gpc_ep_still_moving(fit),
                         "i" = "Raise {.code max_outer} in {.fn gpc_ep_control}."))
    }
  }
  invisible(fit)
}

# What still moved over the last (up to 5) outer iterations of a fit that
# did not converge, against the tolerances of the convergence test: log Z_EP,
# epsilon and the largest log-hyperparameter change (named). Bullets for
# warn_convergence(); numbers pre-formatted (3 significant digits).
gpc_ep_still_moving <- function(fit, last = 5L) {
  tr <- fit$trace
  ctl <- fit$control
  k <- min(last, nrow(tr) - 1L)
  if (k < 1L) return(character())
  idx <- seq(nrow(tr) - k, nrow(tr))
  f <- function(v) format(signif(v, 3))
  dz <- diff(tr$log_z[idx])
  out <- c("*" = sprintf("log Z_EP changed by %s over the last %d iteration%s (last step %s; tolerance %s).",
                         f(tr$log_z[idx[k + 1L]] - tr$log_z[idx[1]]), k, if (k == 1L) "" else "s", f(dz[k]), f(ctl$tol_outer)))
  if (fit$learn_epsilon) {
    de <- diff(tr$epsilon[idx])
    out <- c(out, "*" = sprintf("epsilon moved by %s (from %s to %s; last step %s; tolerance %s).",
                                f(tr$epsilon[idx[k + 1L]] - tr$epsilon[idx[1]]), f(tr$epsilon[idx[1]]), f(tr$epsilon[idx[k + 1L]]),
                                f(de[k]), f(ctl$tol_outer / 10)))
  }
  pt <- fit$par_trace
  if (!is.null(pt) && nrow(pt) == nrow(tr) && any(fit$free) && fit$learn_kernel) {
    lp <- log(pt[idx, fit$free, drop = FALSE])
    step <- abs(lp[k + 1L, ] - lp[k, ])
    j <- which.max(abs(lp[k + 1L, ] - lp[1L, ]))
    out <- c(out, "*" = sprintf("log %s moved by %s (the largest log-hyperparameter change; last step of any: %s; tolerance %s).",
                                colnames(lp)[j], f(lp[k + 1L, j] - lp[1L, j]), f(max(step)),
                                f(ctl$tol_outer * 10)))
  }
  # already formatted: keep cli from reading braces
  gsub("}", "}}", gsub("{", "{{", out, fixed = TRUE), fixed = TRUE)
}

# Labels -> list(y = +-1, factor, levels).
gpc_ep_labels <- function(y, n, call = parent.frame()) {
  if (is.data.frame(y) || (is.matrix(y) && ncol(y) != 1L)) {
    abort_input("{.arg y} must be a vector of labels.", call = call)
  }
  if (length(y) != n) {
    abort_input("{.arg y} has length {length(y)} but {.arg x} has {n} row{?s}.", call = call)
  }
  if (anyNA(y)) abort_input("{.arg y} contains missing labels.", call = call)
  if (is.numeric(y)) {
    if (any(!is.finite(y))) abort_input("{.arg y} contains infinite values.", call = call)
    u <- sort(unique(as.numeric(y)))
    if (length(u) > 2L && (length(u) > 20L || any(u != round(u)))) {
      abort_input(c("{.arg y} looks continuous ({length(u)} distinct values); {.fn gpc_ep} needs class labels.",
                    "i" = "Use a factor for several classes, or a regression model for a numeric response."),
                  class = "noisylabels_error_labels", call = call)
    }
    f <- factor(as.numeric(y), levels = u, labels = format(u, trim = TRUE))
  } else if (is.logical(y)) {
    f <- factor(y, levels = c(FALSE, TRUE))
    f <- droplevels(f)
  } else if (is.factor(y) || is.character(y)) {
    f <- droplevels(as.factor(y))
  } else {
    abort_input("{.arg y} must be a factor, character, logical or numeric vector, not {.cls {class(y)}}.",
                class = "noisylabels_error_labels", call = call)
  }
  lv <- levels(f)
  if (length(lv) < 2L) {
    abort_input(c("{.arg y} has a single class ({.val {lv}}); a classifier needs two.",
                  "i" = "Check the labels or the subset used."),
                class = "noisylabels_error_labels", call = call)
  }
  yy <- if (length(lv) == 2L) ifelse(as.integer(f) == 2L, 1, -1) else NULL
  list(y = yy, factor = f, levels = lv)
}