#include "gpr/forward_search.h"

#include <cmath>
#include <limits>
#include <stdexcept>

namespace noisylabels {

ForwardSearch forward_search(MatrixXd c, const VectorXd& r) {
  const int n = static_cast<int>(r.size());
  if (c.rows() != n || c.cols() != n) throw std::invalid_argument("forward_search: C and r differ in size");
  ForwardSearch out;
  out.entered.reserve(n);
  out.statistic.resize(n);
  // Only the lower triangle of P (= c, updated in place) and the entries of
  // mu of points still outside the clean set are kept up to date: a
  // conditioning step on j changes P[a, b] by -P[a, j] P[b, j] / P[j, j],
  // which involves no entry of a point already inside.
  VectorXd mu = VectorXd::Zero(n);
  std::vector<int> outside(n);
  for (int i = 0; i < n; ++i) outside[i] = i;
  VectorXd p(n);
  for (int m = 0; m < n; ++m) {
    int best = -1;
    double best_z = std::numeric_limits<double>::infinity();
    for (int k = 0; k < static_cast<int>(outside.size()); ++k) {
      const int j = outside[k];
      const double z = std::abs(r(j) - mu(j)) / std::sqrt(c(j, j));
      if (best < 0 || z < best_z) {
        best = k;
        best_z = z;
      }
    }
    const int j = outside[best];
    out.entered.push_back(j);
    out.statistic(m) = best_z;
    if (m == n - 1) break;
    outside.erase(outside.begin() + best);
    for (int a : outside) p(a) = a >= j ? c(a, j) : c(j, a);
    const double pjj = c(j, j);
    const double step = (r(j) - mu(j)) / pjj;
    const int n_out = static_cast<int>(outside.size());  // increasing indices
    for (int kb = 0; kb < n_out; ++kb) {
      const int b = outside[kb];
      mu(b) += p(b) * step;
      const double pb = p(b);
      double* col = c.col(b).data();
      for (int ka = kb; ka < n_out; ++ka) {
        const int a = outside[ka];
        col[a] -= (p(a) * pb) / pjj;
      }
    }
  }
  return out;
}

ForwardSearch forward_search(DenseCovariance& cov, const VectorXd& noise_var, const VectorXd& r) {
  return forward_search(cov.matrix(noise_var, false), r);
}

}  // namespace noisylabels
