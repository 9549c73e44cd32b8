#include "gpr/gpr_pursuit.h"

#include <algorithm>
#include <cmath>

namespace noisylabels {

// ---------------------------------------------------------------------------
// Vecchia backend of the pursuit (the covariance operator's response Vecchia
// model, covariance.h). What is exact and what is not:
//
// * Objective and gradient: the negative log-likelihood of the response
//   Vecchia model with noise s_i = sigma2 + rho_i on the diagonal of each
//   conditioning block, and its exact gradient in the kernel log-parameters,
//   in every s_i (covariance_vecchia.cpp derives it), in the mean (-1'Q r, since r
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
  set_point(z);
  const double noise = std::exp(z(n_kernel() + 1));
  VectorXd d = kernel_.diag(x_);
  d.array() += noise;  // [K_0]_ii, the convex scale
  VectorXd c;
  const VectorXd noise_var = extra_variance(z, support, d, c).array() + noise;
  last_z_.resize(0);
  last_w_valid_ = false;
  ++factorizations;
  double nll = 0;
  if (grad != nullptr) {
    VectorXd g_theta, g_rho;
    nll = vecchia_->evaluate_gradient(noise_var, last_eval_, g_theta, g_rho);
    chain_rule(z, support, c, d, g_rho, std::move(g_theta), last_eval_.alpha.sum(), *grad);
  } else {
    last_eval_ = vecchia_->evaluate(noise_var);
    nll = last_eval_.nll;
  }
  last_z_ = z;
  last_support_ = support;
  last_penalty = prior_penalty(z, grad);
  if (grad != nullptr) *grad /= static_cast<double>(n());
  return (nll + last_penalty) / static_cast<double>(n());
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
    const VectorXd rho_star = lemma1_values(loo_quantities(last_eval_), rho, false, noise);
    for (int j = 0; j < m; ++j) {
      const int i = support[j];
      const double cap = opt_.convex ? d(i) * opt_.s_max / (1.0 - opt_.s_max) : opt_.rho_max;
      target(j) = std::min(cap, rho_star(i));
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

}  // namespace noisylabels
