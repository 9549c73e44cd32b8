// Outlier-robust Gaussian-process classification by expectation propagation
// (Kim & Ghahramani 2008; corrected and stabilised in specs/gpc_ep.md).
//
// Likelihood p(y | f) = eps + (1 - 2 eps) Phi(y f / sigma), y in {-1, +1}:
// sigma = 0 is the step function with labelling error (paper eq. 6),
// sigma = 1 the probit. Sites are Gaussian in natural parameters
// (site_tau, site_nu); site_tau may be negative because the likelihood is not
// log-concave for eps > 0 (spec §2.3).
#pragma once

#include <Eigen/Dense>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "gp/kernels.h"
#include "linalg/linalg.h"
#include "common/monitor.h"

namespace noisylabels {

using Eigen::MatrixXd;
using Eigen::VectorXd;

// log Phi(z), accurate for very negative z (spec §2.1 rule 1).
double log_normal_cdf(double z);
// phi(z) / Phi(z), accurate for very negative z.
double normal_hazard(double z);

struct EpLikelihood {
  double epsilon = 0.0;  // labelling-error rate, 0 <= eps < 1/2
  double sigma = 0.0;    // probit noise scale; 0 = step function
};

// Moments of the tilted distribution Z_i^{-1} p(y | f) N(f; cav_mean, cav_var)
// (spec §2.1) and the new site in natural parameters (§2.2).
struct SiteMoments {
  double z = 0;           // y cav_mean / sqrt(sigma^2 + cav_var)
  double log_z = 0;       // log Z_i
  double ratio = 0;       // r_i = (1 - 2 eps) phi(z) / Z_i
  double dlogz_dmean = 0; // d1
  double d2logz_dmean2 = 0;  // d2
  double tilted_mean = 0;
  double tilted_var = 0;
  double site_tau = 0;
  double site_nu = 0;
  double dlogz_deps = 0;  // (1 - 2 Phi(z)) / Z_i
  double flip_prob = 0;   // eps Phi(-z) / Z_i: P(label flipped | tilted)
};
SiteMoments tilted_moments(double y, double cav_mean, double cav_var, const EpLikelihood& lik);

struct EpOptions {
  int max_sweeps = 100;
  int min_sweeps = 2;
  double tol_logz = 1e-6;   // |delta log Z_EP| between sweeps
  double tol_site = 1e-4;   // max site change, scaled by the damping in use
  double damping = 1.0;     // 1 = undamped
  bool clamp = false;       // clamp site_tau >= 0 (GPML / GPy) instead of allowing < 0
  // Sequential sweeps process sites in blocks of this many (left-looking
  // delayed rank-one updates, BLAS 3); 0 = plain rank-one updates of the
  // full Sigma (the unblocked reference; same iterates, slower).
  int block_size = 64;
  // Parallel EP: all sites from one set of cavities, then one refresh; the
  // refresh needs only diag(Sigma) and mu until the last sweep.
  bool parallel = false;
  // Sequential blocked sweeps (n >= 128): Sigma is recomputed exactly from K
  // and the sites after every `refresh_every`-th sweep and taken from the
  // sweep's own factors after the others (same iterates up to rounding, 3
  // instead of 4 Choleskys of flops per sweep). 1 = exact after every sweep
  // (spec §3.2); 0 = never after the start. The state run_ep() returns is
  // that of the last refresh (drift from the exact one about 1e-13).
  int refresh_every = 1;
  JitterPolicy jitter;      // for chol(K)
};

// Gaussian EP approximation q(f) = N(mu, sigma) and everything derived from it.
struct EpState {
  VectorXd site_tau, site_nu;
  MatrixXd sigma;             // posterior covariance (K^-1 + T)^-1 (empty on the sparse path)
  VectorXd var;               // diag(Sigma) when sigma is not stored (sparse EP)
  VectorXd mu;                // posterior mean
  VectorXd cav_tau, cav_nu;   // cavity natural parameters at the final posterior
  VectorXd z, log_zi, dlogz_deps, flip_prob;
  double half_logdet = 0;     // 1/2 log|I + K T|
  double log_z = 0;           // log Z_EP (spec §3.5)
  int sweeps = 0;
  int reverts = 0;            // sweeps undone by revert-and-halve damping
  int skipped = 0;            // site updates skipped (improper cavity / posterior)
  double damping = 1.0;       // damping in use at the end
  double jitter = 0;          // jitter added to K before EP (reported)
  bool converged = false;
  bool negative_tau = false;  // some site_tau < 0 at the end
  std::vector<double> trace;  // log Z_EP after each sweep
};

// Recompute sigma, mu and the log-determinant from the sites (spec §3.2).
// Returns false if the posterior is improper. `chol_k` is chol(K); it is only
// needed when many sites are negative (it is computed here if empty).
// With `diagonal_only`, sigma holds only the right diagonal (parallel EP).
// `scratch` (optional) is n x n storage reused across calls.
bool ep_refresh(const MatrixXd& k, const Cholesky& chol_k, EpState& s, bool diagonal_only = false,
                MatrixXd* scratch = nullptr);
// Cavities, per-site quantities and log Z_EP at the current posterior
// (spec §3.5). Returns false if any cavity is improper.
bool ep_evidence(const VectorXd& y, const EpLikelihood& lik, EpState& s);
// The same with diag(Sigma) given (the sparse path never stores Sigma).
bool ep_evidence_diag(const VectorXd& y, const EpLikelihood& lik, const VectorXd& diag,
                      EpState& s);
// New site i from its current marginal (sii, mui): spec §3.2 with clamping
// and damping; false (skip the site) for an improper cavity, a non-finite
// update or one that would make Sigma_ii <= 0. dt, dn are the changes.
bool propose_site(int i, double sii, double mui, const VectorXd& y, const EpLikelihood& lik,
                  const EpOptions& opt, double delta, const EpState& s, double& dt, double& dn);

// Run EP on the prior covariance K. A warm start (site_tau/site_nu of the
// right length) is used when it gives a proper posterior. Throws
// NumericalError if no proper posterior is found (damping below 1e-3).
EpState run_ep(const MatrixXd& k, const VectorXd& y, const EpLikelihood& lik,
               const EpOptions& opt, std::mt19937_64& rng, Monitor& monitor,
               const VectorXd* warm_tau = nullptr, const VectorXd* warm_nu = nullptr);

// b = nu - T mu (= K^-1 mu) and W = b b' - (T - T Sigma T) (spec §3.6).
VectorXd ep_b(const EpState& s);
MatrixXd ep_gradient_weights(const EpState& s);
// d log Z_EP / d log theta for every kernel hyperparameter.
VectorXd ep_kernel_gradient(const Kernel& kernel, const MatrixXd& x, const EpState& s);

// Predictive latent mean and variance at test points (spec §5); kss includes
// the nugget.
void ep_predict(const EpState& s, const MatrixXd& kstar, const VectorXd& kss,
                VectorXd& mean, VectorXd& var);

enum class EpsilonRule { Tilted, Paper };

// One M-step for epsilon (spec §4.1, §4.2a); the result is clamped to
// [eps_min, eps_max]. The tilted rule is iterated to its fixed point at the
// current cavities (a concave 1-D problem), the paper's rule is closed form.
double epsilon_update(const VectorXd& y, const EpState& s, const EpLikelihood& lik,
                      EpsilonRule rule, double eps_min, double eps_max);

struct FitOptions {
  EpOptions ep;
  bool learn_epsilon = true;
  EpsilonRule rule = EpsilonRule::Tilted;
  double eps_min = 1e-6, eps_max = 0.49;
  bool learn_kernel = true;
  std::vector<int> free;      // indices of free log-hyperparameters
  VectorXd lower, upper;      // bounds for all log-hyperparameters
  int max_outer = 50;
  int lbfgs_steps = 5;        // L-BFGS iterations per outer iteration
  double tol_eps = 1e-5, tol_theta = 1e-4, tol_logz = 1e-6;
  // Tilted rule with a learned kernel: the L-BFGS steps move log(epsilon)
  // together with the kernel hyperparameters (gradient d log Z_EP / d eps,
  // spec §4.2b), after each EM step. EM alone crawls along the ridge where
  // epsilon and the latent scale trade off (overlapping classes).
  bool joint_epsilon = true;
};

struct FitResult {
  VectorXd log_par;
  double epsilon = 0;
  EpState state;
  MatrixXd k;                 // prior covariance at the final hyperparameters
  double jitter = 0;
  int outer_iterations = 0;
  bool converged = false;
  int ep_runs = 0;
  int ep_failures = 0;        // EP runs with no proper posterior (told to the optimiser)
  int ep_not_converged = 0;
  std::vector<double> logz_trace, eps_trace;
  std::vector<VectorXd> par_trace;  // log-hyperparameters after each outer iteration
  std::string message;
};

// EP at log hyperparameters lp and the given likelihood, warm-started from
// the given sites when they are non-null (throws NumericalError if no proper
// posterior is found), and d log Z_EP / d log theta at a converged state.
using EpRunner = std::function<EpState(const VectorXd& lp, const EpLikelihood& lik,
                                       const VectorXd* warm_tau, const VectorXd* warm_nu)>;
using EpGradient = std::function<VectorXd(const VectorXd& lp, const EpState& s)>;

// The outer loop of spec §4.4 for any EP backend (dense or sparse): EP,
// epsilon M-step, a few L-BFGS steps on -log Z_EP with nested, warm-started
// EP. Fills everything in FitResult except `k`.
FitResult fit_ep_outer(const Kernel& kernel, const VectorXd& y, EpLikelihood lik,
                       const FitOptions& opt, const EpRunner& run,
                       const EpGradient& gradient, Monitor& monitor);

// The outer loop with the dense EP (run_ep on K(X, X)).
FitResult fit_gpc_ep(const MatrixXd& x, const VectorXd& y, Kernel kernel, EpLikelihood lik,
                     const FitOptions& opt, std::uint64_t seed, Monitor& monitor);

}  // namespace noisylabels
