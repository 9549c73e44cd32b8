#include "label_dist/label_dist.h"
#include "common/constants.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>

#include "linalg/linalg.h"
#include "common/optimize.h"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace noisylabels {

namespace {


inline double xlogx(double x) { return x > 0 ? x * std::log(x) : 0.0; }

// psi(x) for x > 0: recurrence up to 6, then the asymptotic series.
double digamma(double x) {
  double r = 0;
  while (x < 6) {
    r -= 1 / x;
    x += 1;
  }
  const double f = 1 / (x * x);
  return r + std::log(x) - 0.5 / x -
         f * (1.0 / 12 - f * (1.0 / 120 - f * (1.0 / 252 - f * (1.0 / 240 - f / 132))));
}

// In-place softmax of v[0..m) (log-sum-exp stabilised); returns lse.
double softmax_inplace(double* v, int m) {
  double mx = v[0];
  for (int j = 1; j < m; ++j) mx = std::max(mx, v[j]);
  double sum = 0;
  for (int j = 0; j < m; ++j) {
    v[j] = std::exp(v[j] - mx);
    sum += v[j];
  }
  for (int j = 0; j < m; ++j) v[j] /= sum;
  return mx + std::log(sum);
}

void row_softmax(MatrixXd& a) {
  std::vector<double> buf(a.cols());
  for (Eigen::Index u = 0; u < a.rows(); ++u) {
    for (Eigen::Index m = 0; m < a.cols(); ++m) buf[m] = a(u, m);
    softmax_inplace(buf.data(), static_cast<int>(a.cols()));
    for (Eigen::Index m = 0; m < a.cols(); ++m) a(u, m) = buf[m];
  }
}

// Row-wise log-sum-exp.
VectorXd row_lse(const MatrixXd& a) {
  VectorXd out(a.rows());
  for (Eigen::Index u = 0; u < a.rows(); ++u) {
    const double mx = a.row(u).maxCoeff();
    out(u) = mx + std::log((a.row(u).array() - mx).exp().sum());
  }
  return out;
}

// KL(Dir(a) || Dir(b)).
double kl_dirichlet(const VectorXd& a, const VectorXd& b) {
  const double sa = a.sum(), sb = b.sum();
  double kl = std::lgamma(sa) - std::lgamma(sb);
  const double psa = digamma(sa);
  for (Eigen::Index l = 0; l < a.size(); ++l) {
    kl += std::lgamma(b(l)) - std::lgamma(a(l)) + (a(l) - b(l)) * (digamma(a(l)) - psa);
  }
  return kl;
}

// W(e^y) for real y: the w > 0 with w + log w = y (Newton).
double lambert_w_exp(double y) {
  double w = y > 1 ? y - std::log(y) : std::exp(y) / (1 + std::exp(y));
  for (int it = 0; it < 100; ++it) {
    const double step = (w + std::log(w) - y) / (1 + 1 / w);
    double next = w - step;
    if (next <= 0) next = 0.5 * w;
    const bool done = std::abs(next - w) <= 1e-15 * w;
    w = next;
    if (done) break;
  }
  return w;
}

// Maximiser over the simplex of g'eta - (c/2)||eta||^2 + H(eta); written into g.
void plugin_eta(double* g, int m, double c) {
  auto total = [&](double lambda) {
    double sum = 0;
    for (int l = 0; l < m; ++l) sum += lambert_w_exp(std::log(c) + g[l] - lambda) / c;
    return sum;
  };
  double gmax = g[0];
  for (int l = 1; l < m; ++l) gmax = std::max(gmax, g[l]);
  double lo = gmax - 1, hi = gmax + 1;
  while (total(lo) < 1) lo -= 2 * (hi - lo);
  while (total(hi) > 1) hi += 2 * (hi - lo);
  for (int it = 0; it < 200 && hi - lo > 1e-14 * std::max(1.0, std::abs(lo)); ++it) {
    const double mid = 0.5 * (lo + hi);
    (total(mid) > 1 ? lo : hi) = mid;
  }
  const double lambda = 0.5 * (lo + hi);
  double sum = 0;
  for (int l = 0; l < m; ++l) {
    g[l] = lambert_w_exp(std::log(c) + g[l] - lambda) / c;
    sum += g[l];
  }
  for (int l = 0; l < m; ++l) g[l] /= sum;  // remove the bisection's last rounding
}

MatrixXd beta_matrix(const LdHyper& hy, int M) {
  MatrixXd b(M, M);
  for (int m = 0; m < M; ++m)
    for (int l = 0; l < M; ++l) b(m, l) = hy.beta(m, l);
  return b;
}

// Group sums R_i = sum of the marginal eta over the members of group i (N x M).
MatrixXd group_sums(const LdProblem& prob, const MatrixXd& eta) {
  MatrixXd r = MatrixXd::Zero(prob.N, prob.M);
  for (int i = 0; i < prob.N; ++i)
    for (int k = prob.group_ptr[i]; k < prob.group_ptr[i + 1]; ++k) r.row(i) += eta.row(k);
  return r;
}

}  // namespace

