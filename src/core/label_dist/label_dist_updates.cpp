// Coordinate updates of the variational EM: C, W, the mean-field blocks
// (eta, zeta) and the structured instance sweep. See label_dist.h.
#include "label_dist/label_dist.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "common/optimize.h"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace noisylabels {

namespace {

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

// Group sums R_i = sum of the marginal eta over the members of group i (N x M).
MatrixXd group_sums(const LdProblem& prob, const MatrixXd& eta) {
  MatrixXd r = MatrixXd::Zero(prob.N, prob.M);
  for (int i = 0; i < prob.N; ++i)
    for (int k = prob.group_ptr[i]; k < prob.group_ptr[i + 1]; ++k) r.row(i) += eta.row(k);
  return r;
}

}  // namespace

void ld_update_c(const LdProblem& prob, const LdHyper& hy, LdState& st, bool structured,
                 bool vb_c) {
  const int M = prob.M;
  const MatrixXd counts = ld_counts(prob, st, structured);
  const MatrixXd beta = hy.beta_matrix(M);
  if (vb_c) {
    st.cpar = beta + counts;  // q(c_m) = Dir(beta_m + N_m)
    return;
  }
  // MAP: c_ml proportional to N_ml + beta_ml - 1. A numerator can only
  // be <= 0 when beta_ml < 1, where no MAP exists; R switches to VB then. The
  // floor at 1e-300 only guards log(0) after underflow.
  for (int m = 0; m < M; ++m) {
    VectorXd num = (counts.row(m) + beta.row(m)).transpose().array() - 1.0;
    num = num.cwiseMax(0.0);
    const double total = num.sum();
    if (!(total > 0)) num.setConstant(1.0 / M);
    else num /= total;
    st.cpar.row(m) = num.cwiseMax(1e-300).transpose();
  }
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
  // Accept only an improvement, so the ELBO cannot decrease (L-BFGS may stop at a worse point).
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
  // group the members are updated in turn (Gauss-Seidel: each sees its
  // group's current sum).
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

}  // namespace noisylabels
