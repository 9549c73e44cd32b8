// GP regression with one noise variance per label (Tang, Zhu & de Jong 2021).
//
// Model: y = f(x) + eps_i, eps_i ~ N(0, sigma_i), f ~ GP(0, k_theta); the
// covariance of y is C = K_theta + diag(noise_var). Objective (paper eq. 3 and 17,
// halved so that it is the usual negative log marginal likelihood):
//   J(noise_var, theta) = 1/2 [ y'C^{-1}y + log|C| + lambda sum_i sigma_i^p ] + n/2 log 2pi.
// noise_var is fitted by sweeps with theta fixed, theta by box L-BFGS with noise_var
// fixed, alternating (block coordinate descent, paper §4.1).
#pragma once

#include <Eigen/Dense>
#include <string>
#include <vector>

#include "gp/covariance.h"
#include "gp/kernels.h"
#include "linalg/linalg.h"
#include "common/monitor.h"

namespace noisylabels {

enum class NoiseModel { Full, Uniform, None };
enum class SigmaSolver { Multiplicative, Jacobi };

struct GprLooOptions {
  NoiseModel noise = NoiseModel::Full;
  SigmaSolver solver = SigmaSolver::Jacobi;
  double lambda = 0.0;        // l_p penalty weight (eq. 17)
  double p = 1.0;             // l_p exponent
  double sigma_floor = 1e-8;  // sigma_i >= floor: 0 is absorbing for eq. 8
  double damping = 0.8;       // Jacobi step size omega (inst/bench/gpr_loo.R)
  int max_sweeps = 200;       // noise_var sweeps per outer round
  int max_outer = 30;         // alternating rounds
  int max_hyper_iter = 50;    // L-BFGS iterations per theta step
  double tol_sweep = 1e-10;   // relative J change that ends the sweeps
  double tol_outer = 1e-8;    // relative J change that ends the alternation
  // Vecchia noise_var step: predicted remaining decrease / (1 + |J|) that ends it.
  double tol_stationary = 1e-6;
  bool learn_hyper = true;
  JitterPolicy jitter;
  // Covariance backend: empty = dense; otherwise the Vecchia conditioning
  // sets (n x m, 0-based, -1 padded; see covariance.h) and its threads.
  Eigen::MatrixXi neighbors;
  int threads = 1;
  // Alternating rounds every start gets before only the best is continued
  // (0: every start runs to the end).
  int screen_rounds = 1;
  int screen_hyper_iter = 10;  // L-BFGS iterations of a screening theta step
  // Sweep tolerance of a round tied to how far its theta step moved J.
  bool adaptive_sweeps = true;
};

// State of one evaluation of C = K + diag(noise_var) at the current point, from
// the covariance operator (Vecchia: Q y and diag(Q) for the approximate model).
struct GprLooEval {
  VectorXd alpha;        // C^{-1} y
  VectorXd inv_diag;     // diag(C^{-1})
  VectorXd grad_neg;     // dJ/dsigma_i = (inv_diag_i - grad_neg_i) / 2 + penalty
  double objective = 0;  // J
};

struct GprLooResult {
  VectorXd noise_var;
  VectorXd log_par;
  double objective = 0;
  std::vector<double> trace;           // J after every sweep / theta step
  std::vector<int> trace_factorizations;  // cumulative factorizations at each trace entry
  int factorizations = 0;
  int sweeps = 0;
  int outer_iterations = 0;
  int fallbacks = 0;          // Jacobi steps rejected (non-monotone) and redone
  bool converged = false;
  double max_jitter = 0;
  VectorXd alpha, inv_diag;   // at the solution
  int restart = 0;            // which start gave the result
  std::vector<double> restart_objectives;
};

class GprLoo {
 public:
  GprLoo(const MatrixXd& x, const VectorXd& y, const Kernel& kernel, const GprLooOptions& options);