LdProblem::LdProblem(const double* x_data, int U_, int D_, const double* s_data, int N_, int M_,
                     std::vector<int> gp, std::vector<int> pu)
    : x(x_data, U_, D_), s(s_data, N_, M_), U(U_), D(D_), N(N_), M(M_),
      group_ptr(std::move(gp)), pair_unit(std::move(pu)) {
  if (U < 1 || D < 1 || N < 1 || M < 2) throw std::invalid_argument("label_dist: need U, D, N >= 1 and M >= 2");
  if (static_cast<int>(group_ptr.size()) != N + 1 || group_ptr[0] != 0)
    throw std::invalid_argument("label_dist: group offsets must have length N + 1 and start at 0");
  P = static_cast<int>(pair_unit.size());
  if (group_ptr[N] != P) throw std::invalid_argument("label_dist: group offsets do not end at P");
  pair_group.resize(P);
  std::vector<int> last_seen(U, -1);
  for (int i = 0; i < N; ++i) {
    if (group_ptr[i + 1] <= group_ptr[i]) throw std::invalid_argument("label_dist: empty group");
    for (int k = group_ptr[i]; k < group_ptr[i + 1]; ++k) {
      const int u = pair_unit[k];
      if (u < 0 || u >= U) throw std::invalid_argument("label_dist: member index out of range");
      if (last_seen[u] == i) throw std::invalid_argument("label_dist: an instance is listed twice in one group");
      last_seen[u] = i;
      pair_group[k] = i;
    }
  }
  unit_ptr.assign(U + 1, 0);
  for (int k = 0; k < P; ++k) ++unit_ptr[pair_unit[k] + 1];
  for (int u = 0; u < U; ++u) unit_ptr[u + 1] += unit_ptr[u];
  unit_pairs.resize(P);
  std::vector<int> fill(unit_ptr.begin(), unit_ptr.end() - 1);
  for (int k = 0; k < P; ++k) unit_pairs[fill[pair_unit[k]]++] = k;
}

MatrixXd ld_log_c(const MatrixXd& cpar, bool vb_c) {
  const int M = static_cast<int>(cpar.rows());
  MatrixXd out(M, M);
  for (int m = 0; m < M; ++m) {
    if (vb_c) {
      // E_q[log c_ml] under q(c_m) = Dir(cpar_m) (spec 3.3(a)).
      const double ps = digamma(cpar.row(m).sum());
      for (int l = 0; l < M; ++l) out(m, l) = digamma(cpar(m, l)) - ps;
    } else {
      for (int l = 0; l < M; ++l) out(m, l) = std::log(cpar(m, l));
    }
  }
  return out;
}

MatrixXd ld_h(const LdProblem& prob, const MatrixXd& eta) {
  MatrixXd h = MatrixXd::Zero(prob.U, prob.M);
  for (int k = 0; k < prob.P; ++k) h.row(prob.pair_unit[k]) += eta.row(k);
  return h;
}

