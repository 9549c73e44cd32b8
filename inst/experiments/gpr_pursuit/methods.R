# Shared by the gpr_pursuit experiment scripts: fit every method on one
# training set and score it on clean test points.
suppressPackageStartupMessages(library(noisylabels))

has_gpr_loo <- function() exists("gpr_loo", envir = asNamespace("noisylabels"), inherits = FALSE)

# Returns a data frame: method, rmse, mae, loglik (mean predictive log-density
# of the clean test labels), seconds (CPU), n_flagged, precision, recall.
# The trimming baselines ("trimmed": Li et al.; "trimmed_mll": Andrade &
# Takeda) use gpr_baseline()'s default trim = 0.2 (Andrade & Takeda's README
# example of nu).
fit_all <- function(x, y, xt, yt, is_corrupted, methods = NULL) {
  env <- Sys.getenv("EXP_METHODS")  # e.g. EXP_METHODS=gpr_loo to rerun one method
  if (is.null(methods) && nzchar(env)) methods <- strsplit(env, ",")[[1]]
  methods <- methods %||% c("rrp_backward", "rrp_forward", "standard", "winsorize",
                            "yeo_johnson", "trimmed", "trimmed_mll",
                            if (has_gpr_loo()) c("gpr_loo", "gpr_loo_auto", "gpr_loo_2s_auto"))
  out <- list()
  for (m in methods) {
    t0 <- sum(proc.time()[c("user.self", "sys.self")])
    res <- tryCatch({
      flagged <- integer()
      if (m %in% c("rrp_backward", "rrp_forward")) {
        fit <- suppressWarnings(gpr_pursuit(x, y, direction = sub("rrp_", "", m)))
        flagged <- fit$support
        p <- predict(fit, xt, se.fit = TRUE)
        ll <- predictive_loglik(fit, xt, yt)
      } else if (m %in% c("gpr_loo", "gpr_loo_auto", "gpr_loo_2s_auto")) {
        gl <- get("gpr_loo", envir = asNamespace("noisylabels"))
        # same kernel family as gpr_pursuit; "gpr_loo_auto" adds the penalty
        # with lambda = "auto", "gpr_loo_2s_auto" also kernel_fit = "uniform"
        args <- switch(m, gpr_loo = list(),
                       gpr_loo_auto = list(penalty = "lp", lambda = "auto"),
                       gpr_loo_2s_auto = list(kernel_fit = "uniform", penalty = "lp", lambda = "auto"))
        fit <- suppressWarnings(do.call(gl, c(list(x, y, kernel = gp_kernel("rbf", ard = TRUE)), args)))
        p <- predict(fit, xt, se.fit = TRUE)
        if (!is.data.frame(p) && is.list(p)) p <- as.data.frame(p)
        sdv <- p$se.obs %||% p$se.fit  # predictive sd of a new observation
        ll <- mean(stats::dnorm(yt, p$fit, sdv, log = TRUE))
        li <- label_issues(fit)
        flagged <- li$row[li$flagged]
      } else {
        fit <- suppressWarnings(gpr_baseline(x, y, m))
        p <- predict(fit, xt, se.fit = TRUE)
        ll <- predictive_loglik(fit, xt, yt)
        if (m %in% c("trimmed", "trimmed_mll")) flagged <- setdiff(seq_along(y), fit$kept)
      }
      data.frame(rmse = sqrt(mean((p$fit - yt)^2)), mae = mean(abs(p$fit - yt)), loglik = ll,
                 n_flagged = length(flagged),
                 precision = if (length(flagged)) mean(is_corrupted[flagged]) else NA_real_,
                 recall = if (any(is_corrupted)) sum(is_corrupted[flagged]) / sum(is_corrupted) else NA_real_)
    }, error = function(e) {
      message(m, ": ", conditionMessage(e))
      data.frame(rmse = NA_real_, mae = NA_real_, loglik = NA_real_, n_flagged = NA_integer_,
                 precision = NA_real_, recall = NA_real_)
    })
    res$method <- m
    res$seconds <- sum(proc.time()[c("user.self", "sys.self")]) - t0
    out[[m]] <- res
  }
  do.call(rbind, out)
}

`%||%` <- function(a, b) if (is.null(a)) b else a
