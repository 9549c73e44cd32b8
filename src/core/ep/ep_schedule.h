// The backend-neutral EP schedule: the visiting order, the parallel sweep,
// the evidence from the posterior marginals, the warm start and the sweep
// loop with revert-and-halve damping. The dense (gpc_ep.cpp) and the FITC
// (gpc_ep_sparse.cpp) EP supply only what depends on how the posterior is
// stored: their sequential sweep and their refresh.
#pragma once

#include <functional>
#include <random>
#include <vector>

#include "common/monitor.h"
#include "ep/ep_types.h"

namespace noisylabels {

// Fisher-Yates with explicit modulo draws, so the order depends only on the
// seed, not on the standard library's distribution implementation.
void random_permutation(std::vector<int>& perm, std::mt19937_64& rng);

// Cavities, per-site quantities and log Z_EP from the posterior marginals
// (`post_var` = diag of the posterior covariance, s.mu) and
// s.half_logdet = 1/2 log|I + K T|. Returns false if any cavity is improper.
bool ep_evidence_diag(const VectorXd& y, const EpLikelihood& lik, const VectorXd& post_var,
                      EpState& s);

// Extra test a backend puts on a proposed site (index, new site_tau); the
// FITC prior needs 1 + lambda_i tau_i > 0.
using SiteCheck = std::function<bool(int i, double new_tau)>;

// Parallel EP: every site from the cavities of the current posterior
// (marginal variances `post_var`, mean s.mu), then one refresh by the
// caller (use damping < 1). Returns the largest site change.
double sweep_parallel(const VectorXd& y, const EpLikelihood& lik, const EpOptions& opt,
                      double delta, const VectorXd& post_var, EpState& s,
                      const SiteCheck& check = nullptr);

// Warm start: `s` is the zero-site state; the warm sites (clamped if the
// options say so) replace it when `refresh` (posterior and evidence at the
// new sites) succeeds and gives a higher log Z_EP.
void warm_start(const EpOptions& opt, const VectorXd* warm_tau, const VectorXd* warm_nu,
                EpState& s, const std::function<bool(EpState&)>& refresh);

// One sweep at damping `delta` including the refresh after it; sets
// max_change. On false (no proper posterior) it has restored the state from
// before the sweep.
using SweepStep = std::function<bool(double delta, double& max_change)>;

// Sweeps until log Z_EP and the sites settle (at least opt.min_sweeps, at
// most opt.max_sweeps). A failed sweep is undone and the damping halved
// (GPstuff's strategy); below 1e-3 NumericalError is thrown, its message
// starting with `name`. Sets sweeps, reverts, damping, trace, converged and
// negative_tau of `s`.
void run_sweeps(const EpOptions& opt, Monitor& monitor, const char* name, EpState& s,
                const SweepStep& step);

}  // namespace noisylabels