MatrixXd ld_counts(const LdProblem& prob, const LdState& st, bool structured) {
  const int M = prob.M;
  if (!structured) return st.zeta.transpose() * ld_h(prob, st.eta);
  MatrixXd n = MatrixXd::Zero(M, M);
  for (int p = 0; p < prob.P; ++p) {  // eta_cond columns are in instance order
    const int u = prob.pair_unit[prob.unit_pairs[p]];
    for (int m = 0; m < M; ++m)
      for (int l = 0; l < M; ++l) n(m, l) += st.zeta(u, m) * st.eta_cond(m * M + l, p);
  }
  return n;
}

LdElbo ld_elbo(const LdProblem& prob, const LdHyper& hy, const LdState& st, bool structured,
               bool vb_c, bool exact) {
  const int M = prob.M, D = prob.D;
  LdElbo e;
  // Gaussian term (V): ||s_i - mu_i||^2 + (1/n_i^2) sum_u (1 - ||eta_iu||^2).
  std::vector<double> per_group(prob.N);
  for (int i = 0; i < prob.N; ++i) {
    const int n = prob.group_size(i);
    VectorXd r = VectorXd::Zero(M);
    double var = 0;
    for (int k = prob.group_ptr[i]; k < prob.group_ptr[i + 1]; ++k) {
      r += st.eta.row(k).transpose();
      var += 1 - st.eta.row(k).squaredNorm();
    }
    const double dev = (prob.s.row(i).transpose() - r / n).squaredNorm();
    if (!exact) var = 0;  // plug-in objective of the paper
    per_group[i] = 0.5 * M * (std::log(hy.alpha_s) - kLog2Pi) -
                   0.5 * hy.alpha_s * (dev + var / (static_cast<double>(n) * n));
  }
  for (double v : per_group) e.gauss += v;

  const MatrixXd logc = ld_log_c(st.cpar, vb_c);
  const MatrixXd counts = ld_counts(prob, st, structured);
  e.confusion = (counts.array() * logc.array()).sum();

  const MatrixXd a = prob.x * st.w.transpose();
  const VectorXd lse = row_lse(a);
  for (int u = 0; u < prob.U; ++u)
    for (int m = 0; m < M; ++m) {
      e.softmax += st.zeta(u, m) * (a(u, m) - lse(u));
      e.entropy_y -= xlogx(st.zeta(u, m));
    }
  if (!structured) {
    for (int k = 0; k < prob.P; ++k)
      for (int l = 0; l < M; ++l) e.entropy_t -= xlogx(st.eta(k, l));
  } else {
    for (int p = 0; p < prob.P; ++p) {
      const int u = prob.pair_unit[prob.unit_pairs[p]];
      for (int m = 0; m < M; ++m) {
        double h = 0;
        for (int l = 0; l < M; ++l) h -= xlogx(st.eta_cond(m * M + l, p));
        e.entropy_t += st.zeta(u, m) * h;
      }
    }
  }
  e.prior_w = M * 0.5 * D * (std::log(hy.alpha_w) - kLog2Pi) - 0.5 * hy.alpha_w * st.w.squaredNorm();
  const MatrixXd beta = beta_matrix(hy, M);
  for (int m = 0; m < M; ++m) {
    if (vb_c) {
      e.prior_c -= kl_dirichlet(st.cpar.row(m).transpose(), beta.row(m).transpose());
    } else {
      e.prior_c += std::lgamma(beta.row(m).sum());
      for (int l = 0; l < M; ++l) {
        e.prior_c -= std::lgamma(beta(m, l));
        if (beta(m, l) != 1) e.prior_c += (beta(m, l) - 1) * logc(m, l);
      }
    }
  }
  return e;
}

void ld_update_c(const LdProblem& prob, const LdHyper& hy, LdState& st, bool structured,
                 bool vb_c) {
  const int M = prob.M;
  const MatrixXd counts = ld_counts(prob, st, structured);
  const MatrixXd beta = beta_matrix(hy, M);
  if (vb_c) {
    st.cpar = beta + counts;  // q(c_m) = Dir(beta_m + N_m)
    return;
  }
  // MAP (spec 3.3): c_ml proportional to N_ml + beta_ml - 1. A numerator can only
  // be <= 0 when beta_ml < 1, where no MAP exists; R switches to VB then. The
  // floor (spec 3.3(c)) only guards log(0) after underflow.
  for (int m = 0; m < M; ++m) {
    VectorXd num = (counts.row(m) + beta.row(m)).transpose().array() - 1.0;
    num = num.cwiseMax(0.0);
    const double total = num.sum();
    if (!(total > 0)) num.setConstant(1.0 / M);
    else num /= total;
    st.cpar.row(m) = num.cwiseMax(1e-300).transpose();
  }
}

