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
#include "linalg/blas.h"

namespace noisylabels {

namespace {

// b <- L^-1 b (trans "N") or L^-T b (trans "T"), L lower m x m, b m x k.
void tri_solve(const MatrixXd& l, const char* trans, MatrixXd& b) {
  const int m = static_cast<int>(l.rows()), k = static_cast<int>(b.cols());
  if (k == 0 || m == 0) return;
  const double one = 1.0;
  dtrsm_("L", "L", trans, "N", &m, &k, &one, l.data(), &m, b.data(), &m, 1, 1, 1, 1);
}

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

JitterPolicy exact_policy() {
  JitterPolicy p;
  p.max_tries = 0;
  return p;
}

// Site weights g = 1/(1 + lambda tau) and w = tau g; false if some
// 1 + lambda_i tau_i <= 0 (then the posterior is improper).
bool site_weights(const FitcPrior& p, const VectorXd& tau, VectorXd& g, VectorXd& w) {
  const int n = static_cast<int>(tau.size());
  g.resize(n);
  w.resize(n);
  for (int i = 0; i < n; ++i) {
    const double d = 1.0 + p.lambda(i) * tau(i);
    if (!(d > 0)) return false;
    g(i) = 1.0 / d;
    w(i) = tau(i) * g(i);
  }
  return true;
}

// M = I + U diag(w) U' (lower triangle), n m^2 flops by one dsyrk per sign.
MatrixXd build_m(const FitcPrior& p, const VectorXd& w) {
  const int m = static_cast<int>(p.u.rows()), n = static_cast<int>(p.u.cols());
  MatrixXd mm = MatrixXd::Identity(m, m);
  std::vector<int> neg;
  MatrixXd g(m, n);
  for (int i = 0; i < n; ++i) {
    if (w(i) >= 0) {
      g.col(i) = std::sqrt(w(i)) * p.u.col(i);
    } else {
      g.col(i).setZero();
      neg.push_back(i);
    }
  }
  const double one = 1.0, minus_one = -1.0;
  if (m > 0 && n > 0) dsyrk_("L", "N", &m, &n, &one, g.data(), &m, &one, mm.data(), &m, 1, 1);
  if (!neg.empty()) {
    const int k = static_cast<int>(neg.size());
    MatrixXd h(m, k);
    for (int c = 0; c < k; ++c) h.col(c) = std::sqrt(-w(neg[c])) * p.u.col(neg[c]);
    dsyrk_("L", "N", &m, &k, &minus_one, h.data(), &m, &one, mm.data(), &m, 1, 1);
  }
  mm.triangularView<Eigen::StrictlyUpper>() = mm.transpose();
  return mm;
}

bool factor_m(MatrixXd mm, Cholesky& chol_m) {
  if (!mm.allFinite()) return false;
  try {
    chol_m.compute(std::move(mm), exact_policy());
  } catch (const NumericalError&) {
    return false;
  }
  return true;
}

// One sequential sweep in blocks (see the header). Returns false if M lost
// positive definiteness after a block (the sweep is then reverted by the
// caller); max_change gets the largest site change.
bool sweep_fitc(const FitcPrior& p, const VectorXd& y, const EpLikelihood& lik,
                const EpOptions& opt, double delta, const std::vector<int>& perm, EpState& s,
                double& max_change, Monitor& monitor) {
  const int m = static_cast<int>(p.u.rows()), n = static_cast<int>(p.u.cols());
  VectorXd g, w;
  if (!site_weights(p, s.site_tau, g, w)) return false;
  MatrixXd mm = build_m(p, w);
  Cholesky chol_m;
  if (!factor_m(mm, chol_m)) return false;
  VectorXd r = p.u * g.cwiseProduct(s.site_nu);  // U (g o nu)
  const int bsize = std::max(16, std::min(512, m));
  max_change = 0;
  MatrixXd uj, vj, sjj;
  VectorXd muj, t, dw, dgnu;
  for (int j0 = 0; j0 < n; j0 += bsize) {
    monitor.check();  // a sweep is O(n m^2): seconds at n = 20,000
    const int nb = std::min(bsize, n - j0);
    uj.resize(m, nb);
    for (int c = 0; c < nb; ++c) uj.col(c) = p.u.col(perm[j0 + c]);
    vj = uj;
    tri_solve(chol_m.factor(), "N", vj);
    t = r;
    {
      MatrixXd tm = t;
      tri_solve(chol_m.factor(), "N", tm);
      t = tm.col(0);
    }
    // Sigma[J, J] and mu[J] at the current sites
    sjj.setZero(nb, nb);
    if (m > 0) {
      const double one = 1.0, zero = 0.0;
      dsyrk_("L", "T", &nb, &m, &one, vj.data(), &m, &zero, sjj.data(), &nb, 1, 1);
      sjj.triangularView<Eigen::StrictlyUpper>() = sjj.transpose();
    }
    VectorXd gj(nb);
    for (int c = 0; c < nb; ++c) gj(c) = g(perm[j0 + c]);
    muj = gj.cwiseProduct(vj.transpose() * t);
    sjj = gj.asDiagonal() * sjj * gj.asDiagonal();
    for (int c = 0; c < nb; ++c) {
      const int i = perm[j0 + c];
      sjj(c, c) += p.lambda(i) * g(i);
      muj(c) += p.lambda(i) * g(i) * s.site_nu(i);
    }
    dw.setZero(nb);
    dgnu.setZero(nb);
    bool moved = false;
    for (int c = 0; c < nb; ++c) {
      const int i = perm[j0 + c];
      const double sii = sjj(c, c), mui = muj(c);
      double dt, dn;
      if (!propose_site(i, sii, mui, y, lik, opt, delta, s, dt, dn) ||
          !(1.0 + p.lambda(i) * (s.site_tau(i) + dt) > 0)) {
        ++s.skipped;
        continue;
      }
      // Rank-one update of the block's marginal (R&W eq. 3.70 restricted to
      // J); only the sites still to come in this block are read again.
      const double coef = dt / (1.0 + dt * sii);
      const int rest = nb - c - 1;
      if (rest > 0) {
        const VectorXd col = sjj.col(c).tail(rest);
        sjj.bottomRightCorner(rest, rest).noalias() -= coef * col * col.transpose();
        muj.tail(rest) -= (coef * (mui + sii * dn) - dn) * col;
      }
      s.site_tau(i) += dt;
      s.site_nu(i) += dn;
      const double gi = 1.0 / (1.0 + p.lambda(i) * s.site_tau(i));
      dw(c) = s.site_tau(i) * gi - w(i);
      dgnu(c) = gi * s.site_nu(i) - g(i) * (s.site_nu(i) - dn);
      g(i) = gi;
      w(i) = s.site_tau(i) * gi;
      moved = true;
      max_change = std::max(max_change, std::max(std::abs(dt), std::abs(dn)));
    }
    if (!moved || j0 + nb >= n) continue;  // the caller refreshes after the sweep
    // M += U_J diag(dw) U_J' (lower triangle, one dsyrk per sign),
    // r += U_J d(g o nu), then refactor M.
    {
      MatrixXd up = uj, down = uj;
      for (int c = 0; c < nb; ++c) {
        up.col(c) *= dw(c) > 0 ? std::sqrt(dw(c)) : 0.0;
        down.col(c) *= dw(c) < 0 ? std::sqrt(-dw(c)) : 0.0;
      }
      const double one = 1.0, minus_one = -1.0;
      dsyrk_("L", "N", &m, &nb, &one, up.data(), &m, &one, mm.data(), &m, 1, 1);
      dsyrk_("L", "N", &m, &nb, &minus_one, down.data(), &m, &one, mm.data(), &m, 1, 1);
    }
    r.noalias() += uj * dgnu;
    if (!factor_m(mm, chol_m)) return false;
  }
  return true;
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
  if (!site_weights(p, t.st.site_tau, g, t.w))
    throw NumericalError("sparse EP: the sites give an improper posterior");
  t.a = p.u;
  tri_solve(p.chol_uu.factor(), "T", t.a);  // L^-T U = Kuu^-1 K(Z, X)
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
  tri_solve(p.chol_uu.factor(), "N", p.u);
  p.lambda = kernel.diag(x) - p.u.colwise().squaredNorm().transpose();
  p.lambda = p.lambda.cwiseMax(0.0);  // rounding when Z contains X
  return p;
}

bool fitc_refresh(const FitcPrior& p, EpState& s, MatrixXd* v_out, Monitor& monitor) {
  VectorXd g, w;
  if (!site_weights(p, s.site_tau, g, w)) return false;
  Cholesky chol_m;
  MatrixXd mm = build_m(p, w);
  monitor.check();  // build_m and the solve below are n m^2 flops each
  if (!factor_m(std::move(mm), chol_m)) return false;
  MatrixXd v = p.u;
  tri_solve(chol_m.factor(), "N", v);
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

EpState run_ep_fitc(const FitcPrior& p, const VectorXd& y, const EpLikelihood& lik,
                    const EpOptions& opt, std::mt19937_64& rng, Monitor& monitor,
                    const VectorXd* warm_tau, const VectorXd* warm_nu) {
  const int n = static_cast<int>(y.size());
  if (p.u.cols() != n) throw std::invalid_argument("run_ep_fitc: prior and y do not match");
  EpState s;
  s.jitter = p.jitter;
  s.site_tau = VectorXd::Zero(n);
  s.site_nu = VectorXd::Zero(n);
  if (!(fitc_refresh(p, s, nullptr, monitor) && ep_evidence_diag(y, lik, s.post_var, s)))
    throw NumericalError("sparse EP: the prior gives an improper cavity");
  warm_start(opt, warm_tau, warm_nu, s, [&](EpState& w) {
    return fitc_refresh(p, w, nullptr, monitor) && ep_evidence_diag(y, lik, w.post_var, w);
  });
  std::vector<int> perm(n);
  for (int i = 0; i < n; ++i) perm[i] = i;
  const SiteCheck proper_site = [&](int i, double new_tau) {
    return 1.0 + p.lambda(i) * new_tau > 0;
  };
  auto step = [&](double delta, double& max_change) {
    const EpState s0 = s;  // O(n): no matrices in a sparse state
    bool ok;
    if (opt.parallel) {
      max_change = sweep_parallel(y, lik, opt, delta, s.post_var, s, proper_site);
      ok = true;
    } else {
      random_permutation(perm, rng);
      ok = sweep_fitc(p, y, lik, opt, delta, perm, s, max_change, monitor);
    }
    ok = ok && fitc_refresh(p, s, nullptr, monitor) && ep_evidence_diag(y, lik, s.post_var, s);
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
