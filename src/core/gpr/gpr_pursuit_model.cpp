// The pursuit's extended GP model on the dense backend: the packed
// objective and its gradient, Lemma-1 coordinate sweeps with rank-one
// updates, and the predictor. The Vecchia backend's objective and sweeps are
// in gpr_pursuit_vecchia.cpp, the pursuit itself in gpr_pursuit.cpp.
#include "gpr/gpr_pursuit.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace noisylabels {

PursuitModel::PursuitModel(const MatrixXd& x, const VectorXd& y, const Kernel& kernel,
                           const PursuitOptions& options)
    : x_(x), y_(y), kernel_(kernel), opt_(options) {
  if (x.rows() != y.size()) throw std::invalid_argument("gpr_pursuit: x and y differ in length");
  resid_ = y_;
  if (opt_.neighbors.size() > 0) {
    vecchia_ = std::make_unique<VecchiaCovariance>(x_, resid_, kernel_, opt_.jitter,
                                                   opt_.neighbors, opt_.threads);
  } else {
    dense_ = std::make_unique<DenseCovariance>(x_, resid_, kernel_, opt_.jitter);
  }
}

VectorXd PursuitModel::base_diagonal(const VectorXd& z) {
  const int p = n_kernel();
  kernel_.set_log_par(z.head(p));
  VectorXd d = kernel_.diag(x_);
  d.array() += std::exp(z(p + 1));
  return d;
}

VectorXd PursuitModel::rho_of(const VectorXd& z, const std::vector<int>& support) {
  const int p = n_kernel();
  VectorXd rho = VectorXd::Zero(n());
  if (support.empty()) return rho;
  VectorXd d;
  if (opt_.convex) d = base_diagonal(z);
  for (std::size_t k = 0; k < support.size(); ++k) {
    const int i = support[k];
    const double v = z(p + 2 + static_cast<int>(k));
    rho(i) = opt_.convex ? d(i) * v / (1.0 - v) : v;
  }
  return rho;
}

double PursuitModel::prior_penalty(const VectorXd& z, VectorXd* grad) const {
  double pen = 0.0;
  const int m = static_cast<int>(opt_.prior_sd.size());
  for (int j = 0; j < m && j < z.size(); ++j) {
    const double sd = opt_.prior_sd(j);
    if (!(sd > 0)) continue;
    const double dz = z(j) - opt_.prior_mu(j);
    pen += z(j) + dz * dz / (2.0 * sd * sd);
    if (grad != nullptr) (*grad)(j) += 1.0 + dz / (sd * sd);
  }
  return pen;
}

void PursuitModel::set_point(const VectorXd& z) {
  const int p = n_kernel();
  kernel_.set_log_par(z.head(p));
  if (vecchia_) vecchia_->set_log_par(z.head(p));
  if (dense_) dense_->set_log_par(z.head(p));
  resid_.array() = y_.array() - z(p);  // in place: the operator holds a reference
}

VectorXd PursuitModel::extra_variance(const VectorXd& z, const std::vector<int>& support,
                                      const VectorXd& d, VectorXd& c) const {
  const int p = n_kernel();
  // c_i = rho_i / d_i = s_i / (1 - s_i) (convex); rho_i directly (canonical).
  c = VectorXd::Zero(n());
  VectorXd rho = VectorXd::Zero(n());
  for (std::size_t j = 0; j < support.size(); ++j) {
    const int i = support[j];
    const double v = z(p + 2 + static_cast<int>(j));
    if (opt_.convex) {
      c(i) = v / (1.0 - v);
      rho(i) = d(i) * c(i);
    } else {
      rho(i) = v;
    }
  }
  return rho;
}

void PursuitModel::chain_rule(const VectorXd& z, const std::vector<int>& support,
                              const VectorXd& c, const VectorXd& d, const VectorXd& g_rho,
                              VectorXd g_theta, double alpha_sum, VectorXd& grad) {
  const int p = n_kernel();
  const double noise = std::exp(z(p + 1));
  grad.resize(z.size());
  double g_noise = 0.0;  // d/d log sigma2
  if (opt_.convex && !support.empty()) {
    // rho_i = c_i d_i depends on theta through k(x_i, x_i) and on sigma2.
    const MatrixXd dg = kernel_.diag_gradient(x_);
    VectorXd wgt = VectorXd::Zero(n());
    for (int i : support) wgt(i) = g_rho(i) * c(i);
    g_theta += dg.transpose() * wgt;
    g_noise = noise * (g_rho.sum() + wgt.sum());
  } else {
    g_noise = noise * g_rho.sum();
  }
  grad.head(p) = g_theta;
  grad(p) = -alpha_sum;  // r = y - m enters linearly: d nll / d m = -1' C^-1 r
  grad(p + 1) = g_noise;
  for (std::size_t j = 0; j < support.size(); ++j) {
    const int i = support[j];
    const double v = z(p + 2 + static_cast<int>(j));
    // convex: drho/ds = d_i / (1 - s)^2
    grad(p + 2 + static_cast<int>(j)) =
        opt_.convex ? g_rho(i) * d(i) / ((1.0 - v) * (1.0 - v)) : g_rho(i);
  }
}

