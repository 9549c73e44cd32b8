// The dense covariance backend (one Cholesky of the n x n covariance) and
// the factory that picks a backend. The Vecchia backend is in
// covariance_vecchia.cpp; both implement CovarianceOperator (covariance.h).
#include "gp/covariance.h"

#include <memory>
#include <stdexcept>

namespace noisylabels {

MatrixXd DenseCovariance::matrix(const VectorXd& noise_var, bool keep_gram) {
  if (noise_var.size() != n()) throw std::invalid_argument("dense: noise vector has the wrong length");
  MatrixXd c;
  if (gram_.size() > 0) {
    c = gram_;
  } else if (keep_gram) {
    gram_ = kernel_.gram(x_, monitor());
    c = gram_;
  } else {
    c = kernel_.gram(x_, monitor());
  }
  c.diagonal() += noise_var;
  return c;
}

Cholesky DenseCovariance::factor(MatrixXd c) {
  Cholesky chol;
  chol.compute(std::move(c), jitter_policy_, monitor());
  ++factorizations_;
  max_jitter_ = std::max(max_jitter_, chol.jitter());
  return chol;
}

CovEval DenseCovariance::evaluate(const VectorXd& noise_var) {
  const Cholesky chol = factor(noise_var);
  CovEval e;
  e.alpha = chol.solve(y_);
  e.inv_diag = chol.inverse_diagonal(monitor());
  e.nll = gaussian_nll(chol, y_, e.alpha);
  e.grad_neg = e.alpha.array().square();
  return e;
}

double DenseCovariance::nll_gradient(const VectorXd& noise_var, VectorXd& grad_theta,
                                     VectorXd* grad_noise_var) {
  // One n x n buffer end to end: C is factored in place, turned into C^-1 by
  // dpotri in place, and the gradient reads its lower triangle. K is not
  // cached by this call (the L-BFGS step in theta changes it at every call).
  MatrixXd c = matrix(noise_var, false);
  Cholesky chol;
  chol.compute_symmetric(std::move(c), jitter_policy_, monitor());
  ++factorizations_;
  max_jitter_ = std::max(max_jitter_, chol.jitter());
  const VectorXd alpha = chol.solve(y_);
  const double nll = gaussian_nll(chol, y_, alpha);
  const MatrixXd cinv = chol.release_inverse_lower(monitor());
  // W = alpha alpha' - C^-1; d nll / d theta = -1/2 sum W dK/dtheta (the
  // kernels' gradient contract, kernels.h).
  grad_theta = -kernel_.gradient(x_, alpha, cinv, monitor());
  if (grad_noise_var) {
    *grad_noise_var = 0.5 * (cinv.diagonal().array() - alpha.array().square()).matrix();
  }
  return nll;
}

GpPrediction DenseCovariance::predict(const VectorXd& noise_var, const MatrixXd& xnew,
                                      bool want_var) {
  return predict(factor(noise_var), xnew, want_var);
}

GpPrediction DenseCovariance::predict(const Cholesky& chol, const MatrixXd& xnew,
                                      bool want_var) const {
  const VectorXd alpha = chol.solve(y_);
  GpPrediction p;
  const MatrixXd kx = kernel_.cross(x_, xnew);  // n x n_new
  p.mean = kx.transpose() * alpha;
  if (want_var) {
    // L^-1 K_*: its columns' squared norms are the variance explained by the data.
    const MatrixXd v = chol.factor().triangularView<Eigen::Lower>().solve(kx);
    p.var = (kernel_.diag(xnew).array() - v.colwise().squaredNorm().transpose().array()).max(0.0);
  }
  return p;
}

std::unique_ptr<CovarianceOperator> make_covariance(const MatrixXd& x, const VectorXd& y,
                                                    const Kernel& kernel,
                                                    const JitterPolicy& jitter,
                                                    const Eigen::MatrixXi& neighbors, int threads) {
  if (neighbors.size() == 0) return std::make_unique<DenseCovariance>(x, y, kernel, jitter);
  return std::make_unique<VecchiaCovariance>(x, y, kernel, jitter, neighbors, threads);
}

}  // namespace noisylabels
