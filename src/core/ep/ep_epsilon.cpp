// Epsilon M-steps (see ep_epsilon.h).
#include "ep/ep_epsilon.h"

#include <algorithm>
#include <cmath>

#include "ep/ep_site.h"

namespace noisylabels {

double epsilon_update(const VectorXd& y, const EpState& s, const EpLikelihood& lik,
                      EpsilonRule rule, double eps_min, double eps_max) {
  const int n = static_cast<int>(y.size());
  if (rule == EpsilonRule::Paper) {
    // omega_i = P_q(y_i f_i > 0) from the posterior marginal; for the probit
    // the latent noise is added to the marginal variance.
    double total = 0;
    for (int i = 0; i < n; ++i) {
      const double sii = s.post_cov.rows() == n ? s.post_cov(i, i) : s.post_var(i);
      const double sd = std::sqrt(lik.probit_scale * lik.probit_scale + sii);
      total += std::exp(log_normal_cdf(-y(i) * s.mu(i) / sd));
    }
    return std::min(eps_max, std::max(eps_min, total / n));
  }
  // Tilted EM: its fixed point at the current cavities maximises
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

}  // namespace noisylabels
