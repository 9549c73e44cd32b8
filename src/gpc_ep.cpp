// Expectation propagation for GP classification with a labelling-error
// likelihood. Equation references are to specs/gpc_ep.md (the "spec"), which
// corrects Kim & Ghahramani's (Minka's) listing.
#include "gpc_ep.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>

#include "optimize.h"

// BLAS through the library R (or the benchmark build) links to, declared
// with the gfortran hidden string-length arguments as in linalg.cpp. The
// sweep and the refresh are where EP spends its time; Eigen 3.3 compiled
// without -march runs them at a fraction of an optimised BLAS's speed.
extern "C" {
void dsyr_(const char* uplo, const int* n, const double* alpha, const double* x, const int* incx,
           double* a, const int* lda, std::size_t uplo_len);
void dtrsm_(const char* side, const char* uplo, const char* transa, const char* diag, const int* m,
            const int* n, const double* alpha, const double* a, const int* lda, double* b,
            const int* ldb, std::size_t side_len, std::size_t uplo_len, std::size_t transa_len,
            std::size_t diag_len);
void dgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k,
            const double* alpha, const double* a, const int* lda, const double* b, const int* ldb,
            const double* beta, double* c, const int* ldc, std::size_t transa_len,
            std::size_t transb_len);
void dsyrk_(const char* uplo, const char* trans, const int* n, const int* k, const double* alpha,
            const double* a, const int* lda, const double* beta, double* c, const int* ldc,
            std::size_t uplo_len, std::size_t trans_len);
}

