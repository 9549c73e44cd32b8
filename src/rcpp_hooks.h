// Glue functions that serve only tests and benchmarks: internal quantities
// (an objective at a fixed point, a kernel gradient, one EP run on a given
// Gram matrix, a Cholesky variant, ...) and timings. They are not Rcpp
// exports of their own: R reaches every one through the single export
// .hook(name, args) (src/rcpp_hooks.cpp), tests through
// tests/testthat/helper-hooks.R (`hook(name, ...)`), benchmarks as
// noisylabels:::.hook(name, list(...)). Each is defined in the glue file of
// its module; arguments are positional and all required.
#pragma once

#include <RcppEigen.h>

#include <string>

#include "noisylabels_types.h"

// rcpp_blas.cpp: the BLAS's current thread count, NA when it cannot be read.
int blas_threads_get_cpp();

// rcpp_gpc_ep.cpp, rcpp_gpc_ep_sparse.cpp: EP pieces on a given Gram matrix.
Rcpp::DataFrame gpc_ep_moments_cpp(const MapVec y, const MapVec cav_mean, const MapVec cav_var,
                                   double epsilon, double probit_scale);
Rcpp::List gpc_ep_run_k_cpp(const MapMat k, const MapVec y, double epsilon, double probit_scale,
                            Rcpp::List ep, double seed);
Rcpp::List gpc_ep_evidence_k_cpp(const MapMat k, const MapVec y, const MapVec site_tau,
                                 const MapVec site_nu, double epsilon, double probit_scale,
                                 bool diagonal_only);
Rcpp::List gpc_ep_gradient_cpp(const MapMat x, const MapVec y, Rcpp::List spec, double epsilon,
                               double probit_scale, Rcpp::List ep, double seed);
Rcpp::List gpc_ep_sparse_run_cpp(const MapMat x, const MapMat z, const MapVec y, Rcpp::List spec,
                                 double epsilon, double probit_scale, Rcpp::List ep, double seed,
                                 bool gradient);

// rcpp_gpr_loo.cpp, rcpp_gpr_pursuit.cpp: objectives at fixed parameters.
Rcpp::List gpr_loo_eval_cpp(const MapMat x, const MapVec y, Rcpp::List spec, const MapVec sigma,
                            Rcpp::List options);
Rcpp::List gpr_loo_nll_grad_cpp(const MapMat x, const MapVec y, Rcpp::List spec, const MapVec sigma,
                                Rcpp::List options, int reps);
Rcpp::List gpr_loo_sweeps_cpp(const MapMat x, const MapVec y, Rcpp::List spec, const MapVec sigma0,
                              Rcpp::List options, int sweeps);
Rcpp::List gpr_pursuit_objective_cpp(const MapMat x, const MapVec y, Rcpp::List spec,
                                     const MapVec z, Rcpp::IntegerVector support, bool convex,
                                     Rcpp::Nullable<Rcpp::NumericVector> prior_mu,
                                     Rcpp::Nullable<Rcpp::NumericVector> prior_sd,
                                     Rcpp::Nullable<Rcpp::IntegerMatrix> neighbors);

// rcpp_kernels.cpp: kernel diagonals and gradients.
Eigen::VectorXd kernel_diag_cpp(const MapMat x, Rcpp::List spec);
Eigen::VectorXd kernel_gradient_cpp(const MapMat x, const MapMat w, Rcpp::List spec);
Eigen::MatrixXd kernel_diag_gradient_cpp(const MapMat x, Rcpp::List spec);

// rcpp_label_dist.cpp: the ELBO and one coordinate update.
Rcpp::NumericVector ld_elbo_cpp(const MapMat x, const MapMat s, Rcpp::IntegerVector group_ptr,
                                Rcpp::IntegerVector pair_unit, Rcpp::NumericVector hyper,
                                Rcpp::List state, bool structured, bool vb_c, bool exact);
Rcpp::List ld_update_cpp(const MapMat x, const MapMat s, Rcpp::IntegerVector group_ptr,
                         Rcpp::IntegerVector pair_unit, Rcpp::NumericVector hyper, Rcpp::List state,
                         std::string block, bool structured, bool vb_c, bool exact);
Rcpp::List ld_w_objective_cpp(const MapMat x, const MapMat zeta, double alpha_w, const MapMat w);

// rcpp_linalg.cpp: Cholesky variants, their timings, the box-constrained
// L-BFGS on an R objective.
Rcpp::List chol_loo_cpp(const MapMat a, const MapVec r, std::string backend, double base_jitter);
Eigen::MatrixXd chol_inverse_cpp(const MapMat a, std::string backend);
Eigen::MatrixXd chol_rank_one_cpp(const MapMat a, const MapVec v, double sigma);
double chol_timing_cpp(const MapMat a, std::string backend, bool full_inverse, int reps);
Rcpp::List chol_blocked_cpp(const MapMat a, int block);
double chol_blocked_timing_cpp(const MapMat a, std::string what, bool blocked, int reps, int block);
Rcpp::List minimize_box_cpp(Rcpp::Function fn, Eigen::VectorXd x0, Eigen::VectorXd lower,
                            Eigen::VectorXd upper, int max_iter);

// rcpp_monitor.cpp: the progress and interrupt path without a model.
int monitor_demo_cpp(SEXP progress, int steps, int stages, int min_interval_ms, bool other_thread,
                     int stop_at);
bool monitor_poll_cpp();

// rcpp_sgd.cpp: the memory-bandwidth floor of an SGD pass.
double sgd_stream_seconds_cpp(Rcpp::List data, int repeats);
Rcpp::NumericVector sgd_floor_seconds_cpp(Rcpp::List data, int repeats);
