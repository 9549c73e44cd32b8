// The sequential sweep of sparse (FITC) EP and the pieces of the posterior
// representation it shares with the refresh in gpc_ep_sparse.cpp (internal
// to the sparse backend; the math is in gpc_ep_sparse.h).
#pragma once

#include <vector>

#include "common/monitor.h"
#include "ep/ep_types.h"
#include "ep/gpc_ep_sparse.h"

namespace noisylabels {

// b <- L^-1 b (trans "N") or L^-T b (trans "T"), L lower m x m, b m x k.
void fitc_tri_solve(const MatrixXd& l, const char* trans, MatrixXd& b);

// Site weights g = 1/(1 + lambda tau) and w = tau g; false if some
// 1 + lambda_i tau_i <= 0 (then the posterior is improper).
bool fitc_site_weights(const FitcPrior& p, const VectorXd& tau, VectorXd& g, VectorXd& w);

// M = I + U diag(w) U' (both triangles), at most n m^2 flops: one dsyrk per
// sign over the sites with w_i != 0 (none at all for zero sites).
MatrixXd fitc_build_m(const FitcPrior& p, const VectorXd& w);

// Cholesky factor of M (lower triangle read) without jitter; false if M is
// not positive definite or not finite.
bool fitc_factor_m(MatrixXd mm, Cholesky& chol_m);

// M and its Cholesky factor with the site precisions they were built from:
// the refresh after a sweep leaves them to the next sweep, which would
// otherwise rebuild the same M (n m^2 flops) and refactor it.
struct FitcM {
  VectorXd tau;
  MatrixXd mm;
  Cholesky chol;
  bool holds(const VectorXd& t) const { return tau.size() == t.size() && tau == t; }
};

// One sequential sweep in blocks of about m/2 sites, visiting `perm` (see
// gpc_ep_sparse.h). Returns false if M lost positive definiteness after a
// block (the caller then reverts the sweep); max_change gets the largest
// site change. `cached` is used if it holds M at the current site
// precisions. With `m_out`, the last block's change is added to M too and M
// at the new sites (lower triangle, updated block by block) is moved there,
// unfactored.
bool sweep_fitc(const FitcPrior& p, const VectorXd& y, const EpLikelihood& lik,
                const EpOptions& opt, double delta, const std::vector<int>& perm, EpState& s,
                double& max_change, Monitor& monitor, const FitcM& cached, MatrixXd* m_out);

}  // namespace noisylabels
