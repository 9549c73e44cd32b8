# Methods for gpc_ep fits (and the one-vs-rest wrapper gpc_ep_ovr).

# New inputs -> standardised matrix in the training column order.
gpc_ep_newx <- function(object, newdata, call = parent.frame()) {
  xm <- if (!is.null(object$terms) && !is.null(object$design)) {
    # Formula fits: levels are checked against the training ones (factor
    # columns of either kind), then the design is built as in training.
    mf <- newdata_frame(object, newdata, levels = c(object$design$levels, object$xlevels),
                        call = call)
    check_x_matrix(gpc_ep_design_matrix(stats::delete.response(object$terms), mf, object$design,
                                        call = call),
                   "newdata", call = call)
  } else {
    newdata_design(object, newdata, ncol(object$x), call = call)
  }
  if (!is.null(object$colnames) && !is.null(colnames(xm)) && all(object$colnames %in% colnames(xm))) {
    xm <- xm[, object$colnames, drop = FALSE]
  }
  sweep(sweep(xm, 2, object$x_center, "-"), 2, object$x_scale, "/")
}

gpc_ep_prob <- function(object, mean, var) {
  eps <- object$epsilon
  eps + (1 - 2 * eps) * stats::pnorm(mean / sqrt(object$sigma^2 + var))
}

#' Predictions from an EP Gaussian-process classifier
#'
#' The latent predictive distribution is `N(k*' b, k** - k*' R k*)` with
#' `b = nu - T mu` and `R = T - T Sigma T` (valid for negative site
#' precisions); `k**` includes the nugget. The probability of the positive
#' class is `eps + (1 - 2 eps) Phi(mean / sqrt(s2 + var))` with `s2 = 0` for
#' the step and 1 for the probit likelihood; the class is the sign of the mean.
#'
#' @param object A `gpc_ep` fit.
#' @param newdata New inputs (a data frame for formula fits, else a matrix);
#'   `NULL` or missing gives the training points (posterior marginals).
#' @param type `"class"` (a factor), `"prob"` (probability of the second
#'   level), or `"link"` (latent mean).
#' @param se.fit For `type = "link"`: also return the latent standard deviation.
#' @param ... Unused.
#' @return A factor, a numeric vector, or (with `se.fit`) a list with `fit` and
#'   `se.fit`. For `gpc_ep_ovr` fits `type = "prob"` gives a matrix with one
#'   column per class (normalised to sum to one).
#' @examples
#' set.seed(2)
#' x <- matrix(rnorm(80), ncol = 2)
#' fit <- gpc_ep(x, x[, 1] > 0)
#' predict(fit, matrix(c(-1, 1, 0, 0), 2), type = "prob")
#' @export
predict.gpc_ep <- function(object, newdata = NULL, type = c("class", "prob", "link"),
                           se.fit = FALSE, ...) {
  check_fit(object, "gpc_ep")
  type <- match_arg(type)
  if (is.null(newdata)) {
    mean <- object$latent_mean
    var <- object$latent_var
  } else {
    xn <- gpc_ep_newx(object, newdata)
    p <- gpc_ep_latent(object, xn)
    mean <- p$mean
    var <- pmax(p$var, 0)
  }
  switch(type,
    class = factor(object$levels[(mean > 0) + 1L], levels = object$levels),
    prob = gpc_ep_prob(object, mean, var),
    link = if (se.fit) list(fit = mean, se.fit = sqrt(var)) else mean)
}

#' @rdname predict.gpc_ep
#' @export
fitted.gpc_ep <- function(object, ...) {
  check_fit(object, "gpc_ep")
  predict(object, type = "prob")
}

#' @export
residuals.gpc_ep <- function(object, type = c("response", "pearson"), ...) {
  check_fit(object, "gpc_ep")
  type <- match_arg(type)
  p <- fitted(object)
  r <- (object$y > 0) - p
  if (type == "pearson") r <- r / sqrt(p * (1 - p))
  r
}

#' @export
coef.gpc_ep <- function(object, ...) {
  check_fit(object, "gpc_ep")
  c(stats::setNames(exp(object$log_par), object$par_names), epsilon = object$epsilon)
}

#' @export
logLik.gpc_ep <- function(object, ...) {
  check_fit(object, "gpc_ep")
  df <- sum(object$free) * object$learn_kernel + object$learn_epsilon
  structure(object$log_z, df = df, nobs = object$n, class = "logLik")
}

#' @export
nobs.gpc_ep <- function(object, ...) {
  check_fit(object, "gpc_ep")
  object$n
}

