// The covariance-operator layer: what the GP regression methods need from
// C = K(theta) + diag(noise_var), one noise variance per observation, behind
// one interface with interchangeable backends (ARCHITECTURE.md, "GP layer").
//
//   kernels (k, its gradient contract)  ->  CovarianceOperator  ->  gpr_loo, ...
//
// Every backend answers, for the current kernel hyperparameters and given
// noise variances s (`noise_var` in the code):
//   nll       0.5 y'C^-1 y + 0.5 log|C| + n/2 log 2pi   (of its own model)
//   alpha     C^-1 y            (Vecchia: Q y, Q the approximate precision)
//   inv_diag  diag(C^-1)        (Vecchia: diag(Q))
//   grad_neg  the negative part of d nll / d s_i, so that
//             d nll / d s_i = 1/2 (inv_diag_i - grad_neg_i)
//             (dense: grad_neg = alpha^2; Vecchia: see covariance_vecchia.cpp)
// and, on request, the gradient of nll in log theta and in s, and
// predictions at new inputs. For any Gaussian with precision Q the
// leave-one-out mean of y_i is y_i - (Q y)_i / Q_ii and its variance 1 / Q_ii,
// so the LOO quantities Tang's update reads come from alpha and inv_diag for
// both backends (exact for the model each backend defines).
#pragma once

#include <Eigen/Dense>
#include <memory>
#include <vector>

#include "common/monitor.h"
#include "gp/kernels.h"
#include "linalg/linalg.h"

namespace noisylabels {

using Eigen::MatrixXd;
using Eigen::VectorXd;

struct CovEval {
  double nll = 0;
  VectorXd alpha;     // C^-1 y (dense) or Q y (Vecchia)
  VectorXd inv_diag;  // diag(C^-1) or diag(Q)
  VectorXd grad_neg;  // d nll / d s = (inv_diag - grad_neg) / 2
};

// Posterior of f at new inputs: mean and variance (no observation noise).
struct GpPrediction {
  VectorXd mean;
  VectorXd var;
};

class CovarianceOperator {
 public:
  CovarianceOperator(const MatrixXd& x, const VectorXd& y, const Kernel& kernel,
                     const JitterPolicy& jitter)
      : x_(x), y_(y), kernel_(kernel), jitter_policy_(jitter) {}
  virtual ~CovarianceOperator() = default;

  int n() const { return static_cast<int>(y_.size()); }
  const Kernel& kernel() const { return kernel_; }
  virtual void set_log_par(const VectorXd& p) { kernel_.set_log_par(p); }
  // The caller will evaluate many noise vectors at one theta (gpr_loo's
  // variance sweeps): a backend may keep what depends on theta alone between
  // evaluations, within its memory limit. set_log_par() discards it.
  virtual void hold_kernel() {}

  // nll, alpha, inv_diag and grad_neg at these noise variances.
  virtual CovEval evaluate(const VectorXd& noise_var) = 0;
  // nll and its gradient in log theta (always) and in the noise variances
  // (if grad_noise_var is given).
  virtual double nll_gradient(const VectorXd& noise_var, VectorXd& grad_theta,
                              VectorXd* grad_noise_var) = 0;
  // Posterior of f at new inputs given these noise variances of the training labels.
  virtual GpPrediction predict(const VectorXd& noise_var, const MatrixXd& xnew,
                               bool want_var) = 0;

  // Factorizations (dense) or full passes over the conditioning sets
  // (Vecchia) so far, and the largest jitter any of them needed.
  int factorizations() const { return factorizations_; }
  double max_jitter() const { return max_jitter_; }

  // The monitor that the long passes (Gram matrix, factorization, inverse,
  // gradient, Vecchia passes) poll between blocks; none by default. A fit
  // sets it for its duration through MonitorScope.
  void set_monitor(Monitor* monitor) { monitor_ = monitor; }
  Monitor& monitor() const { return monitor_ ? *monitor_ : null_monitor(); }
  Monitor* monitor_ptr() const { return monitor_; }

 protected:
  const MatrixXd& x_;
  const VectorXd& y_;
  Kernel kernel_;
  JitterPolicy jitter_policy_;
  int factorizations_ = 0;
  double max_jitter_ = 0;
  Monitor* monitor_ = nullptr;
};

// Lends a monitor to an operator for one scope (exceptions included); the
// one lent before comes back at the end of the scope.
class MonitorScope {
 public:
  MonitorScope(CovarianceOperator& cov, Monitor& monitor) : cov_(cov), previous_(cov.monitor_ptr()) {
    cov_.set_monitor(&monitor);
  }
  ~MonitorScope() { cov_.set_monitor(previous_); }
  MonitorScope(const MonitorScope&) = delete;
  MonitorScope& operator=(const MonitorScope&) = delete;

 private:
  CovarianceOperator& cov_;
  Monitor* previous_;
};

// Exact GP: one dense Cholesky of C per evaluation. matrix() is the one
// place the package forms K + diag(noise_var) and factor() the one place it
// factors it: every dense GP regression path (gpr_loo, the pursuit's
// objective, Lemma 1 and predictor, the trimming baselines, the forward
// search, find_label_issues' leave-one-out) goes through them.
class DenseCovariance : public CovarianceOperator {
 public:
  using CovarianceOperator::CovarianceOperator;
  void set_log_par(const VectorXd& p) override {
    CovarianceOperator::set_log_par(p);
    gram_.resize(0, 0);
  }
  // C = K(theta) + diag(noise_var); K is cached between calls at the same
  // theta (keep_gram = false: used if cached, not stored, saving an n x n).
  MatrixXd matrix(const VectorXd& noise_var, bool keep_gram = true);
  // Cholesky factor of C with the operator's jitter policy (counted).
  Cholesky factor(const VectorXd& noise_var, bool keep_gram = true) {
    return factor(matrix(noise_var, keep_gram));
  }
  // The same for a C from matrix() that the caller has added to (the
  // pursuit adds its rho_i, scaled by the diagonal of K + sigma2 I).
  Cholesky factor(MatrixXd c);
  CovEval evaluate(const VectorXd& noise_var) override;
  double nll_gradient(const VectorXd& noise_var, VectorXd& grad_theta,
                      VectorXd* grad_noise_var) override;
  GpPrediction predict(const VectorXd& noise_var, const MatrixXd& xnew, bool want_var) override;
  // Predictions from a factor of C already at hand (the pursuit keeps one).
  GpPrediction predict(const Cholesky& chol, const MatrixXd& xnew, bool want_var) const;

