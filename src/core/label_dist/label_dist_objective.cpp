// The exact ELBO of label_dist_vb() term by term, the W block's objective,
// and the checks that make a valid problem. See label_dist.h.
#include "label_dist/label_dist.h"
#include "common/constants.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

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
      // E_q[log c_ml] under q(c_m) = Dir(cpar_m): digamma(cpar_ml) - digamma(sum_l cpar_ml).
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
  const MatrixXd beta = hy.beta_matrix(M);
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

}  // namespace noisylabels
