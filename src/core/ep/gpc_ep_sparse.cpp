// Sparse FITC EP for the labelling-error likelihood; the math is in
// gpc_ep_sparse.h; the site moments, the schedule and the evidence are the
// backend-neutral ones of ep_site.h and ep_schedule.h.
#include "ep/gpc_ep_sparse.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <vector>

#include "ep/ep_schedule.h"
#include "ep/ep_site.h"
#include "ep/fitc_sweep.h"
#include "linalg/blas.h"

namespace noisylabels {

namespace {

// c <- alpha a b' + beta c (a m x k, b n x k, column-major).
void gemm_nt(const MatrixXd& a, const MatrixXd& b, double alpha, double beta, MatrixXd& c) {
  const int m = static_cast<int>(a.rows()), n = static_cast<int>(b.rows()),
            k = static_cast<int>(a.cols());
  if (k == 0) {
    c *= beta;
    return;
  }
  dgemm_("N", "T", &m, &n, &k, &alpha, a.data(), &m, b.data(), &n, &beta, c.data(), &m, 1, 1);
}

// Cross terms of the gradient: sum_{u,i} c(u, i) dk(z_u, x_i)/dtheta for
// every log-hyperparameter, points as columns (d x m and d x n).
VectorXd cross_gradient(const Kernel& kernel, const MatrixXd& zt, const MatrixXd& xt,
                        const MatrixXd& c) {
  const int np = kernel.n_par(), m = static_cast<int>(zt.cols()), n = static_cast<int>(xt.cols());
  VectorXd out = VectorXd::Zero(np);
  std::vector<double> dk(np);
  for (int i = 0; i < n; ++i) {
    const double* xi = xt.data() + static_cast<std::ptrdiff_t>(i) * xt.rows();
    for (int u = 0; u < m; ++u) {
      const double cu = c(u, i);
      if (cu == 0) continue;
      kernel.pair_gradient(zt.data() + static_cast<std::ptrdiff_t>(u) * zt.rows(), xi, dk.data(),
                           false);
      for (int j = 0; j < np; ++j) out(j) += cu * dk[j];
    }
  }
  return out;
}

// The state refreshed at its own sites (`st`), A = Kuu^-1 K(Z,X) and A R
// (both m x n), the site weights w and the squared column norms of
// V = chol(M)^-1 U: what the gradient and the predictor are built from.
struct FitcTerms {
  EpState st;
  MatrixXd a, ar;
  VectorXd w, vnorm2;
};

FitcTerms fitc_terms(const FitcPrior& p, const EpState& s) {
  const int m = static_cast<int>(p.u.rows());
  FitcTerms t;
  t.st = s;
  MatrixXd v;
  if (!fitc_refresh(p, t.st, &v))
    throw NumericalError("sparse EP: the sites give an improper posterior");
  VectorXd g;
  if (!fitc_site_weights(p, t.st.site_tau, g, t.w))
    throw NumericalError("sparse EP: the sites give an improper posterior");
  t.a = p.u;
  fitc_tri_solve(p.chol_uu.factor(), "T", t.a);  // L^-T U = Kuu^-1 K(Z, X)
  t.vnorm2 = v.colwise().squaredNorm().transpose();
  // A R = A diag(w) - (A diag(w) V') V diag(w)
  t.ar = t.a * t.w.asDiagonal();
  MatrixXd pm(m, m);
  gemm_nt(t.ar, v, 1.0, 0.0, pm);
  const MatrixXd vw = v * t.w.asDiagonal();
  t.ar.noalias() -= pm * vw;
  return t;
}

}  // namespace

FitcPrior fitc_prior(const Kernel& kernel, const MatrixXd& x, const MatrixXd& z,
                     const JitterPolicy& jitter, Monitor& monitor) {
  FitcPrior p;
  MatrixXd kuu = kernel.cross(z, z);
  p.chol_uu.compute(kuu, jitter);  // throws NumericalError beyond the policy
  p.jitter = p.chol_uu.jitter();
  p.u = kernel.cross(z, x);
  monitor.check();
  fitc_tri_solve(p.chol_uu.factor(), "N", p.u);
  p.lambda = kernel.diag(x) - p.u.colwise().squaredNorm().transpose();
  p.lambda = p.lambda.cwiseMax(0.0);  // rounding when Z contains X
  return p;
}

namespace {

// fitc_refresh(), leaving M and its factor in `keep` if given; with
// `m_given` (M at these sites from a sweep, lower triangle) M is not rebuilt.
bool refresh_keep(const FitcPrior& p, EpState& s, MatrixXd* v_out, Monitor& monitor,
                  FitcM* keep, const MatrixXd* m_given = nullptr) {
  VectorXd g, w;
  if (!fitc_site_weights(p, s.site_tau, g, w)) return false;
  Cholesky chol_m;
  MatrixXd mm = m_given ? *m_given : fitc_build_m(p, w);
  monitor.check();  // build_m and the solve below are n m^2 flops each
  MatrixXd kept;
  if (keep) kept = mm;
  if (!fitc_factor_m(std::move(mm), chol_m)) return false;
  if (keep) {
    keep->tau = s.site_tau;
    keep->mm = std::move(kept);
    keep->chol = chol_m;
  }
  MatrixXd v = p.u;
  fitc_tri_solve(chol_m.factor(), "N", v);
  monitor.check();
  const VectorXd gnu = g.cwiseProduct(s.site_nu);
  const VectorXd t = v * gnu;
  s.mu = p.lambda.cwiseProduct(gnu) + g.cwiseProduct(v.transpose() * t);
  const VectorXd vnorm2 = v.colwise().squaredNorm().transpose();
  s.post_var = p.lambda.cwiseProduct(g) + g.cwiseProduct(g).cwiseProduct(vnorm2);
  double half_logdet = 0.5 * chol_m.logdet();
  for (int i = 0; i < s.site_tau.size(); ++i)
    half_logdet += 0.5 * std::log1p(p.lambda(i) * s.site_tau(i));
  s.half_logdet = half_logdet;
  if (v_out) v_out->swap(v);
  return s.mu.allFinite() && s.post_var.allFinite() && (s.post_var.array() > 0).all() &&
         std::isfinite(half_logdet);
}

}  // namespace

bool fitc_refresh(const FitcPrior& p, EpState& s, MatrixXd* v_out, Monitor& monitor) {
  return refresh_keep(p, s, v_out, monitor, nullptr);
}

EpState run_ep_fitc(const FitcPrior& p, const VectorXd& y, const EpLikelihood& lik,
                    const EpOptions& opt, std::mt19937_64& rng, Monitor& monitor,
                    const VectorXd* warm_tau, const VectorXd* warm_nu) {
  const int n = static_cast<int>(y.size());
  if (p.u.cols() != n) throw std::invalid_argument("run_ep_fitc: prior and y do not match");
  EpState s;
  s.jitter = p.jitter;
  s.site_tau = VectorXd::Zero(n);
  s.site_nu = VectorXd::Zero(n);
  FitcM cached;  // M of the last refresh, for the sweep that follows it
  if (!(refresh_keep(p, s, nullptr, monitor, &cached) && ep_evidence_diag(y, lik, s.post_var, s)))
    throw NumericalError("sparse EP: the prior gives an improper cavity");
  warm_start(opt, warm_tau, warm_nu, s, [&](EpState& w) {
    return refresh_keep(p, w, nullptr, monitor, &cached) && ep_evidence_diag(y, lik, w.post_var, w);
  });
  std::vector<int> perm(n);
  for (int i = 0; i < n; ++i) perm[i] = i;
  const SiteCheck proper_site = [&](int i, double new_tau) {
    return 1.0 + p.lambda(i) * new_tau > 0;
  };
  // As on the dense path, sequential sweeps leave M at their new sites
  // (updated block by block) to the refresh, which then only factors it;
  // after every `refresh_every`-th sweep (0: never) M is rebuilt from U and
  // the sites, which bounds the rounding drift.
  const bool use_sweep_m = !opt.parallel && opt.refresh_every != 1;
  int sweep_m_run = 0;  // consecutive refreshes from the sweeps' M
  MatrixXd m_sweep;
  auto step = [&](double delta, double& max_change) {
    const EpState s0 = s;  // O(n): no matrices in a sparse state
    const bool from_sweep =
        use_sweep_m && (opt.refresh_every <= 0 || sweep_m_run < opt.refresh_every - 1);
    bool ok;
    if (opt.parallel) {
      max_change = sweep_parallel(y, lik, opt, delta, s.post_var, s, proper_site);
      ok = true;
    } else {
      random_permutation(perm, rng);
      ok = sweep_fitc(p, y, lik, opt, delta, perm, s, max_change, monitor, cached,
                      from_sweep ? &m_sweep : nullptr);
    }
    auto refresh = [&](const MatrixXd* given) {
      return refresh_keep(p, s, nullptr, monitor, &cached, given) &&
             ep_evidence_diag(y, lik, s.post_var, s);
    };
    bool exact = !from_sweep;
    if (ok && from_sweep) {
      ok = refresh(&m_sweep);
      if (!ok) ok = exact = refresh(nullptr);  // decide on the rebuilt M instead
    } else {
      ok = ok && refresh(nullptr);
    }
    if (ok) sweep_m_run = exact ? 0 : sweep_m_run + 1;
    if (!ok) {
      // Undo the sweep (the caller halves the damping).
      const int skipped = s.skipped;
      s = s0;
      s.skipped = skipped;
    }
    return ok;
  };
  run_sweeps(opt, monitor, "sparse EP", s, step);
  return s;
}

VectorXd fitc_kernel_gradient(const Kernel& kernel, const MatrixXd& x, const MatrixXd& z,
                              const FitcPrior& p, const EpState& s) {
  const int n = static_cast<int>(x.rows());
  FitcTerms t = fitc_terms(p, s);
  const MatrixXd& a = t.a;
  MatrixXd& c = t.ar;
  const VectorXd& w = t.w;
  const VectorXd& vnorm2 = t.vnorm2;
  const VectorXd b = ep_b(t.st);
  // diag(W) = b^2 - diag(R), diag(R)_i = w_i - w_i^2 |V_i|^2
  VectorXd wd(n);
  for (int i = 0; i < n; ++i) wd(i) = b(i) * b(i) - w(i) + w(i) * w(i) * vnorm2(i);
  // C = A (W - diag(W)) = (A b) b' - A R - A diag(W_ii)
  const VectorXd ab = a * b;
  c = -c;
  c.noalias() += ab * b.transpose();
  c.noalias() -= a * wd.asDiagonal();
  // E = C A' (symmetric)
  MatrixXd e(a.rows(), a.rows());
  gemm_nt(c, a, 1.0, 0.0, e);
  const MatrixXd xt = x.transpose(), zt = z.transpose();
  VectorXd grad = 0.5 * (kernel.diag_gradient(x).transpose() * wd);
  grad += cross_gradient(kernel, zt, xt, c);
  grad -= 0.5 * cross_gradient(kernel, zt, zt, e);
  return grad;
}

FitcPredictor fitc_predictor(const FitcPrior& p, const EpState& s) {
  const FitcTerms t = fitc_terms(p, s);
  FitcPredictor out;
  out.beta = t.a * ep_b(t.st);
  out.cov.resize(t.a.rows(), t.a.rows());
  gemm_nt(t.ar, t.a, 1.0, 0.0, out.cov);
  out.cov = 0.5 * (out.cov + out.cov.transpose()).eval();
  return out;
}

SparseFitResult fit_gpc_ep_fitc(const MatrixXd& x, const MatrixXd& z, const VectorXd& y,
                                Kernel kernel, EpLikelihood lik, const FitOptions& opt,
                                std::uint64_t seed, Monitor& monitor) {
  std::mt19937_64 rng(seed);
  // The prior of the last EP run, reused by the gradient at the same lp.
  VectorXd prior_lp;
  FitcPrior prior;
  auto prior_at = [&](const VectorXd& lp) -> const FitcPrior& {
    if (prior_lp.size() != lp.size() || prior_lp != lp) {
      Kernel kk = kernel;
      kk.set_log_par(lp);
      prior = fitc_prior(kk, x, z, opt.ep.jitter, monitor);
      prior_lp = lp;
    }
    return prior;
  };
  // The outer loop asks for EP again at the point it has just accepted (the
  // optimiser's start, and its last point once more after it returns),
  // warm-started from that run's own sites: the converged state is returned
  // instead of running at least min_sweeps more sweeps from it.
  EpState last;
  VectorXd last_lp;
  double last_eps = -1;
  bool have_last = false;
  EpRunner run = [&](const VectorXd& lp, const EpLikelihood& l, const VectorXd* wt,
                     const VectorXd* wn) {
    if (have_last && last.converged && wt && wn && l.epsilon == last_eps && last_lp == lp &&
        *wt == last.site_tau && *wn == last.site_nu)
      return last;
    last = run_ep_fitc(prior_at(lp), y, l, opt.ep, rng, monitor, wt, wn);
    last_eps = l.epsilon;
    last_lp = lp;
    have_last = true;
    return last;
  };
  EpGradient gradient = [&](const VectorXd& lp, const EpState& st) {
    Kernel kk = kernel;
    kk.set_log_par(lp);
    return fitc_kernel_gradient(kk, x, z, prior_at(lp), st);
  };
  SparseFitResult res;
  res.fit = fit_ep_outer(kernel, y, lik, opt, run, gradient, monitor);
  res.predictor = fitc_predictor(prior_at(res.fit.log_par), res.fit.state);
  return res;
}

}  // namespace noisylabels
