// Expectation propagation for GP classification with a labelling-error
// likelihood. Equation references are to specs/gpc_ep.md (the "spec"), which
// corrects Kim & Ghahramani's (Minka's) listing.
#include "ep/gpc_ep.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>

#include "common/optimize.h"

// The sweep and the refresh are where EP spends its time and call BLAS
// directly (blas.h): Eigen 3.3 compiled without -march runs them at a
// fraction of an optimised BLAS's speed.
#include "linalg/blas.h"

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

namespace {

// Below this value of tau_i Sigma_ii (= 1 - (B^-1)_ii, the share of site i in
// the posterior precision of f_i) the diagonal entry of
// Sigma = S^-1 (I - B^-1) S^-1 loses more than about three digits to
// cancellation; it is then computed from Sigma = K - Sigma T K instead.
constexpr double kWeakSite = 1e-3;
// Woodbury over the negative sites pays while they are few; beyond this share
// of n the spec's I + L_K' T L_K form is cheaper.
constexpr double kMaxNegativeShare = 0.25;
// Smallest n for which sequential sweeps take Sigma from their own factors.
constexpr int kMinFactorN = 128;

// Spec §3.2 case B with any signs: M = I + L_K' T L_K = R R'; chol(M) exists
// iff the posterior is proper; Sigma = W'W with W = R^-1 L_K'.
bool refresh_case_b(const MatrixXd& k, const Cholesky& chol_k_in, EpState& s, bool diagonal_only) {
  const int n = static_cast<int>(k.rows());
  const VectorXd& tau = s.site_tau;
  JitterPolicy exact;
  exact.max_tries = 0;
  Cholesky local;
  const Cholesky* chol_k = &chol_k_in;
  if (chol_k_in.n() != n) {
    try {
      local.compute(k, exact);
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
    chol_m.compute(std::move(m), exact);
  } catch (const NumericalError&) {
    return false;
  }
  MatrixXd w = lk.triangularView<Eigen::Lower>().transpose();
  lower_solve_in_place(chol_m.factor(), w);
  if (diagonal_only) {
    s.sigma.resize(n, n);
    s.sigma.diagonal() = w.colwise().squaredNorm().transpose();
    // mu = Sigma nu = W'(W nu)
    s.mu.noalias() = w.transpose() * (w * s.site_nu);
  } else {
    s.sigma.setZero(n, n);
    symmetric_crossprod(w, 1.0, 0.0, s.sigma);
    s.mu.noalias() = s.sigma * s.site_nu;
  }
  s.half_logdet = 0.5 * chol_m.logdet();
  return true;
}

}  // namespace

bool ep_refresh(const MatrixXd& k, const Cholesky& chol_k, EpState& s, bool diagonal_only,
                MatrixXd* scratch) {
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
    const bool ok = refresh_case_b(k, chol_k, s, diagonal_only);
    return ok && s.mu.allFinite() && s.sigma.diagonal().allFinite();
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
  int potrf_info = 0;
  dpotrf_("L", &n, binv.data(), &n, &potrf_info, 1);
  // B >= I in exact arithmetic: only non-finite input ends here
  if (potrf_info != 0) return false;
  double half_logdet = binv.diagonal().array().log().sum();
  int info = 0;
  VectorXd diag(n);
  MatrixXd neg_cols;  // Sigma_+[:, N]
  if (!diagonal_only) {
    dpotri_("L", &n, binv.data(), &n, &info, 1);
    if (info != 0) return false;
    // B^-1 becomes Sigma_+ in place (no n x n copy).
    s.sigma.swap(binv);
    MatrixXd& sig = s.sigma;
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
    const int nn = n;
    dtrtri_("L", "N", &nn, binv.data(), &nn, &info, 1, 1);
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
    s.sigma.resize(n, n);
  }

  if (n_neg > 0) {
    // Negative sites by Woodbury (spec §3.2 case B without an n^3 step):
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
      chol_c.compute(std::move(cm), exact);
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
      symmetric_crossprod(h, 1.0, 1.0, s.sigma);
    }
  }
  if (diagonal_only) {
    s.sigma.diagonal() = diag;
  } else {
    diag = s.sigma.diagonal();
    s.mu.noalias() = s.sigma * s.site_nu;
  }
  s.half_logdet = half_logdet;
  return diag.allFinite() && (diag.array() > 0).all() && s.mu.allFinite();
}