double ld_w_objective(const LdProblem& prob, const MatrixXd& zeta, double alpha_w,
                      const MatrixXd& w, MatrixXd* grad) {
  MatrixXd a = prob.x * w.transpose();  // U x M logits
  const VectorXd lse = row_lse(a);
  double value = (zeta.array() * (a.colwise() - lse).array()).sum() - 0.5 * alpha_w * w.squaredNorm();
  if (grad) {
    a = (a.colwise() - lse).array().exp().matrix();  // softmax probabilities
    *grad = (zeta - a).transpose() * prob.x - alpha_w * w;
  }
  return value;
}

int ld_update_w(const LdProblem& prob, const LdHyper& hy, LdState& st, int max_iter,
                Monitor& monitor) {
  const int M = prob.M, D = prob.D;
  const double before = ld_w_objective(prob, st.zeta, hy.alpha_w, st.w, nullptr);
  Objective f = [&](const VectorXd& v, VectorXd& g) {
    const Eigen::Map<const MatrixXd> w(v.data(), M, D);
    MatrixXd grad;
    const double val = ld_w_objective(prob, st.zeta, hy.alpha_w, w, &grad);
    g = -Eigen::Map<const VectorXd>(grad.data(), M * D);
    return -val;
  };
  const VectorXd x0 = Eigen::Map<const VectorXd>(st.w.data(), M * D);
  const double inf = std::numeric_limits<double>::infinity();
  BoxOptions bo;
  bo.max_iter = max_iter;
  bo.pgtol = 1e-8 * std::max(1.0, static_cast<double>(prob.U));
  bo.ftol = 1e-12;
  BoxResult res = minimize_box(f, x0, VectorXd::Constant(M * D, -inf), VectorXd::Constant(M * D, inf),
                               bo, monitor);
  // Accept only an improvement, so the ELBO cannot decrease (spec 3.4).
  if (std::isfinite(res.value) && -res.value > before) {
    st.w = Eigen::Map<const MatrixXd>(res.x.data(), M, D);
  }
  return res.evaluations;
}

void ld_update_eta(const LdProblem& prob, const LdHyper& hy, LdState& st, bool vb_c, int threads,
                   bool exact) {
  const int M = prob.M;
  const MatrixXd logc = ld_log_c(st.cpar, vb_c);
  const MatrixXd b = st.zeta * logc;  // B_ul = sum_m zeta_um log c_ml
  MatrixXd& eta = st.eta;
  (void)threads;
  // Groups do not interact given zeta and C, so they run in parallel; within a
  // group the members are updated in turn (Gauss-Seidel, spec 3.1).
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(std::max(1, threads))
#endif
  for (int i = 0; i < prob.N; ++i) {
    std::vector<double> r_sum(M, 0.0), g(M);
    const int n = prob.group_size(i);
    const double scale = hy.alpha_s / n;
    for (int k = prob.group_ptr[i]; k < prob.group_ptr[i + 1]; ++k)
      for (int l = 0; l < M; ++l) r_sum[l] += eta(k, l);
    for (int k = prob.group_ptr[i]; k < prob.group_ptr[i + 1]; ++k) {
      const int u = prob.pair_unit[k];
      for (int l = 0; l < M; ++l) {
        const double r = r_sum[l] - eta(k, l);  // leave-one-out group sum
        g[l] = b(u, l) + scale * (prob.s(i, l) - r / n);
      }
      if (exact) {
        softmax_inplace(g.data(), M);
      } else {
        // Plug-in block objective g'eta - (c/2)||eta||^2 + H(eta), c = alpha_s/n^2:
        // strictly concave; stationarity gives eta_l = W(c e^{g_l - lambda}) / c
        // (Lambert W) with lambda fixed by sum_l eta_l = 1 (bisection).
        plugin_eta(g.data(), M, hy.alpha_s / (static_cast<double>(n) * n));
      }
      for (int l = 0; l < M; ++l) {
        r_sum[l] += g[l] - eta(k, l);
        eta(k, l) = g[l];
      }
    }
  }
}

