// Robust GP regression by relevance pursuit (Ament et al., NeurIPS 2024;
// vignettes/gpr-pursuit.Rmd). Plain C++17 + Eigen core: no R headers.
//
// Model: y ~ N(m 1, K), K = K_f(theta) + sigma2 I + diag(rho),
// rho_i > 0 only on the support S (the "outliers"); K is the covariance
// operator's C with noise variances sigma2 + rho_i (covariance.h).
// Parameterisations of rho on S:
//   convex:    rho_i = d_i s_i / (1 - s_i), d_i = [K_0]_ii = k(x_i, x_i) + sigma2,
//              s_i in [0, s_max] (default s_max = 1 - 1e-3); d_i is not held
//              fixed, so gradients flow from rho into theta and sigma2;
//   canonical: rho_i itself, in [0, rho_max].
// The optimisation variables are packed as
//   z = [kernel log-parameters (p), mean m, log sigma2, value_i for i in S].
// The objective is the per-datum negative log marginal likelihood NLL / n
// (as GPyTorch's ExactMarginalLogLikelihood, without hyperparameter priors).
#pragma once
#include <Eigen/Dense>
#include <memory>
#include <vector>

#include "gp/covariance.h"
#include "gp/kernels.h"
#include "linalg/linalg.h"
#include "common/monitor.h"
#include "common/optimize.h"

namespace noisylabels {

struct PursuitOptions {
  bool backward = true;          // backward (BoTorch default) or forward pursuit
  bool convex = true;            // convex (s) or canonical (rho) parameterisation
  double s_max = 1.0 - 1e-3;     // upper bound of s (convex)
  double rho_max = 1e6;          // upper bound of rho (canonical)
  std::vector<int> levels;       // support sizes to visit (any order; sorted inside)
  // Speed-ups over the BoTorch pipeline, each switchable so the
  // reference pipeline runs on the same core:
  bool reset_rho = false;        // TRUE: set every support value to 0 before each fit
  bool coordinate_steps = true;  // Lemma-1 coordinate steps with rank-one updates
  bool reuse_factor = true;      // reuse the last factor for scoring and evidence
  // Block-coordinate fit (fast pipeline, when coordinate_steps): alternate an
  // L-BFGS step over the dense parameters (s held fixed) with Lemma-1
  // coordinate sweeps over rho_S (exact 1-D maximisers, Sherman-Morrison
  // updates of K^{-1}); then a joint L-BFGS polish of at most polish_iter
  // iterations.
  int max_outer = 30;
  int sweeps = 3;
  int polish_iter = 30;
  int inner_iter = 10;   // L-BFGS iterations per dense block step
  // Profiled block fit instead of the alternation: L-BFGS over the dense
  // parameters with rho_S minimised by up to profile_sweeps Lemma-1 sweeps
  // inside every evaluation.
  bool profiled = false;
  int profile_sweeps = 10;
  // Block-coordinate fit only for supports of at least this fraction of n
  // (joint L-BFGS crawls there; on small supports it is faster).
  double block_fraction = 0.25;
  // Backward pursuit, supports fitted by the joint L-BFGS (below
  // block_fraction): restart rho_S from 0 and take up to reseed_sweeps Lemma-1
  // sweeps before the fit, instead of keeping the previous level's values
  // (0 = keep them).
  int reseed_sweeps = 10;
  // Forward pursuit: start from this support (0-based) instead of the empty
  // one; its values start at their Lemma-1 optima (up to reseed_sweeps
  // coordinate sweeps from 0). With no levels this refits the model at a
  // given support (the refinement step of gpr_pursuit()'s model selection).
  std::vector<int> initial_support;
  BoxOptions box;
  JitterPolicy jitter;
  // Covariance backend (covariance.h): empty = dense exact GP (the code path
  // with rank-one updates); otherwise the response Vecchia approximation with
  // these conditioning sets (n x m, 0-based, -1 padded; see covariance.h),
  // its per-point work on `threads` OpenMP threads.
  Eigen::MatrixXi neighbors;
  int threads = 1;
  // Optional log-normal priors on the dense parameters (MAP, as GPyTorch):
  // for entry j of [kernel log-parameters, mean, log sigma2] with
  // prior_sd(j) > 0, the natural-scale value exp(z_j) ~ LogNormal(prior_mu(j),
  // prior_sd(j)) adds z_j + (z_j - mu_j)^2 / (2 sd_j^2) to the NLL. Empty = none.
  VectorXd prior_mu, prior_sd;
};

// Bounds of the "dense" parameters (log scale for kernel and noise).
struct PursuitBounds {
  VectorXd kernel_lower, kernel_upper;  // equal entries = fixed
  double mean_lower = -10, mean_upper = 10;
  double log_noise_lower = std::log(1e-4), log_noise_upper = std::log(10.0);
};

// One fitted model of the pursuit trace.
struct PursuitStep {
  std::vector<int> support;     // indices (0-based) with a free rho, in entry order
  VectorXd value;               // length n: s_i (convex) or rho_i (canonical), 0 off S
  VectorXd rho;                 // length n: added variance rho_i
  VectorXd log_par;             // kernel log-parameters
  double mean = 0, log_noise = 0;
  double nll = 0;               // total NLL (not per datum), without priors
  double penalty = 0;           // -log prior of the hyperparameters (0 without priors)
  int iterations = 0, evaluations = 0;
  bool converged = false;
  std::string message;
  std::vector<double> trace;    // per-datum objective per L-BFGS iteration
};

struct PursuitResult {
  std::vector<PursuitStep> steps;   // in visiting order
  long factorizations = 0;          // dense Cholesky factorizations of n x n matrices
  long rank_one_updates = 0;        // O(n^2) factor updates (Lemma-1 steps)
  bool stopped_early = false;       // forward: no inactive point had rho* > 0
  double max_jitter = 0;            // Vecchia: largest jitter a conditioning set needed
};

// The extended GP model with a fixed data set; evaluates the packed objective.
class PursuitModel {
 public:
  PursuitModel(const MatrixXd& x, const VectorXd& y, const Kernel& kernel,
               const PursuitOptions& options);

