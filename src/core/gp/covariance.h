// The covariance-operator layer (DESIGN.md §7): what the GP regression methods
// need from C = K(theta) + diag(s), s one noise variance per observation,
// behind one interface with interchangeable backends.
//
//   kernels (k, its gradient contract)  ->  CovarianceOperator  ->  gpr_loo, ...
//
// Every backend answers, for the current kernel hyperparameters and a given s:
//   nll       0.5 y'C^-1 y + 0.5 log|C| + n/2 log 2pi   (of its own model)
//   alpha     C^-1 y            (Vecchia: Q y, Q the approximate precision)
//   inv_diag  diag(C^-1)        (Vecchia: diag(Q))
//   grad_neg  the negative part of d nll / d s_i, so that
//             d nll / d s_i = 1/2 (inv_diag_i - grad_neg_i)
//             (dense: grad_neg = alpha^2; Vecchia: see covariance.cpp)
// and, on request, the gradient of nll in log theta and in s, and
// predictions at new inputs. For any Gaussian with precision Q the
// leave-one-out mean of y_i is y_i - (Q y)_i / Q_ii and its variance 1 / Q_ii,
// so the LOO quantities Tang's update reads come from alpha and inv_diag for
// both backends (exact for the model each backend defines).
#pragma once

#include <Eigen/Dense>
#include <memory>
#include <vector>

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

  // nll, alpha, inv_diag and grad_neg at noise variances s.
  virtual CovEval evaluate(const VectorXd& s) = 0;
  // nll and its gradient in log theta (always) and in s (if grad_s is given).
  virtual double nll_gradient(const VectorXd& s, VectorXd& grad_theta, VectorXd* grad_s) = 0;
  // Posterior of f at new inputs given noise s on the training labels.
  virtual GpPrediction predict(const VectorXd& s, const MatrixXd& xnew, bool want_var) = 0;

  // Factorizations (dense) or full passes over the conditioning sets
  // (Vecchia) so far, and the largest jitter any of them needed.
  int factorizations() const { return factorizations_; }
  double max_jitter() const { return max_jitter_; }

 protected:
  const MatrixXd& x_;
  const VectorXd& y_;
  Kernel kernel_;
  JitterPolicy jitter_policy_;
  int factorizations_ = 0;
  double max_jitter_ = 0;
};

// Exact GP: one dense Cholesky of C per evaluation.
class DenseCovariance : public CovarianceOperator {
 public:
  using CovarianceOperator::CovarianceOperator;
  void set_log_par(const VectorXd& p) override {
    CovarianceOperator::set_log_par(p);
    gram_.resize(0, 0);
  }
  CovEval evaluate(const VectorXd& s) override;
  double nll_gradient(const VectorXd& s, VectorXd& grad_theta, VectorXd* grad_s) override;
  GpPrediction predict(const VectorXd& s, const MatrixXd& xnew, bool want_var) override;

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
  CovEval evaluate(const VectorXd& s) override;
  double nll_gradient(const VectorXd& s, VectorXd& grad_theta, VectorXd* grad_s) override;
  // Each new point conditions on its own nearest training points
  // (`new_neighbors`, set before calling; n_new x m', 0-based, -1 padded).
  // Block form (`block_start` non-empty, n_blocks + 1 offsets): the new
  // points are ordered by block, rows block_start[b] .. block_start[b+1] - 1
  // share the conditioning set in row b of `nn` (n_blocks x m'), which is
  // factored once per block.
  GpPrediction predict(const VectorXd& s, const MatrixXd& xnew, bool want_var) override;
  void set_prediction_neighbors(const Eigen::MatrixXi& nn,
                                const Eigen::VectorXi& block_start = Eigen::VectorXi()) {
    new_neighbors_ = nn;
    new_block_start_ = block_start;
  }
  // evaluate() and nll_gradient() (with grad_s) from one pass over the
  // conditioning sets (gpr_pursuit needs alpha for its mean's gradient).
  double evaluate_gradient(const VectorXd& s, CovEval& eval, VectorXd& grad_theta,
                           VectorXd& grad_s) {
    return pass(s, &eval, &grad_theta, &grad_s);
  }

 private:
  // One pass over all conditioning sets; fills what is asked for.
  double pass(const VectorXd& s, CovEval* eval, VectorXd* grad_theta, VectorXd* grad_s);
  Eigen::MatrixXi nn_;
  Eigen::MatrixXi new_neighbors_;
  Eigen::VectorXi new_block_start_;
  MatrixXd xt_;  // x transposed (d x n): one contiguous column per point
  int threads_ = 1;
};

// Dense exact (approx = "dense") or Vecchia (approx = "vecchia").
std::unique_ptr<CovarianceOperator> make_covariance(const MatrixXd& x, const VectorXd& y,
                                                    const Kernel& kernel,
                                                    const JitterPolicy& jitter,
                                                    const Eigen::MatrixXi& neighbors, int threads);

}  // namespace noisylabels
