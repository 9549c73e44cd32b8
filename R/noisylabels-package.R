#' noisylabels: find corrupted labels and learn models robust to label noise
#'
#' Five published methods behind one interface. Every fit has `predict()`,
#' `print()`, `summary()`, `plot()`, broom-style `tidy()`/`glance()`/`augment()`,
#' and the two label-noise verbs [noise_scores()] (larger = more likely
#' corrupted) and [label_issues()] (one row per training observation, flagged
#' ones first).
#'
#' * [gpr_loo()]: GP regression with one noise variance per label
#'   (Tang, Zhu & de Jong).
#'
#' The numerics live in C++ (`src/`): a plain C++17 + Eigen core with thin Rcpp
#' glue. Randomness comes from R's RNG, so `set.seed()` reproduces a fit.
#'
#' @section Threads:
#' Functions with a `threads` argument run their own loops on that many
#' OpenMP threads (default `getOption("noisylabels.threads", 1)`). The BLAS
#' that R links to (OpenBLAS, BLIS or MKL) runs with
#' `getOption("noisylabels.blas_threads", 1)` threads inside the package's
#' C++ calls and gets its own setting back afterwards: the dense steps call
#' the BLAS on panels of a few hundred rows, often from OpenMP threads, and a
#' multithreaded BLAS there mostly oversubscribes the cores (a 1,000-label
#' dense [gpr_loo()] ran 3.7 times longer with OpenBLAS's 2 threads than with
#' 1 on a 2-core machine). Raise it for single large dense fits on an
#' otherwise idle machine. [gpc_ep()], whose steps are BLAS calls made from
#' one thread, gives the BLAS its own `threads` instead (unless the option is
#' set): its sparse fit of 2 x 10^4 labels took 502 s with 2 BLAS threads
#' against 670 s with 1. With another BLAS the option has no effect.
#'
#' @keywords internal
#' @useDynLib noisylabels, .registration = TRUE
#' @importFrom Rcpp evalCpp
#' @importFrom stats predict fitted residuals coef logLik nobs sd var median
#'   model.frame model.matrix model.response terms delete.response na.omit
#'   setNames quantile
#' @importFrom generics tidy glance augment
"_PACKAGE"

utils::globalVariables(".data")

#' @export
generics::tidy
#' @export
generics::glance
#' @export
generics::augment