double PursuitModel::objective(const VectorXd& z, const std::vector<int>& support,
                               VectorXd* grad) {
  if (vecchia_) return objective_vecchia(z, support, grad);
  set_point(z);
  const int nn = n();
  // C = K + sigma2 I from the operator (the Gram matrix is not kept: theta
  // changes at almost every call, and keeping it would double the n x n
  // memory of the fit), then + diag(rho) with rho_i = d_i c_i (convex).
  MatrixXd cmat = dense_->matrix(VectorXd::Constant(nn, std::exp(z(n_kernel() + 1))), false);
  const VectorXd d = cmat.diagonal();  // [K_0]_ii, the convex scale
  VectorXd c;
  cmat.diagonal() += extra_variance(z, support, d, c);
  last_z_.resize(0);  // invalid until the factorization succeeds
  last_w_valid_ = false;
  ++factorizations;
  chol_ = dense_->factor(std::move(cmat));
  last_z_ = z;
  last_support_ = support;
  const VectorXd alpha = chol_.solve(resid_);
  const double nll = gaussian_nll(chol_, resid_, alpha);
  if (grad != nullptr) {
    // W = alpha alpha' - K^{-1};  dNLL/dK = -W / 2 (elementwise, symmetric).
    MatrixXd w = chol_.inverse(dense_->monitor());
    const VectorXd pdiag = w.diagonal();
    w = alpha * alpha.transpose() - w;
    // g_rho_i = dNLL/drho_i = (P_ii - alpha_i^2) / 2
    const VectorXd g_rho = 0.5 * (pdiag.array() - alpha.array().square()).matrix();
    chain_rule(z, support, c, d, g_rho, -kernel_.gradient(x_, w, dense_->monitor()), alpha.sum(), *grad);
    // Kept for coordinate_sweeps() at this point (saves it an inverse).
    last_w_ = std::move(w);
    last_w_valid_ = true;
  }
  last_penalty = prior_penalty(z, grad);
  if (grad != nullptr) *grad /= static_cast<double>(n());
  return (nll + last_penalty) / static_cast<double>(n());
}

void PursuitModel::ensure_factor(const VectorXd& z, const std::vector<int>& support,
                                 bool reuse) {
  if (reuse && last_z_.size() == z.size() && last_z_ == z && last_support_ == support) return;
  objective(z, support, nullptr);
}

