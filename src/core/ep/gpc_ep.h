// Dense EP for outlier-robust Gaussian-process classification (Kim &
// Ghahramani 2008) on the full n x n prior covariance K. The pieces every
// EP backend shares live in ep_types.h (options, state), ep_site.h
// (likelihood moments, site updates), ep_schedule.h (sweep loop, parallel
// sweep, evidence), ep_epsilon.h (epsilon M-step) and ep_outer.h (the
// hyperparameter loop); this header includes them all.
#pragma once

#include <Eigen/Dense>
#include <cstdint>
#include <random>

#include "common/monitor.h"
#include "ep/ep_epsilon.h"
#include "ep/ep_outer.h"
#include "ep/ep_schedule.h"
#include "ep/ep_site.h"
#include "ep/ep_types.h"
#include "gp/kernels.h"
#include "linalg/linalg.h"

namespace noisylabels {

// Recompute post_cov, mu and the log-determinant from the sites. Returns
// false if the posterior is improper. `chol_k` is chol(K); it is only needed
// when many sites are negative (it is computed here if empty). With
// `diagonal_only`, post_cov holds only the right diagonal (parallel EP).
// `scratch` (optional) is n x n storage reused across calls. The
// factorizations poll `monitor` between blocks.
bool ep_refresh(const MatrixXd& k, const Cholesky& chol_k, EpState& s, bool diagonal_only = false,
                MatrixXd* scratch = nullptr, Monitor& monitor = null_monitor());
// Cavities, per-site quantities and log Z_EP at the current posterior
// (ep_evidence_diag with the diagonal of s.post_cov). Returns false if any
// cavity is improper.
bool ep_evidence(const VectorXd& y, const EpLikelihood& lik, EpState& s);

// Run EP on the prior covariance K. A warm start (site_tau/site_nu of the
// right length) is used when it gives a proper posterior. Throws
// NumericalError if no proper posterior is found (damping below 1e-3).
EpState run_ep(const MatrixXd& k, const VectorXd& y, const EpLikelihood& lik,
               const EpOptions& opt, std::mt19937_64& rng, Monitor& monitor,
               const VectorXd* warm_tau = nullptr, const VectorXd* warm_nu = nullptr);

// W = b b' - (T - T Sigma T), b = ep_b(s): d log Z_EP / d theta =
// 1/2 tr(W dK/dtheta).
MatrixXd ep_gradient_weights(const EpState& s);
// d log Z_EP / d log theta for every kernel hyperparameter.
VectorXd ep_kernel_gradient(const Kernel& kernel, const MatrixXd& x, const EpState& s,
                            Monitor& monitor = null_monitor());

// Predictive latent mean and variance at test points; kss includes the
// nugget.
void ep_predict(const EpState& s, const MatrixXd& kstar, const VectorXd& kss,
                VectorXd& mean, VectorXd& var);

// The outer loop with the dense EP (run_ep on K(X, X)).
FitResult fit_gpc_ep(const MatrixXd& x, const VectorXd& y, Kernel kernel, EpLikelihood lik,
                     const FitOptions& opt, std::uint64_t seed, Monitor& monitor);

}  // namespace noisylabels
