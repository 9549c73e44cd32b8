#include "linalg/linalg.h"

#include <cmath>
#include <cstddef>

#include "common/constants.h"
#include "linalg/blocked.h"


namespace noisylabels {

bool Cholesky::try_factor(MatrixXd& work, Monitor& monitor) {
  const int n = static_cast<int>(work.rows());
  if (n == 0) return true;
  if (backend_ == CholBackend::Lapack) return blocked_potrf(work, monitor) == 0;
  Eigen::LLT<Eigen::Ref<MatrixXd>, Eigen::Lower> llt(work);
  return llt.info() == Eigen::Success;
}

namespace {
void check_diagonal(const MatrixXd& a) {
  if (a.cols() != a.rows()) throw std::invalid_argument("Cholesky: matrix is not square");
  for (int i = 0; i < a.rows(); ++i) {
    if (!std::isfinite(a(i, i))) {
      throw NumericalError("Cholesky: the matrix has non-finite diagonal entries");
    }
  }
}
}  // namespace

template <class Restore>
void Cholesky::jitter_loop(const JitterPolicy& policy, double mean_diag, Monitor& monitor,
                           Restore restore) {
  double jitter = policy.base;
  attempts_ = 0;
  for (int attempt = 0; attempt <= policy.max_tries; ++attempt) {
    ++attempts_;
    if (attempt > 0) restore();
    if (jitter > 0) factor_.diagonal().array() += jitter;
    if (try_factor(factor_, monitor)) {
      jitter_ = jitter;
      return;
    }
    double next = policy.first_relative * std::abs(mean_diag);
    if (next <= 0) next = policy.first_relative;
    jitter = (attempt == 0) ? policy.base + next : policy.base + (jitter - policy.base) * policy.growth;
  }
  throw NumericalError("Cholesky failed: the covariance matrix is not positive definite even with jitter " +
                       std::to_string(jitter / policy.growth) +
                       " added to its diagonal (check the inputs and hyperparameters)");
}

void Cholesky::factor_with_policy(MatrixXd& original, const JitterPolicy& policy,
                                  Monitor& monitor) {
  backend_ = policy.backend;
  check_diagonal(original);
  const double mean_diag = original.rows() > 0 ? original.diagonal().mean() : 0.0;
  factor_ = original;
  jitter_loop(policy, mean_diag, monitor, [&]() { factor_ = original; });
}

void Cholesky::compute(const MatrixXd& a, const JitterPolicy& policy, Monitor& monitor) {
  backend_ = policy.backend;
  check_diagonal(a);
  const double mean_diag = a.rows() > 0 ? a.diagonal().mean() : 0.0;
  factor_ = a;
  jitter_loop(policy, mean_diag, monitor, [&]() { factor_ = a; });
}

void Cholesky::compute(MatrixXd&& a, const JitterPolicy& policy, Monitor& monitor) {
  MatrixXd original = std::move(a);
  factor_with_policy(original, policy, monitor);
}

void Cholesky::compute_symmetric(MatrixXd&& a, const JitterPolicy& policy, Monitor& monitor) {
  if (policy.backend != CholBackend::Lapack) {
    // Eigen's in-place LLT is not documented to leave the upper triangle alone.
    compute(std::move(a), policy, monitor);
    return;
  }
  backend_ = policy.backend;
  check_diagonal(a);
  const VectorXd diagonal = a.diagonal();
  const double mean_diag = a.rows() > 0 ? diagonal.mean() : 0.0;
  factor_ = std::move(a);
  jitter_loop(policy, mean_diag, monitor, [&]() {
    factor_.triangularView<Eigen::StrictlyLower>() = factor_.transpose();
    factor_.diagonal() = diagonal;
  });
}

double Cholesky::logdet() const {
  return 2.0 * factor_.diagonal().array().log().sum();
}

VectorXd Cholesky::solve_lower(const VectorXd& b) const {
  return factor_.triangularView<Eigen::Lower>().solve(b);
}

VectorXd Cholesky::solve(const VectorXd& b) const {
  VectorXd x = factor_.triangularView<Eigen::Lower>().solve(b);
  factor_.triangularView<Eigen::Lower>().adjoint().solveInPlace(x);
  return x;
}

MatrixXd Cholesky::solve(const MatrixXd& b) const {
  MatrixXd x = factor_.triangularView<Eigen::Lower>().solve(b);
  factor_.triangularView<Eigen::Lower>().adjoint().solveInPlace(x);
  return x;
}

VectorXd Cholesky::inverse_diagonal(Monitor& monitor) const {
  const int n = this->n();
  MatrixXd linv;
  if (backend_ == CholBackend::Lapack) {
    linv = factor_;
    if (blocked_trtri(linv, monitor) != 0) throw NumericalError("dtrtri failed: singular Cholesky factor");
  } else {
    linv = factor_.triangularView<Eigen::Lower>().solve(MatrixXd::Identity(n, n));
  }
  // Column i of L^{-1} is zero above row i.
  VectorXd d(n);
  for (int i = 0; i < n; ++i) d(i) = linv.col(i).tail(n - i).squaredNorm();
  return d;
}

MatrixXd Cholesky::inverse(Monitor& monitor) const {
  const int n = this->n();
  MatrixXd inv;
  if (backend_ == CholBackend::Lapack) {
    inv = factor_;
    if (blocked_potri(inv, monitor) != 0) throw NumericalError("dpotri failed: singular Cholesky factor");
    inv.triangularView<Eigen::StrictlyUpper>() = inv.adjoint();
  } else {
    MatrixXd linv = factor_.triangularView<Eigen::Lower>().solve(MatrixXd::Identity(n, n));
    inv.noalias() = linv.adjoint() * linv.triangularView<Eigen::Lower>();
  }
  return inv;
}

MatrixXd Cholesky::release_inverse_lower(Monitor& monitor) {
  const int n = this->n();
  MatrixXd inv = std::move(factor_);
  factor_.resize(0, 0);
  if (backend_ == CholBackend::Lapack) {
    if (blocked_potri(inv, monitor) != 0) throw NumericalError("dpotri failed: singular Cholesky factor");
  } else {
    MatrixXd linv = inv.triangularView<Eigen::Lower>().solve(MatrixXd::Identity(n, n));
    inv.noalias() = linv.adjoint() * linv.triangularView<Eigen::Lower>();
  }
  return inv;
}

void Cholesky::rank_one_update(const VectorXd& v, double sigma) {
  const int n = this->n();
  if (v.size() != n) throw std::invalid_argument("rank_one_update: length mismatch");
  if (sigma == 0) return;
  VectorXd w = v * std::sqrt(std::abs(sigma));
  const double sign = sigma > 0 ? 1.0 : -1.0;
  int start = 0;
  while (start < n && w(start) == 0.0) ++start;
  for (int k = start; k < n; ++k) {
    const double lkk = factor_(k, k);
    const double r2 = lkk * lkk + sign * w(k) * w(k);
    if (!(r2 > 0)) throw NumericalError("Cholesky downdate: the result is not positive definite");
    const double r = std::sqrt(r2);
    const double c = r / lkk;
    const double s = w(k) / lkk;
    factor_(k, k) = r;
    const int m = n - k - 1;
    if (m > 0) {
      auto col = factor_.col(k).tail(m);
      auto wt = w.tail(m);
      col = (col + sign * s * wt) / c;
      wt = c * wt - s * col;
    }
  }
}

void Cholesky::diagonal_update(int i, double delta) {
  VectorXd e = VectorXd::Zero(n());
  e(i) = 1.0;
  rank_one_update(e, delta);
}

LooQuantities loo_quantities(const Cholesky& chol, const VectorXd& r, Monitor& monitor) {
  return loo_from_precision(chol.solve(r), chol.inverse_diagonal(monitor));
}

LooQuantities loo_from_precision(VectorXd alpha, VectorXd inverse_diagonal) {
  LooQuantities q;
  q.alpha = std::move(alpha);
  q.inverse_diagonal = std::move(inverse_diagonal);
  q.residual = q.alpha.array() / q.inverse_diagonal.array();
  q.variance = q.inverse_diagonal.array().inverse();
  return q;
}

double gaussian_nll(const Cholesky& chol, const VectorXd& r, const VectorXd& alpha) {
  return 0.5 * r.dot(alpha) + 0.5 * chol.logdet() + 0.5 * r.size() * kLog2Pi;
}

}  // namespace noisylabels
