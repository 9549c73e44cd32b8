// Dense EP: the posterior covariance, mean and log-determinant recomputed
// exactly from K and the sites (any mix of site signs), in full or
// diagonal only (between parallel sweeps). The refresh calls BLAS directly
// (blas.h): Eigen 3.3 compiled without -march runs it at a fraction of an
// optimised BLAS's speed.
#include "ep/gpc_ep.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "linalg/blas.h"
#include "linalg/blocked.h"

namespace noisylabels {

namespace {

// b <- L^{-1} b for lower-triangular L (all n x n, column-major).
void lower_solve_in_place(const MatrixXd& l, MatrixXd& b) {
  const int n = static_cast<int>(l.rows()), m = static_cast<int>(b.cols());
  const double one = 1.0;
  dtrsm_("L", "L", "N", "N", &n, &m, &one, l.data(), &n, b.data(), &n, 1, 1, 1, 1);
}

// b <- L b (trans = "N") or L' b (trans = "T") for lower-triangular L.
void lower_multiply_in_place(const MatrixXd& l, const char* trans, MatrixXd& b) {
  const int n = static_cast<int>(l.rows()), m = static_cast<int>(b.cols());
  if (m == 0) return;
  const double one = 1.0;
  dtrmm_("L", "L", trans, "N", &n, &m, &one, l.data(), &n, b.data(), &n, 1, 1, 1, 1);
}

// Lower triangle of c <- beta c + alpha a' a, then mirrored to the upper one.
void symmetric_crossprod(const MatrixXd& a, double alpha, double beta, MatrixXd& c) {
  const int n = static_cast<int>(a.cols()), k = static_cast<int>(a.rows());
  dsyrk_("L", "T", &n, &k, &alpha, a.data(), &k, &beta, c.data(), &n, 1, 1);
  c.triangularView<Eigen::StrictlyUpper>() = c.transpose();
}

// Below this value of tau_i Sigma_ii (= 1 - (B^-1)_ii, the share of site i in
// the posterior precision of f_i) the diagonal entry of
// Sigma = S^-1 (I - B^-1) S^-1 loses more than about three digits to
// cancellation; it is then computed from Sigma = K - Sigma T K instead.
constexpr double kWeakSite = 1e-3;
// Woodbury over the negative sites pays while they are few; beyond this share
// of n the I + L_K' T L_K form (refresh_case_b) is cheaper.
constexpr double kMaxNegativeShare = 0.25;

// The refresh for many negative sites, any signs: M = I + L_K' T L_K = R R';
// chol(M) exists iff the posterior is proper; Sigma = W'W with W = R^-1 L_K'.
bool refresh_case_b(const MatrixXd& k, const Cholesky& chol_k_in, EpState& s, bool diagonal_only,
                    Monitor& monitor) {
  const int n = static_cast<int>(k.rows());
  const VectorXd& tau = s.site_tau;
  JitterPolicy exact;
  exact.max_tries = 0;
  Cholesky local;
  const Cholesky* chol_k = &chol_k_in;
  if (chol_k_in.n() != n) {
    try {
      local.compute(k, exact, monitor);
    } catch (const NumericalError&) {
      return false;
    }
    chol_k = &local;
  }
  const MatrixXd& lk = chol_k->factor();
  // Rows of sqrt|T| L_K, split by the sign of tau, so that L_K' T L_K is one
  // dsyrk per sign (n^3 flops in all instead of a general product).
  std::vector<int> pos, neg;
  for (int i = 0; i < n; ++i) {
    if (tau(i) > 0) pos.push_back(i);
    else if (tau(i) < 0) neg.push_back(i);
  }
  MatrixXd m = MatrixXd::Identity(n, n);
  auto add_rows = [&](const std::vector<int>& rows, double sign) {
    const int r = static_cast<int>(rows.size());
    if (r == 0) return;
    MatrixXd g = MatrixXd::Zero(r, n);
    for (int a = 0; a < r; ++a) {
      const int i = rows[a];
      const double w = std::sqrt(std::abs(tau(i)));
      for (int j = 0; j <= i; ++j) g(a, j) = w * lk(i, j);
    }
    const double one = 1.0;
    dsyrk_("L", "T", &n, &r, &sign, g.data(), &r, &one, m.data(), &n, 1, 1);
  };
  add_rows(pos, 1.0);
  add_rows(neg, -1.0);
  Cholesky chol_m;
  try {
    chol_m.compute(std::move(m), exact, monitor);
  } catch (const NumericalError&) {
    return false;
  }
  MatrixXd w = lk.triangularView<Eigen::Lower>().transpose();
  lower_solve_in_place(chol_m.factor(), w);
  if (diagonal_only) {
    s.post_cov.resize(n, n);
    s.post_cov.diagonal() = w.colwise().squaredNorm().transpose();
    // mu = Sigma nu = W'(W nu)
    s.mu.noalias() = w.transpose() * (w * s.site_nu);
  } else {
    s.post_cov.setZero(n, n);
    symmetric_crossprod(w, 1.0, 0.0, s.post_cov);
    s.mu.noalias() = s.post_cov * s.site_nu;
  }
  s.half_logdet = 0.5 * chol_m.logdet();
  return true;
}

}  // namespace

bool ep_refresh(const MatrixXd& k, const Cholesky& chol_k, EpState& s, bool diagonal_only,
                MatrixXd* scratch, Monitor& monitor) {
  const int n = static_cast<int>(k.rows());
  const VectorXd& tau = s.site_tau;
  std::vector<int> pos, other, neg;  // tau != 0; tau == 0; tau < 0
  for (int i = 0; i < n; ++i) {
    if (tau(i) != 0) pos.push_back(i);
    else other.push_back(i);
    if (tau(i) < 0) neg.push_back(i);
  }
  const int n_neg = static_cast<int>(neg.size()), n_other = static_cast<int>(other.size());
  if (n_neg > kMaxNegativeShare * n) {
    const bool ok = refresh_case_b(k, chol_k, s, diagonal_only, monitor);
    return ok && s.mu.allFinite() && s.post_cov.diagonal().allFinite();
  }
  // Posterior with the positive sites only (R&W Alg. 3.5, case A):
  // Negative sites enter first with |tau| and are then corrected by Woodbury
  // (below), so that all but the (rare) tau == 0 columns come from B^-1:
  // B = I + S K S with S = diag(sqrt|tau|), T_+ = |T|, and
  // Sigma_+ = (K^-1 + T_+)^-1 = S^-1 (I - B^-1) S^-1   (rows/columns tau != 0)
  //         = K - Sigma_+ T_+ K                        (any row or column).
  // The first form needs one Cholesky and one inverse of B, n^3 flops in all,
  // against 7/3 n^3 for K - V'V with V = L^-1 S K. Its off-diagonal entries
  // keep their relative accuracy for small tau (row i of B scales with
  // sqrt(tau_i)), but its diagonal 1 - (B^-1)_ii cancels; those diagonal
  // entries and the columns with tau == 0 come from the second form.
  const VectorXd tau_pos = tau.cwiseAbs();
  const VectorXd sq = tau_pos.cwiseSqrt();
  JitterPolicy exact;
  exact.max_tries = 0;
  // B is factored and inverted in place in recycled storage: at n = 2000
  // each fresh n x n allocation costs tens of milliseconds of page faults.
  MatrixXd local_buffer;
  MatrixXd& binv = scratch ? *scratch : local_buffer;  // B, then L_B, then B^-1 or L_B^-1
  binv.resize(n, n);
  binv.noalias() = sq.asDiagonal() * k * sq.asDiagonal();
  binv.diagonal().array() += 1.0;
  if (!binv.diagonal().allFinite()) return false;
  const int potrf_info = blocked_potrf(binv, monitor);
  // B >= I in exact arithmetic: only non-finite input ends here
  if (potrf_info != 0) return false;
  double half_logdet = binv.diagonal().array().log().sum();
  int info = 0;
  VectorXd diag(n);
  MatrixXd neg_cols;  // Sigma_+[:, N]
  if (!diagonal_only) {
    info = blocked_potri(binv, monitor);
    if (info != 0) return false;
    // B^-1 becomes Sigma_+ in place (no n x n copy).
    s.post_cov.swap(binv);
    MatrixXd& sig = s.post_cov;
    const VectorXd binv_diag = sig.diagonal();
    // 1/sqrt|tau| on P and 0 elsewhere: rows and columns with tau == 0 start
    // at zero and are filled below.
    VectorXd inv_sq(n);
    for (int i = 0; i < n; ++i) inv_sq(i) = tau(i) != 0 ? 1.0 / sq(i) : 0.0;
    for (int j = 0; j < n; ++j) {
      // lower triangle only (dpotri leaves the upper one untouched)
      sig.col(j).tail(n - j) = sig.col(j).tail(n - j).cwiseProduct(inv_sq.tail(n - j)) * (-inv_sq(j));
      if (tau(j) != 0) sig(j, j) += 1.0 / tau_pos(j);
    }
    sig.triangularView<Eigen::StrictlyUpper>() = sig.transpose();
    for (int i = 0; i < n; ++i) {
      if (tau(i) == 0) continue;
      if (1.0 - binv_diag(i) >= kWeakSite) continue;
      // Sigma_ii (1 + tau_i K_ii) = K_ii - sum_{j != i} Sigma_ij tau_j K_ji
      // (tau_pos is zero on the rows of sig not yet filled)
      const double own = sig(i, i) * tau_pos(i) * k(i, i);
      const double acc = k(i, i) - (sig.col(i).dot(tau_pos.cwiseProduct(k.col(i))) - own);
      sig(i, i) = acc / (1.0 + tau_pos(i) * k(i, i));
    }
    if (n_other > 0) {
      // Sigma_+[:, O] = K[:, O] - Sigma_+ (T_+ K[:, O]); rows O of Sigma_+ are
      // still zero here, so this is right in rows P, then mirrored, then the
      // O x O block is redone with the now complete rows.
      MatrixXd x(n, n_other), cols(n, n_other);
      for (int c = 0; c < n_other; ++c) {
        x.col(c) = tau_pos.cwiseProduct(k.col(other[c]));
        cols.col(c) = k.col(other[c]);
      }
      const double minus_one = -1.0, one = 1.0;
      dgemm_("N", "N", &n, &n_other, &n, &minus_one, sig.data(), &n, x.data(), &n, &one,
             cols.data(), &n, 1, 1);
      for (int c = 0; c < n_other; ++c) {
        const int j = other[c];
        for (int i : pos) {
          sig(i, j) = cols(i, c);
          sig(j, i) = cols(i, c);
        }
      }
      for (int c = 0; c < n_other; ++c) {
        const int j = other[c];
        for (int r = 0; r <= c; ++r) {
          const int i = other[r];
          // column i of sig is complete on rows P; x is zero on rows O
          const double acc = k(i, j) - sig.col(i).dot(x.col(c));
          sig(i, j) = acc;
          sig(j, i) = acc;
        }
      }
    }
    if (n_neg > 0) {
      neg_cols.resize(n, n_neg);
      for (int c = 0; c < n_neg; ++c) neg_cols.col(c) = sig.col(neg[c]);
    }
  } else {
    info = blocked_trtri(binv, monitor);
    if (info != 0) return false;
    binv.triangularView<Eigen::StrictlyUpper>().setZero();
    const VectorXd binv_diag = binv.colwise().squaredNorm().transpose();
    std::vector<int> direct;  // diagonal entries that need K_ii - |L^-1 S K_i|^2
    for (int i = 0; i < n; ++i) {
      if (tau(i) != 0 && 1.0 - binv_diag(i) >= kWeakSite) diag(i) = (1.0 - binv_diag(i)) / tau_pos(i);
      else direct.push_back(i);
    }
    const int nd = static_cast<int>(direct.size());
    if (nd > 0) {
      MatrixXd x(n, nd);
      for (int c = 0; c < nd; ++c) x.col(c) = sq.cwiseProduct(k.col(direct[c]));
      lower_multiply_in_place(binv, "N", x);  // L^-1 S K_i
      for (int c = 0; c < nd; ++c) diag(direct[c]) = k(direct[c], direct[c]) - x.col(c).squaredNorm();
    }
    if (n_neg > 0) {
      // Sigma_+[:, N] from the columns of B^-1 = L^-T L^-1 (one triangular
      // product, n^2 flops per negative site): off the diagonal
      // Sigma_+[i, c] = -(B^-1)_ic / (s_i s_c), which keeps its relative
      // accuracy for small s_i; on it the entry of `diag` above (computed
      // directly where 1 - (B^-1)_cc cancels); rows with tau == 0 from
      // Sigma_+ = K - K T_+ Sigma_+.
      MatrixXd x(n, n_neg);
      for (int c = 0; c < n_neg; ++c) x.col(c) = binv.col(neg[c]);
      lower_multiply_in_place(binv, "T", x);  // B^-1[:, N]
      neg_cols.resize(n, n_neg);
      for (int c = 0; c < n_neg; ++c) {
        const int j = neg[c];
        for (int i = 0; i < n; ++i) neg_cols(i, c) = tau(i) != 0 ? -x(i, c) / (sq(i) * sq(j)) : 0.0;
        neg_cols(j, c) = diag(j);
      }
      if (n_other > 0) {
        // rows O: K[O, N] - K[O, :] T_+ Sigma_+[:, N] (T_+ is zero on O)
        MatrixXd ko(n_other, n);
        for (int r = 0; r < n_other; ++r) ko.row(r) = k.row(other[r]);
        const MatrixXd rows_o = ko * (tau_pos.asDiagonal() * neg_cols);
        for (int c = 0; c < n_neg; ++c)
          for (int r = 0; r < n_other; ++r)
            neg_cols(other[r], c) = k(other[r], neg[c]) - rows_o(r, c);
      }
    }
    // mu_+ = Sigma_+ nu = a - K S B^-1 S a with a = K nu
    const VectorXd a = k * s.site_nu;
    VectorXd t = sq.cwiseProduct(a);
    t = binv.triangularView<Eigen::Lower>() * t;
    t = binv.triangularView<Eigen::Lower>().transpose() * t;
    s.mu = a;
    s.mu.noalias() -= k * sq.cwiseProduct(t);
    s.post_cov.resize(n, n);
  }

  if (n_neg > 0) {
    // Negative sites by Woodbury (refresh_case_b's posterior without an n^3 step):
    // Sigma^-1 = Sigma_+^-1 - D on N with D = 2 |T_N| (Sigma_+ holds |T_N|), so
    // Sigma = Sigma_+ + G C^-1 G' with G = Sigma_+[:, N] D^1/2 and
    // C = I - D^1/2 Sigma_+[N, N] D^1/2. Sigma is proper iff C is positive
    // definite, and |I + K T| = |B| |C|.
    VectorXd dsq(n_neg);
    for (int c = 0; c < n_neg; ++c) dsq(c) = std::sqrt(-2.0 * tau(neg[c]));
    const MatrixXd g = neg_cols * dsq.asDiagonal();
    MatrixXd cm(n_neg, n_neg);
    for (int c = 0; c < n_neg; ++c)
      for (int r = 0; r < n_neg; ++r) cm(r, c) = -0.5 * (g(neg[r], c) * dsq(r) + g(neg[c], r) * dsq(c));
    cm.diagonal().array() += 1.0;
    Cholesky chol_c;
    try {
      chol_c.compute(std::move(cm), exact, monitor);
    } catch (const NumericalError&) {
      return false;
    }
    half_logdet += 0.5 * chol_c.logdet();
    // H = L_C^-1 G', Sigma = Sigma_+ + H'H
    const MatrixXd h = chol_c.factor().triangularView<Eigen::Lower>().solve(g.transpose());
    if (diagonal_only) {
      diag += h.colwise().squaredNorm().transpose();
      s.mu.noalias() += h.transpose() * (h * s.site_nu);
    } else {
      symmetric_crossprod(h, 1.0, 1.0, s.post_cov);
    }
  }
  if (diagonal_only) {
    s.post_cov.diagonal() = diag;
  } else {
    diag = s.post_cov.diagonal();
    s.mu.noalias() = s.post_cov * s.site_nu;
  }
  s.half_logdet = half_logdet;
  return diag.allFinite() && (diag.array() > 0).all() && s.mu.allFinite();
}


}  // namespace noisylabels