bool ep_evidence(const VectorXd& y, const EpLikelihood& lik, EpState& s) {
  return ep_evidence_diag(y, lik, s.sigma.diagonal(), s);
}

// diag(Sigma) given: run_ep keeps Sigma permuted between factor refreshes,
// and the sparse path stores only the diagonal.
bool ep_evidence_diag(const VectorXd& y, const EpLikelihood& lik, const VectorXd& diag,
                      EpState& s) {
  const int n = static_cast<int>(y.size());
  s.cav_tau.resize(n); s.cav_nu.resize(n); s.z.resize(n); s.log_zi.resize(n);
  s.dlogz_deps.resize(n); s.flip_prob.resize(n);
  double total = -s.half_logdet + 0.5 * s.site_nu.dot(s.mu);
  for (int i = 0; i < n; ++i) {
    const double sii = diag(i);
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


namespace {

struct SweepWorkspace {
  MatrixXd u, tri;
  VectorXd rhs_store, c, g, mu_blk, coef;
};

}  // namespace

// New site for site i from the current marginal (sii, mui): spec §3.2, with
// clamping and damping. Returns false (site skipped) for an improper cavity,
// a non-finite update or one that would make Sigma_ii <= 0.
bool propose_site(int i, double sii, double mui, const VectorXd& y, const EpLikelihood& lik,
                  const EpOptions& opt, double delta, const EpState& s, double& dt, double& dn) {
  const double tc = 1.0 / sii - s.site_tau(i);
  const double nc = mui / sii - s.site_nu(i);
  if (!(tc > 0)) return false;  // improper cavity (spec §3.3): leave the site alone
  const SiteMoments m = tilted_moments(y(i), nc / tc, 1.0 / tc, lik);
  double th = m.site_tau, nh = m.site_nu;
  if (opt.clamp) th = std::max(th, 0.0);
  th = (1.0 - delta) * s.site_tau(i) + delta * th;
  nh = (1.0 - delta) * s.site_nu(i) + delta * nh;
  if (!std::isfinite(th) || !std::isfinite(nh)) return false;
  dt = th - s.site_tau(i);
  dn = nh - s.site_nu(i);
  return 1.0 + dt * sii > 0;
}

namespace {

// Reference sequential sweep: Sherman-Morrison rank-one updates of a copy of
// the full Sigma and mu (R&W eq. 3.70; [GPML-infEP] ep_up_ex). n^2 memory
// traffic per site. Returns the largest site change.
double sweep_reference(const VectorXd& y, const EpLikelihood& lik, const EpOptions& opt,
                       double delta, const std::vector<int>& perm, EpState& s) {
  MatrixXd sigma = s.sigma;
  VectorXd mu = s.mu;
  double max_change = 0;
  for (int i : perm) {
    const double sii = sigma(i, i), mui = mu(i);
    double dt, dn;
    if (!propose_site(i, sii, mui, y, lik, opt, delta, s, dt, dn)) {
      ++s.skipped;
      continue;
    }
    const double c = dt / (1.0 + dt * sii);
    const VectorXd col = sigma.col(i);
    sigma.noalias() -= c * col * col.transpose();
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
// `gidx[j]` is the row/column of s.sigma that holds site perm[j] (s.sigma may
// be stored in the visiting order of the previous sweep).
double sweep_blocked(const VectorXd& y, const EpLikelihood& lik, const EpOptions& opt,
                     double delta, const std::vector<int>& perm, const std::vector<int>& gidx,
                     EpState& s, SweepWorkspace& w) {
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
    const int nb = std::min(bsize, n - j0), m = n - j0;
    // The block's columns are gathered and updated in place in U[j0:n, J]
    // (rows below each column's own position end up final; the ones above
    // are finite and never read). rhs: storage allocated once per sweep.
    const std::ptrdiff_t off = j0 + static_cast<std::ptrdiff_t>(j0) * n;
    Eigen::Map<MatrixXd, 0, Eigen::OuterStride<>> blk(u.data() + off, m, nb, Eigen::OuterStride<>(n));
    Eigen::Map<MatrixXd> rhs(w.rhs_store.data(), j0, nb);
    w.mu_blk.resize(nb);
    for (int jj = 0; jj < nb; ++jj) {
      const double* src = s.sigma.data() + static_cast<std::ptrdiff_t>(gidx[j0 + jj]) * n;
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
// `lam` is n x n scratch and is swapped with s.sigma (which must not hold
// Sigma0), which then holds Sigma in the visiting order `perm`; `diag`
// receives diag(Sigma) in the original order.
// Returns false if the result is not a proper posterior (rounding at the
// boundary; the caller then falls back to the exact refresh).
bool refresh_from_sweep(const std::vector<int>& perm, SweepWorkspace& w, MatrixXd& lam,
                        EpState& s, VectorXd& diag) {
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
  // s.sigma stays in visiting order (s.sigma(t, j) = Sigma[perm[t], perm[j]]);
  // mu and `diag` are in the original order.
  s.sigma.swap(lam);
  VectorXd nu_p(n);
  for (int t = 0; t < n; ++t) nu_p(t) = s.site_nu(perm[t]);
  const VectorXd mu_p = s.sigma * nu_p;
  diag.resize(n);
  for (int t = 0; t < n; ++t) {
    s.mu(perm[t]) = mu_p(t);
    diag(perm[t]) = s.sigma(t, t);
  }
  s.half_logdet -= 0.5 * log_h;
  return diag.allFinite() && (diag.array() > 0).all() && s.mu.allFinite();
}

// Parallel EP: every site from the cavities of the current posterior, then
// one refresh (spec §3.2, last paragraph; use damping < 1).
double sweep_parallel(const VectorXd& y, const EpLikelihood& lik, const EpOptions& opt,
                      double delta, EpState& s) {
  const int n = static_cast<int>(y.size());
  const VectorXd diag = s.sigma.diagonal();
  const VectorXd mu = s.mu;
  const VectorXd tau_old = s.site_tau, nu_old = s.site_nu;
  double max_change = 0;
  for (int i = 0; i < n; ++i) {
    double dt, dn;
    // s.site_*(i) are still the sites the posterior was built from
    if (!propose_site(i, diag(i), mu(i), y, lik, opt, delta, s, dt, dn)) {
      ++s.skipped;
      continue;
    }
    s.site_tau(i) = tau_old(i) + dt;
    s.site_nu(i) = nu_old(i) + dn;
    max_change = std::max(max_change, std::max(std::abs(dt), std::abs(dn)));
  }
  return max_change;
}

}  // namespace

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
    if (ep_refresh(k, chol_k, w, opt.parallel) && ep_evidence(y, lik, w) && w.log_z > s.log_z)
      s = std::move(w);
  }

  double delta = opt.damping;
  double log_z_old = s.log_z;
  std::vector<int> perm(n);
  SweepWorkspace work;
  MatrixXd sigma_prev, spare;  // recycled n x n storage
  int sweep = 0;
  // Sequential blocked sweeps take Sigma from their own factors
  // (refresh_from_sweep), with an exact refresh from K after every
  // `refresh_every`-th sweep (0: never), which bounds the rounding drift; the
  // state returned is that of the last refresh. Below kMinFactorN the
  // O(n^2) work of the factor refresh outweighs the n^3/3 flops it saves.
  const bool use_factor = !opt.parallel && opt.block_size > 0 && opt.refresh_every != 1 &&
                          n >= kMinFactorN;
  int factor_run = 0;       // consecutive refreshes from the sweeps' factors
  // After a factor refresh s.sigma is stored in that sweep's visiting order:
  // s.sigma(a, b) = Sigma[order[a], order[b]] (empty: the original order),
  // which saves an n x n permutation per sweep; `diag` is diag(Sigma) in the
  // original order and `gidx` the storage position of each visited site.
  std::vector<int> order, gidx(n), pos(n);
  VectorXd diag;
  auto evidence = [&]() {
    if (order.empty()) return ep_evidence(y, lik, s);
    return ep_evidence_diag(y, lik, diag, s);
  };
  auto exact_refresh = [&]() {
    order.clear();
    return ep_refresh(k, chol_k, s, opt.parallel, &spare) && ep_evidence(y, lik, s);
  };
  while (sweep < opt.max_sweeps) {
    ++sweep;
    monitor.check();
    // The sweep changes only the sites; sigma and mu stay those of the last
    // refresh (the reference path works on copies), so a revert needs no
    // n x n copy.
    const VectorXd tau0 = s.site_tau, nu0 = s.site_nu;
    double max_change;
    if (opt.parallel) {
      max_change = sweep_parallel(y, lik, opt, delta, s);
    } else {
      random_permutation(perm, rng);
      if (opt.block_size > 0) {
        if (order.empty()) {
          gidx = perm;
        } else {
          for (int a = 0; a < n; ++a) pos[order[a]] = a;
          for (int j = 0; j < n; ++j) gidx[j] = pos[perm[j]];
        }
        max_change = sweep_blocked(y, lik, opt, delta, perm, gidx, s, work);
      } else {
        max_change = sweep_reference(y, lik, opt, delta, perm, s);
      }
    }
    // Refresh after every sweep: rank-one updates lose precision, and the
    // next sweep starts from the refreshed Sigma. Parallel EP needs only
    // diag(Sigma) and mu between sweeps.
    const VectorXd mu0 = s.mu;
    const VectorXd diag0 = s.sigma.diagonal();
    const double half_logdet0 = s.half_logdet;
    const std::vector<int> order0 = order;
    const VectorXd sdiag0 = order.empty() ? VectorXd() : diag;
    if (!opt.parallel) sigma_prev.swap(s.sigma);  // Sigma0 kept for a revert
    const bool factor =
        use_factor && (opt.refresh_every <= 0 || factor_run < opt.refresh_every - 1);
    bool ok = false, exact_now = true;
    if (factor) {
      ok = refresh_from_sweep(perm, work, spare, s, diag);
      if (ok) {
        order = perm;
        ok = evidence();
      }
      exact_now = !ok;
      if (!ok) s.half_logdet = half_logdet0;  // decide on the exact posterior instead
    }
    if (!ok) ok = exact_refresh();
    auto revert = [&]() {
      // Revert-and-halve damping (spec §3.3, GPstuff's strategy).
      s.site_tau = tau0; s.site_nu = nu0; s.mu = mu0; s.half_logdet = half_logdet0;
      if (opt.parallel) {
        s.sigma.resize(n, n);
        s.sigma.diagonal() = diag0;
      } else {
        s.sigma.swap(sigma_prev);
        order = order0;
        diag = sdiag0;
      }
      if (!evidence()) throw NumericalError("EP: lost a proper posterior while reverting");
      ++s.reverts;
      delta *= 0.5;
      if (delta < 1e-3) {
        throw NumericalError("EP found no proper posterior: damping fell below 1e-3 "
                             "(the hyperparameters make the posterior improper)");
      }
    };
    if (!ok) {
      revert();
      continue;
    }
    const bool small =
        std::abs(s.log_z - log_z_old) < opt.tol_logz && max_change < opt.tol_site * delta;
    factor_run = exact_now ? 0 : factor_run + 1;
    s.trace.push_back(s.log_z);
    log_z_old = s.log_z;
    if (sweep >= opt.min_sweeps && small) {
      s.converged = true;
      break;
    }
  }
  if (opt.parallel) {
    // Gradients and predictions need the whole Sigma.
    if (!(ep_refresh(k, chol_k, s, false) && ep_evidence(y, lik, s)))
      throw NumericalError("EP: the final parallel-EP sites give an improper posterior");
  } else if (!order.empty()) {
    // back to the original order for the caller
    spare.resize(n, n);
    for (int b = 0; b < n; ++b) {
      const double* src = s.sigma.data() + static_cast<std::ptrdiff_t>(b) * n;
      double* dst = spare.data() + static_cast<std::ptrdiff_t>(order[b]) * n;
      for (int a = 0; a < n; ++a) dst[order[a]] = src[a];
    }
    s.sigma.swap(spare);
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
      const double sii = s.sigma.rows() == n ? s.sigma(i, i) : s.var(i);
      const double sd = std::sqrt(lik.sigma * lik.sigma + sii);
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

FitResult fit_ep_outer(const Kernel& kernel, const VectorXd& y, EpLikelihood lik,
                       const FitOptions& opt, const EpRunner& run,
                       const EpGradient& gradient, Monitor& monitor) {
  FitResult res;
  VectorXd log_par = kernel.log_par();
  VectorXd warm_tau, warm_nu;
  bool have_warm = false;

  auto run_at = [&](const VectorXd& lp) -> EpState {
    ++res.ep_runs;
    EpState st = run(lp, lik, have_warm ? &warm_tau : nullptr, have_warm ? &warm_nu : nullptr);
    if (!st.converged) ++res.ep_not_converged;
    warm_tau = st.site_tau;
    warm_nu = st.site_nu;
    have_warm = true;
    return st;
  };

  // EP at lp, warm-started; if that finds no proper posterior, once more from
  // zero sites (a warm start from other hyperparameters or another epsilon
  // can lead EP astray where a cold start does not). Throws if both fail.
  auto run_robust = [&](const VectorXd& lp) -> EpState {
    try {
      return run_at(lp);
    } catch (const NumericalError&) {
      if (!have_warm) throw;
      have_warm = false;
      return run_at(lp);
    }
  };
  // After a failed step the previous state stands: warm-start from it again.
  auto keep_state = [&](const EpState& prev) {
    warm_tau = prev.site_tau;
    warm_nu = prev.site_nu;
    have_warm = true;
    ++res.ep_failures;
  };

  const int nf = static_cast<int>(opt.free.size());
  const bool learn_kernel = opt.learn_kernel && nf > 0;
  // The optimiser's variables: the free log-hyperparameters, then (joint
  // mode) log(epsilon).
  const bool joint = opt.learn_epsilon && opt.joint_epsilon && opt.rule == EpsilonRule::Tilted &&
                     learn_kernel;
  const int nv = nf + (joint ? 1 : 0);
  VectorXd lo(nv), hi(nv);
  for (int j = 0; j < nf; ++j) {
    lo(j) = opt.lower(opt.free[j]);
    hi(j) = opt.upper(opt.free[j]);
  }
  if (joint) {
    lo(nf) = std::log(opt.eps_min);
    hi(nf) = std::log(opt.eps_max);
  }
  // Progress: the outer (epsilon) iterations when epsilon is learned, else
  // the objective evaluations of the kernel optimiser (total unknown).
  int evaluations = 0;
  Objective objective = [&](const VectorXd& tf, VectorXd& grad) -> double {
    if (!opt.learn_epsilon) monitor.progress(++evaluations, -1);
    VectorXd lp = log_par;
    for (int j = 0; j < nf; ++j) lp(opt.free[j]) = tf(j);
    if (joint) lik.epsilon = std::exp(tf(nf));
    EpState st;
    try {
      st = run_robust(lp);
    } catch (const NumericalError&) {
      ++res.ep_failures;  // the optimiser treats this point as +inf
      throw;
    }
    const VectorXd g = gradient(lp, st);
    for (int j = 0; j < nf; ++j) grad(j) = -g(opt.free[j]);
    // d log Z_EP / d log eps = eps * sum_i (1 - 2 Phi(z_i)) / Z_i (spec §3.6)
    if (joint) grad(nf) = -lik.epsilon * st.dlogz_deps.sum();
    return -st.log_z;
  };
  auto optimise = [&](int iters) {
    VectorXd x0(nv);
    for (int j = 0; j < nf; ++j) x0(j) = log_par(opt.free[j]);
    if (joint) x0(nf) = std::min(hi(nf), std::max(lo(nf), std::log(lik.epsilon)));
    BoxOptions bo;
    bo.max_iter = iters;
    const BoxResult br = minimize_box(objective, x0, lo, hi, bo, monitor);
    for (int j = 0; j < nf; ++j) log_par(opt.free[j]) = br.x(j);
    if (joint) lik.epsilon = std::exp(br.x(nf));
    return br;
  };

  EpState st = run_at(log_par);
  if (!opt.learn_epsilon && !learn_kernel) {
    res.converged = st.converged;
  } else if (!opt.learn_epsilon) {
    const VectorXd lp_start = log_par;
    BoxResult br;
    try {
      br = optimise(opt.max_outer * opt.lbfgs_steps);
    } catch (const NumericalError&) {
      // EP lost its proper posterior at the optimiser's start (EP's random
      // visiting order can decide this near the edge): keep the start.
      br.x = VectorXd();
      br.iterations = 0;
      br.converged = false;
      br.message = "stopped: no proper EP posterior at the optimiser's start";
    }
    try {
      st = run_robust(log_par);
    } catch (const NumericalError&) {  // keep the start, which had a proper posterior
      log_par = lp_start;
      keep_state(st);
    }
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
      bool stuck = false;
      lik.epsilon = epsilon_update(y, st, lik, opt.rule, opt.eps_min, opt.eps_max);
      try {
        st = run_robust(log_par);
      } catch (const NumericalError&) {  // reject the epsilon step
        lik.epsilon = eps_old;
        keep_state(st);
        stuck = true;
      }
      if (learn_kernel) {
        const double eps_em = lik.epsilon;
        bool stepped = true;
        try {
          optimise(opt.lbfgs_steps);
        } catch (const NumericalError&) {
          // no proper EP posterior at the optimiser's start (a fresh EP run
          // at the point just accepted, with another visiting order): the
          // kernel (and joint epsilon) step is skipped and the accepted state
          // stands
          log_par = lp_old;
          lik.epsilon = eps_em;
          keep_state(st);
          stepped = false;
        }
        if (stepped) {
          try {
            st = run_robust(log_par);
            stuck = false;
          } catch (const NumericalError&) {  // reject the kernel (and joint epsilon) step
            log_par = lp_old;
            lik.epsilon = eps_em;
            keep_state(st);
          }
        }
      }
      if (stuck && (!learn_kernel || log_par == lp_old)) {
        res.outer_iterations = t;
        res.message = "stopped: no proper EP posterior at the next epsilon or kernel step";
        break;
      }
      res.outer_iterations = t;
      monitor.progress(t, opt.max_outer);
      res.logz_trace.push_back(st.log_z);
      res.eps_trace.push_back(lik.epsilon);
      res.par_trace.push_back(log_par);
      const double dtheta = nf > 0 ? (log_par - lp_old).cwiseAbs().maxCoeff() : 0.0;
      const bool small_step = std::abs(lik.epsilon - eps_old) < opt.tol_eps && dtheta < opt.tol_theta;
      const bool flat = std::abs(st.log_z - log_z_old) < opt.tol_logz;
      log_z_old = st.log_z;
      if (small_step || flat) {
        res.converged = true;
        break;
      }
    }
    if (joint && res.converged) {
      // The joint L-BFGS steps end wherever their last line search did; a
      // final EM step at the converged kernel puts epsilon at the maximiser
      // of log Z_EP given the cavities, as the EM-only loop ends.
      const double eps_last = lik.epsilon;
      lik.epsilon = epsilon_update(y, st, lik, opt.rule, opt.eps_min, opt.eps_max);
      try {
        EpState polished = run_robust(log_par);
        if (polished.log_z >= st.log_z - opt.tol_logz) {
          st = std::move(polished);
          res.logz_trace.back() = st.log_z;
          res.eps_trace.back() = lik.epsilon;
        } else {
          lik.epsilon = eps_last;
        }
      } catch (const NumericalError&) {
        lik.epsilon = eps_last;
        keep_state(st);
      }
    }
    if (res.message.empty()) {
      res.message = res.converged ? "converged" : "maximum number of outer iterations reached";
    }
  }
  res.jitter = st.jitter;
  res.log_par = log_par;
  res.epsilon = lik.epsilon;
  res.state = std::move(st);
  return res;
}

FitResult fit_gpc_ep(const MatrixXd& x, const VectorXd& y, Kernel kernel, EpLikelihood lik,
                     const FitOptions& opt, std::uint64_t seed, Monitor& monitor) {
  std::mt19937_64 rng(seed);
  EpRunner run = [&](const VectorXd& lp, const EpLikelihood& l, const VectorXd* wt,
                     const VectorXd* wn) {
    Kernel kk = kernel;
    kk.set_log_par(lp);
    return run_ep(kk.gram(x), y, l, opt.ep, rng, monitor, wt, wn);
  };
  EpGradient gradient = [&](const VectorXd& lp, const EpState& st) {
    Kernel kk = kernel;
    kk.set_log_par(lp);
    return ep_kernel_gradient(kk, x, st);
  };
  FitResult res = fit_ep_outer(kernel, y, lik, opt, run, gradient, monitor);
  kernel.set_log_par(res.log_par);
  res.k = kernel.gram(x);
  if (res.jitter > 0) res.k.diagonal().array() += res.jitter;
  return res;
}

}  // namespace noisylabels
