// Tilted moments of the labelling-error likelihood and the site update they
// give (Kim & Ghahramani 2008, corrected: Minka's listing is restated in
// natural parameters so that negative site precisions are allowed).
#include "ep/ep_site.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace noisylabels {

namespace {

const double kLogSqrt2Pi = 0.91893853320467274178;  // 1/2 log(2 pi)

double log_normal_pdf(double z) { return -0.5 * z * z - kLogSqrt2Pi; }

double log_add_exp(double a, double b) {
  const double m = std::max(a, b);
  if (m == -std::numeric_limits<double>::infinity()) return m;
  return m + std::log(std::exp(a - m) + std::exp(b - m));
}

}  // namespace

double log_normal_cdf(double z) {
  if (z < -30.0) {
    // Asymptotic series of the Mills ratio.
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
  const double v = lik.probit_scale * lik.probit_scale + cav_var;
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
  if (eps == 0.0 && lik.probit_scale == 0.0 && z < -40.0) {
    // Truncated-normal variance for z << 0 without cancellation.
    const double z2 = 1.0 / (z * z);
    factor = z2 - 6.0 * z2 * z2 + 50.0 * z2 * z2 * z2;
    q = 1.0 - factor;
  } else {
    factor = 1.0 - (cav_var / v) * q;
  }
  m.d2logz_dmean2 = -q / v;
  m.tilted_mean = cav_mean + cav_var * m.dlogz_dmean;
  m.tilted_var = cav_var * factor;
  // The inverse of R&W eq. 3.59 in natural parameters.
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

bool propose_site(int i, double post_var_i, double post_mean_i, const VectorXd& y,
                  const EpLikelihood& lik, const EpOptions& opt, double delta, const EpState& s,
                  double& dt, double& dn) {
  const double tc = 1.0 / post_var_i - s.site_tau(i);
  const double nc = post_mean_i / post_var_i - s.site_nu(i);
  if (!(tc > 0)) return false;  // improper cavity: leave the site alone
  const SiteMoments m = tilted_moments(y(i), nc / tc, 1.0 / tc, lik);
  double th = m.site_tau, nh = m.site_nu;
  if (opt.clamp) th = std::max(th, 0.0);
  th = (1.0 - delta) * s.site_tau(i) + delta * th;
  nh = (1.0 - delta) * s.site_nu(i) + delta * nh;
  if (!std::isfinite(th) || !std::isfinite(nh)) return false;
  dt = th - s.site_tau(i);
  dn = nh - s.site_nu(i);
  return 1.0 + dt * post_var_i > 0;
}

VectorXd ep_b(const EpState& s) {
  return s.site_nu - s.site_tau.cwiseProduct(s.mu);
}

}  // namespace noisylabels
