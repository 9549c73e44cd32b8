// Dense EP's sequential sweeps (internal to the dense backend, used by
// run_ep in gpc_ep.cpp): the unblocked reference, the blocked left-looking
// sweep and the posterior covariance taken from that sweep's own factors.
#pragma once

#include <vector>

#include "common/monitor.h"
#include "ep/ep_types.h"

namespace noisylabels {

// Storage a blocked sweep leaves for refresh_from_sweep (n x n U and the
// rank-one coefficients c, g in visiting order).
struct SweepWorkspace {
  MatrixXd u, tri;
  VectorXd rhs_store, c, g, mu_blk, coef;
};

// Reference sequential sweep: Sherman-Morrison rank-one updates of a copy of
// the full posterior covariance and mu (R&W eq. 3.70; GPML infEP's
// ep_up_ex). n^2 memory traffic per site. Returns the largest site change.
double sweep_reference(const VectorXd& y, const EpLikelihood& lik, const EpOptions& opt,
                       double delta, const std::vector<int>& perm, EpState& s);

// The same iterates (up to rounding) by delayed left-looking updates in
// blocks of opt.block_size, n^3/3 flops in BLAS 3. `gidx[j]` is the
// row/column of s.post_cov that holds site perm[j] (s.post_cov may be stored
// in the visiting order of the previous sweep).
double sweep_blocked(const VectorXd& y, const EpLikelihood& lik, const EpOptions& opt,
                     double delta, const std::vector<int>& perm, const std::vector<int>& gidx,
                     EpState& s, SweepWorkspace& w, Monitor& monitor = null_monitor());

// The posterior covariance after a blocked sweep from the sweep's own
// factors, without going back to K. `lam` is n x n scratch swapped with
// s.post_cov, which then holds the result in the visiting order `perm`;
// `post_var` receives its diagonal in the original order. False if the
// result is not a proper posterior (the caller then refreshes from K).
bool refresh_from_sweep(const std::vector<int>& perm, SweepWorkspace& w, MatrixXd& lam,
                        EpState& s, VectorXd& post_var, Monitor& monitor = null_monitor());

}  // namespace noisylabels
