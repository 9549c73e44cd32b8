// Types shared by every EP backend (dense and FITC sparse) for outlier-robust
// Gaussian-process classification (Kim & Ghahramani 2008).
//
// Likelihood p(y | f) = eps + (1 - 2 eps) Phi(y f / probit_scale),
// y in {-1, +1}: probit_scale = 0 is the step function with labelling error
// (paper eq. 6), probit_scale = 1 the probit. Sites are Gaussian in natural
// parameters (site_tau, site_nu); site_tau may be negative because the
// likelihood is not log-concave for eps > 0.
#pragma once

#include <Eigen/Dense>
#include <vector>

#include "linalg/linalg.h"

namespace noisylabels {

using Eigen::MatrixXd;
using Eigen::VectorXd;

struct EpLikelihood {
  double epsilon = 0.0;       // labelling-error rate, 0 <= eps < 1/2
  double probit_scale = 0.0;  // probit noise scale; 0 = step function
};

struct EpOptions {
  int max_sweeps = 100;
  int min_sweeps = 2;
  double tol_logz = 1e-6;   // |delta log Z_EP| between sweeps
  double tol_site = 1e-4;   // max site change, scaled by the damping in use
  double damping = 1.0;     // 1 = undamped
  bool clamp = false;       // clamp site_tau >= 0 (GPML / GPy) instead of allowing < 0
  // Sequential sweeps process sites in blocks of this many (left-looking
  // delayed rank-one updates, BLAS 3); 0 = plain rank-one updates of the
  // full posterior covariance (the unblocked reference; same iterates,
  // slower). The sparse path ignores it (its blocks follow m).
  int block_size = 64;
  // Parallel EP: all sites from one set of cavities, then one refresh; the
  // refresh needs only the posterior variances and mu until the last sweep.
  bool parallel = false;
  // Sequential blocked dense sweeps (n >= 128): the posterior covariance is
  // recomputed exactly from K and the sites after every `refresh_every`-th
  // sweep and taken from the sweep's own factors after the others (same
  // iterates up to rounding, 3 instead of 4 Choleskys of flops per sweep).
  // 1 = exact after every sweep; 0 = never after the start. The state
  // run_ep() returns is that of the last refresh (drift from the exact one
  // about 1e-13). Sequential sparse (FITC) sweeps: M = I + U diag(w) U' is
  // rebuilt from U and the sites after every `refresh_every`-th sweep and
  // taken from the sweep's block-by-block updates after the others.
  int refresh_every = 1;
  JitterPolicy jitter;      // for chol(K)
};

// Gaussian EP approximation q(f) = N(mu, post_cov) and everything derived
// from it.
struct EpState {
  VectorXd site_tau, site_nu;
  MatrixXd post_cov;          // posterior covariance (K^-1 + T)^-1 (empty on the sparse path)
  VectorXd post_var;          // its diagonal when post_cov is not stored (sparse EP)
  VectorXd mu;                // posterior mean
  VectorXd cav_tau, cav_nu;   // cavity natural parameters at the final posterior
  VectorXd z, log_zi, dlogz_deps, flip_prob;
  double half_logdet = 0;     // 1/2 log|I + K T|
  double log_z = 0;           // log Z_EP
  int sweeps = 0;
  int reverts = 0;            // sweeps undone by revert-and-halve damping
  int skipped = 0;            // site updates skipped (improper cavity / posterior)
  double damping = 1.0;       // damping in use at the end
  double jitter = 0;          // jitter added to K before EP (reported)
  bool converged = false;
  bool negative_tau = false;  // some site_tau < 0 at the end
  std::vector<double> trace;  // log Z_EP after each sweep

  // diag of the posterior covariance, whichever way it is stored.
  VectorXd marginal_var() const {
    return post_cov.size() > 0 ? VectorXd(post_cov.diagonal()) : post_var;
  }
};

// b = nu - T mu (= K^-1 mu for the dense prior).
VectorXd ep_b(const EpState& s);

}  // namespace noisylabels