#' @export
print.gpc_ep <- function(x, digits = 4, ...) {
  check_fit(x, "gpc_ep")
  cli::cat_line(sprintf("<gpc_ep> EP Gaussian-process classifier, %s likelihood, n = %d",
                        x$likelihood, x$n))
  cli::cat_line(sprintf("  classes: %s (-1) / %s (+1)", x$levels[1], x$levels[2]))
  eps_how <- if (x$learn_epsilon) sprintf("learned, %s rule", x$epsilon_update) else "fixed"
  cli::cat_line(sprintf("  epsilon: %s (%s)", format(signif(x$epsilon, digits)), eps_how))
  cli::cat_line(sprintf("  log Z_EP: %s", format(round(x$log_z, 3), nsmall = 3)))
  cli::cat_line(sprintf("  kernel: %s; %s", x$kernel$type,
                        paste(sprintf("%s = %s", x$par_names,
                                      vapply(signif(exp(x$log_par), 3), format, "")),
                              collapse = ", ")))
  cli::cat_line(sprintf("  flagged labels (q-value <= 0.1): %d of an estimated %.1f wrong",
                        sum(label_issues(x)$flagged), sum(x$flip_prob)))
  cli::cat_line(paste0("  approximation: ", gpc_ep_approx_label(x)))
  cli::cat_line(sprintf("  EP (%s): %d sweeps in the last run%s; outer iterations: %d (%s)",
                        x$control$schedule %||% "sequential",
                        x$sweeps, if (x$ep_converged) "" else " [not converged]",
                        x$outer_iterations, if (x$converged) "converged" else "not converged"))
  invisible(x)
}

#' @export
summary.gpc_ep <- function(object, ...) {
  check_fit(object, "gpc_ep")
  cls <- predict(object, type = "class")
  par <- data.frame(parameter = object$par_names, value = exp(object$log_par),
                    learned = object$free & object$learn_kernel)
  structure(list(
    likelihood = object$likelihood, n = object$n, levels = object$levels,
    class_counts = table(object$y_factor),
    epsilon = object$epsilon, learn_epsilon = object$learn_epsilon,
    epsilon_update = object$epsilon_update, log_z = object$log_z,
    parameters = par, training_error = mean(cls != object$y_factor),
    flagged = sum(label_issues(object)$flagged), negative_sites = sum(object$site_tau < 0),
    sweeps = object$sweeps, ep_runs = object$ep_runs, ep_failures = object$ep_failures,
    outer_iterations = object$outer_iterations, converged = object$converged,
    jitter = object$jitter, tau = object$tau, approx = gpc_ep_approx_label(object)),
    class = "summary.gpc_ep")
}

#' @export
print.summary.gpc_ep <- function(x, digits = 4, ...) {
  cli::cat_line("EP Gaussian-process classification with labelling errors (Kim & Ghahramani 2008)")
  cli::cat_line(sprintf("Likelihood: eps + (1 - 2 eps) Phi(y f%s); n = %d (%s)", 
                        if (x$likelihood == "step") " / 0+" else "", x$n,
                        paste(sprintf("%s: %d", names(x$class_counts), as.integer(x$class_counts)),
                              collapse = ", ")))
  cli::cat_line(sprintf("epsilon = %s (%s)", format(signif(x$epsilon, digits)),
                        if (x$learn_epsilon) paste(x$epsilon_update, "M-step") else "fixed"))
  cli::cat_line(sprintf("log Z_EP = %s", format(round(x$log_z, 3), nsmall = 3)))
  if (!is.null(x$approx)) cli::cat_line(paste0("Approximation: ", x$approx))
  cli::cat_line("Kernel hyperparameters:")
  p <- x$parameters
  p$value <- signif(p$value, digits)
  print(p, row.names = FALSE)
  cli::cat_line(sprintf("Training error: %s; labels flagged (q-value <= 0.1): %d; negative sites: %d",
                        format(signif(x$training_error, 3)), x$flagged, x$negative_sites))
  cli::cat_line(sprintf("Solver: %d outer iterations (%s), %d EP runs (%d without a proper posterior), last EP %d sweeps, tau mode %s, jitter %g",
                        x$outer_iterations, if (x$converged) "converged" else "NOT converged",
                        x$ep_runs, x$ep_failures, x$sweeps, x$tau, x$jitter))
  invisible(x)
}

#' Tidy, glance and augment an EP classifier
#'
#' @param x A `gpc_ep` fit.
#' @param data For `augment()`: the original data (rows in training order);
#'   `NULL` uses the training inputs.
#' @param ... Unused.
#' @return `tidy()`: one row per hyperparameter (`term`, `estimate`, `learned`)
#'   plus epsilon. `glance()`: one row with `n`, `log_z`, `epsilon`,
#'   `training_error`, `n_flagged`, `converged`, `outer_iterations`, `sweeps`.
#'   `augment()`: the data with `.fitted` (probability of the second class),
#'   `.class`, `.latent_mean`, `.latent_sd`, `.noise_score` and `.flagged`.
#' @examples
#' set.seed(4)
#' x <- matrix(rnorm(60), ncol = 2)
#' fit <- gpc_ep(x, x[, 2] > 0)
#' tidy(fit)
#' glance(fit)
#' head(augment(fit))
#' @name tidy.gpc_ep
NULL

