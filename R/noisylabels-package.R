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