  // Objective and factor at the given noise_var and current theta.
  GprLooEval evaluate(const VectorXd& noise_var);
  // One noise_var sweep from `eval` (which must belong to `noise_var`); returns the new
  // noise_var and its evaluation, guaranteeing J does not increase.
  void sweep(VectorXd& noise_var, GprLooEval& eval);
  // Sweeps until the relative change of J is below tol_sweep or max_sweeps.
  // Per-label Jacobi targets sigma_i (vignettes/gpr-loo.Rmd), from the operator's LOO parts.
  VectorXd jacobi_target(const VectorXd& noise_var, const GprLooEval& eval) const;
  // Box L-BFGS on noise_var in curvature-scaled units (the Vecchia backend's noise_var step).
  void fit_noise_var_scaled(VectorXd& noise_var, GprLooEval& eval, int max_iter, double tol);
  // `tol` < 0 means opt.tol_sweep.
  void fit_noise_var(VectorXd& noise_var, GprLooEval& eval, int max_sweeps, double tol = -1);
  // theta step by box L-BFGS with noise_var fixed; returns the new evaluation.
  GprLooEval fit_hyper(const VectorXd& noise_var, const VectorXd& lower, const VectorXd& upper);
  // J and its gradient in the log kernel hyperparameters `lp` at fixed noise_var:
  // one factorization, one dpotri and one kernel-gradient pass. Sets theta.
  double objective_and_gradient(const VectorXd& lp, const VectorXd& noise_var, VectorXd& grad);

  // Resumable alternating fit: start() evaluates the first point, run() does
  // up to `rounds` more rounds (stopping early on convergence), result()
  // reports the current state.
  void start(const VectorXd& noise_var0, const VectorXd& log_par0);
  void run(int rounds, const VectorXd& lower, const VectorXd& upper, Monitor& monitor);
  GprLooResult result() const;
  double objective() const { return eval_.objective; }
  // Cap on L-BFGS iterations of the theta step (0: opt.max_hyper_iter).
  void set_hyper_cap(int cap) { hyper_cap_ = cap; }
  // Alternating fit from one start: start() + run(max_outer) + result().
  GprLooResult fit(const VectorXd& noise_var0, const VectorXd& log_par0, const VectorXd& lower,
                   const VectorXd& upper, Monitor& monitor);

  const Kernel& kernel() const { return cov_->kernel(); }
  // Sets theta; the operator rebuilds what depends on it when next asked.
  void set_log_par(const VectorXd& p) { cov_->set_log_par(p); }
  int factorizations() const { return cov_->factorizations(); }
  double max_jitter() const { return cov_->max_jitter(); }
  CovarianceOperator& covariance() { return *cov_; }
  // Adds the gradient of the l_p penalty (eq. 17) in the noise variances,
  // lambda * p * s^(p - 1) / 2, to `grad` (nothing when lambda = 0).
  void add_penalty_gradient(const VectorXd& noise_var, VectorXd& grad) const;
  const std::vector<double>& trace() const { return trace_; }

 private:
  double penalty(const VectorXd& noise_var) const;
  void record(double j);
  const MatrixXd& x_;
  const VectorXd& y_;
  GprLooOptions opt_;
  std::unique_ptr<CovarianceOperator> cov_;
  int fallbacks_ = 0;
  VectorXd noise_var_;     // state of start()/run()
  GprLooEval eval_;
  int outer_ = 0;
  bool converged_ = false;
  bool qn_converged_ = false;
  int hyper_cap_ = 0;  // last quasi-Newton noise_var step met its tolerances
  std::vector<double> trace_;
  std::vector<int> trace_fact_;
};

// Multi-start driver: start r begins at the log hyperparameters in row r of
// `starts` and the noise variances in column r of `noise_var0` (n x starts).
GprLooResult gpr_loo_fit(const MatrixXd& x, const VectorXd& y, const Kernel& kernel,
                         const MatrixXd& noise_var0, const MatrixXd& starts, const VectorXd& lower,
                         const VectorXd& upper, const GprLooOptions& options, Monitor& monitor);

// Homoscedastic noise level of the clean labels, for the flag rule of
// label_issues() (see ?gpr_loo, "Noise scores and flags"). The fitted
// per-label variances can make the LOO residuals of clean labels too small
// (n free variances fitted to the same labels), so the level is measured on
// the model with every variance floored at it: s0 solves
//   median_i e_i(s0)^2 / (v_i(s0) + s0) = median of chi-squared(1),
// where e_i, v_i are the LOO residual and LOO variance of f_i under
// K + diag(max(sigma_i, s0)). A label whose own fitted variance is large
// keeps it, so corrupted labels do not distort their neighbours' LOO
// predictions. Returns s0 (0 if the median is below the target even at the
// smallest level tried, 1e-10, where e and v are then taken), e, v and the
// flag statistic e^2 / (v + s) at the level where they were taken.
struct CleanLevel {
  double level = 0;
  VectorXd residual, variance, statistic;
  int evaluations = 0;
};
CleanLevel gpr_loo_clean_level(const MatrixXd& x, const VectorXd& y, const Kernel& kernel,
                               const VectorXd& noise_var, const GprLooOptions& options,
                               Monitor& monitor = null_monitor());

}  // namespace noisylabels
