// Relevance pursuit (Ament et al., NeurIPS 2024): the trace of fitted
// extended GP models over the support sizes, backward (from every point
// free) or forward (from the empty support or a given one). The model and
// its objective are in gpr_pursuit_model.cpp and gpr_pursuit_vecchia.cpp.
#include "gpr/gpr_pursuit.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>

namespace noisylabels {

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
  const MonitorScope poll(model.covariance(), monitor);  // the factorizations poll it too
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
    // The joint L-BFGS polish after a block fit (at most polish_iter
    // iterations), its counts and trace appended to the block fit's.
    auto polish = [&](const VectorXd& z_start) {
      BoxOptions polish_opt = opt.box;
      polish_opt.max_iter = opt.polish_iter;
      BoxResult out = minimize_box(f, z_start, lo, hi, polish_opt, monitor);
      out.converged = out.converged || block_converged;
      out.iterations += block_iterations;
      out.evaluations += block_evaluations;
      block_trace.insert(block_trace.end(), out.trace.begin(), out.trace.end());
      out.trace = block_trace;
      return out;
    };
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
      res = polish(z0);
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
      res = polish(z0);
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
      const VectorXd crit = model.lemma1(z, support, false);
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

}  // namespace noisylabels
