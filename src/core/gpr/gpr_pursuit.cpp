#include "gpr/gpr_pursuit.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>

namespace noisylabels {

PursuitModel::PursuitModel(const MatrixXd& x, const VectorXd& y, const Kernel& kernel,
                           const PursuitOptions& options)
    : x_(x), y_(y), kernel_(kernel), opt_(options) {
  if (x.rows() != y.size()) throw std::invalid_argument("gpr_pursuit: x and y differ in length");
  if (opt_.neighbors.size() > 0) {
    resid_ = y_;
    vecchia_ = std::make_unique<VecchiaCovariance>(x_, resid_, kernel_, opt_.jitter,
                                                   opt_.neighbors, opt_.threads);
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

double PursuitModel::objective(const VectorXd& z, const std::vector<int>& support,
                               VectorXd* grad) {
  if (vecchia_) return objective_vecchia(z, support, grad);
  const int nn = n();
  const int p = n_kernel();
  kernel_.set_log_par(z.head(p));
  const double mean = z(p);
  const double noise = std::exp(z(p + 1));
  MatrixXd k = kernel_.gram(x_);
  k.diagonal().array() += noise;
  const VectorXd d = k.diagonal();  // [K_0]_ii, the convex scale
  // c_i = rho_i / d_i = s_i / (1 - s_i) (convex); rho_i directly (canonical).
  VectorXd c = VectorXd::Zero(nn);
  for (std::size_t j = 0; j < support.size(); ++j) {
    const int i = support[j];
    const double v = z(p + 2 + static_cast<int>(j));
    if (opt_.convex) {
      c(i) = v / (1.0 - v);
      k(i, i) += d(i) * c(i);
    } else {
      k(i, i) += v;
    }
  }
  last_z_.resize(0);  // invalid until the factorization succeeds
  last_w_valid_ = false;
  ++factorizations;
  chol_.compute(std::move(k), opt_.jitter);
  last_z_ = z;
  last_support_ = support;
  const VectorXd r = y_.array() - mean;
  const VectorXd alpha = chol_.solve(r);
  const double nll = gaussian_nll(chol_, r, alpha);
  if (grad != nullptr) {
    grad->resize(z.size());
    // W = alpha alpha' - K^{-1};  dNLL/dK = -W / 2 (elementwise, symmetric).
    MatrixXd w = chol_.inverse();
    const VectorXd pdiag = w.diagonal();
    w = alpha * alpha.transpose() - w;
    // g_rho_i = dNLL/drho_i = (P_ii - alpha_i^2) / 2  (spec §2.2)
    const VectorXd g_rho = 0.5 * (pdiag.array() - alpha.array().square()).matrix();
    VectorXd g_theta = -kernel_.gradient(x_, w);
    double g_noise = 0.0;  // d/d log sigma2
    if (opt_.convex && !support.empty()) {
      // rho_i = c_i d_i depends on theta through k(x_i, x_i) and on sigma2.
      const MatrixXd dg = kernel_.diag_gradient(x_);
      VectorXd wgt = VectorXd::Zero(nn);
      for (int i : support) wgt(i) = g_rho(i) * c(i);
      g_theta += dg.transpose() * wgt;
      g_noise = noise * (g_rho.sum() + wgt.sum());
    } else {
      g_noise = noise * g_rho.sum();
    }
    // Kept for coordinate_sweeps() at this point (saves it an inverse).
    last_w_ = std::move(w);
    last_w_valid_ = true;
    grad->head(p) = g_theta;
    (*grad)(p) = -alpha.sum();
    (*grad)(p + 1) = g_noise;
    for (std::size_t j = 0; j < support.size(); ++j) {
      const int i = support[j];
      const double v = z(p + 2 + static_cast<int>(j));
      // convex: drho/ds = d_i / (1 - s)^2
      (*grad)(p + 2 + static_cast<int>(j)) =
          opt_.convex ? g_rho(i) * d(i) / ((1.0 - v) * (1.0 - v)) : g_rho(i);
    }
  }
  last_penalty = prior_penalty(z, grad);
  if (grad != nullptr) *grad /= static_cast<double>(nn);
  return (nll + last_penalty) / static_cast<double>(nn);
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
    const MatrixXd pinv = chol_.inverse();
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

VectorXd lemma1_optimal_rho(const Cholesky& chol, const VectorXd& r, const VectorXd& rho) {
  const LooQuantities q = loo_quantities(chol, r);
  // 1/P_ii = v_i + rho_i and e_i = alpha_i / P_ii does not depend on rho_i.
  VectorXd out(r.size());
  for (int i = 0; i < r.size(); ++i) {
    const double e = q.residual(i);
    const double v = q.variance(i) - rho(i);
    out(i) = std::max(0.0, e * e - v);
  }
  return out;
}

VectorXd lemma1_gain(const Cholesky& chol, const VectorXd& r, const VectorXd& rho) {
  const LooQuantities q = loo_quantities(chol, r);
  VectorXd out(r.size());
  for (int i = 0; i < r.size(); ++i) {
    const double e = q.residual(i);
    const double v = q.variance(i) - rho(i);  // 1/P_ii = v_i + rho_i
    const double ratio = v > 0 ? e * e / v : 0.0;
    out(i) = ratio > 1.0 ? 0.5 * (ratio - 1.0 - std::log(ratio)) : 0.0;
  }
  return out;
}

// ---------------------------------------------------------------------------
// Vecchia backend of the pursuit (DESIGN.md §7). What is exact and what is not:
//
// * Objective and gradient: the negative log-likelihood of the response
//   Vecchia model with noise s_i = sigma2 + rho_i on the diagonal of each
//   conditioning block, and its exact gradient in the kernel log-parameters,
//   in every s_i (covariance.cpp derives it), in the mean (-1'Q r, since r
//   enters each block's u = L^-1 r_S linearly) and, through the convex map
//   rho_i = d_i s/(1 - s), in log sigma2 and theta. Every L-BFGS fit is
//   therefore an exact optimisation of the approximate model.
// * LOO quantities: e_i = (Q r)_i / Q_ii and 1/Q_ii are exact leave-one-out
//   residual and variance of the approximate Gaussian (precision Q = U U').
// * Lemma 1 is not exact for it: with C dense, raising rho_i changes C by
//   rho_i e_i e_i' and log p(y) = log p(y_-i) + log N(e_i; 0, v_i + rho_i),
//   whose maximiser is the closed form. In the Vecchia model rho_i sits in
//   the block of i and of every later point that conditions on i, so
//   p(y_-i) changes too and the closed-form rho_i* and gain are
//   approximations. They are used only to screen: (a) ranking inactive
//   points (forward pursuit) and the refinement's candidate supports, which
//   are then refitted and accepted by their true Vecchia likelihood, and (b)
//   proposing coordinate steps, applied as checked Jacobi steps: all support
//   points move to their closed-form values at once, the true Vecchia NLL is
//   evaluated, and the step is halved until it decreases (at most 6 halvings;
//   otherwise the sweep stops). The LOO variance without rho_i,
//   1/Q_ii - rho_i, is floored at sigma2 (its lower bound in the exact GP):
//   at m = 20 it fell below sigma2, even below 0, for some points with a
//   large rho_i, which zeroed or inflated their gains (n = 3,000
//   Friedman-5, m = 20: 20 of 300 support points got gain 0, and the gains
//   correlated 0.20 with the exact GP's at the same parameters; floored:
//   2 and 0.98). A dense Gauss-Seidel sweep (one point at a
//   time, Sherman-Morrison updates) has no O(n m) analogue: moving one rho_i
//   needs the blocks of all points conditioned on i.
// With every earlier point conditioned on (m = n - 1) the model is the exact
// GP and all of the above is exact; only the sweeps' order differs (Jacobi
// instead of Gauss-Seidel), which moves the starting points of the L-BFGS
// fits, not their optimum.

double PursuitModel::objective_vecchia(const VectorXd& z, const std::vector<int>& support,
                                       VectorXd* grad) {
  const int nn = n();
  const int p = n_kernel();
  kernel_.set_log_par(z.head(p));
  vecchia_->set_log_par(z.head(p));
  const double mean = z(p);
  const double noise = std::exp(z(p + 1));
  VectorXd d = kernel_.diag(x_);
  d.array() += noise;
  VectorXd c = VectorXd::Zero(nn);
  VectorXd s = VectorXd::Constant(nn, noise);
  for (std::size_t j = 0; j < support.size(); ++j) {
    const int i = support[j];
    const double v = z(p + 2 + static_cast<int>(j));
    if (opt_.convex) {
      c(i) = v / (1.0 - v);
      s(i) += d(i) * c(i);
    } else {
      s(i) += v;
    }
  }
  resid_.array() = y_.array() - mean;  // in place: the operator holds a reference
  last_z_.resize(0);
  last_w_valid_ = false;
  ++factorizations;
  double nll = 0;
  if (grad != nullptr) {
    VectorXd g_theta, g_rho;
    nll = vecchia_->evaluate_gradient(s, last_eval_, g_theta, g_rho);
    grad->resize(z.size());
    double g_noise = 0.0;
    if (opt_.convex && !support.empty()) {
      const MatrixXd dg = kernel_.diag_gradient(x_);
      VectorXd wgt = VectorXd::Zero(nn);
      for (int i : support) wgt(i) = g_rho(i) * c(i);
      g_theta += dg.transpose() * wgt;
      g_noise = noise * (g_rho.sum() + wgt.sum());
    } else {
      g_noise = noise * g_rho.sum();
    }
    grad->head(p) = g_theta;
    (*grad)(p) = -last_eval_.alpha.sum();
    (*grad)(p + 1) = g_noise;
    for (std::size_t j = 0; j < support.size(); ++j) {
      const int i = support[j];
      const double v = z(p + 2 + static_cast<int>(j));
      (*grad)(p + 2 + static_cast<int>(j)) =
          opt_.convex ? g_rho(i) * d(i) / ((1.0 - v) * (1.0 - v)) : g_rho(i);
    }
  } else {
    last_eval_ = vecchia_->evaluate(s);
    nll = last_eval_.nll;
  }
  last_z_ = z;
  last_support_ = support;
  last_penalty = prior_penalty(z, grad);
  if (grad != nullptr) *grad /= static_cast<double>(nn);
  return (nll + last_penalty) / static_cast<double>(nn);
}

double PursuitModel::jacobi_sweeps(VectorXd& z, const std::vector<int>& support, int sweeps) {
  const int p = n_kernel();
  const int m = static_cast<int>(support.size());
  const double nn = static_cast<double>(n());
  ensure_factor(z, support, true);
  const double f_start = last_eval_.nll;
  double f_now = f_start;
  const VectorXd d = base_diagonal(z);
  const double noise = std::exp(z(p + 1));
  VectorXd rho = rho_of(z, support);
  for (int sweep = 0; sweep < sweeps; ++sweep) {
    // Closed-form proposals from the LOO quantities at the current point.
    VectorXd target(m);
    double move = 0;
    for (int j = 0; j < m; ++j) {
      const int i = support[j];
      const double q = last_eval_.inv_diag(i);
      const double e = last_eval_.alpha(i) / q;
      const double cap = opt_.convex ? d(i) * opt_.s_max / (1.0 - opt_.s_max) : opt_.rho_max;
      const double v = std::max(1.0 / q - rho(i), noise);  // see lemma1_from_precision()
      target(j) = std::min(cap, std::max(0.0, e * e - v));
      move = std::max(move, std::abs(target(j) - rho(i)) / d(i));
    }
    if (move < 1e-10) break;
    bool accepted = false;
    double t = 1.0;
    VectorXd trial = z;
    for (int half = 0; half <= 6 && !accepted; ++half, t *= 0.5) {
      for (int j = 0; j < m; ++j) {
        const int i = support[j];
        const double r_new = rho(i) + t * (target(j) - rho(i));
        trial(p + 2 + j) = opt_.convex ? r_new / (d(i) + r_new) : r_new;
      }
      objective(trial, support, nullptr);
      if (last_eval_.nll < f_now - 1e-12 * std::max(1.0, std::abs(f_now))) accepted = true;
    }
    if (!accepted) break;  // the kept evaluation is at a rejected trial
    z = trial;
    f_now = last_eval_.nll;
    rho = rho_of(z, support);
  }
  return (f_start - f_now) / nn;
}

VectorXd lemma1_from_precision(const VectorXd& alpha, const VectorXd& inv_diag,
                               const VectorXd& rho, bool gain, double v_floor) {
  VectorXd out(alpha.size());
  for (int i = 0; i < alpha.size(); ++i) {
    const double e = alpha(i) / inv_diag(i);
    // 1/P_ii = v_i + rho_i (exact GP). v_i = Var(f_i | y_-i) + sigma2 is at
    // least sigma2 there; in a Vecchia model 1/Q_ii - rho_i can fall below it
    // (even below 0) for points with a large rho_i, so it is floored.
    const double v = std::max(1.0 / inv_diag(i) - rho(i), v_floor);
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
    return lemma1_from_precision(last_eval_.alpha, last_eval_.inv_diag, rho, gain,
                                 std::exp(z(n_kernel() + 1)));
  }
  const VectorXd r = y_.array() - z(n_kernel());
  return gain ? lemma1_gain(chol_, r, rho) : lemma1_optimal_rho(chol_, r, rho);
}

namespace {

struct Dense {
  VectorXd log_par;
  double mean;
  double log_noise;
};

VectorXd pack(const Dense& dense, const VectorXd& value, const std::vector<int>& support) {
  const int p = static_cast<int>(dense.log_par.size());
  VectorXd z(p + 2 + static_cast<int>(support.size()));
  z.head(p) = dense.log_par;
  z(p) = dense.mean;
  z(p + 1) = dense.log_noise;
  for (std::size_t j = 0; j < support.size(); ++j) z(p + 2 + static_cast<int>(j)) = value(support[j]);
  return z;
}

void unpack(const VectorXd& z, const std::vector<int>& support, Dense& dense, VectorXd& value) {
  const int p = static_cast<int>(dense.log_par.size());
  dense.log_par = z.head(p);
  dense.mean = z(p);
  dense.log_noise = z(p + 1);
  value.setZero();
  for (std::size_t j = 0; j < support.size(); ++j) value(support[j]) = z(p + 2 + static_cast<int>(j));
}

}  // namespace

PursuitResult relevance_pursuit(const MatrixXd& x, const VectorXd& y, Kernel kernel,
                                const VectorXd& log_par0, double mean0, double log_noise0,
                                const PursuitBounds& bounds, const PursuitOptions& opt,
                                Monitor& monitor) {
  const int n = static_cast<int>(y.size());
  const int p = kernel.n_par();
  if (log_par0.size() != p || bounds.kernel_lower.size() != p || bounds.kernel_upper.size() != p) {
    throw std::invalid_argument("gpr_pursuit: kernel parameter length mismatch");
  }
  kernel.set_log_par(log_par0);
  PursuitModel model(x, y, kernel, opt);
  PursuitResult out;
  const double vmax = opt.convex ? opt.s_max : opt.rho_max;

  std::vector<int> levels;
  for (int k : opt.levels) {
    if (k < 0 || k > n) throw std::invalid_argument("gpr_pursuit: support size outside [0, n]");
    levels.push_back(k);
  }
  std::sort(levels.begin(), levels.end());
  levels.erase(std::unique(levels.begin(), levels.end()), levels.end());

  Dense dense{log_par0, mean0, log_noise0};
  VectorXd value = VectorXd::Zero(n);
  std::vector<int> support;
  if (opt.backward) {
    support.resize(n);
    std::iota(support.begin(), support.end(), 0);
    std::reverse(levels.begin(), levels.end());
    levels.erase(std::remove_if(levels.begin(), levels.end(), [n](int k) { return k >= n; }),
                 levels.end());
  } else {
    for (int i : opt.initial_support) {
      if (i < 0 || i >= n) throw std::invalid_argument("gpr_pursuit: initial support index outside [1, n]");
    }
    support = opt.initial_support;
    std::sort(support.begin(), support.end());
    support.erase(std::unique(support.begin(), support.end()), support.end());
    const int m0 = static_cast<int>(support.size());
    levels.erase(std::remove_if(levels.begin(), levels.end(), [m0](int k) { return k <= m0; }),
                 levels.end());
  }

  auto fit = [&]() {
    const int m = static_cast<int>(support.size());
    VectorXd lo(p + 2 + m), hi(p + 2 + m);
    lo.head(p) = bounds.kernel_lower;
    hi.head(p) = bounds.kernel_upper;
    lo(p) = bounds.mean_lower;
    hi(p) = bounds.mean_upper;
    lo(p + 1) = bounds.log_noise_lower;
    hi(p + 1) = bounds.log_noise_upper;
    lo.tail(m).setZero();
    hi.tail(m).setConstant(vmax);
    VectorXd z0 = pack(dense, value, support).cwiseMax(lo).cwiseMin(hi);
    Objective f = [&](const VectorXd& z, VectorXd& g) { return model.objective(z, support, &g); };
    BoxResult res;
    bool block_converged = false;
    int block_iterations = 0, block_evaluations = 0;
    std::vector<double> block_trace;
    if (opt.coordinate_steps && opt.profiled && m > 0 && m >= opt.block_fraction * n) {
      // Profiled fit: L-BFGS over the dense parameters only, on
      // F(dense) = min over s_S of NLL, the inner minimum by Lemma-1 sweeps
      // warm-started from the previous evaluation's s. At an inner optimum the
      // partial gradient in the dense parameters (s held fixed) is dF/d(dense)
      // (envelope theorem; bound-active s_i have zero derivative), so the outer
      // problem has 2 + p variables and converges in few iterations where the
      // joint problem over 2 + p + |S| variables crawls.
      const int pd = p + 2;
      VectorXd zfull = z0;
      model.coordinate_sweeps(zfull, support, opt.profile_sweeps);
      Objective fprof = [&](const VectorXd& zd, VectorXd& g) {
        zfull.head(pd) = zd;
        model.coordinate_sweeps(zfull, support, opt.profile_sweeps);
        VectorXd gfull;
        const double val = model.objective(zfull, support, &gfull);
        g = gfull.head(pd);
        return val;
      };
      BoxOptions outer = opt.box;
      BoxResult dres = minimize_box(fprof, zfull.head(pd), lo.head(pd), hi.head(pd), outer, monitor);
      block_iterations = dres.iterations;
      block_evaluations = dres.evaluations;
      block_trace = dres.trace;
      block_converged = dres.converged;
      zfull.head(pd) = dres.x;
      model.coordinate_sweeps(zfull, support, opt.profile_sweeps);
      z0 = zfull.cwiseMax(lo).cwiseMin(hi);
      BoxOptions polish = opt.box;
      polish.max_iter = opt.polish_iter;
      res = minimize_box(f, z0, lo, hi, polish, monitor);
      res.converged = res.converged || block_converged;
      res.iterations += block_iterations;
      res.evaluations += block_evaluations;
      block_trace.insert(block_trace.end(), res.trace.begin(), res.trace.end());
      res.trace = block_trace;
    } else if (opt.coordinate_steps && m > 0 && m >= opt.block_fraction * n) {
      // Block-coordinate descent: dense parameters by L-BFGS with s pinned,
      // then exact Lemma-1 coordinate sweeps over rho_S.
      VectorXd lo_d = lo, hi_d = hi;
      double f_prev = std::numeric_limits<double>::infinity();
      for (int outer = 0; outer < opt.max_outer; ++outer) {
        monitor.check();
        lo_d.tail(m) = z0.tail(m);
        hi_d.tail(m) = z0.tail(m);
        BoxOptions inner = opt.box;
        inner.max_iter = opt.inner_iter;
        BoxResult dres = minimize_box(f, z0, lo_d, hi_d, inner, monitor);
        block_iterations += dres.iterations;
        block_evaluations += dres.evaluations;
        z0 = dres.x;
        const double dec = model.coordinate_sweeps(z0, support, opt.sweeps);
        const double f_now = dres.value - dec;
        block_trace.push_back(f_now);
        const double scale = std::max(std::abs(f_now), 1.0);
        if (f_prev - f_now <= opt.box.ftol * 10 * scale || dec <= opt.box.ftol * scale) {
          block_converged = dres.converged;
          break;
        }
        f_prev = f_now;
      }
      BoxOptions polish = opt.box;
      polish.max_iter = opt.polish_iter;
      res = minimize_box(f, z0, lo, hi, polish, monitor);
      res.converged = res.converged || block_converged;
      res.iterations += block_iterations;
      res.evaluations += block_evaluations;
      block_trace.insert(block_trace.end(), res.trace.begin(), res.trace.end());
      res.trace = block_trace;
    } else {
      if (opt.coordinate_steps && opt.backward && opt.reseed_sweeps > 0 && m > 0) {
        // The previous level's s came from a larger support: the points it
        // still holds near the bound slow the joint fit and can keep it in a
        // worse basin. Start from 0, as BoTorch does, but step each s_i to
        // its exact conditional optimum first (cheap: O(|S|^2) per step).
        z0.tail(m).setZero();
        model.coordinate_sweeps(z0, support, opt.reseed_sweeps);
        z0 = z0.cwiseMax(lo).cwiseMin(hi);
      }
      res = minimize_box(f, z0, lo, hi, opt.box, monitor);
    }
    unpack(res.x, support, dense, value);
    // The evidence of this model: reuse the factor of the last evaluation if it
    // is at the optimum (BoTorch recomputes it: one more factorization).
    model.ensure_factor(res.x, support, opt.reuse_factor);
    PursuitStep step;
    step.support = support;
    step.value = value;
    step.rho = model.rho_of(res.x, support);
    step.log_par = dense.log_par;
    step.mean = dense.mean;
    step.log_noise = dense.log_noise;
    step.penalty = model.prior_penalty(res.x, nullptr);
    step.nll = res.value * n - step.penalty;
    step.iterations = res.iterations;
    step.evaluations = res.evaluations;
    step.converged = res.converged;
    step.message = res.message;
    step.trace = res.trace;
    out.steps.push_back(step);
    monitor.progress(static_cast<int>(out.steps.size()), static_cast<int>(levels.size()) + 1);
    return res.x;
  };

  if (opt.reset_rho) value.setZero();
  if (!opt.backward && !support.empty() && opt.coordinate_steps && opt.reseed_sweeps > 0) {
    // Initial support: start its values at their Lemma-1 optima, as the
    // backward pursuit's reseeding does, instead of at 0.
    VectorXd z_init = pack(dense, value, support);
    model.coordinate_sweeps(z_init, support, opt.reseed_sweeps);
    const double vmax_init = opt.convex ? opt.s_max : opt.rho_max;
    for (std::size_t j = 0; j < support.size(); ++j) {
      value(support[j]) = std::min(std::max(z_init(p + 2 + static_cast<int>(j)), 0.0), vmax_init);
    }
  }
  VectorXd z = fit();
  for (int level : levels) {
    monitor.check();
    if (opt.backward) {
      // Contract: drop the |S| - level points with the smallest s (or rho);
      // ties (typically s = 0) are broken by index.
      const int drop = static_cast<int>(support.size()) - level;
      if (drop <= 0) continue;
      std::vector<int> order = support;
      std::stable_sort(order.begin(), order.end(),
                       [&](int a, int b) { return value(a) < value(b); });
      std::vector<char> keep(n, 0);
      for (std::size_t j = drop; j < order.size(); ++j) keep[order[j]] = 1;
      std::vector<int> next;
      for (int i : support) {
        if (keep[i]) next.push_back(i); else value(i) = 0.0;
      }
      support = next;
    } else {
      const int add = level - static_cast<int>(support.size());
      if (add <= 0) continue;
      // Score inactive points by Lemma 1 from the factor at the current fit.
      model.ensure_factor(z, support, opt.reuse_factor);
      const VectorXd rho = model.rho_of(z, support);
      const VectorXd r = y.array() - dense.mean;
      VectorXd crit = model.vecchia() ? model.lemma1(z, support, false)
                                      : lemma1_optimal_rho(model.last_factor(), r, rho);
      std::vector<char> active(n, 0);
      for (int i : support) active[i] = 1;
      std::vector<int> cand;
      for (int i = 0; i < n; ++i)
        if (!active[i] && crit(i) > 0) cand.push_back(i);
      std::stable_sort(cand.begin(), cand.end(), [&](int a, int b) { return crit(a) > crit(b); });
      if (cand.empty()) {
        out.stopped_early = true;
        break;
      }
      if (static_cast<int>(cand.size()) > add) cand.resize(add);
      if (opt.coordinate_steps && !opt.reset_rho && model.vecchia()) {
        // Vecchia: the entering points join at rho = 0 (the current model),
        // then one checked Jacobi step moves the whole support towards its
        // closed-form values (accepted only if the Vecchia NLL decreases).
        std::vector<int> grown = support;
        for (int i : cand) grown.push_back(i);
        VectorXd zg = pack(dense, value, grown);
        model.coordinate_sweeps(zg, grown, 1);
        for (std::size_t j = 0; j < grown.size(); ++j) value(grown[j]) = zg(p + 2 + static_cast<int>(j));
      } else if (opt.coordinate_steps && !opt.reset_rho) {
        // Lemma-1 coordinate steps, one entering point at a time, each followed
        // by an O(n^2) update of the factor (K changes by delta e_i e_i').
        Cholesky chol = model.last_factor();
        const VectorXd d = model.base_diagonal(z);
        VectorXd rho_now = rho;
        for (int i : cand) {
          const VectorXd alpha = chol.solve(r);
          VectorXd unit = VectorXd::Zero(n);
          unit(i) = 1.0;
          const double pii = chol.solve_lower(unit).squaredNorm();
          const double e = alpha(i) / pii;
          double target = std::max(0.0, e * e - 1.0 / pii + rho_now(i));
          const double cap = opt.convex ? d(i) * opt.s_max / (1.0 - opt.s_max) : opt.rho_max;
          target = std::min(target, cap);
          const double delta = target - rho_now(i);
          try {
            chol.diagonal_update(i, delta);
            ++model.rank_one_updates;
          } catch (const NumericalError&) {
            continue;  // leave this point at rho = 0; the joint fit moves it
          }
          rho_now(i) = target;
          value(i) = opt.convex ? target / (d(i) + target) : target;
        }
      }
      for (int i : cand) support.push_back(i);
    }
    if (opt.reset_rho) value.setZero();
    z = fit();
  }
  out.factorizations = model.factorizations;
  out.rank_one_updates = model.rank_one_updates;
  out.max_jitter = model.max_jitter();
  return out;
}

TrimmedSubset trimmed_subset(const MatrixXd& k, const VectorXd& r, int n_trim, int max_iter,
                             double tol, const JitterPolicy& jitter) {
  const int n = static_cast<int>(r.size());
  if (k.rows() != n || k.cols() != n) throw std::invalid_argument("trimmed_subset: K and r differ in size");
  if (n_trim < 0 || n_trim >= n) throw std::invalid_argument("trimmed_subset: n_trim outside [0, n)");
  TrimmedSubset out;
  out.offset = VectorXd::Zero(n);
  const Cholesky chol(k, jitter);
  if (n_trim == 0) {
    out.objective = r.dot(chol.solve(r));
    out.converged = true;
    return out;
  }
  // Step size 1/L = lambda_min(K) / 2 for the gradient 2 K^{-1}(r + b).
  const double lambda_min =
      Eigen::SelfAdjointEigenSolver<MatrixXd>(k, Eigen::EigenvaluesOnly).eigenvalues()(0);
  const double step = std::max(lambda_min, 1e-12) / 2.0;
  // Keep the n_trim entries of largest magnitude (ties by index).
  std::vector<int> order(n);
  auto threshold = [&](VectorXd& v) {
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](int a, int b) { return std::abs(v(a)) > std::abs(v(b)); });
    for (int j = n_trim; j < n; ++j) v(order[j]) = 0.0;
  };
  VectorXd b = -r;
  threshold(b);
  for (int it = 0; it < max_iter; ++it) {
    const VectorXd grad = 2.0 * chol.solve(VectorXd(r + b));
    VectorXd next = b - step * grad;
    threshold(next);
    const double change = (next - b).norm();
    b = next;
    out.iterations = it + 1;
    if (change <= tol * std::max(1.0, b.norm())) {
      out.converged = true;
      break;
    }
  }
  out.offset = b;
  for (int i = 0; i < n; ++i)
    if (b(i) != 0.0) out.outliers.push_back(i);
  const VectorXd rb = r + b;
  out.objective = rb.dot(chol.solve(rb));
  return out;
}

PursuitPrediction pursuit_predict(const MatrixXd& x, const VectorXd& y, const Kernel& kernel,
                                  double mean, double noise, const VectorXd& rho,
                                  const MatrixXd& xnew, const JitterPolicy& jitter) {
  MatrixXd k = kernel.gram(x);
  k.diagonal().array() += noise;
  k.diagonal() += rho;
  Cholesky chol(std::move(k), jitter);
  const VectorXd r = y.array() - mean;
  const VectorXd alpha = chol.solve(r);
  const MatrixXd ks = kernel.cross(x, xnew);  // n x m
  PursuitPrediction out;
  out.mean = (ks.transpose() * alpha).array() + mean;
  // L^{-1} K_*: its columns' squared norms are the variance explained by the data.
  const MatrixXd v = chol.factor().triangularView<Eigen::Lower>().solve(ks);
  out.variance = kernel.diag(xnew) - v.colwise().squaredNorm().transpose();
  out.variance = out.variance.cwiseMax(0.0);
  return out;
}

}  // namespace noisylabels
