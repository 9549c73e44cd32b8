// Dense symmetric positive-definite linear algebra for the GP methods.
// One module owns factorizations, jitter and failure reporting.
// Backends: LAPACK (dpotrf/dtrtri/dpotri through the BLAS R links to) or
// Eigen's LLT; LAPACK is the default (inst/bench/gpr_loo.R, section 1, measures both).
// The LAPACK backend runs the blocked forms of linalg/blocked.h, which poll
// the Monitor given to compute() and the inverses between blocks; the Eigen
// backend does not poll.
#pragma once

#include <Eigen/Dense>
#include <stdexcept>
#include <string>

#include "common/errors.h"  // NumericalError, thrown when a factorization fails at every jitter
#include "common/monitor.h"

namespace noisylabels {

using Eigen::MatrixXd;
using Eigen::VectorXd;

enum class CholBackend { Lapack, Eigen };

// Escalating jitter: first try A + base*I; on failure add
// first_relative * mean(diag A), then multiply by `growth` up to `max_tries`
// times. The jitter that worked is reported by Cholesky::jitter().
struct JitterPolicy {
  double base = 0.0;
  double first_relative = 1e-10;
  double growth = 10.0;
  int max_tries = 7;
  CholBackend backend = CholBackend::Lapack;
};

class Cholesky {
 public:
  Cholesky() = default;
  explicit Cholesky(const MatrixXd& a, const JitterPolicy& policy = JitterPolicy(),
                    Monitor& monitor = null_monitor()) {
    compute(a, policy, monitor);
  }
  // Factor a copy of `a` (only its lower triangle is read).
  void compute(const MatrixXd& a, const JitterPolicy& policy = JitterPolicy(),
               Monitor& monitor = null_monitor());
  // Factor `a` in place (moved in; only its lower triangle is read).
  void compute(MatrixXd&& a, const JitterPolicy& policy = JitterPolicy(),
               Monitor& monitor = null_monitor());
  // Factor a full symmetric `a` in place without keeping a copy: a failed
  // attempt is undone from the strictly upper triangle, which the
  // factorization never touches (LAPACK backend; Eigen falls back to a copy).
  void compute_symmetric(MatrixXd&& a, const JitterPolicy& policy = JitterPolicy(),
                         Monitor& monitor = null_monitor());

  int n() const { return static_cast<int>(factor_.rows()); }
  // Lower-triangular factor; entries above the diagonal are unspecified.
  const MatrixXd& factor() const { return factor_; }
  // Absolute jitter added to the diagonal (0 if none was needed).
  double jitter() const { return jitter_; }
  // Number of factorization attempts (1 = no escalation).
  int attempts() const { return attempts_; }
  CholBackend backend() const { return backend_; }

  double logdet() const;
  VectorXd solve(const VectorXd& b) const;
  MatrixXd solve(const MatrixXd& b) const;
  // L^{-1} b (forward substitution only).
  VectorXd solve_lower(const VectorXd& b) const;
  // diag(A^{-1}) as squared column norms of L^{-1}: (2/3) n^3 flops in total.
  VectorXd inverse_diagonal(Monitor& monitor = null_monitor()) const;
  // Full symmetric A^{-1} (dpotri); only when a gradient needs every entry.
  MatrixXd inverse(Monitor& monitor = null_monitor()) const;
  // A^{-1} in place of the factor, lower triangle only (the rest is
  // unspecified); the Cholesky object is left empty. Saves the n x n copy and
  // the symmetrisation of inverse() when the caller reads one triangle.
  MatrixXd release_inverse_lower(Monitor& monitor = null_monitor());
  // A + sigma * v v^T in O(n^2); sigma < 0 is a downdate and throws
  // NumericalError if the result is not positive definite.
  void rank_one_update(const VectorXd& v, double sigma);
  // A + delta * e_i e_i^T, touching only the trailing block (O((n-i)^2)).
  void diagonal_update(int i, double delta);

 private:
  bool try_factor(MatrixXd& work, Monitor& monitor);
  void factor_with_policy(MatrixXd& original, const JitterPolicy& policy, Monitor& monitor);
  // The jitter loop; `restore` puts the original matrix back into factor_.
  template <class Restore>
  void jitter_loop(const JitterPolicy& policy, double mean_diag, Monitor& monitor, Restore restore);
  MatrixXd factor_;
  double jitter_ = 0.0;
  int attempts_ = 0;
  CholBackend backend_ = CholBackend::Lapack;
};

// Leave-one-out quantities of a GP with covariance A (noise included) and
// centred targets r, from one factor (Rasmussen & Williams eq. 5.12):
// residual_i = r_i - E[r_i | r_-i] = alpha_i / d_i, variance_i = 1 / d_i,
// with alpha = A^{-1} r and d = diag(A^{-1}).
struct LooQuantities {
  VectorXd alpha;
  VectorXd inverse_diagonal;
  VectorXd residual;
  VectorXd variance;
};
LooQuantities loo_quantities(const Cholesky& chol, const VectorXd& r,
                             Monitor& monitor = null_monitor());
// The same formula from alpha = P r and diag(P) of any precision P (the one
// place it is written; the Vecchia backend's P is its approximate precision).
LooQuantities loo_from_precision(VectorXd alpha, VectorXd inverse_diagonal);

// Gaussian negative log marginal likelihood 0.5 r'A^{-1}r + 0.5 log|A| + n/2 log 2pi.
double gaussian_nll(const Cholesky& chol, const VectorXd& r, const VectorXd& alpha);

}  // namespace noisylabels
