#include "gpr/gpr_trimmed.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace noisylabels {

TrimmedSubset trimmed_subset(const MatrixXd& k, const VectorXd& r, int n_trim, int max_iter,
                             double tol, const JitterPolicy& jitter) {
  const int n = static_cast<int>(r.size());
  if (k.rows() != n || k.cols() != n) throw std::invalid_argument("trimmed_subset: K and r differ in size");
  if (n_trim < 0 || n_trim >= n) throw std::invalid_argument("trimmed_subset: n_trim outside [0, n)");
  TrimmedSubset out;
  out.offset = VectorXd::Zero(n);
  const Cholesky chol(k, jitter);
  if (n_trim == 0) {
    out.objective = r.dot(chol.solve(r));
    out.converged = true;
    return out;
  }
  // Step size 1/L = lambda_min(K) / 2 for the gradient 2 K^{-1}(r + b).
  const double lambda_min =
      Eigen::SelfAdjointEigenSolver<MatrixXd>(k, Eigen::EigenvaluesOnly).eigenvalues()(0);
  const double step = std::max(lambda_min, 1e-12) / 2.0;
  // Keep the n_trim entries of largest magnitude (ties by index).
  std::vector<int> order(n);
  auto threshold = [&](VectorXd& v) {
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](int a, int b) { return std::abs(v(a)) > std::abs(v(b)); });
    for (int j = n_trim; j < n; ++j) v(order[j]) = 0.0;
  };
  VectorXd b = -r;
  threshold(b);
  for (int it = 0; it < max_iter; ++it) {
    const VectorXd grad = 2.0 * chol.solve(VectorXd(r + b));
    VectorXd next = b - step * grad;
    threshold(next);
    const double change = (next - b).norm();
    b = next;
    out.iterations = it + 1;
    if (change <= tol * std::max(1.0, b.norm())) {
      out.converged = true;
      break;
    }
  }
  out.offset = b;
  for (int i = 0; i < n; ++i)
    if (b(i) != 0.0) out.outliers.push_back(i);
  const VectorXd rb = r + b;
  out.objective = rb.dot(chol.solve(rb));
  return out;
}

}  // namespace noisylabels
