// Sparse (FITC / inducing-point) EP for the labelling-error likelihood of
// ep_types.h, in O(n m^2) time and O(n m) memory: no n x n matrix is formed.
//
// The prior covariance K is replaced by the FITC approximation
//   Kt = Q + Lambda,  Q = K(X,Z) Kuu^-1 K(Z,X),  Lambda = diag(K - Q),
// with m inducing inputs Z (fixed) and Kuu = K(Z,Z) without the nugget (plus
// a reported jitter if it is not numerically positive definite); the nugget
// of the mixed kernel is white noise and sits in Lambda. With U = L^-1 K(Z,X)
// (L = chol(Kuu)), sites T = diag(tau), nu and
//   g_i = 1 / (1 + lambda_i tau_i),   w_i = tau_i g_i,   M = I + U diag(w) U',
// Woodbury gives
//   Sigma = (Kt^-1 + T)^-1 = diag(lambda g) + diag(g) U' M^-1 U diag(g),
//   |I + Kt T| = prod_i (1 + lambda_i tau_i) |M|,
//   R = (Kt + T^-1)^-1 = T - T Sigma T = diag(w) - diag(w) U' M^-1 U diag(w).
// The posterior is proper iff every 1 + lambda_i tau_i > 0 and M is positive
// definite (Schur complements), which holds for negative tau too.
// Sequential sweeps visit blocks of sites: the block's b x b marginal
// covariance and means are read off the representation, the sites of the
// block are updated one at a time by exact rank-one updates of that b x b
// block (the same iterates as dense EP in the same order), then M is updated
// by the block's rank-b change and refactored (m^3/3).
#pragma once

#include <Eigen/Dense>
#include <cstdint>
#include <random>

#include "ep/ep_outer.h"
#include "ep/ep_types.h"
#include "gp/kernels.h"
#include "linalg/linalg.h"
#include "common/monitor.h"

namespace noisylabels {

struct FitcPrior {
  MatrixXd u;          // L^-1 K(Z, X), m x n
  Cholesky chol_uu;    // of K(Z, Z) + jitter I
  VectorXd lambda;     // diag(K(X,X)) - diag(Q) (>= 0, nugget included)
  double jitter = 0;   // added to K(Z, Z)
};

// The FITC prior at the kernel's current hyperparameters; x is n x d, z m x d.
// Its O(n m^2) steps poll `monitor` between them (as fitc_refresh's do).
FitcPrior fitc_prior(const Kernel& kernel, const MatrixXd& x, const MatrixXd& z,
                     const JitterPolicy& jitter, Monitor& monitor = null_monitor());

// diag(Sigma) (into s.post_var), mu and 1/2 log|I + Kt T| from the sites; false if
// the posterior is improper. With `v`, also V = chol(M)^-1 U (m x n).
bool fitc_refresh(const FitcPrior& p, EpState& s, MatrixXd* v = nullptr,
                  Monitor& monitor = null_monitor());

// EP on the FITC prior: same options, revert-and-halve damping and warm start
// as the dense run_ep(); `opt.block_size` is ignored (blocks follow m).
EpState run_ep_fitc(const FitcPrior& p, const VectorXd& y, const EpLikelihood& lik,
                    const EpOptions& opt, std::mt19937_64& rng, Monitor& monitor,
                    const VectorXd* warm_tau = nullptr, const VectorXd* warm_nu = nullptr);

// d log Z_EP / d log theta on the FITC prior at a converged state (the sites
// held fixed, as in the dense path): 1/2 tr(W dKt/dtheta) with
// W = b b' - R, expanded through dQ and d diag(K) without forming W.
VectorXd fitc_kernel_gradient(const Kernel& kernel, const MatrixXd& x, const MatrixXd& z,
                              const FitcPrior& p, const EpState& s);

// Predictions: latent mean k_u' beta and variance k** - k_u' cov k_u with
// k_u = K(Z, x*), beta = Kuu^-1 K(Z,X) b and cov = Kuu^-1 K(Z,X) R K(X,Z) Kuu^-1.
struct FitcPredictor {
  VectorXd beta;
  MatrixXd cov;
};
FitcPredictor fitc_predictor(const FitcPrior& p, const EpState& s);

struct SparseFitResult {
  FitResult fit;            // fit.k is empty
  FitcPredictor predictor;
};

// fit_gpc_ep() with the FITC prior on the inducing inputs z.
SparseFitResult fit_gpc_ep_fitc(const MatrixXd& x, const MatrixXd& z, const VectorXd& y,
                                Kernel kernel, EpLikelihood lik, const FitOptions& opt,
                                std::uint64_t seed, Monitor& monitor);

}  // namespace noisylabels