void ld_update_zeta(const LdProblem& prob, LdState& st, bool vb_c) {
  const MatrixXd logc = ld_log_c(st.cpar, vb_c);
  MatrixXd z = prob.x * st.w.transpose() + ld_h(prob, st.eta) * logc.transpose();
  row_softmax(z);
  st.zeta = z;
}

void ld_update_structured(const LdProblem& prob, const LdHyper& hy, LdState& st, bool vb_c,
                          Monitor& monitor) {
  const int M = prob.M;
  const MatrixXd cmat = ld_log_c(st.cpar, vb_c).array().exp().matrix();  // C or exp E[log C]
  const MatrixXd a = prob.x * st.w.transpose();
  // Transposed working copies: the sweep visits pairs and groups in random
  // order, so each pair's / group's M numbers should be contiguous.
  MatrixXd r_sum = group_sums(prob, st.eta).transpose();  // M x N
  MatrixXd eta = st.eta.transpose();                       // M x P
  const MatrixXd s_t = prob.s.transpose();                 // M x N
  std::vector<double> logz(M), g(M), zeta(M), t(M);
  for (int u = 0; u < prob.U; ++u) {
    if ((u & 1023) == 0) monitor.check();
    for (int m = 0; m < M; ++m) logz[m] = a(u, m);
    for (int p = prob.unit_ptr[u]; p < prob.unit_ptr[u + 1]; ++p) {
      const int k = prob.unit_pairs[p], i = prob.pair_group[k], n = prob.group_size(i);
      const double scale = hy.alpha_s / n;
      double gmax = -std::numeric_limits<double>::infinity();
      for (int l = 0; l < M; ++l) {
        g[l] = scale * (s_t(l, i) - (r_sum(l, i) - eta(l, k)) / n);
        gmax = std::max(gmax, g[l]);
      }
      for (int l = 0; l < M; ++l) t[l] = std::exp(g[l] - gmax);
      // eta_iu[m, .] = softmax_l(log c_ml + g_l) = c_ml e^{g_l} / Z_ium; log Z_ium
      // is group i's vote for y_u = m (M exponentials per pair, not M^2).
      for (int m = 0; m < M; ++m) {
        double z = 0;
        for (int l = 0; l < M; ++l) z += cmat(m, l) * t[l];
        for (int l = 0; l < M; ++l) st.eta_cond(m * M + l, p) = cmat(m, l) * t[l] / z;
        logz[m] += std::log(z) + gmax;
      }
    }
    for (int m = 0; m < M; ++m) zeta[m] = logz[m];
    softmax_inplace(zeta.data(), M);
    for (int m = 0; m < M; ++m) st.zeta(u, m) = zeta[m];
    for (int p = prob.unit_ptr[u]; p < prob.unit_ptr[u + 1]; ++p) {
      const int k = prob.unit_pairs[p], i = prob.pair_group[k];
      for (int l = 0; l < M; ++l) {
        double bar = 0;
        for (int m = 0; m < M; ++m) bar += zeta[m] * st.eta_cond(m * M + l, p);
        r_sum(l, i) += bar - eta(l, k);
        eta(l, k) = bar;
      }
    }
  }
  st.eta = eta.transpose();
}

MatrixXd ld_deconvolve(const LdProblem& prob, double lambda) {
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
  // zeta from the zeta rule with W = 0 and C = C0 (spec 5(c)).
  ld_update_zeta(prob, st, false);
  if (opt.vb_c) {
    st.cpar = beta_matrix(hy, M) + ld_counts(prob, st, opt.structured);
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
  auto block = [&](const char* name) {
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
    // with stable_tol * U < 1 this is the spec's "argmax unchanged" rule.
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
  const MatrixXd p_hat = ld_deconvolve(prob, opt.init_lambda);
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