 private:
  MatrixXd gram_;  // K(theta), cached between evaluations at the same theta
};

// Response Vecchia approximation (Vecchia 1988; Katzfuss & Guinness 2021):
// in a fixed ordering, y_i given the earlier labels is replaced by y_i given
// its conditioning set N(i), at most m earlier points. Per point i, with
// S = (N(i), i) and L the Cholesky factor of C_SS = K_SS + diag(s_S):
//   u = L^-1 y_S,  r = last row of L^-1 (the column of U, Q = U U'),
//   nll = sum_i [ u_last^2 / 2 + log L_last,last ] + n/2 log 2pi.
// `neighbors` is n x m, 0-based indices of N(i) (each earlier in the
// ordering than i), -1 where a point has fewer than m.
class VecchiaCovariance : public CovarianceOperator {
 public:
  VecchiaCovariance(const MatrixXd& x, const VectorXd& y, const Kernel& kernel,
                    const JitterPolicy& jitter, const Eigen::MatrixXi& neighbors, int threads);
  CovEval evaluate(const VectorXd& noise_var) override;
  double nll_gradient(const VectorXd& noise_var, VectorXd& grad_theta,
                      VectorXd* grad_noise_var) override;
  // Each new point conditions on its own nearest training points
  // (`new_neighbors`, set before calling; n_new x m', 0-based, -1 padded).
  // Block form (`block_start` non-empty, n_blocks + 1 offsets): the new
  // points are ordered by block, rows block_start[b] .. block_start[b+1] - 1
  // share the conditioning set in row b of `nn` (n_blocks x m'), which is
  // factored once per block.
  GpPrediction predict(const VectorXd& noise_var, const MatrixXd& xnew, bool want_var) override;
  // Keeps the kernel entries of every conditioning set (the packed lower
  // triangle, (m + 1)(m + 2) / 2 doubles per point) from the first pass
  // without a theta gradient, so later passes at the same theta skip the
  // kernel, which is most of a pass's work; only if they fit in
  // kKernelCacheMaxBytes (else, or if the allocation fails, passes stay as
  // they are). Results are identical either way.
  void hold_kernel() override { hold_ = true; }
  void set_log_par(const VectorXd& p) override {
    CovarianceOperator::set_log_par(p);
    cache_ready_ = false;
  }
  static constexpr double kKernelCacheMaxBytes = 2.0 * 1024 * 1024 * 1024;
  void set_prediction_neighbors(const Eigen::MatrixXi& nn,
                                const Eigen::VectorXi& block_start = Eigen::VectorXi()) {
    new_neighbors_ = nn;
    new_block_start_ = block_start;
  }
  // evaluate() and nll_gradient() (with grad_s) from one pass over the
  // conditioning sets (gpr_pursuit needs alpha for its mean's gradient).
  double evaluate_gradient(const VectorXd& noise_var, CovEval& eval, VectorXd& grad_theta,
                           VectorXd& grad_noise_var) {
    return pass(noise_var, &eval, &grad_theta, &grad_noise_var);
  }
  // Restricts the passes to the conditioning sets of these points (0-based,
  // each once; empty: all points). A piece of the model: its nll counts
  // these points' terms only, and alpha, inv_diag and grad_neg their
  // contributions, so pieces over a partition of the points add up to the
  // whole (R/gp-pieces.R runs them as future jobs on row blocks).
  void set_rows(std::vector<int> rows);

 private:
  // One pass over all conditioning sets; fills what is asked for.
  double pass(const VectorXd& noise_var, CovEval* eval, VectorXd* grad_theta,
              VectorXd* grad_noise_var);
  Eigen::MatrixXi nn_;
  Eigen::MatrixXi new_neighbors_;
  Eigen::VectorXi new_block_start_;
  MatrixXd xt_;  // x transposed (d x n): one contiguous column per point
  std::vector<int> rows_;  // the points whose sets the passes visit; empty: all
  int threads_ = 1;
  // hold_kernel(): kernel entries per conditioning set, point i's at
  // i * (m + 1)(m + 2) / 2; valid for the current theta once cache_ready_.
  bool hold_ = false;
  bool cache_ready_ = false;
  bool cache_refused_ = false;  // over the limit, or the allocation failed: not retried
  std::vector<double> kernel_cache_;
  bool reserve_cache();
};

// Leave-one-out quantities of the model of an evaluation (for any Gaussian
// with precision Q: residual (Q y)_i / Q_ii, variance 1 / Q_ii).
inline LooQuantities loo_quantities(const CovEval& eval) {
  return loo_from_precision(eval.alpha, eval.inv_diag);
}

// Dense exact (no neighbours) or Vecchia (an n x m neighbour matrix).
std::unique_ptr<CovarianceOperator> make_covariance(const MatrixXd& x, const VectorXd& y,
                                                    const Kernel& kernel,
                                                    const JitterPolicy& jitter,
                                                    const Eigen::MatrixXi& neighbors, int threads);

}  // namespace noisylabels
