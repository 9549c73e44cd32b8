# The Vecchia set-up of a pursuit fit and the gpr_pursuit object built from
# the raw C++ trace.

# Vecchia set-up of a pursuit (approx = "vecchia"): the conditioning sets
# are chosen in the metric of the kernel's length-scales. With `pilot`, a
# homoscedastic Vecchia fit (the pursuit's model with an empty support) on
# conditioning sets chosen with the initial length-scales gives fitted
# length-scales; the sets are chosen again in their metric, and the pursuit
# starts from the pilot's hyperparameters, mean and sigma2 (a better start
# than the defaults; with an empty initial support it is the first model's
# optimum on the pilot's sets). Returns the 0-based neighbour matrix, the
# ordering, the start and the pilot's cost.
pursuit_vecchia_setup <- function(xs, kernel, backend, ctl, start, core_fit, pilot = TRUE) {
  vs <- vecchia_setup(xs, kernel, backend$m)
  evaluations <- 0
  if (isTRUE(pilot)) {
    ctl_pilot <- ctl
    ctl_pilot$backward <- FALSE
    ctl_pilot$levels <- integer(0)
    ctl_pilot["initial_support"] <- list(NULL)
    ctl_pilot$neighbors <- vs$neighbors
    ctl_pilot$threads <- backend$threads
    pil <- core_fit(start$log_par, start$mean, start$log_noise, ctl_pilot)
    st <- pil$steps[[1]]
    evaluations <- pil$factorizations
    vs <- vecchia_setup(xs, kernel_unflatten(kernel, st$log_par), backend$m)
    start <- list(log_par = st$log_par, mean = st$mean, log_noise = st$log_noise)
  }
  list(neighbors = vs$neighbors, order = vs$order, start = start, evaluations = evaluations,
       pilot = isTRUE(pilot))
}

new_gpr_pursuit <- function(raw, x, y, kernel, fl, log_prior, selection, refine, prior_mean,
                            x_center, x_scale, y_center, y_scale, direction, parameterization,
                            average, control, levels, backend = NULL, vecchia = NULL) {
  n <- length(y)
  is_vecchia <- identical(backend$approx, "vecchia")
  steps <- raw$steps
  size <- vapply(steps, function(s) length(s$support), integer(1))
  nll <- vapply(steps, function(s) s$nll, numeric(1))
  penalty <- vapply(steps, function(s) s$penalty, numeric(1))
  loglik_std <- -nll
  sc <- pursuit_scores(loglik_std - penalty, size, n, selection, log_prior)
  score <- sc$score
  lp <- sc$log_prior
  post <- exp(score - max(score)); post <- post / sum(post)
  # "esd" selects by its test (pursuit_esd()); its scores are the BIC's
  sel <- raw$selected %||% which.max(score)
  trace <- data.frame(step = seq_along(steps), stage = raw$stage %||% rep("pursuit", length(steps)),
                      size = size,
                      loglik = loglik_std - n * log(y_scale), log_hyperprior = -penalty,
                      log_prior = lp, score = score,
                      posterior = post,
                      iterations = vapply(steps, function(s) s$iterations, integer(1)),
                      evaluations = vapply(steps, function(s) s$evaluations, integer(1)),
                      converged = vapply(steps, function(s) s$converged, logical(1)),
                      sigma2 = vapply(steps, function(s) exp(s$log_noise), numeric(1)) * y_scale^2)
  st <- steps[[sel]]
  kern <- kernel_unflatten(kernel, st$log_par)
  # Lemma-1 optimal rho of every point in the selected model (one more
  # factorization): the noise score off the support.
  rho_star <- call_core(.gpr_pursuit_lemma1(x, y, kernel_spec(kernel, st$log_par), st$mean,
                                            exp(st$log_noise), st$rho, vecchia$neighbors,
                                            backend$threads %||% 1L))
  rho_star[st$support] <- st$rho[st$support]
  new_noisylabels_fit(list(
    support = sort(st$support), rho = st$rho * y_scale^2, rho_star = rho_star * y_scale^2,
    s = if (parameterization == "convex") st$value else NULL,
    sigma2 = exp(st$log_noise) * y_scale^2, mean = y_center + y_scale * st$mean,
    kernel = kern, trace = trace, selected = sel, steps = steps,
    factorizations = raw$factorizations + 1 + (vecchia$evaluations %||% 0),
    rank_one_updates = raw$rank_one_updates,
    approx = backend$approx %||% "dense",
    neighbors = if (is_vecchia) backend$m else NA_integer_,
    threads = backend$threads %||% 1L,
    vecchia_neighbors = vecchia$neighbors, vecchia_order = vecchia$order,
    vecchia_pilot = isTRUE(vecchia$pilot), jitter = raw$jitter %||% 0,
    stopped_early = raw$stopped_early, converged = all(trace$converged),
    iterations = sum(trace$iterations), n = n, n_par = sum(fl$free) + 2L,
    x = x, y = y, x_center = x_center, x_scale = x_scale, y_center = y_center, y_scale = y_scale,
    direction = direction, parameterization = parameterization, selection = selection,
    refine = refine, prior_mean = prior_mean,
    average = average, control = control, levels = levels, kernel_std = kernel, fl = fl),
    "gpr_pursuit", task = "regression", p_wrong = TRUE)
}
