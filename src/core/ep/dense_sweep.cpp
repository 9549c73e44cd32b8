// Dense EP's sequential sweeps (see dense_sweep.h). They call BLAS directly
// (blas.h): Eigen 3.3 compiled without -march runs them at a fraction of an
// optimised BLAS's speed.
#include "ep/dense_sweep.h"

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "ep/ep_site.h"
#include "linalg/blas.h"

namespace noisylabels {

double sweep_reference(const VectorXd& y, const EpLikelihood& lik, const EpOptions& opt,
                       double delta, const std::vector<int>& perm, EpState& s) {
  MatrixXd post_cov = s.post_cov;
  VectorXd mu = s.mu;
  double max_change = 0;
  for (int i : perm) {
    const double sii = post_cov(i, i), mui = mu(i);
    double dt, dn;
    if (!propose_site(i, sii, mui, y, lik, opt, delta, s, dt, dn)) {
      ++s.skipped;
      continue;
    }
    const double c = dt / (1.0 + dt * sii);
    const VectorXd col = post_cov.col(i);
    post_cov.noalias() -= c * col * col.transpose();
    mu -= (c * (mui + sii * dn) - dn) * col;
    s.site_tau(i) += dt;
    s.site_nu(i) += dn;
    max_change = std::max(max_change, std::max(std::abs(dt), std::abs(dn)));
  }
  return max_change;
}

// The same sweep with delayed, left-looking updates. In visiting order
// p_0..p_{n-1}, site p_j needs Sigma^(j)[p_t, p_j] only for t >= j (its own
// entry and those of sites still to come), and
//   Sigma^(j)[p_t, p_j] = Sigma0[p_t, p_j] - sum_{k<j} c_k U[t,k] U[j,k],
// where U[:, k] is the column used by update k, likewise restricted to rows
// t >= k. Like a left-looking Cholesky, a block of b sites gathers its
// columns from Sigma0 and applies all earlier updates with one dgemm, so the
// sweep costs n^3/3 flops in BLAS 3 instead of n^3 in memory-bound rank-one
// updates; the iterates are those of sweep_reference up to rounding.
// `gidx[j]` is the row/column of s.post_cov that holds site perm[j]
// (s.post_cov may be stored in the visiting order of the previous sweep).
double sweep_blocked(const VectorXd& y, const EpLikelihood& lik, const EpOptions& opt,
                     double delta, const std::vector<int>& perm, const std::vector<int>& gidx,
                     EpState& s, SweepWorkspace& w, Monitor& monitor) {
  const int n = static_cast<int>(y.size());
  const int bsize = std::max(1, opt.block_size);
  if (w.u.rows() != n || w.u.cols() != n) w.u.resize(n, n);
  w.c.resize(n);
  w.g.resize(n);
  w.coef.resize(bsize);
  w.rhs_store.resize(static_cast<std::ptrdiff_t>(n) * bsize);
  MatrixXd& u = w.u;
  double max_change = 0;
  for (int j0 = 0; j0 < n; j0 += bsize) {
    monitor.check();  // a sweep is n^3/3 flops
    const int nb = std::min(bsize, n - j0), m = n - j0;
    // The block's columns are gathered and updated in place in U[j0:n, J]
    // (rows below each column's own position end up final; the ones above
    // are finite and never read). rhs: storage allocated once per sweep.
    const std::ptrdiff_t off = j0 + static_cast<std::ptrdiff_t>(j0) * n;
    Eigen::Map<MatrixXd, 0, Eigen::OuterStride<>> blk(u.data() + off, m, nb, Eigen::OuterStride<>(n));
    Eigen::Map<MatrixXd> rhs(w.rhs_store.data(), j0, nb);
    w.mu_blk.resize(nb);
    for (int jj = 0; jj < nb; ++jj) {
      const double* src = s.post_cov.data() + static_cast<std::ptrdiff_t>(gidx[j0 + jj]) * n;
      double* dst = blk.data() + static_cast<std::ptrdiff_t>(jj) * n;
      for (int r = 0; r < m; ++r) dst[r] = src[gidx[j0 + r]];
      w.mu_blk(jj) = s.mu(perm[j0 + jj]);
    }
    if (j0 > 0) {
      // blk -= U[j0:n, 0:j0] diag(c) U[j0:j0+nb, 0:j0]'
      rhs.noalias() = (u.block(j0, 0, nb, j0) * w.c.head(j0).asDiagonal()).transpose();
      const double minus_one = -1.0, one = 1.0;
      const int ldu = n;
      dgemm_("N", "N", &m, &nb, &j0, &minus_one, u.data() + j0, &ldu, rhs.data(), &j0, &one,
             blk.data(), &ldu, 1, 1);
      w.mu_blk.noalias() -= u.block(j0, 0, nb, j0) * w.g.head(j0);
    }
    for (int jj = 0; jj < nb; ++jj) {
      const int j = j0 + jj, i = perm[j];
      if (jj > 0) {
        // updates from this block's earlier sites (left-looking, one small
        // gemv on the block's own rows; the rows below follow in one trsm):
        // column k < jj of blk holds s_k on rows >= k.
        w.coef.head(jj) = w.c.segment(j0, jj).cwiseProduct(blk.row(jj).head(jj).transpose());
        blk.col(jj).segment(jj, nb - jj).noalias() -= blk.block(jj, 0, nb - jj, jj) * w.coef.head(jj);
        w.mu_blk(jj) -= blk.row(jj).head(jj).dot(w.g.segment(j0, jj));
      }
      const double sii = blk(jj, jj), mui = w.mu_blk(jj);
      double dt, dn;
      double c = 0, g = 0;
      if (propose_site(i, sii, mui, y, lik, opt, delta, s, dt, dn)) {
        c = dt / (1.0 + dt * sii);
        g = c * (mui + sii * dn) - dn;
        s.site_tau(i) += dt;
        s.site_nu(i) += dn;
        max_change = std::max(max_change, std::max(std::abs(dt), std::abs(dn)));
      } else {
        ++s.skipped;
      }
      w.c(j) = c;
      w.g(j) = g;
    }
    if (m > nb && nb > 1) {
      // Rows below the block: column jj gets -sum_{k<jj} c_k blk(jj, k) s_k,
      // i.e. blk[nb:, :] = B (I + M')^-1 with M(jj, k) = c_k blk(jj, k) for
      // k < jj (unit lower triangular), one BLAS 3 solve instead of nb gemvs.
      w.tri.setZero(nb, nb);
      for (int k = 0; k + 1 < nb; ++k)
        w.tri.col(k).tail(nb - k - 1) = w.c(j0 + k) * blk.col(k).segment(k + 1, nb - k - 1);
      const int rows = m - nb;
      const double one = 1.0;
      dtrsm_("R", "L", "T", "U", &rows, &nb, &one, w.tri.data(), &nb, blk.data() + nb, &n, 1, 1, 1,
             1);
    }
  }
  return max_change;
}

// Sigma after a blocked sweep from the sweep's own factors, without going
// back to K (3 instead of 4 Choleskys of flops per sweep; the exact refresh
// from K runs every EpOptions::refresh_every sweeps and at the end).
//
// In visiting order let A = Sigma0 (permuted), u_k = U[k,k] the variance site
// k saw, c_k = Delta_k / (1 + Delta_k u_k) and N the strictly lower part of
// U. The sweep is the LDL' factorisation without pivoting of A + Delta^-1:
// A + Delta^-1 = Lambda diag(1/c) Lambda' with Lambda = I + N C, C = diag(c).
// Then Sigma = (A^-1 + Delta)^-1 = Delta^-1 - Delta^-1 (A + Delta^-1)^-1 Delta^-1,
// which with H = diag(h), h_k = 1 - c_k u_k = 1 / (1 + Delta_k u_k), and
// V = -Lambda^-1 N (strictly lower) becomes
//   Sigma = diag(h o u) - H (V + V' + V' C V) H,
// free of the 1/Delta terms (sites that did not move, Delta_k = 0 or tiny,
// and negative Delta_k need no special case). V is a triangular solve with a
// triangular right-hand side and V' C V a triangular product, n^3/3 flops
// each in BLAS 3 (blocked over column panels). By the determinant lemma
// log |I + K T| grows by sum_k log(1 + Delta_k u_k) = -sum_k log h_k.
// `lam` is n x n scratch and is swapped with s.post_cov (which must not hold
// Sigma0), which then holds Sigma in the visiting order `perm`; `post_var`
// receives diag(Sigma) in the original order.
// Returns false if the result is not a proper posterior (rounding at the
// boundary; the caller then falls back to the exact refresh).
bool refresh_from_sweep(const std::vector<int>& perm, SweepWorkspace& w, MatrixXd& lam,
                        EpState& s, VectorXd& post_var, Monitor& monitor) {
  const int n = static_cast<int>(perm.size());
  if (n == 0) return true;
  MatrixXd& u = w.u;
  const VectorXd& c = w.c;
  constexpr int kPanel = 128;
  VectorXd d(n), h(n);
  double log_h = 0;
  for (int k = 0; k < n; ++k) {
    d(k) = u(k, k);
    h(k) = 1.0 - c(k) * d(k);
    if (!(h(k) > 0) || !std::isfinite(h(k))) return false;
    log_h += std::log(h(k));
  }
  // Lambda's strictly lower part: column k of N scaled by c_k.
  lam.resize(n, n);
  for (int k = 0; k + 1 < n; ++k)
    lam.col(k).tail(n - k - 1) = c(k) * u.col(k).tail(n - k - 1);
  // V[j0:, J] = -Lambda[j0:, j0:]^-1 N[j0:, J] (N and V vanish above row j0).
  const double one = 1.0, minus_one = -1.0;
  for (int j0 = 0; j0 < n; j0 += kPanel) {
    monitor.check();
    const int nb = std::min(kPanel, n - j0), m = n - j0;
    const std::ptrdiff_t off = j0 + static_cast<std::ptrdiff_t>(j0) * n;
    // N: U without its diagonal and the entries above it. Rows above j0 are
    // outside this solve, so only the panel's diagonal block is cleared; V
    // then has a zero diagonal, and its upper part is never read.
    for (int jj = 0; jj < nb; ++jj) u.col(j0 + jj).segment(j0, jj + 1).setZero();
    dtrsm_("L", "L", "N", "U", &m, &nb, &minus_one, lam.data() + off, &n, u.data() + off, &n, 1,
           1, 1, 1);
  }
  // X = V' C V, lower triangle, into lam: X[j0:, J] = V[j0:, j0:]' (C V[j0:, J]).
  for (int j0 = 0; j0 < n; j0 += kPanel) {
    monitor.check();
    const int nb = std::min(kPanel, n - j0), m = n - j0;
    const std::ptrdiff_t off = j0 + static_cast<std::ptrdiff_t>(j0) * n;
    for (int jj = 0; jj < nb; ++jj)
      lam.col(j0 + jj).tail(m) = c.tail(m).cwiseProduct(u.col(j0 + jj).tail(m));
    dtrmm_("L", "L", "T", "N", &m, &nb, &one, u.data() + off, &n, lam.data() + off, &n, 1, 1, 1,
           1);
  }
  // Sigma in visiting order in place of X, tile by tile, each lower tile
  // mirrored to the upper triangle as soon as it is done.
  constexpr int kTile = 32;
  for (int j0 = 0; j0 < n; j0 += kTile) {
    const int j1 = std::min(n, j0 + kTile);
    for (int i0 = j0; i0 < n; i0 += kTile) {
      const int i1 = std::min(n, i0 + kTile);
      for (int j = j0; j < j1; ++j) {
        double* x = lam.data() + static_cast<std::ptrdiff_t>(j) * n;
        const double* v = u.data() + static_cast<std::ptrdiff_t>(j) * n;
        int t = std::max(i0, j);
        if (t == j) {
          x[j] = h(j) * d(j) - h(j) * h(j) * x[j];
          ++t;
        }
        const double hj = h(j);
        for (; t < i1; ++t) x[t] = -h(t) * hj * (v[t] + x[t]);
      }
      for (int j = j0; j < j1; ++j)
        for (int i = std::max(i0, j + 1); i < i1; ++i) lam(j, i) = lam(i, j);
    }
  }
  // s.post_cov stays in visiting order (s.post_cov(t, j) = Sigma[perm[t], perm[j]]);
  // mu and `post_var` are in the original order.
  s.post_cov.swap(lam);
  VectorXd nu_p(n);
  for (int t = 0; t < n; ++t) nu_p(t) = s.site_nu(perm[t]);
  const VectorXd mu_p = s.post_cov * nu_p;
  post_var.resize(n);
  for (int t = 0; t < n; ++t) {
    s.mu(perm[t]) = mu_p(t);
    post_var(perm[t]) = s.post_cov(t, t);
  }
  s.half_logdet -= 0.5 * log_h;
  return post_var.allFinite() && (post_var.array() > 0).all() && s.mu.allFinite();
}


}  // namespace noisylabels
