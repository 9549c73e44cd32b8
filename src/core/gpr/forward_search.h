// Forward search (Atkinson & Riani) of a Gaussian model N(0, C) for the
// residuals r, the test behind gpr_pursuit(selection = "esd")
// (R/gpr_pursuit-select.R states the rule built on it).
#pragma once
#include <Eigen/Dense>
#include <vector>

#include "gp/covariance.h"

namespace noisylabels {

struct ForwardSearch {
  std::vector<int> entered;  // 0-based, in the order the points join the clean set
  VectorXd statistic;        // statistic(m): the smallest |z| outside a clean set of m points
};

// Starting from an empty clean set, the point with the smallest
// |z_j| = |r_j - mu_j| / sqrt(P_jj) joins it, mu and P the conditional mean
// and covariance of the points given the clean set, updated by one
// conditioning step on the points still outside (O(n^2) per step, in place).
// Ties go to the smallest index. `c` is consumed.
ForwardSearch forward_search(MatrixXd c, const VectorXd& r);

// The same for C = K(theta) + diag(noise_var) of a dense covariance operator.
ForwardSearch forward_search(DenseCovariance& cov, const VectorXd& noise_var, const VectorXd& r);

}  // namespace noisylabels