#' @rdname tidy.gpc_ep
#' @export
tidy.gpc_ep <- function(x, ...) {
  check_fit(x, "gpc_ep")
  data.frame(term = c(x$par_names, "epsilon"),
             estimate = c(exp(x$log_par), x$epsilon),
             learned = c(x$free & x$learn_kernel, x$learn_epsilon),
             stringsAsFactors = FALSE)
}

#' @rdname tidy.gpc_ep
#' @export
glance.gpc_ep <- function(x, ...) {
  check_fit(x, "gpc_ep")
  data.frame(n = x$n, log_z = x$log_z, epsilon = x$epsilon,
             training_error = mean(predict(x, type = "class") != x$y_factor),
             n_flagged = sum(label_issues(x)$flagged), converged = x$converged,
             outer_iterations = x$outer_iterations, sweeps = x$sweeps)
}

#' @rdname tidy.gpc_ep
#' @export
augment.gpc_ep <- function(x, data = NULL, ...) {
  check_fit(x, "gpc_ep")
  out <- if (is.null(data)) as.data.frame(gpc_ep_original_x(x)) else as.data.frame(data)
  if (nrow(out) != x$n) abort_input("{.arg data} has {nrow(out)} rows; the fit has {x$n}.")
  out$.label <- x$y_factor
  out$.fitted <- fitted(x)
  out$.class <- predict(x, type = "class")
  out$.latent_mean <- x$latent_mean
  out$.latent_sd <- sqrt(x$latent_var)
  out$.noise_score <- x$flip_prob
  out$.flagged <- flags_by_row(label_issues(x))
  out
}

# ---- one-vs-rest -----------------------------------------------------------
# A gpc_ep_ovr object holds one binary gpc_ep fit per class ("class" against
# "not class"). Class probabilities are the binary probabilities of each
# class normalised to sum to one; a label's noise score is one minus the
# normalised probability of its given class (see ?gpc_ep, "One-vs-rest").

#' @export
print.gpc_ep_ovr <- function(x, digits = 4, ...) {
  check_fit(x, "gpc_ep_ovr")
  cli::cat_line(sprintf("<gpc_ep_ovr> %d one-vs-rest EP classifiers, %s likelihood, n = %d",
                        length(x$fits), x$fits[[1]]$likelihood, x$n))
  for (lv in x$levels) {
    f <- x$fits[[lv]]
    cli::cat_line(sprintf("  %-12s epsilon = %s, log Z_EP = %s, flagged = %d", lv,
                          format(signif(f$epsilon, digits)), format(round(f$log_z, 3), nsmall = 3),
                          sum(label_issues(f)$flagged)))
  }
  cli::cat_line(sprintf("  labels flagged (q-value <= 0.1): %d",
                        sum(label_issues(x)$flagged)))
  invisible(x)
}

#' @export
summary.gpc_ep_ovr <- function(object, ...) {
  check_fit(object, "gpc_ep_ovr")
  cls <- predict(object, type = "class")
  per_class <- data.frame(
    class = object$levels,
    n_class = vapply(object$levels, function(lv) sum(object$y == lv), integer(1)),
    epsilon = vapply(object$fits, `[[`, numeric(1), "epsilon"),
    log_z = vapply(object$fits, `[[`, numeric(1), "log_z"),
    flagged = vapply(object$fits, function(f) sum(label_issues(f)$flagged), integer(1)),
    sweeps = vapply(object$fits, `[[`, integer(1), "sweeps"),
    converged = vapply(object$fits, `[[`, logical(1), "converged"),
    row.names = NULL, stringsAsFactors = FALSE)
  structure(list(n = object$n, levels = object$levels, likelihood = object$fits[[1]]$likelihood,
                 per_class = per_class, training_error = mean(cls != object$y),
                 flagged = sum(label_issues(object)$flagged)),
            class = "summary.gpc_ep_ovr")
}

#' @export
print.summary.gpc_ep_ovr <- function(x, digits = 4, ...) {
  cli::cat_line("One-vs-rest EP Gaussian-process classification with labelling errors")
  cli::cat_line(sprintf("%d classes, n = %d, %s likelihood", length(x$levels), x$n, x$likelihood))
  pc <- x$per_class
  pc$epsilon <- signif(pc$epsilon, digits)
  pc$log_z <- round(pc$log_z, 3)
  print(pc, row.names = FALSE)
  cli::cat_line(sprintf("Training error: %s; labels flagged (q-value <= 0.1): %d",
                        format(signif(x$training_error, 3)), x$flagged))
  invisible(x)
}