  int n() const { return static_cast<int>(y_.size()); }
  int n_kernel() const { return kernel_.n_par(); }

  // NLL/n at z for the support S; fills grad (same length as z) if non-null.
  // Keeps the factor of K at z (see last_factor()). Counts factorizations.
  double objective(const VectorXd& z, const std::vector<int>& support, VectorXd* grad);

  // rho vector (length n) implied by z and S.
  VectorXd rho_of(const VectorXd& z, const std::vector<int>& support);
  // Diagonal of K_0 = K_f + sigma2 I at the dense parameters of z.
  VectorXd base_diagonal(const VectorXd& z);

  const Cholesky& last_factor() const { return chol_; }
  const VectorXd& last_point() const { return last_z_; }
  long factorizations = 0;
  long rank_one_updates = 0;
  double last_penalty = 0;  // -log prior at the last objective() call

  // -log prior of the dense parameters and its gradient (added into grad).
  double prior_penalty(const VectorXd& z, VectorXd* grad) const;

  // Factor K at z (counted) unless the kept factor already is at z.
  void ensure_factor(const VectorXd& z, const std::vector<int>& support, bool reuse);

  // Lemma-1 coordinate sweeps over the support at fixed dense parameters:
  // rho_i <- min(cap_i, max(0, e_i^2 - 1/P_ii + rho_i)) one point at a time,
  // carrying only the support block of P = K^{-1} and alpha_S = (P r)_S;
  // each step is an exact Sherman-Morrison update, applied to the lower
  // triangle of P_SS in delayed blocks of 64 steps (two symmetric rank-b
  // products per block). P_SS comes from the W = alpha alpha' - K^{-1} kept
  // by the last gradient evaluation when that was at z, else from a fresh
  // inverse.
  // Writes the new values into z; returns the decrease of NLL / n.
  double coordinate_sweeps(VectorXd& z, const std::vector<int>& support, int sweeps);

