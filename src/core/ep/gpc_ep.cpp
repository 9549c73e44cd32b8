// Dense EP: run_ep (the sweep schedule on K with the dense sweeps and
// refreshes), the evidence gradient, prediction and the dense fit.
#include "ep/gpc_ep.h"

#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <utility>
#include <vector>

#include "ep/dense_sweep.h"

namespace noisylabels {

namespace {

// Smallest n for which sequential sweeps take the posterior covariance from
// their own factors.
constexpr int kMinFactorN = 128;

}  // namespace

bool ep_evidence(const VectorXd& y, const EpLikelihood& lik, EpState& s) {
  return ep_evidence_diag(y, lik, s.post_cov.diagonal(), s);
}

EpState run_ep(const MatrixXd& k_in, const VectorXd& y, const EpLikelihood& lik,
               const EpOptions& opt, std::mt19937_64& rng, Monitor& monitor,
               const VectorXd* warm_tau, const VectorXd* warm_nu) {
  const int n = static_cast<int>(y.size());
  if (k_in.rows() != n || k_in.cols() != n) throw std::invalid_argument("run_ep: K and y do not match");
  Cholesky chol_k(k_in, opt.jitter, monitor);  // throws NumericalError if K is not PD
  MatrixXd k = k_in;
  if (chol_k.jitter() > 0) k.diagonal().array() += chol_k.jitter();

  // Zero start: tau = nu = 0, Sigma = K, mu = 0 (paper: v_i = inf, m_i = 0).
  EpState s;
  s.jitter = chol_k.jitter();
  s.site_tau = VectorXd::Zero(n);
  s.site_nu = VectorXd::Zero(n);
  s.post_cov = k;
  s.mu = VectorXd::Zero(n);
  s.half_logdet = 0;
  if (!ep_evidence(y, lik, s)) throw NumericalError("EP: the prior gives an improper cavity");
  warm_start(opt, warm_tau, warm_nu, s, [&](EpState& w) {
    return ep_refresh(k, chol_k, w, opt.parallel, nullptr, monitor) && ep_evidence(y, lik, w);
  });

  std::vector<int> perm(n);
  SweepWorkspace work;
  MatrixXd post_cov_prev, spare;  // recycled n x n storage
  // Sequential blocked sweeps take Sigma from their own factors
  // (refresh_from_sweep), with an exact refresh from K after every
  // `refresh_every`-th sweep (0: never), which bounds the rounding drift; the
  // state returned is that of the last refresh. Below kMinFactorN the
  // O(n^2) work of the factor refresh outweighs the n^3/3 flops it saves.
  const bool use_factor = !opt.parallel && opt.block_size > 0 && opt.refresh_every != 1 &&
                          n >= kMinFactorN;
  int factor_run = 0;       // consecutive refreshes from the sweeps' factors
  // After a factor refresh s.post_cov is stored in that sweep's visiting
  // order: s.post_cov(a, b) = Sigma[order[a], order[b]] (empty: the original
  // order), which saves an n x n permutation per sweep; `post_var` is
  // diag(Sigma) in the original order and `gidx` the storage position of
  // each visited site.
  std::vector<int> order, gidx(n), pos(n);
  VectorXd post_var;
  auto evidence = [&]() {
    if (order.empty()) return ep_evidence(y, lik, s);
    return ep_evidence_diag(y, lik, post_var, s);
  };
  auto exact_refresh = [&]() {
    order.clear();
    return ep_refresh(k, chol_k, s, opt.parallel, &spare, monitor) && ep_evidence(y, lik, s);
  };
  auto step = [&](double delta, double& max_change) {
    // The sweep changes only the sites; post_cov and mu stay those of the
    // last refresh (the reference path works on copies), so a revert needs
    // no n x n copy.
    const VectorXd tau0 = s.site_tau, nu0 = s.site_nu;
    if (opt.parallel) {
      max_change = sweep_parallel(y, lik, opt, delta, s.post_cov.diagonal(), s);
    } else {
      random_permutation(perm, rng);
      if (opt.block_size > 0) {
        if (order.empty()) {
          gidx = perm;
        } else {
          for (int a = 0; a < n; ++a) pos[order[a]] = a;
          for (int j = 0; j < n; ++j) gidx[j] = pos[perm[j]];
        }
        max_change = sweep_blocked(y, lik, opt, delta, perm, gidx, s, work, monitor);
      } else {
        max_change = sweep_reference(y, lik, opt, delta, perm, s);
      }
    }
    // Refresh after every sweep: rank-one updates lose precision, and the
    // next sweep starts from the refreshed Sigma. Parallel EP needs only
    // diag(Sigma) and mu between sweeps.
    const VectorXd mu0 = s.mu;
    const VectorXd diag0 = s.post_cov.diagonal();
    const double half_logdet0 = s.half_logdet;
    const std::vector<int> order0 = order;
    const VectorXd post_var0 = order.empty() ? VectorXd() : post_var;
    if (!opt.parallel) post_cov_prev.swap(s.post_cov);  // Sigma0 kept for a revert
    const bool factor =
        use_factor && (opt.refresh_every <= 0 || factor_run < opt.refresh_every - 1);
    bool ok = false, exact_now = true;
    if (factor) {
      ok = refresh_from_sweep(perm, work, spare, s, post_var, monitor);
      if (ok) {
        order = perm;
        ok = evidence();
      }
      exact_now = !ok;
      if (!ok) s.half_logdet = half_logdet0;  // decide on the exact posterior instead
    }
    if (!ok) ok = exact_refresh();
    if (ok) {
      factor_run = exact_now ? 0 : factor_run + 1;
      return true;
    }
    // Undo the sweep (the caller halves the damping).
    s.site_tau = tau0; s.site_nu = nu0; s.mu = mu0; s.half_logdet = half_logdet0;
    if (opt.parallel) {
      s.post_cov.resize(n, n);
      s.post_cov.diagonal() = diag0;
    } else {
      s.post_cov.swap(post_cov_prev);
      order = order0;
      post_var = post_var0;
    }
    if (!evidence()) throw NumericalError("EP: lost a proper posterior while reverting");
    return false;
  };
  run_sweeps(opt, monitor, "EP", s, step);
  if (opt.parallel) {
    // Gradients and predictions need the whole Sigma.
    if (!(ep_refresh(k, chol_k, s, false, nullptr, monitor) && ep_evidence(y, lik, s)))
      throw NumericalError("EP: the final parallel-EP sites give an improper posterior");
  } else if (!order.empty()) {
    // back to the original order for the caller
    spare.resize(n, n);
    for (int b = 0; b < n; ++b) {
      const double* src = s.post_cov.data() + static_cast<std::ptrdiff_t>(b) * n;
      double* dst = spare.data() + static_cast<std::ptrdiff_t>(order[b]) * n;
      for (int a = 0; a < n; ++a) dst[order[a]] = src[a];
    }
    s.post_cov.swap(spare);
  }
  return s;
}

MatrixXd ep_gradient_weights(const EpState& s) {
  const VectorXd b = ep_b(s);
  // W = b b' - R with R = T - T Sigma T, either sign of tau.
  MatrixXd w = -(s.site_tau * s.site_tau.transpose()).cwiseProduct(s.post_cov);
  w.diagonal() += s.site_tau;
  w = b * b.transpose() - w;
  return w;
}

VectorXd ep_kernel_gradient(const Kernel& kernel, const MatrixXd& x, const EpState& s,
                            Monitor& monitor) {
  return kernel.gradient(x, ep_gradient_weights(s), monitor);
}

void ep_predict(const EpState& s, const MatrixXd& kstar, const VectorXd& kss, VectorXd& mean,
                VectorXd& var) {
  const VectorXd b = ep_b(s);
  mean.noalias() = kstar.transpose() * b;
  // R k* = T k* - T Sigma T k*
  const MatrixXd tk = s.site_tau.asDiagonal() * kstar;
  MatrixXd rk = tk;
  rk.noalias() -= s.site_tau.asDiagonal() * (s.post_cov * tk);
  var = kss - kstar.cwiseProduct(rk).colwise().sum().transpose();
}

FitResult fit_gpc_ep(const MatrixXd& x, const VectorXd& y, Kernel kernel, EpLikelihood lik,
                     const FitOptions& opt, std::uint64_t seed, Monitor& monitor) {
  std::mt19937_64 rng(seed);
  EpRunner run = [&](const VectorXd& lp, const EpLikelihood& l, const VectorXd* wt,
                     const VectorXd* wn) {
    Kernel kk = kernel;
    kk.set_log_par(lp);
    return run_ep(kk.gram(x, monitor), y, l, opt.ep, rng, monitor, wt, wn);
  };
  EpGradient gradient = [&](const VectorXd& lp, const EpState& st) {
    Kernel kk = kernel;
    kk.set_log_par(lp);
    return ep_kernel_gradient(kk, x, st, monitor);
  };
  FitResult res = fit_ep_outer(kernel, y, lik, opt, run, gradient, monitor);
  kernel.set_log_par(res.log_par);
  res.k = kernel.gram(x);
  if (res.jitter > 0) res.k.diagonal().array() += res.jitter;
  return res;
}

}  // namespace noisylabels