#' @rdname predict.gpc_ep
#' @export
predict.gpc_ep_ovr <- function(object, newdata = NULL, type = c("class", "prob"), ...) {
  check_fit(object, "gpc_ep_ovr")
  type <- match_arg(type)
  # each binary fit reads newdata the same way (a vector may be one row)
  p <- do.call(cbind, lapply(object$fits, function(f) predict(f, newdata, type = "prob")))
  dimnames(p) <- list(NULL, object$levels)
  p <- p / rowSums(p)
  if (type == "prob") return(p)
  factor(object$levels[max.col(p, ties.method = "first")], levels = object$levels)
}

#' @rdname predict.gpc_ep
#' @export
fitted.gpc_ep_ovr <- function(object, ...) {
  check_fit(object, "gpc_ep_ovr")
  predict(object, type = "prob")
}

#' @export
coef.gpc_ep_ovr <- function(object, ...) {
  check_fit(object, "gpc_ep_ovr")
  vapply(object$fits, coef, numeric(length(coef(object$fits[[1]]))))
}

#' @export
nobs.gpc_ep_ovr <- function(object, ...) {
  check_fit(object, "gpc_ep_ovr")
  object$n
}

#' @export
noise_scores.gpc_ep_ovr <- function(object, ...) {
  check_fit(object, "gpc_ep_ovr")
  p <- predict(object, type = "prob")
  1 - p[cbind(seq_len(object$n), match(as.character(object$y), object$levels))]
}

# Each label's flip probability in its own class's binary problem.
gpc_ep_ovr_flip_own <- function(object) {
  s <- vapply(object$fits, noise_scores, numeric(object$n))
  s[cbind(seq_len(object$n), match(as.character(object$y), object$levels))]
}

#' @export
label_issues.gpc_ep_ovr <- function(object, fdr = 0.1, threshold = NULL, ...) {
  check_fit(object, "gpc_ep_ovr")
  s <- noise_scores(object)
  q <- fdr_qvalues(s)
  flag <- probability_flags(s, q, fdr, threshold)
  p <- predict(object, type = "prob")
  given <- match(as.character(object$y), object$levels)
  # The suggested class: the most probable one, or for a flagged label the
  # most probable other class.
  p_other <- p
  p_other[cbind(seq_len(object$n), given)] <- -Inf
  best <- max.col(p, ties.method = "first")
  other <- max.col(p_other, ties.method = "first")
  sug <- ifelse(flag, other, best)
  new_label_issues(seq_len(object$n), s, flag, label = object$y,
                   predicted = factor(object$levels[best], levels = object$levels),
                   prob_label = 1 - s, flip_own = gpc_ep_ovr_flip_own(object),
                   p_wrong = s, q_value = q,
                   suggested_label = factor(object$levels[sug], levels = object$levels),
                   prob_suggested = p[cbind(seq_len(object$n), sug)])
}

#' @rdname tidy.gpc_ep
#' @export
tidy.gpc_ep_ovr <- function(x, ...) {
  check_fit(x, "gpc_ep_ovr")
  out <- do.call(rbind, lapply(x$levels, function(lv) {
    cbind(class = lv, tidy(x$fits[[lv]]), stringsAsFactors = FALSE)
  }))
  rownames(out) <- NULL
  out
}

#' @rdname tidy.gpc_ep
#' @export
glance.gpc_ep_ovr <- function(x, ...) {
  check_fit(x, "gpc_ep_ovr")
  data.frame(n = x$n, n_classes = length(x$levels),
             training_error = mean(predict(x, type = "class") != x$y),
             n_flagged = sum(label_issues(x)$flagged),
             converged = all(vapply(x$fits, `[[`, logical(1), "converged")),
             sweeps = sum(vapply(x$fits, `[[`, integer(1), "sweeps")))
}

#' @rdname tidy.gpc_ep
#' @export
augment.gpc_ep_ovr <- function(x, data = NULL, ...) {
  check_fit(x, "gpc_ep_ovr")
  out <- if (is.null(data)) as.data.frame(gpc_ep_original_x(x$fits[[1]])) else as.data.frame(data)
  if (nrow(out) != x$n) abort_input("{.arg data} has {nrow(out)} rows; the fit has {x$n}.")
  p <- predict(x, type = "prob")
  out$.label <- x$y
  for (lv in x$levels) out[[paste0(".prob_", lv)]] <- unname(p[, lv])
  out$.class <- factor(x$levels[max.col(p, ties.method = "first")], levels = x$levels)
  s <- noise_scores(x)
  out$.noise_score <- s
  out$.flagged <- flags_by_row(label_issues(x))
  out
}
