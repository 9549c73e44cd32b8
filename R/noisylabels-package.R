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
#' `threads` means one thing in every function that has it (the fits,
#' [find_label_issues()], [consensus_labels()]): the number of cores the
#' call may use. Its default is `getOption("noisylabels.threads", 1)`, it is
#' checked by one validator (a whole number of at least 1; more than the
#' machine's cores is cut to them with a message), and results never depend
#' on it beyond the order of floating-point additions. Each method turns it
#' into the parallelism its work has: the OpenMP team of the loops over labels
#' ([gpr_loo()], [gpr_pursuit()] with Vecchia, [label_dist_vb()],
#' [consensus_labels()]), the BLAS threads of a fit whose steps are BLAS calls
#' made from one thread ([gpc_ep()]: its sparse fit of 2 x 10^4 labels took
#' 502 s with 2 BLAS threads against 670 s with 1), ranger's threads and the
#' GP fits inside [find_label_issues()]. Elsewhere the BLAS that R links to
#' (OpenBLAS, BLIS or MKL) runs on one thread inside the package's C++ calls
#' and gets its own setting back afterwards: the dense steps call it on panels
#' of a few hundred rows, often from OpenMP threads, where more BLAS threads
#' oversubscribe the cores (a 1,000-label dense [gpr_loo()] ran 3.7 times
#' longer with OpenBLAS's 2 threads than with 1 on a 2-core machine).
#' `options(noisylabels.blas_threads = k)` overrides the BLAS count of every
#' call. With another BLAS it has no effect. [sgd_robust()] is sequential:
#' `threads` only sets the BLAS of its evaluation steps.
#'
#' @section Options:
#' Every option the package reads, with its default:
#' * `noisylabels.threads` (1): the default `threads` of every function.
#' * `noisylabels.blas_threads` (unset): BLAS threads inside every C++ call,
#'   overriding the rule above.
#' * `noisylabels.progress` (unset: progress bars in interactive sessions
#'   only): `TRUE` or `FALSE` for every function's `verbose = NULL`.
#' * `noisylabels.progress_nested` (unset): set by the package while a fit
#'   runs inside a fold loop, so that inner fits show no bar of their own.
#' * `noisylabels.max_gb` (8): the largest dense matrix (in GB) a call may
#'   allocate before it refuses with `noisylabels_error_memory`.
#' * `noisylabels.max_bytes` (unset: the machine's available memory): the
#'   memory the size checks assume the machine has.
#' * `noisylabels.chunk_rows` (10^6): rows per chunk when
#'   [find_label_issues()] reads a probability file.
#' * `noisylabels.choice_rows` (5,000), `noisylabels.gp_loo_dense_max`
#'   (15,000), `noisylabels.gp_loo_neighbors` (150),
#'   `noisylabels.forest_many_rows` (50,000), `noisylabels.forest_huge_rows`
#'   (500,000): the sizes at which [find_label_issues()] chooses between the
#'   GP and the forest for numeric labels, leaves the exact GP for Vecchia,
#'   and uses fewer trees (see its "Regression" section).
#' * `noisylabels.vecchia_pieces` (unset): split the Vecchia leave-one-out
#'   pass of [find_label_issues()]'s GP into that many `future` jobs.
#' * `noisylabels.vecchia_layout` (`TRUE`): store the labels of a Vecchia fit
#'   along a Z-order curve of the inputs for memory locality (results are
#'   the same either way up to the order of additions).
#' * `noisylabels.vecchia_exact_check` (unset): with `neighbors >= n - 1`,
#'   run the Vecchia code conditioning on every earlier label instead of
#'   switching to the dense GP (for checking one against the other).
#' * `noisylabels.audit_clamp` (0.02), `noisylabels.audit_defensive` (0.2),
#'   `noisylabels.audit_pool_floor` (`TRUE`): the sampling design of
#'   [audit_sample()] (the range `p_wrong` is clamped to before it sets the
#'   strata's spread, the share of the sample allocated in proportion to
#'   size, and whether strata with no or only wrong labels share one
#'   continuity floor) - see [estimate_errors()].
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