double PursuitModel::coordinate_sweeps(VectorXd& z, const std::vector<int>& support, int sweeps) {
  if (support.empty() || sweeps <= 0) return 0.0;
  if (vecchia_) return jacobi_sweeps(z, support, sweeps);
  const int p = n_kernel();
  const int m = static_cast<int>(support.size());
  ensure_factor(z, support, true);
  // Lemma 1 needs, for i in S, only P_ii and alpha_i (P = K^{-1}, alpha = P r),
  // and a step on rho_i changes P by -c P e_i e_i' P: so only the support
  // block P_SS and alpha_S are carried (O(|S|^2) per step instead of O(n^2)).
  // Only its lower triangle is kept up to date.
  const VectorXd r = y_.array() - z(p);
  const VectorXd alpha_full = chol_.solve(r);
  MatrixXd pss(m, m);
  if (last_w_valid_) {
    // P = alpha alpha' - W, W from the gradient evaluation at this factor.
    for (int b = 0; b < m; ++b) {
      const int jb = support[b];
      const double ab = alpha_full(jb);
      for (int a = b; a < m; ++a) pss(a, b) = alpha_full(support[a]) * ab - last_w_(support[a], jb);
    }
  } else {
    const MatrixXd pinv = chol_.inverse(dense_->monitor());
    for (int b = 0; b < m; ++b)
      for (int a = b; a < m; ++a) pss(a, b) = pinv(support[a], support[b]);
  }
  VectorXd alpha(m);
  for (int a = 0; a < m; ++a) alpha(a) = alpha_full(support[a]);
  const VectorXd d = base_diagonal(z);
  VectorXd rho = rho_of(z, support);
  double decrease = 0.0;
  // Delayed updates: within a block of coordinates the steps are exact and
  // sequential (Gauss-Seidel), but P_SS itself is updated once per block by a
  // rank-b product (BLAS-3) instead of b memory-bound rank-one updates:
  // after t steps, P = P0 - U diag(c) U', so column j is P0(:, j) - U diag(c) U(j, :)'.
  // The product is symmetric: only the lower triangle is formed, as
  // P -= U+ U+' and P += U- U-' with U+- = U sqrt(|c|) split by the sign of c.
  const int block = 64;
  MatrixXd u(m, std::min(block, m));
  VectorXd coef(std::min(block, m));
  VectorXd col(m);
  MatrixXd u_pos(m, std::min(block, m)), u_neg(m, std::min(block, m));
  auto column = [&](int j) {  // column j of the symmetric P_SS from its lower triangle
    col.tail(m - j) = pss.col(j).tail(m - j);
    for (int a = 0; a < j; ++a) col(a) = pss(j, a);
  };
  for (int sweep = 0; sweep < sweeps; ++sweep) {
    double sweep_decrease = 0.0;
    for (int j0 = 0; j0 < m; j0 += block) {
      const int j1 = std::min(m, j0 + block);
      int t = 0;
      for (int j = j0; j < j1; ++j) {
        const int i = support[j];
        column(j);
        if (t > 0) col.noalias() -= u.leftCols(t) * (coef.head(t).asDiagonal() * u.row(j).head(t).transpose());
        const double pii = col(j);
        const double e = alpha(j) / pii;            // LOO residual, independent of rho_i
        const double v = 1.0 / pii - rho(i);        // LOO variance without rho_i
        const double cap = opt_.convex ? d(i) * opt_.s_max / (1.0 - opt_.s_max) : opt_.rho_max;
        const double target = std::min(cap, std::max(0.0, e * e - v));
        const double delta = target - rho(i);
        if (std::abs(delta) <= 1e-12 * (d(i) + rho(i))) continue;
        // NLL change: 1/2 log((v + rho')/(v + rho)) + e^2/2 (1/(v + rho') - 1/(v + rho))
        const double old_total = v + rho(i), new_total = v + target;
        sweep_decrease -= 0.5 * std::log(new_total / old_total) +
                          0.5 * e * e * (1.0 / new_total - 1.0 / old_total);
        // K + delta e_i e_i': P <- P - c u u', c = delta / (1 + delta P_ii)
        const double c = delta / (1.0 + delta * pii);
        u.col(t) = col;
        coef(t) = c;
        ++t;
        alpha -= (c * alpha(j)) * col;
        rho(i) = target;
        z(p + 2 + j) = opt_.convex ? target / (d(i) + target) : target;
        ++rank_one_updates;
      }
      if (t > 0) {
        int np = 0, nn = 0;
        for (int q = 0; q < t; ++q) {
          const double sc = std::sqrt(std::abs(coef(q)));
          if (coef(q) > 0) u_pos.col(np++) = sc * u.col(q);
          else if (coef(q) < 0) u_neg.col(nn++) = sc * u.col(q);
        }
        if (np > 0) pss.selfadjointView<Eigen::Lower>().rankUpdate(u_pos.leftCols(np), -1.0);
        if (nn > 0) pss.selfadjointView<Eigen::Lower>().rankUpdate(u_neg.leftCols(nn), 1.0);
      }
    }
    decrease += sweep_decrease;
    if (sweep_decrease <= 1e-12 * n()) break;
  }
  last_z_.resize(0);  // the kept factor no longer matches z
  last_w_valid_ = false;
  return decrease / static_cast<double>(n());
}

VectorXd lemma1_values(const LooQuantities& loo, const VectorXd& rho, bool gain, double v_floor) {
  VectorXd out(rho.size());
  for (int i = 0; i < rho.size(); ++i) {
    const double e = loo.residual(i);  // independent of rho_i
    // 1/P_ii = v_i + rho_i (exact GP). v_i = Var(f_i | y_-i) + sigma2 is at
    // least sigma2 there; in a Vecchia model 1/Q_ii - rho_i can fall below it
    // (even below 0) for points with a large rho_i, so it is floored.
    const double v = std::max(loo.variance(i) - rho(i), v_floor);
    if (!gain) {
      out(i) = std::max(0.0, e * e - v);
    } else {
      const double ratio = v > 0 ? e * e / v : 0.0;
      out(i) = ratio > 1.0 ? 0.5 * (ratio - 1.0 - std::log(ratio)) : 0.0;
    }
  }
  return out;
}

VectorXd PursuitModel::lemma1(const VectorXd& z, const std::vector<int>& support, bool gain) {
  ensure_factor(z, support, true);
  const VectorXd rho = rho_of(z, support);
  if (vecchia_) {
    return lemma1_values(loo_quantities(last_eval_), rho, gain, std::exp(z(n_kernel() + 1)));
  }
  const VectorXd r = y_.array() - z(n_kernel());
  return lemma1_values(loo_quantities(chol_, r, dense_->monitor()), rho, gain,
                       -std::numeric_limits<double>::infinity());
}

}  // namespace noisylabels
