// Likelihood moments and single-site EP updates, shared by the dense and the
// sparse (FITC) EP: everything here sees one site and its marginal only.
#pragma once

#include "ep/ep_types.h"

namespace noisylabels {

// log Phi(z), accurate for very negative z (asymptotic Mills-ratio series
// below z = -30).
double log_normal_cdf(double z);
// phi(z) / Phi(z), accurate for very negative z.
double normal_hazard(double z);

// Moments of the tilted distribution Z_i^{-1} p(y | f) N(f; cav_mean, cav_var)
// and the new site in natural parameters.
struct SiteMoments {
  double z = 0;           // y cav_mean / sqrt(probit_scale^2 + cav_var)
  double log_z = 0;       // log Z_i
  double ratio = 0;       // r_i = (1 - 2 eps) phi(z) / Z_i
  double dlogz_dmean = 0; // d1
  double d2logz_dmean2 = 0;  // d2
  double tilted_mean = 0;
  double tilted_var = 0;
  double site_tau = 0;
  double site_nu = 0;
  double dlogz_deps = 0;  // (1 - 2 Phi(z)) / Z_i
  double flip_prob = 0;   // eps Phi(-z) / Z_i: P(label flipped | tilted)
};
SiteMoments tilted_moments(double y, double cav_mean, double cav_var, const EpLikelihood& lik);

// New site i from its current marginal (post_var_i, post_mean_i), with
// clamping and damping `delta`; false (skip the site) for an improper
// cavity, a non-finite update or one that would make the posterior variance
// <= 0. dt, dn are the changes of site_tau(i), site_nu(i).
bool propose_site(int i, double post_var_i, double post_mean_i, const VectorXd& y,
                  const EpLikelihood& lik, const EpOptions& opt, double delta, const EpState& s,
                  double& dt, double& dn);

}  // namespace noisylabels
