// The Vecchia backend's per-label variance step of gpr_loo(): box L-BFGS on
// the noise variances in curvature-scaled units with a stopping rule on the
// predicted decrease of the objective (see GprLoo::fit_noise_var_scaled).
#include <algorithm>
#include <cmath>
#include <functional>
#include <utility>

#include "common/optimize.h"
#include "gpr/gpr_loo.h"

namespace noisylabels {

namespace {

// Ends a minimize_box run from outside: check() at the top of every iteration
// (when the last evaluation is the current point) first reports that point
// through `accepted` and then says "interrupted" once the caller's stopping
// rule holds there; host interrupts pass through.
class StopRule : public Monitor {
 public:
  StopRule(Monitor& host, std::function<void()> accepted) : host_(host), accepted_(std::move(accepted)) {}
  bool interrupted() override {
    if (calls_++ > 0) accepted_();  // the first call is at the starting point
    return met || host_.interrupted();
  }
  bool met = false;

 private:
  Monitor& host_;
  std::function<void()> accepted_;
  int calls_ = 0;
};

}  // namespace

void GprLoo::fit_noise_var_scaled(VectorXd& noise_var, GprLooEval& eval, int max_iter, double tol) {
  // Box L-BFGS in scaled variables z >= 0, noise_var = floor + c z, with c_i = sqrt(2) / d_i:
  // with the others fixed, label i's term J_i = 1/2 [log t + e_i^2 / t], t = v_i + sigma_i =
  // 1 / d_i, has curvature 1 / (2 t^2) at its optimum t = e_i^2, so the Hessian in z is near
  // the identity there and the first (steepest-descent) step is the undamped Jacobi step.
  // Working on sigma rather than log sigma lets clean labels reach the floor in one
  // projected step and leave the free set; on the log scale they crawl towards it with a
  // gradient that vanishes with sigma, and the step ran into its iteration cap. The scaling
  // is refreshed every `kCycle` iterations (t_i of a corrupted label grows by orders of
  // magnitude during the fit).
  //
  // Stopping rule, on the objective: the decrease the diagonal model predicts from the
  // current point, 1/2 |projected gradient in z|^2, is at most tol_stationary (1 + |J|).
  // A component of the z-gradient is (1 - grad_neg_i / d_i) / sqrt(2): the rule bounds the
  // root-mean-square distance of the multiplicative factor of eq. 8 from 1 (its fixed
  // point), with labels at the floor whose factor is below 1 counted as converged.
  constexpr int kCycle = 25;
  const int n = static_cast<int>(noise_var.size());
  const bool uniform = opt_.noise == NoiseModel::Uniform;
  const int nv = uniform ? 1 : n;
  const double floor = opt_.sigma_floor;
  const double tol_stat = std::max(tol, opt_.tol_stationary);
  qn_converged_ = false;
  int used = 0;
  while (used < max_iter && !qn_converged_) {
    VectorXd c(nv);
    if (uniform) {
      c(0) = 1.0 / std::sqrt(0.5 * eval.inv_diag.squaredNorm());
    } else {
      c = std::sqrt(2.0) * eval.inv_diag.cwiseInverse();
    }
    auto expand = [&](const VectorXd& z) {
      return uniform ? VectorXd::Constant(n, floor + c(0) * z(0))
                     : VectorXd((floor + c.array() * z.array()).matrix());
    };
    GprLooEval best = eval;
    VectorXd best_sigma = noise_var;
    int accepted = 0, evals = 0;
    StopRule stop(null_monitor(), [&]() {
      record(best.objective);
      ++accepted;
    });
    Objective obj = [&](const VectorXd& z, VectorXd& grad) {
      // minimize_box's first call is at the cycle's start, already evaluated.
      const VectorXd s = evals == 0 ? noise_var : expand(z);
      GprLooEval e = evals == 0 ? eval : evaluate(s);
      VectorXd gs = 0.5 * (e.inv_diag - e.grad_neg);
      add_penalty_gradient(s, gs);
      if (uniform) {
        grad(0) = c(0) * gs.sum();
      } else {
        grad = c.cwiseProduct(gs);
      }
      // The rule uses this point's own scaling, so that it does not depend on the cycle.
      double decrease = 0;
      if (uniform) {
        if (!(z(0) <= 0 && grad(0) > 0)) decrease = gs.sum() * gs.sum() / e.inv_diag.squaredNorm();
      } else {
        for (int i = 0; i < nv; ++i) {
          const double gz = std::sqrt(2.0) * gs(i) / e.inv_diag(i);
          if (!(z(i) <= 0 && gz > 0)) decrease += 0.5 * gz * gz;
        }
      }
      const double j = e.objective;
      // Accepted steps decrease J, so the point check() sees is the best so far.
      if (evals++ == 0 || j < best.objective) {
        stop.met = decrease <= tol_stat * (1.0 + std::abs(j));
        best = std::move(e);
        best_sigma = s;
      }
      return j;
    };
    VectorXd z0 = uniform ? VectorXd::Constant(1, (noise_var(0) - floor) / c(0))
                          : VectorXd((noise_var.array() - floor) / c.array());
    const VectorXd lo = VectorXd::Zero(nv);
    const VectorXd hi = (1e6 - floor) * c.cwiseInverse();
    z0 = z0.cwiseMax(lo).cwiseMin(hi);
    BoxOptions bo;
    bo.max_iter = std::min(kCycle, max_iter - used);
    bo.pgtol = 0;  // the stopping rule above decides
    bo.ftol = 0;
    BoxResult r;
    try {
      r = minimize_box(obj, z0, lo, hi, bo, stop);
      // The last accepted step of a cycle is not followed by a check().
      if (r.iterations > accepted) record(r.value);
    } catch (const Interrupted&) {
      if (!stop.met) throw;
      qn_converged_ = true;
    }
    // minimize_box only accepts decreasing steps, so its last point is the best seen.
    noise_var = best_sigma;
    eval = std::move(best);
    used += std::max(r.iterations, accepted);
    // ftol = 0: minimize_box reports convergence only when a step no longer lowers J at all.
    if (r.converged) qn_converged_ = true;
    if (!qn_converged_ && r.iterations == 0) break;  // no descent from the start of a cycle
  }
}

}  // namespace noisylabels
