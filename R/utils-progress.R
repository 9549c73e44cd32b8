# The one progress helper of the package. Every fit and every fold loop
# reports through it; no other file calls cli_progress_*() or progressr.
#
#   progress_enabled(verbose)  the rule for showing progress (below)
#   progress_bar(name, total, verbose)
#                              a cli bar for one fit: NULL or function(step, total)
#   progress_done(bar)         close a bar early (else it closes with its frame)
#   with_fold_progress(steps, name, verbose, fun)
#                              a progressr bar over folds/repetitions run under
#                              future; lapply_folds() (R/utils-checks.R) wraps it
#   local_nested_progress()    until the calling function returns, fits show no
#                              bar of their own (a loop with one bar over them)
#
# When progress is shown: `verbose = TRUE` or `FALSE` decides. With
# `verbose = NULL` (the default of every function that takes it) the option
# `noisylabels.progress` decides if set, else progress is shown in interactive
# sessions only, so scripts, tests, knitr and R CMD check stay silent. cli
# draws a bar only once it has run for `getOption("cli.progress_show_after")`
# seconds (2 by default), so short fits show nothing either way. Fits run
# inside a cross-validation fold never show their own bar (the fold loop sets
# the option `noisylabels.progress_nested`).
#
# A fitting function hooks in like this:
#   R:   bar <- progress_bar("gpr_loo", verbose = verbose)
#        res <- call_core(.gpr_loo_fit(..., progress = bar))
#        progress_done(bar)
#   C++: Rcpp::List gpr_loo_fit_cpp(..., Rcpp::Nullable<Rcpp::Function> progress = R_NilValue)
#        { RMonitor monitor(progress); ... }   // src/rcpp_monitor.h
#        and the core calls monitor.progress(step, total) in its loop.
# An R loop (epochs, a tuning grid) calls the same function: bar(step, total).
# A fold loop calls lapply_folds(folds, fun, verbose = verbose, name = ...).

#' Progress bars
#'
#' Fits that can run for more than a few seconds ([gpc_ep()],
#' [label_dist_vb()], [cv_gpr_loo()], ...) show a \pkg{cli} progress bar.
#' By default it appears in interactive sessions only, and only once a fit
#' has run for two seconds (`options(cli.progress_show_after =)`).
#'
#' * `verbose = TRUE` in a call shows it, also in scripts; `verbose = FALSE`
#'   hides it.
#' * `options(noisylabels.progress = TRUE)` (or `FALSE`) sets the default for
#'   all calls with `verbose = NULL`.
#' * Cross-validation folds run through \pkg{future.apply}; their progress is
#'   reported through \pkg{progressr} (when installed), with the user's
#'   `progressr::handlers()` if set, else a cli bar, and reaches the session
#'   from parallel workers too. The fits inside a fold show no bar of their own.
#'
#' @name noisylabels-progress
#' @aliases noisylabels.progress
#' @examples
#' \dontrun{
#' options(noisylabels.progress = TRUE)
#' fit <- gpc_ep(x, y)                       # shows a bar after 2 s
#' fit <- label_dist_vb(x, g, s, verbose = FALSE)  # never
#' }
NULL

# TRUE if progress should be shown (see the topic above).
progress_enabled <- function(verbose = NULL, call = parent.frame()) {
  if (!is.null(verbose)) {
    check_flag(verbose, "verbose", call = call)
    return(verbose && !isTRUE(getOption("noisylabels.progress_nested")))
  }
  if (isTRUE(getOption("noisylabels.progress_nested"))) return(FALSE)
  opt <- getOption("noisylabels.progress")
  if (!is.null(opt)) return(isTRUE(opt))
  interactive()
}

# A cli progress bar owned by the caller's frame, or NULL when progress is
# off. Returns function(step, total): `step` units of `total` done (total
# <= 0 or NA: unknown). It suits RMonitor (src/rcpp_monitor.h) and R loops.
progress_bar <- function(name, total = NA, verbose = NULL, .envir = parent.frame(), force = FALSE) {
  if (!progress_enabled(verbose, call = .envir)) return(NULL)
  id <- cli::cli_progress_bar(name = name, total = total, .envir = .envir)
  # force: draw every update (for callers whose steps are few and slow, such
  # as SGD epochs, which cli's throttling would otherwise skip)
  function(step, total = NA) {
    if (!is.na(total) && total > 0) {
      cli::cli_progress_update(id = id, set = step, total = total, force = force, .envir = .envir)
    } else {
      cli::cli_progress_update(id = id, set = step, force = force, .envir = .envir)
    }
    invisible(NULL)
  }
}

# Close a bar made by progress_bar() now (else it closes when its frame exits).
progress_done <- function(bar) {
  if (is.null(bar)) return(invisible(NULL))
  env <- environment(bar)
  cli::cli_progress_done(id = env$id, .envir = env$.envir)
  invisible(NULL)
}

# Evaluate `expr` (a fold/repetition loop that calls `tick()` once per unit)
# with progress through progressr when it is installed and progress is on;
# silent otherwise. Work inside runs with nested bars switched off.
with_fold_progress <- function(steps, name, verbose, fun) {
  nested <- function(...) {
    local_nested_progress()
    fun(...)
  }
  if (!progress_enabled(verbose) || !requireNamespace("progressr", quietly = TRUE)) {
    return(nested(function() NULL))
  }
  # progressr enables its handlers in interactive sessions only; progress
  # was asked for here (or the session is interactive), so enable them.
  old <- options(progressr.enable = TRUE)
  on.exit(options(old), add = TRUE)
  handlers <- getOption("progressr.handlers")
  if (is.null(handlers)) handlers <- list(progressr::handler_cli(enable = TRUE))
  progressr::with_progress({
    p <- progressr::progressor(steps = steps, label = name)
    nested(function() p())
  }, handlers = handlers, enable = TRUE, cleanup = TRUE)
}

# Until the function calling this returns, progress_enabled() is FALSE for
# the fits it runs: a loop that shows one bar over several fits (classes of a
# one-vs-rest fit, folds) calls it first. Restores the option on exit.
local_nested_progress <- function(.envir = parent.frame()) {
  old <- options(noisylabels.progress_nested = TRUE)
  do.call(base::on.exit, list(bquote(options(.(old))), add = TRUE), envir = .envir)
  invisible(old)
}

# Run one function per cross-validation fold: through future.apply (in
# parallel when a future::plan() is set) if it is installed, else lapply().
# `future_seed` is passed on as future.seed: NULL when each fold gets an
# explicit seed, TRUE when the fold function draws from R's RNG. Progress
# (one step per fold, through progressr; see R/utils-progress.R) follows
# `verbose`; the fits inside the folds show none.
lapply_folds <- function(folds, fun, future_seed = NULL, verbose = NULL,
                         name = "Cross-validation folds") {
  with_fold_progress(folds, name, verbose, function(tick) {
    # `...` is accepted and ignored: future.apply finds `...` among the
    # globals of `fun` (a fold function of a caller with dots, e.g.
    # cv_sgd_robust()) and passes it on as FUN's dots; `fun` reads its own.
    one <- function(k, ...) {
      out <- fun(k)
      tick()
      out
    }
    if (requireNamespace("future.apply", quietly = TRUE)) {
      future.apply::future_lapply(seq_len(folds), one, future.seed = future_seed,
                                  future.packages = "noisylabels")
    } else {
      lapply(seq_len(folds), one)
    }
  })
}
