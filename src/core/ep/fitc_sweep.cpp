// The sequential sweep of sparse (FITC) EP; see fitc_sweep.h and
// gpc_ep_sparse.h.
#include "ep/fitc_sweep.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "ep/ep_site.h"
#include "linalg/blas.h"

namespace noisylabels {

namespace {

JitterPolicy exact_policy() {
  JitterPolicy p;
  p.max_tries = 0;
  return p;
}

// A += sign * G G' (lower triangle) for the columns of U whose weight has
// this sign, each scaled by sqrt(|weight|); columns of weight 0 are skipped,
// so the dsyrk runs over the columns that contribute and no others.
void add_signed_columns(const MatrixXd& u, const std::vector<int>& cols, const VectorXd& weight,
                        double sign, MatrixXd& a) {
  const int m = static_cast<int>(u.rows()), k = static_cast<int>(cols.size());
  if (m == 0 || k == 0) return;
  MatrixXd g(m, k);
  for (int c = 0; c < k; ++c) g.col(c) = std::sqrt(sign * weight(cols[c])) * u.col(cols[c]);
  const double one = 1.0;
  dsyrk_("L", "N", &m, &k, &sign, g.data(), &m, &one, a.data(), &m, 1, 1);
}

// M += U diag(v) U' (lower triangle) over the columns with v_i != 0.
void add_weighted(const MatrixXd& u, const VectorXd& v, MatrixXd& mm) {
  std::vector<int> pos, neg;
  for (int i = 0; i < v.size(); ++i) {
    if (v(i) > 0) pos.push_back(i);
    if (v(i) < 0) neg.push_back(i);
  }
  add_signed_columns(u, pos, v, 1.0, mm);
  add_signed_columns(u, neg, v, -1.0, mm);
}

}  // namespace

// b <- L^-1 b (trans "N") or L^-T b (trans "T"), L lower m x m, b m x k.
void fitc_tri_solve(const MatrixXd& l, const char* trans, MatrixXd& b) {
  const int m = static_cast<int>(l.rows()), k = static_cast<int>(b.cols());
  if (k == 0 || m == 0) return;
  const double one = 1.0;
  dtrsm_("L", "L", trans, "N", &m, &k, &one, l.data(), &m, b.data(), &m, 1, 1, 1, 1);
}

// Site weights g = 1/(1 + lambda tau) and w = tau g; false if some
// 1 + lambda_i tau_i <= 0 (then the posterior is improper).
bool fitc_site_weights(const FitcPrior& p, const VectorXd& tau, VectorXd& g, VectorXd& w) {
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

// M = I + U diag(w) U' (lower triangle), n m^2 flops at most: one dsyrk per
// sign over the sites with w_i != 0 (none at all for zero sites).
MatrixXd fitc_build_m(const FitcPrior& p, const VectorXd& w) {
  const int m = static_cast<int>(p.u.rows());
  MatrixXd mm = MatrixXd::Identity(m, m);
  add_weighted(p.u, w, mm);
  mm.triangularView<Eigen::StrictlyUpper>() = mm.transpose();
  return mm;
}

bool fitc_factor_m(MatrixXd mm, Cholesky& chol_m) {
  if (!mm.allFinite()) return false;
  try {
    chol_m.compute(std::move(mm), exact_policy());
  } catch (const NumericalError&) {
    return false;
  }
  return true;
}

bool sweep_fitc(const FitcPrior& p, const VectorXd& y, const EpLikelihood& lik,
                const EpOptions& opt, double delta, const std::vector<int>& perm, EpState& s,
                double& max_change, Monitor& monitor, const FitcM& cached, MatrixXd* m_out) {
  const int m = static_cast<int>(p.u.rows()), n = static_cast<int>(p.u.cols());
  VectorXd g, w;
  if (!fitc_site_weights(p, s.site_tau, g, w)) return false;
  MatrixXd mm;
  Cholesky chol_m;
  if (cached.holds(s.site_tau)) {
    mm = cached.mm;
    chol_m = cached.chol;
  } else {
    mm = fitc_build_m(p, w);
    if (!fitc_factor_m(mm, chol_m)) return false;
  }
  VectorXd r = p.u * g.cwiseProduct(s.site_nu);  // U (g o nu)
  const int bsize = std::max(16, std::min(512, (m + 1) / 2));
  max_change = 0;
  MatrixXd uj, vj, sjj;
  VectorXd muj, t, dw, dgnu;
  for (int j0 = 0; j0 < n; j0 += bsize) {
    monitor.check();  // a sweep is O(n m^2): seconds at n = 20,000
    const int nb = std::min(bsize, n - j0);
    uj.resize(m, nb);
    for (int c = 0; c < nb; ++c) uj.col(c) = p.u.col(perm[j0 + c]);
    vj = uj;
    fitc_tri_solve(chol_m.factor(), "N", vj);
    t = r;
    {
      MatrixXd tm = t;
      fitc_tri_solve(chol_m.factor(), "N", tm);
      t = tm.col(0);
    }
    // Sigma[J, J] (lower triangle; the rest stays 0) and mu[J] at the current sites
    sjj.setZero(nb, nb);
    if (m > 0) {
      const double one = 1.0, zero = 0.0;
      dsyrk_("L", "T", &nb, &m, &one, vj.data(), &m, &zero, sjj.data(), &nb, 1, 1);
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
      // J); only the sites still to come in this block are read again, and
      // only the lower triangle of their block.
      const double coef = dt / (1.0 + dt * sii);
      const int rest = nb - c - 1;
      if (rest > 0) {
        const VectorXd col = sjj.col(c).tail(rest);
        const VectorXd scaled = coef * col;
        for (int k = 0; k < rest; ++k)
          sjj.col(c + 1 + k).tail(rest - k) -= col(k) * scaled.tail(rest - k);
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
    const bool last = j0 + nb >= n;  // the caller refreshes after the sweep
    if (!moved || (last && !m_out)) continue;
    // M += U_J diag(dw) U_J' (lower triangle, one dsyrk per sign),
    // r += U_J d(g o nu), then refactor M.
    add_weighted(uj, dw, mm);
    if (last) break;
    r.noalias() += uj * dgnu;
    if (!fitc_factor_m(mm, chol_m)) return false;
  }
  if (m_out) *m_out = std::move(mm);
  return true;
}

}  // namespace noisylabels