namespace noisylabels {

namespace {

const double kLogSqrt2Pi = 0.91893853320467274178;  // 1/2 log(2 pi)

double log_normal_pdf(double z) { return -0.5 * z * z - kLogSqrt2Pi; }

double log_add_exp(double a, double b) {
  const double m = std::max(a, b);
  if (m == -std::numeric_limits<double>::infinity()) return m;
  return m + std::log(std::exp(a - m) + std::exp(b - m));
}

// Fisher-Yates with explicit modulo draws so the order depends only on the
// seed, not on the standard library's distribution implementation.
void random_permutation(std::vector<int>& perm, std::mt19937_64& rng) {
  const int n = static_cast<int>(perm.size());
  for (int i = 0; i < n; ++i) perm[i] = i;
  for (int i = n - 1; i > 0; --i) {
    const int j = static_cast<int>(rng() % static_cast<std::uint64_t>(i + 1));
    std::swap(perm[i], perm[j]);
  }
}

// b <- L^{-1} b for lower-triangular L (all n x n, column-major).
void lower_solve_in_place(const MatrixXd& l, MatrixXd& b) {
  const int n = static_cast<int>(l.rows()), m = static_cast<int>(b.cols());
  const double one = 1.0;
  dtrsm_("L", "L", "N", "N", &n, &m, &one, l.data(), &n, b.data(), &n, 1, 1, 1, 1);
}

// Lower triangle of c <- beta c + alpha a' a, then mirrored to the upper one.
void symmetric_crossprod(const MatrixXd& a, double alpha, double beta, MatrixXd& c) {
  const int n = static_cast<int>(a.cols()), k = static_cast<int>(a.rows());
  dsyrk_("L", "T", &n, &k, &alpha, a.data(), &k, &beta, c.data(), &n, 1, 1);
  c.triangularView<Eigen::StrictlyUpper>() = c.transpose();
}

}  // namespace

double log_normal_cdf(double z) {
  if (z < -30.0) {
    // Asymptotic series of the Mills ratio (spec §2.1 rule 1).
    const double z2 = 1.0 / (z * z);
    return -0.5 * z * z - std::log(-z) - kLogSqrt2Pi +
           std::log(1.0 - z2 + 3.0 * z2 * z2 - 15.0 * z2 * z2 * z2);
  }
  if (z < 0.0) return std::log(0.5 * std::erfc(-z / M_SQRT2));
  return std::log1p(-0.5 * std::erfc(z / M_SQRT2));
}

double normal_hazard(double z) {
  if (z < -30.0) {
    const double z2 = 1.0 / (z * z);
    return -z / (1.0 - z2 + 3.0 * z2 * z2 - 15.0 * z2 * z2 * z2 + 105.0 * z2 * z2 * z2 * z2);
  }
  return std::exp(log_normal_pdf(z) - log_normal_cdf(z));
}

SiteMoments tilted_moments(double y, double cav_mean, double cav_var, const EpLikelihood& lik) {
  SiteMoments m;
  const double eps = lik.epsilon;
  const double v = lik.sigma * lik.sigma + cav_var;
  const double sv = std::sqrt(v);
  const double z = y * cav_mean / sv;
  const double log_phi_cdf = log_normal_cdf(z);
  m.z = z;
  double r;
  if (eps == 0.0) {
    m.log_z = log_phi_cdf;
    r = normal_hazard(z);
    m.flip_prob = 0.0;
  } else {
    const double log_scale = std::log1p(-2.0 * eps);
    m.log_z = log_add_exp(std::log(eps), log_scale + log_phi_cdf);
    r = std::exp(log_scale + log_normal_pdf(z) - m.log_z);
    m.flip_prob = std::exp(std::log(eps) + log_normal_cdf(-z) - m.log_z);
  }
  m.ratio = r;
  m.dlogz_dmean = y * r / sv;
  // q = r (z + r); the site factor 1 + s d2 = 1 - (s / v) q is the relative
  // variance reduction of the tilted distribution.
  double q = r * (z + r);
  double factor;
  if (eps == 0.0 && lik.sigma == 0.0 && z < -40.0) {
    // Truncated-normal variance for z << 0 without cancellation (rule 3).
    const double z2 = 1.0 / (z * z);
    factor = z2 - 6.0 * z2 * z2 + 50.0 * z2 * z2 * z2;
    q = 1.0 - factor;
  } else {
    factor = 1.0 - (cav_var / v) * q;
  }
  m.d2logz_dmean2 = -q / v;
  m.tilted_mean = cav_mean + cav_var * m.dlogz_dmean;
  m.tilted_var = cav_var * factor;
  // Spec §2.2: the inverse of R&W eq. 3.59 in natural parameters.
  m.site_tau = -m.d2logz_dmean2 / factor;
  m.site_nu = (m.dlogz_dmean - cav_mean * m.d2logz_dmean2) / factor;
  const double tau_max = 1e10 / cav_var;
  if (m.site_tau > tau_max) {
    m.site_nu *= tau_max / m.site_tau;  // keep the site mean
    m.site_tau = tau_max;
  }
  const double cdf = std::exp(log_phi_cdf);
  m.dlogz_deps = (1.0 - 2.0 * cdf) * std::exp(-m.log_z);
  return m;
}

bool ep_refresh(const MatrixXd& k, const Cholesky& chol_k, EpState& s) {
  const int n = static_cast<int>(k.rows());
  const VectorXd& tau = s.site_tau;
  JitterPolicy exact;
  exact.max_tries = 0;  // a failure here means "improper", never add jitter
  if ((tau.array() >= 0.0).all()) {
    // Case A (R&W Alg. 3.5): B = I + S K S, S = diag(sqrt(tau)).
    const VectorXd sq = tau.array().sqrt();
    MatrixXd b = sq.asDiagonal() * k * sq.asDiagonal();
    b.diagonal().array() += 1.0;
    Cholesky chol_b;
    try {
      chol_b.compute(std::move(b), exact);
    } catch (const NumericalError&) {
      return false;
    }
    MatrixXd v = sq.asDiagonal() * k;
    lower_solve_in_place(chol_b.factor(), v);
    s.sigma = k;
    symmetric_crossprod(v, -1.0, 1.0, s.sigma);
    s.half_logdet = 0.5 * chol_b.logdet();
  } else {
    // Case B (spec §3.2): M = I + L_K' T L_K; chol(M) exists iff the
    // posterior is proper; Sigma = W'W with W = R^-1 L_K'.
    const MatrixXd& lk = chol_k.factor();
    MatrixXd lower = lk.triangularView<Eigen::Lower>();
    MatrixXd m = MatrixXd::Identity(n, n);
    m.noalias() += lower.transpose() * (tau.asDiagonal() * lower);
    Cholesky chol_m;
    try {
      chol_m.compute(std::move(m), exact);
    } catch (const NumericalError&) {
      return false;
    }
    MatrixXd w = lower.transpose();
    lower_solve_in_place(chol_m.factor(), w);
    s.sigma = MatrixXd::Zero(n, n);
    symmetric_crossprod(w, 1.0, 0.0, s.sigma);
    s.half_logdet = 0.5 * chol_m.logdet();
  }
  s.mu.noalias() = s.sigma * s.site_nu;
  return s.sigma.allFinite() && s.mu.allFinite();
}

bool ep_evidence(const VectorXd& y, const EpLikelihood& lik, EpState& s) {
  const int n = static_cast<int>(y.size());
  s.cav_tau.resize(n); s.cav_nu.resize(n); s.z.resize(n); s.log_zi.resize(n);
  s.dlogz_deps.resize(n); s.flip_prob.resize(n);
  double total = -s.half_logdet + 0.5 * s.site_nu.dot(s.mu);
  for (int i = 0; i < n; ++i) {
    const double sii = s.sigma(i, i);
    if (!(sii > 0)) return false;
    const double tc = 1.0 / sii - s.site_tau(i);
    const double nc = s.mu(i) / sii - s.site_nu(i);
    if (!(tc > 0)) return false;
    s.cav_tau(i) = tc;
    s.cav_nu(i) = nc;
    const SiteMoments m = tilted_moments(y(i), nc / tc, 1.0 / tc, lik);
    s.z(i) = m.z; s.log_zi(i) = m.log_z; s.dlogz_deps(i) = m.dlogz_deps; s.flip_prob(i) = m.flip_prob;
    // Spec §3.5, valid for either sign of site_tau.
    total += m.log_z + 0.5 * std::log1p(s.site_tau(i) / tc) + 0.5 * nc * nc / tc -
             0.5 * s.mu(i) * s.mu(i) / sii;
  }
  s.log_z = total;
  return std::isfinite(total);
}

EpState run_ep(const MatrixXd& k_in, const VectorXd& y, const EpLikelihood& lik,
               const EpOptions& opt, std::mt19937_64& rng, Monitor& host_monitor,
               const VectorXd* warm_tau, const VectorXd* warm_nu) {
  Monitor& monitor = host_monitor;
  const int n = static_cast<int>(y.size());
  if (k_in.rows() != n || k_in.cols() != n) throw std::invalid_argument("run_ep: K and y do not match");
  Cholesky chol_k(k_in, opt.jitter);  // throws NumericalError if K is not PD
  MatrixXd k = k_in;
  if (chol_k.jitter() > 0) k.diagonal().array() += chol_k.jitter();

  // Zero start: tau = nu = 0, Sigma = K, mu = 0 (paper: v_i = inf, m_i = 0).
  EpState s;
  s.jitter = chol_k.jitter();
  s.site_tau = VectorXd::Zero(n);
  s.site_nu = VectorXd::Zero(n);
  s.sigma = k;
  s.mu = VectorXd::Zero(n);
  s.half_logdet = 0;
  if (!ep_evidence(y, lik, s)) throw NumericalError("EP: the prior gives an improper cavity");
  // Warm start (spec §3.1): keep the previous sites if they do better.
  if (warm_tau && warm_nu && warm_tau->size() == n && warm_nu->size() == n) {
    EpState w = s;
    w.site_tau = opt.clamp ? VectorXd(warm_tau->cwiseMax(0.0)) : *warm_tau;
    w.site_nu = *warm_nu;
    if (ep_refresh(k, chol_k, w) && ep_evidence(y, lik, w) && w.log_z > s.log_z) s = std::move(w);
  }

  double delta = opt.damping;
  double log_z_old = s.log_z;
  std::vector<int> perm(n);
  int sweep = 0;
  while (sweep < opt.max_sweeps) {
    ++sweep;
    monitor.check();
    const VectorXd tau0 = s.site_tau, nu0 = s.site_nu, mu0 = s.mu;
    const MatrixXd sigma0 = s.sigma;
    random_permutation(perm, rng);
    double max_change = 0;
    // Delayed rank-one updates: Sigma = sigma_base - U diag(c) U' with up to
    // kBlock pending columns, applied by one matrix product (BLAS 3) per
    // block instead of n memory-bound rank-one updates (BLAS 2).
    constexpr int kBlock = 48;
    MatrixXd pending_u(n, kBlock);
    VectorXd pending_c(kBlock);
    int pending = 0;
    VectorXd col(n);
    for (int i : perm) {
      // Current column i of Sigma.
      col = s.sigma.col(i);
      if (pending > 0) {
        const VectorXd w = pending_c.head(pending).cwiseProduct(pending_u.row(i).head(pending).transpose());
        col.noalias() -= pending_u.leftCols(pending) * w;
      }
      const double sii = col(i);
      const double tc = 1.0 / sii - s.site_tau(i);
      const double nc = s.mu(i) / sii - s.site_nu(i);
      if (!(tc > 0)) {  // improper cavity (spec §3.3): leave the site alone
        ++s.skipped;
        continue;
      }
      const SiteMoments m = tilted_moments(y(i), nc / tc, 1.0 / tc, lik);
      double th = m.site_tau, nh = m.site_nu;
      if (opt.clamp) th = std::max(th, 0.0);
      th = (1.0 - delta) * s.site_tau(i) + delta * th;
      nh = (1.0 - delta) * s.site_nu(i) + delta * nh;
      const double dt = th - s.site_tau(i), dn = nh - s.site_nu(i);
      const double denom = 1.0 + dt * sii;
      if (!(denom > 0) || !std::isfinite(th) || !std::isfinite(nh)) {
        ++s.skipped;
        continue;
      }
      const double c = dt / denom;
      const double mui = s.mu(i);
      // Sherman-Morrison rank-one update of Sigma (queued) and of mu.
      pending_u.col(pending) = col;
      pending_c(pending) = c;
      ++pending;
      s.mu -= (c * (mui + sii * dn) - dn) * col;
      max_change = std::max(max_change, std::max(std::abs(dt), std::abs(dn)));
      s.site_tau(i) = th;
      s.site_nu(i) = nh;
      if (pending == kBlock) {
        const MatrixXd scaled = pending_u * pending_c.asDiagonal();
        const double minus_one = -1.0, one = 1.0;
        dgemm_("N", "T", &n, &n, &pending, &minus_one, scaled.data(), &n, pending_u.data(), &n,
               &one, s.sigma.data(), &n, 1, 1);
        pending = 0;
      }
    }
    // (Updates still pending are dropped: the refresh below rebuilds Sigma.)
    // Full refresh after every sweep: rank-one updates lose precision.
    const bool ok = ep_refresh(k, chol_k, s) && ep_evidence(y, lik, s);
    if (!ok) {
      // Revert-and-halve damping (spec §3.3, GPstuff's strategy).
      s.site_tau = tau0; s.site_nu = nu0; s.mu = mu0; s.sigma = sigma0;
      if (!ep_evidence(y, lik, s)) throw NumericalError("EP: lost a proper posterior while reverting");
      ++s.reverts;
      delta *= 0.5;
      if (delta < 1e-3) {
        throw NumericalError("EP found no proper posterior: damping fell below 1e-3 "
                             "(the hyperparameters make the posterior improper)");
      }
      continue;
    }
    s.trace.push_back(s.log_z);
    const bool small = std::abs(s.log_z - log_z_old) < opt.tol_logz && max_change < opt.tol_site * delta;
    log_z_old = s.log_z;
    if (sweep >= opt.min_sweeps && small) {
      s.converged = true;
      break;
    }
  }
  s.sweeps = sweep;
  s.damping = delta;
  s.negative_tau = (s.site_tau.array() < 0).any();
  return s;
}

VectorXd ep_b(const EpState& s) {
  return s.site_nu - s.site_tau.cwiseProduct(s.mu);
}

MatrixXd ep_gradient_weights(const EpState& s) {
  const VectorXd b = ep_b(s);
  // W = b b' - R with R = T - T Sigma T (spec §3.6), either sign of tau.
  MatrixXd w = -(s.site_tau * s.site_tau.transpose()).cwiseProduct(s.sigma);
  w.diagonal() += s.site_tau;
  w = b * b.transpose() - w;
  return w;
}

VectorXd ep_kernel_gradient(const Kernel& kernel, const MatrixXd& x, const EpState& s) {
  return kernel.gradient(x, ep_gradient_weights(s));
}

void ep_predict(const EpState& s, const MatrixXd& kstar, const VectorXd& kss, VectorXd& mean,
                VectorXd& var) {
  const VectorXd b = ep_b(s);
  mean.noalias() = kstar.transpose() * b;
  // R k* = T k* - T Sigma T k*
  const MatrixXd tk = s.site_tau.asDiagonal() * kstar;
  MatrixXd rk = tk;
  rk.noalias() -= s.site_tau.asDiagonal() * (s.sigma * tk);
  var = kss - kstar.cwiseProduct(rk).colwise().sum().transpose();
}

double epsilon_update(const VectorXd& y, const EpState& s, const EpLikelihood& lik,
                      EpsilonRule rule, double eps_min, double eps_max) {
  const int n = static_cast<int>(y.size());
  if (rule == EpsilonRule::Paper) {
    // Spec §4.1: omega_i = P_q(y_i f_i > 0) from the posterior marginal; for
    // the probit the latent noise is added to the marginal variance.
    double total = 0;
    for (int i = 0; i < n; ++i) {
      const double sd = std::sqrt(lik.sigma * lik.sigma + s.sigma(i, i));
      total += std::exp(log_normal_cdf(-y(i) * s.mu(i) / sd));
    }
    return std::min(eps_max, std::max(eps_min, total / n));
  }
  // Tilted EM (spec §4.2a): its fixed point at the current cavities maximises
  // g(eps) = sum_i log(eps + (1 - 2 eps) Phi(z_i)), which is concave; solve
  // g'(eps) = 0 on [eps_min, eps_max] by safeguarded Newton.
  VectorXd cdf(n);
  for (int i = 0; i < n; ++i) cdf(i) = std::exp(log_normal_cdf(s.z(i)));
  auto deriv = [&](double e, double* d2) {
    double g1 = 0, g2 = 0;
    for (int i = 0; i < n; ++i) {
      const double a = 1.0 - 2.0 * cdf(i);
      const double zi = e + (1.0 - 2.0 * e) * cdf(i);
      g1 += a / zi;
      g2 -= (a / zi) * (a / zi);
    }
    if (d2) *d2 = g2;
    return g1;
  };
  if (deriv(eps_min, nullptr) <= 0) return eps_min;
  if (deriv(eps_max, nullptr) >= 0) return eps_max;
  double lo = eps_min, hi = eps_max;
  double e = std::min(std::max(lik.epsilon, lo), hi);
  for (int it = 0; it < 200; ++it) {
    double g2;
    const double g1 = deriv(e, &g2);
    if (g1 > 0) lo = e; else hi = e;
    double next = (g2 < 0) ? e - g1 / g2 : 0.5 * (lo + hi);
    if (!(next > lo && next < hi)) next = 0.5 * (lo + hi);
    if (std::abs(next - e) < 1e-12 * std::max(1e-6, e) || hi - lo < 1e-14) { e = next; break; }
    e = next;
  }
  return e;
}

FitResult fit_gpc_ep(const MatrixXd& x, const VectorXd& y, Kernel kernel, EpLikelihood lik,
                     const FitOptions& opt, std::uint64_t seed, Monitor& host_monitor) {
  Monitor& monitor = host_monitor;
  std::mt19937_64 rng(seed);
  FitResult res;
  VectorXd log_par = kernel.log_par();
  VectorXd warm_tau, warm_nu;
  bool have_warm = false;

  auto run_at = [&](const VectorXd& lp) -> EpState {
    Kernel kk = kernel;
    kk.set_log_par(lp);
    const MatrixXd kmat = kk.gram(x);
    ++res.ep_runs;
    EpState st = run_ep(kmat, y, lik, opt.ep, rng, monitor, have_warm ? &warm_tau : nullptr,
                        have_warm ? &warm_nu : nullptr);
    if (!st.converged) ++res.ep_not_converged;
    warm_tau = st.site_tau;
    warm_nu = st.site_nu;
    have_warm = true;
    return st;
  };

  const int nf = static_cast<int>(opt.free.size());
  VectorXd lo(nf), hi(nf);
  for (int j = 0; j < nf; ++j) {
    lo(j) = opt.lower(opt.free[j]);
    hi(j) = opt.upper(opt.free[j]);
  }
  Objective objective = [&](const VectorXd& tf, VectorXd& grad) -> double {
    VectorXd lp = log_par;
    for (int j = 0; j < nf; ++j) lp(opt.free[j]) = tf(j);
    EpState st;
    try {
      st = run_at(lp);
    } catch (const NumericalError&) {
      ++res.ep_failures;  // the optimiser treats this point as +inf
      throw;
    }
    Kernel kk = kernel;
    kk.set_log_par(lp);
    const MatrixXd xk = x;
    const VectorXd g = ep_kernel_gradient(kk, xk, st);
    for (int j = 0; j < nf; ++j) grad(j) = -g(opt.free[j]);
    return -st.log_z;
  };
  auto optimise = [&](int iters) {
    VectorXd x0(nf);
    for (int j = 0; j < nf; ++j) x0(j) = log_par(opt.free[j]);
    BoxOptions bo;
    bo.max_iter = iters;
    const BoxResult br = minimize_box(objective, x0, lo, hi, bo, monitor);
    for (int j = 0; j < nf; ++j) log_par(opt.free[j]) = br.x(j);
    return br;
  };

  EpState st = run_at(log_par);
  const bool learn_kernel = opt.learn_kernel && nf > 0;
  if (!opt.learn_epsilon && !learn_kernel) {
    res.converged = st.converged;
  } else if (!opt.learn_epsilon) {
    const BoxResult br = optimise(opt.max_outer * opt.lbfgs_steps);
    st = run_at(log_par);
    res.outer_iterations = br.iterations;
    res.converged = br.converged;
    res.logz_trace = br.trace;
    for (double& v : res.logz_trace) v = -v;
    res.eps_trace.assign(res.logz_trace.size(), lik.epsilon);
    res.message = br.message;
  } else {
    double log_z_old = st.log_z;
    for (int t = 1; t <= opt.max_outer; ++t) {
      monitor.check();
      const double eps_old = lik.epsilon;
      const VectorXd lp_old = log_par;
      lik.epsilon = epsilon_update(y, st, lik, opt.rule, opt.eps_min, opt.eps_max);
      st = run_at(log_par);
      if (learn_kernel) {
        optimise(opt.lbfgs_steps);
        st = run_at(log_par);
      }
      res.outer_iterations = t;
      res.logz_trace.push_back(st.log_z);
      res.eps_trace.push_back(lik.epsilon);
      const double dtheta = nf > 0 ? (log_par - lp_old).cwiseAbs().maxCoeff() : 0.0;
      const bool small_step = std::abs(lik.epsilon - eps_old) < opt.tol_eps && dtheta < opt.tol_theta;
      const bool flat = std::abs(st.log_z - log_z_old) < opt.tol_logz;
      log_z_old = st.log_z;
      if (small_step || flat) {
        res.converged = true;
        break;
      }
    }
    res.message = res.converged ? "converged" : "maximum number of outer iterations reached";
  }
  kernel.set_log_par(log_par);
  res.k = kernel.gram(x);
  if (st.jitter > 0) res.k.diagonal().array() += st.jitter;
  res.jitter = st.jitter;
  res.log_par = log_par;
  res.epsilon = lik.epsilon;
  res.state = std::move(st);
  return res;
}

}  // namespace noisylabels
