// Blocked dense factorizations that poll for interrupts between blocks.
//
// LAPACK's dpotrf/dtrtri/dpotri run minutes at large n without returning, so
// a Ctrl-C waited for the whole call. These are the same blocked algorithms
// LAPACK uses (left-looking Cholesky, backward trtri, blocked lauum), made of
// BLAS-3 calls on the library's own kernels (dpotrf/dtrtri/dlauum only on the
// small diagonal blocks), with `monitor.check()` between calls; the large
// off-diagonal updates are cut into row or column chunks of bounded work, so
// that consecutive polls are at most ~kPollFlops apart. The results agree
// with the unblocked calls to rounding (tests/testthat/test-linalg-blocked.R)
// and cost the same (inst/bench/interrupt/blocked_chol.R).
//
// All act on the lower triangle of a column-major n x n matrix (leading
// dimension n) and leave its strictly upper triangle untouched.
#pragma once

#include <Eigen/Dense>

#include "common/monitor.h"

namespace noisylabels {

// Columns per diagonal block (0 in the calls below: this default).
constexpr int kCholBlock = 256;
// Work between two polls: ~0.1-0.2 s on one core (5-10 GFlop/s).
constexpr double kPollFlops = 1e9;

// A = L L' in place (lower). Returns 0, or k > 0 if the leading minor of
// order k is not positive definite (as dpotrf's info).
int blocked_potrf(Eigen::MatrixXd& a, Monitor& monitor, int block = 0);
// L^{-1} in place of a lower-triangular L (non-unit). Returns 0, or k > 0 if
// L(k, k) is zero (as dtrtri's info).
int blocked_trtri(Eigen::MatrixXd& a, Monitor& monitor, int block = 0);
// A^{-1} (lower triangle) in place of the Cholesky factor L of A (as dpotri).
int blocked_potri(Eigen::MatrixXd& a, Monitor& monitor, int block = 0);

}  // namespace noisylabels
