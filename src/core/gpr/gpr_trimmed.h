// The subset step of the trimmed marginal likelihood baseline
// (gpr_baseline(method = "trimmed_mll")).
#pragma once
#include <Eigen/Dense>
#include <vector>

#include "linalg/linalg.h"

namespace noisylabels {

// Trimmed marginal likelihood (Andrade & Takeda, UAI 2023), the
// subset step at fixed hyperparameters: with r = y - m and K = K_f + sigma2 I,
//   minimise_b (r + b)' K^{-1} (r + b)  subject to  ||b||_0 <= k
// by iterative hard thresholding. For a fixed support T the minimum over b_T
// is the Mahalanobis term of the points outside T alone, so the support of b
// is the set of k points whose removal best explains the rest. Step 1/L with
// L = 2 lambda_max(K^{-1}) = 2 / lambda_min(K), start b = -r.
struct TrimmedSubset {
  VectorXd offset;             // b
  std::vector<int> outliers;   // support of b (0-based, increasing)
  double objective = 0;        // (r + b)' K^{-1} (r + b) at the end
  int iterations = 0;
  bool converged = false;
};
TrimmedSubset trimmed_subset(const MatrixXd& k, const VectorXd& r, int n_trim, int max_iter,
                             double tol, const JitterPolicy& jitter);

}  // namespace noisylabels
