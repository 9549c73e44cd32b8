// Glue shared by the dense (rcpp_gpc_ep.cpp) and the sparse
// (rcpp_gpc_ep_sparse.cpp) EP fits: the outer-loop options read from R and
// the hyperparameter trace returned to it.
#ifndef NOISYLABELS_RCPP_GPC_EP_H
#define NOISYLABELS_RCPP_GPC_EP_H

#include <string>

#include "rcpp_common.h"
#include "ep/gpc_ep.h"

namespace noisylabels {

// FitOptions of the outer (epsilon / kernel) loop around EP runs with `ep_opt`;
// `ep` is the R list of gpc_ep_ep_options() (its tol_outer_* and
// joint_epsilon entries).
FitOptions fit_options_from_r(const EpOptions& ep_opt, bool learn_epsilon, const std::string& rule,
                              bool learn_kernel, const Rcpp::IntegerVector& free,
                              const Eigen::VectorXd& lower, const Eigen::VectorXd& upper,
                              int max_outer, int lbfgs_steps, const Rcpp::List& ep);

// Log-hyperparameters after each outer iteration, one row per iteration.
Rcpp::NumericMatrix par_trace_matrix(const FitResult& r);

}  // namespace noisylabels

#endif  // NOISYLABELS_RCPP_GPC_EP_H