  const VectorXd& y() const { return y_; }
  const PursuitOptions& options() const { return opt_; }

  // The operator in use (to lend it the fit's monitor, see MonitorScope).
  CovarianceOperator& covariance() {
    if (dense_) return *dense_;
    return *vecchia_;
  }
  // Vecchia backend in use (opt.neighbors non-empty)?
  bool vecchia() const { return vecchia_ != nullptr; }
  double max_jitter() const { return vecchia_ ? vecchia_->max_jitter() : 0.0; }
  // Lemma-1 quantities of every point in the model at z (rho_i* if !gain,
  // else the gain of lemma1_gain()), from the dense factor or, for Vecchia,
  // from the approximate precision Q: e_i = (Q r)_i / Q_ii, v_i = 1/Q_ii - rho_i
  // (the LOO quantities of the approximate model, exact for it).
  VectorXd lemma1(const VectorXd& z, const std::vector<int>& support, bool gain);

 private:
  const MatrixXd& x_;
  VectorXd y_;
  Kernel kernel_;
  PursuitOptions opt_;
  Cholesky chol_;
  MatrixXd last_w_;          // W of the last gradient evaluation (empty if none)
  bool last_w_valid_ = false;  // W belongs to the kept factor (at last_z_)
  VectorXd last_z_;
  std::vector<int> last_support_;
  // The covariance operator (one of the two) reads resid_ = y - m (updated
  // in place, never reallocated); Vecchia: last_eval_ holds Q r and diag(Q)
  // at last_z_.
  VectorXd resid_;
  std::unique_ptr<DenseCovariance> dense_;
  std::unique_ptr<VecchiaCovariance> vecchia_;
  CovEval last_eval_;
  // Sets theta (model and operator) and r = y - m from z.
  void set_point(const VectorXd& z);
  // rho implied by z on the support given d = diag(K_0), with c_i = rho_i / d_i
  // (convex). Both backends' noise variances are sigma2 + rho_i.
  VectorXd extra_variance(const VectorXd& z, const std::vector<int>& support, const VectorXd& d,
                          VectorXd& c) const;
  // Gradient in z from the gradient in the noise variances (g_rho), in the
  // kernel log-parameters at fixed noise (g_theta) and 1'C^-1 r (both backends).
  void chain_rule(const VectorXd& z, const std::vector<int>& support, const VectorXd& c,
                  const VectorXd& d, const VectorXd& g_rho, VectorXd g_theta, double alpha_sum,
                  VectorXd& grad);
  double objective_vecchia(const VectorXd& z, const std::vector<int>& support, VectorXd* grad);
  double jacobi_sweeps(VectorXd& z, const std::vector<int>& support, int sweeps);
};

// Lemma 1 from the leave-one-out quantities of the model (any Gaussian
// with precision P: residual e_i = (P r)_i / P_ii, variance 1 / P_ii =
// v_i + rho_i, v_i the LOO variance without rho_i): for every point,
// rho_i* = max(0, e_i^2 - v_i) (gain = false), or (gain = true) the gain in
// log marginal likelihood from giving point i its own optimal rho_i with
// everything else fixed, log N(e; 0, e^2) - log N(e; 0, v) =
// (q - 1 - log q) / 2 for q = e_i^2 / v_i > 1, else 0. A penalised
// selection rule keeps point i on the support iff its gain exceeds the
// rule's price per outlier. v_i is floored at v_floor (sigma2 for a Vecchia
// model, where 1/Q_ii - rho_i can fall below its exact-GP bound; -inf dense).
VectorXd lemma1_values(const LooQuantities& loo, const VectorXd& rho, bool gain, double v_floor);

// Relevance pursuit: the trace of fitted models over the levels.
PursuitResult relevance_pursuit(const MatrixXd& x, const VectorXd& y, Kernel kernel,
                                const VectorXd& log_par0, double mean0, double log_noise0,
                                const PursuitBounds& bounds, const PursuitOptions& options,
                                Monitor& monitor);

}  // namespace noisylabels
