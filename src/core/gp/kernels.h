// Covariance functions shared by gpr_loo, gpr_pursuit and gpc_ep.
//
// Hyperparameters live on the log scale, in this order:
//   rbf, matern12, matern32, matern52: [log variance, log lengthscale_1..q]
//       q = 1 (isotropic) or q = d (ARD)
//   linear:                            [log variance, log bias]
//       k(x, z) = bias + variance * x'z
//   mixed (Kim & Ghahramani eq. 7-8):  [log v0, log v1, log v2, log l_1..q]
//       k(x, z) = v0 exp(-1/2 sum_m l_m d_m(x_m, z_m)) + v1 + v2 delta(x, z)
//       d_m = (x_m - z_m)^2 for continuous inputs, 1 - [x_m == z_m] for
//       categorical ones; l_m are inverse squared length-scales; the nugget
//       v2 is on the diagonal of the training Gram matrix and in diag() (a
//       test point's own variance), never in cross().
//
// The gradient contract: given a symmetric weight matrix W,
// gradient() returns g_j = 1/2 sum_kl W_kl dK_kl/dtheta_j for every log
// hyperparameter in one pass over the pairs, without forming dK/dtheta_j.
// The O(n^2) passes (gram, gradient) poll `monitor` once per column block
// (from the main thread when run by OpenMP threads).
#pragma once

#include <Eigen/Dense>
#include <string>
#include <vector>

#include "common/monitor.h"

namespace noisylabels {

using Eigen::MatrixXd;
using Eigen::VectorXd;

enum class KernelType { Rbf, Matern12, Matern32, Matern52, Linear, Mixed };

KernelType kernel_type_from_string(const std::string& name);

class Kernel {
 public:
  // `ard`: one length-scale per input column; `categorical`: per column,
  // true if categorical (mixed kernel only; empty = all continuous).
  Kernel(KernelType type, int dim, bool ard, std::vector<bool> categorical = {});

  KernelType type() const { return type_; }
  int dim() const { return dim_; }
  bool ard() const { return ard_; }
  int n_par() const;
  const VectorXd& log_par() const { return log_par_; }
  void set_log_par(const VectorXd& p);

  // K(X, X) including the nugget of the mixed kernel; X is n x d.
  MatrixXd gram(const MatrixXd& x, Monitor& monitor = null_monitor()) const;
  // K(X, Z) without nugget.
  MatrixXd cross(const MatrixXd& x, const MatrixXd& z) const;
  // k(x_i, x_i) for each row, including the nugget.
  VectorXd diag(const MatrixXd& x) const;
  // n x n_par matrix of d k(x_i, x_i) / d theta_j (for diagonal-scaled models).
  MatrixXd diag_gradient(const MatrixXd& x) const;
  // g_j = 1/2 sum_kl W_kl dK(X,X)_kl / dtheta_j; W symmetric n x n (stationary
  // kernels read only its lower triangle).
  VectorXd gradient(const MatrixXd& x, const MatrixXd& w, Monitor& monitor = null_monitor()) const;
  // The same with W = a a' - M, M symmetric of which only the lower triangle
  // is read (e.g. straight from dpotri): the Gaussian-likelihood gradient
  // without forming W. Stationary kernels visit the lower triangle in column
  // blocks and never hold an n x n temporary.
  VectorXd gradient(const MatrixXd& x, const VectorXd& a, const MatrixXd& m_lower,
                    Monitor& monitor = null_monitor()) const;
  // k(a, b) for two points of dim() contiguous values, and, if dk is given,
  // its n_par() log-parameter derivatives; `same` marks a diagonal entry of a
  // Gram matrix (adds the mixed kernel's nugget). For the small conditioning
  // sets of the Vecchia operator, where blocked GEMMs do not pay.
  double pair_gradient(const double* a, const double* b, double* dk, bool same) const;

 private:
  // Value of k at a pair and (optionally) its log-parameter derivatives.
  double pair(const double* a, const double* b, double* dk) const;
  double length_scale(int m) const { return ard_ ? ls_[m] : ls_[0]; }
  bool stationary() const {
    return type_ == KernelType::Rbf || type_ == KernelType::Matern12 ||
           type_ == KernelType::Matern32 || type_ == KernelType::Matern52;
  }
  // Inputs divided by their length-scales (stationary kernels).
  MatrixXd scaled(const MatrixXd& x) const;
  // Squared scaled distances between the rows of u and v (by one GEMM).
  static MatrixXd squared_distances(const MatrixXd& u, const MatrixXd& v, bool symmetric);
  // k(r^2) elementwise, and (if wanted) w(r^2) = (dk/dlog l_m) / u_m^2.
  void stationary_values(const MatrixXd& r2, MatrixXd& k, MatrixXd* w) const;
  // Blocked gradient of a stationary kernel over the lower triangle; `fill`
  // writes W(j0:n, j0:j0+b) into its third argument.
  template <class Fill>
  VectorXd stationary_gradient(const MatrixXd& x, Monitor& monitor, Fill fill) const;
  KernelType type_;
  int dim_;
  bool ard_;
  std::vector<bool> categorical_;
  VectorXd log_par_;
  // cached natural-scale parameters
  double variance_ = 1.0, bias_ = 0.0, nugget_ = 0.0;
  std::vector<double> ls_;  // lengthscales (stationary) or l_m (mixed)
};

}  // namespace noisylabels
