// The EP schedule shared by the dense and the sparse backends.
#include "ep/ep_schedule.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>

#include "ep/ep_site.h"

namespace noisylabels {

void random_permutation(std::vector<int>& perm, std::mt19937_64& rng) {
  const int n = static_cast<int>(perm.size());
  for (int i = 0; i < n; ++i) perm[i] = i;
  for (int i = n - 1; i > 0; --i) {
    const int j = static_cast<int>(rng() % static_cast<std::uint64_t>(i + 1));
    std::swap(perm[i], perm[j]);
  }
}

bool ep_evidence_diag(const VectorXd& y, const EpLikelihood& lik, const VectorXd& post_var,
                      EpState& s) {
  const int n = static_cast<int>(y.size());
  s.cav_tau.resize(n); s.cav_nu.resize(n); s.z.resize(n); s.log_zi.resize(n);
  s.dlogz_deps.resize(n); s.flip_prob.resize(n);
  double total = -s.half_logdet + 0.5 * s.site_nu.dot(s.mu);
  for (int i = 0; i < n; ++i) {
    const double sii = post_var(i);
    if (!(sii > 0)) return false;
    const double tc = 1.0 / sii - s.site_tau(i);
    const double nc = s.mu(i) / sii - s.site_nu(i);
    if (!(tc > 0)) return false;
    s.cav_tau(i) = tc;
    s.cav_nu(i) = nc;
    const SiteMoments m = tilted_moments(y(i), nc / tc, 1.0 / tc, lik);
    s.z(i) = m.z; s.log_zi(i) = m.log_z; s.dlogz_deps(i) = m.dlogz_deps; s.flip_prob(i) = m.flip_prob;
    // log Z_EP term of site i, valid for either sign of site_tau.
    total += m.log_z + 0.5 * std::log1p(s.site_tau(i) / tc) + 0.5 * nc * nc / tc -
             0.5 * s.mu(i) * s.mu(i) / sii;
  }
  s.log_z = total;
  return std::isfinite(total);
}

double sweep_parallel(const VectorXd& y, const EpLikelihood& lik, const EpOptions& opt,
                      double delta, const VectorXd& post_var, EpState& s, const SiteCheck& check) {
  const int n = static_cast<int>(y.size());
  const VectorXd tau_old = s.site_tau, nu_old = s.site_nu;
  double max_change = 0;
  for (int i = 0; i < n; ++i) {
    double dt, dn;
    // s.site_*(i) are still the sites the posterior was built from
    if (!propose_site(i, post_var(i), s.mu(i), y, lik, opt, delta, s, dt, dn) ||
        (check && !check(i, tau_old(i) + dt))) {
      ++s.skipped;
      continue;
    }
    s.site_tau(i) = tau_old(i) + dt;
    s.site_nu(i) = nu_old(i) + dn;
    max_change = std::max(max_change, std::max(std::abs(dt), std::abs(dn)));
  }
  return max_change;
}

void warm_start(const EpOptions& opt, const VectorXd* warm_tau, const VectorXd* warm_nu,
                EpState& s, const std::function<bool(EpState&)>& refresh) {
  const auto n = s.site_tau.size();
  if (!(warm_tau && warm_nu && warm_tau->size() == n && warm_nu->size() == n)) return;
  EpState w = s;
  w.site_tau = opt.clamp ? VectorXd(warm_tau->cwiseMax(0.0)) : *warm_tau;
  w.site_nu = *warm_nu;
  if (refresh(w) && w.log_z > s.log_z) s = std::move(w);
}

void run_sweeps(const EpOptions& opt, Monitor& monitor, const char* name, EpState& s,
                const SweepStep& step) {
  double delta = opt.damping;
  double log_z_old = s.log_z;
  int sweep = 0;
  while (sweep < opt.max_sweeps) {
    ++sweep;
    monitor.check();
    double max_change = 0;
    if (!step(delta, max_change)) {
      ++s.reverts;
      delta *= 0.5;
      if (delta < 1e-3) {
        throw NumericalError(std::string(name) +
                             " found no proper posterior: damping fell below 1e-3 "
                             "(the hyperparameters make the posterior improper)");
      }
      continue;
    }
    const bool small =
        std::abs(s.log_z - log_z_old) < opt.tol_logz && max_change < opt.tol_site * delta;
    s.trace.push_back(s.log_z);
    log_z_old = s.log_z;
    if (sweep >= opt.min_sweeps && small) {
      s.converged = true;
      break;
    }
  }
  s.sweeps = sweep;
  s.damping = delta;
  s.negative_tau = (s.site_tau.array() < 0).any();
}

}  // namespace noisylabels
