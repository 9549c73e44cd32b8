// Glue shared by the dense (rcpp_gpc_ep.cpp) and the sparse
// (rcpp_gpc_ep_sparse.cpp) EP fits: the one reader of the EP and outer-loop
// options from R, the one writer of an EP state and of a fit's result back
// to R.
#ifndef NOISYLABELS_RCPP_GPC_EP_H
#define NOISYLABELS_RCPP_GPC_EP_H

#include <string>

#include "rcpp_common.h"
#include "ep/ep_outer.h"
#include "ep/ep_types.h"

namespace noisylabels {

// EpOptions from the R list of gpc_ep_ep_options() (the sparse path ignores
// block_size and refresh_every).
EpOptions ep_options_from_r(const Rcpp::List& ep);

// FitOptions of the outer (epsilon / kernel) loop; `ep` is the R list of
// gpc_ep_ep_options() (the EP options, its tol_outer_* and joint_epsilon
// entries).
FitOptions fit_options_from_r(bool learn_epsilon, const std::string& rule, bool learn_kernel,
                              const Rcpp::IntegerVector& free, const Eigen::VectorXd& lower,
                              const Eigen::VectorXd& upper, int max_outer, int lbfgs_steps,
                              const Rcpp::List& ep);

// An EP state as an R list (var: the posterior marginal variances, from
// post_cov on the dense path and post_var on the sparse one).
Rcpp::List ep_state_to_r(const EpState& s);

// A fit's result (state, hyperparameters, outer-loop counters and traces)
// as an R list; the sparse glue adds its predictor.
Rcpp::List fit_result_to_r(const FitResult& r);

}  // namespace noisylabels

#endif  // NOISYLABELS_RCPP_GPC_EP_H
