// The fit driver of label_dist_vb(): deconvolution start, restarts, and the
// outer loop of block updates with its stopping rules. See label_dist.h.
#include "label_dist/label_dist.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "linalg/linalg.h"

namespace noisylabels {

MatrixXd ld_deconvolve(const LdProblem& prob, double lambda, Monitor& monitor) {
  const int U = prob.U, N = prob.N, M = prob.M;
  // Operator v -> (A'A + lambda I) v with A_iu = 1[u in G_i] / n_i, never formed.
  auto apply = [&](const VectorXd& v) {
    VectorXd av = VectorXd::Zero(N);
    for (int i = 0; i < N; ++i) {
      double sum = 0;
      for (int k = prob.group_ptr[i]; k < prob.group_ptr[i + 1]; ++k) sum += v(prob.pair_unit[k]);
      av(i) = sum / (static_cast<double>(prob.group_size(i)) * prob.group_size(i));
    }
    VectorXd out = lambda * v;
    for (int k = 0; k < prob.P; ++k) out(prob.pair_unit[k]) += av(prob.pair_group[k]);
    return out;
  };
  MatrixXd z(U, M);
  for (int l = 0; l < M; ++l) {
    VectorXd rhs = VectorXd::Zero(U);
    for (int k = 0; k < prob.P; ++k) {
      const int i = prob.pair_group[k];
      rhs(prob.pair_unit[k]) += prob.s(i, l) / prob.group_size(i);
    }
    // Conjugate gradients on the symmetric positive definite system.
    VectorXd sol = VectorXd::Zero(U), res = rhs, dir = rhs;
    double rr = res.squaredNorm();
    const double stop = 1e-20 * std::max(rr, 1e-300);
    for (int it = 0; it < 5 * U + 100 && rr > stop; ++it) {
      monitor.check();
      const VectorXd q = apply(dir);
      const double step = rr / dir.dot(q);
      sol += step * dir;
      res -= step * q;
      const double rr_new = res.squaredNorm();
      dir = res + (rr_new / rr) * dir;
      rr = rr_new;
    }
    z.col(l) = sol;
  }
  z = z.cwiseMax(0.01);
  for (int u = 0; u < U; ++u) z.row(u) /= z.row(u).sum();
  return z;
}

LdState ld_initial_state(const LdProblem& prob, const LdHyper& hy, const LdOptions& opt,
                         const MatrixXd& p_hat, int restart, std::uint64_t seed) {
  const int M = prob.M;
  MatrixXd p = p_hat;
  if (restart > 0) {
    // Perturbed deconvolution start: mix each instance's estimate with a
    // Dirichlet(1, ..., 1) draw.
    std::mt19937_64 rng(seed + 0x9E3779B97F4A7C15ULL * static_cast<std::uint64_t>(restart));
    std::exponential_distribution<double> expo(1.0);
    for (int u = 0; u < prob.U; ++u) {
      VectorXd d(M);
      for (int m = 0; m < M; ++m) d(m) = expo(rng);
      d /= d.sum();
      p.row(u) = (1 - opt.restart_mix) * p.row(u) + opt.restart_mix * d.transpose();
    }
  }
  LdState st;
  st.eta.resize(prob.P, M);
  for (int k = 0; k < prob.P; ++k) st.eta.row(k) = p.row(prob.pair_unit[k]);
  if (opt.structured) {
    st.eta_cond.resize(M * M, prob.P);
    for (int q = 0; q < prob.P; ++q)
      for (int m = 0; m < M; ++m)
        for (int l = 0; l < M; ++l) st.eta_cond(m * M + l, q) = st.eta(prob.unit_pairs[q], l);
  }
  MatrixXd c0 = MatrixXd::Constant(M, M, (1 - opt.init_diag) / (M - 1));
  c0.diagonal().setConstant(opt.init_diag);
  st.w = MatrixXd::Zero(M, prob.D);
  st.cpar = c0;
  // zeta from the zeta rule with W = 0 and C = C0 (C0 read as C itself, also when q(C) is a Dirichlet).
  ld_update_zeta(prob, st, false);
  if (opt.vb_c) {
    st.cpar = hy.beta_matrix(M) + ld_counts(prob, st, opt.structured);
  }
  return st;
}

LdFit ld_run(const LdProblem& prob, const LdHyper& hy, const LdOptions& opt, LdState state,
             Monitor& monitor) {
  LdFit fit;
  fit.state = std::move(state);
  LdState& st = fit.state;
  const bool sm = opt.structured, vb = opt.vb_c;
  double current = ld_elbo(prob, hy, st, sm, vb, opt.exact).total();
  fit.elbo_trace.push_back(current);
  // Called after every block update: at U = 2,000 and 1.2 million pairs a
  // block is ~0.1-0.3 s, an iteration ~1 s, so the monitor is polled here too.
  auto block = [&](const char* name) {
    monitor.check();
    if (!opt.debug) return;
    const double now = ld_elbo(prob, hy, st, sm, vb, opt.exact).total();
    fit.block_deltas.push_back(now - current);
    fit.block_names.push_back(name);
    current = now;
  };
  auto argmax = [&](const MatrixXd& z) {
    std::vector<int> out(z.rows());
    for (Eigen::Index u = 0; u < z.rows(); ++u) z.row(u).maxCoeff(&out[u]);
    return out;
  };
  std::vector<int> labels = argmax(st.zeta);
  int stable = 0;
  fit.stop_reason = "iteration limit reached";
  for (int it = 1; it <= opt.max_iter; ++it) {
    monitor.check();
    monitor.progress(it - 1, opt.max_iter);  // iterations done
    ld_update_c(prob, hy, st, sm, vb);
    block("C");
    fit.lbfgs_evaluations += ld_update_w(prob, hy, st, opt.lbfgs_max_iter, monitor);
    block("W");
    if (sm) {
      ld_update_structured(prob, hy, st, vb, monitor);
      block("instances");
    } else {
      ld_update_eta(prob, hy, st, vb, opt.threads, opt.exact);
      block("eta");
      ld_update_zeta(prob, st, vb);
      block("zeta");
    }
    const double prev = fit.elbo_trace.back();
    current = ld_elbo(prob, hy, st, sm, vb, opt.exact).total();
    if (!std::isfinite(current)) throw NumericalError("the ELBO is not finite");
    fit.elbo_trace.push_back(current);
    const std::vector<int> now = argmax(st.zeta);
    int changes = 0;
    for (size_t u = 0; u < now.size(); ++u) changes += now[u] != labels[u];
    labels = now;
    fit.changes_trace.push_back(changes);
    // Stable iteration: (almost) no instance changed its most probable class;
    // with stable_tol * U < 1 this is the strict "argmax unchanged" rule.
    stable = changes <= opt.stable_tol * prob.U ? stable + 1 : 0;
    fit.iterations = it;
    if (std::abs(current - prev) < opt.tol * std::abs(current)) {
      fit.converged = true;
      fit.stop_reason = "relative ELBO change below tolerance";
      break;
    }
    if (opt.stable_iter > 0 && stable >= opt.stable_iter) {
      fit.converged = true;
      fit.stop_reason = "argmax of zeta stable";
      break;
    }
  }
  fit.elbo = ld_elbo(prob, hy, st, sm, vb, opt.exact);
  return fit;
}

LdFit ld_fit(const LdProblem& prob, const LdHyper& hy, const LdOptions& opt, Monitor& monitor) {
  const MatrixXd p_hat = ld_deconvolve(prob, opt.init_lambda, monitor);
  LdFit best;
  std::vector<double> finals;
  for (int r = 0; r < std::max(1, opt.restarts); ++r) {
    StageMonitor stage(monitor, r, std::max(1, opt.restarts));  // one display over all restarts
    LdFit f = ld_run(prob, hy, opt, ld_initial_state(prob, hy, opt, p_hat, r, opt.seed), stage);
    finals.push_back(f.elbo.total());
    if (r == 0 || f.elbo.total() > best.elbo.total()) {
      best = std::move(f);
      best.best_restart = r;
    }
  }
  best.restart_elbo = finals;
  return best;
}

}  // namespace noisylabels
