// Glue: sparse (FITC) EP Gaussian-process classification (src/core/ep/).
// Options and results go through the readers and writers of rcpp_gpc_ep.h,
// shared with the dense glue.
#include "noisylabels_types.h"
#include "rcpp_common.h"
#include "rcpp_monitor.h"
#include "ep/gpc_ep_sparse.h"
#include "rcpp_gpc_ep.h"

using namespace noisylabels;

// EP on the FITC prior with given inducing inputs, at fixed hyperparameters,
// with the log Z_EP gradient (tests compare it with dense EP and finite
// differences).
// Hook "gpc_ep_sparse_run" (rcpp_hooks.h), not an export: reached through .hook().
Rcpp::List gpc_ep_sparse_run_cpp(const MapMat x, const MapMat z, const MapVec y, Rcpp::List spec,
                                 double epsilon, double probit_scale, Rcpp::List ep, double seed,
                                 bool gradient = true) {
  std::mt19937_64 rng(static_cast<std::uint64_t>(seed));
  RMonitor monitor;
  const Kernel kernel = kernel_from_list(spec);
  const MatrixXd xm = x, zm = z;
  EpLikelihood lik{epsilon, probit_scale};
  try {
    const FitcPrior p = fitc_prior(kernel, xm, zm, JitterPolicy());
    const EpState s = run_ep_fitc(p, y, lik, ep_options_from_r(ep), rng, monitor);
    Rcpp::List out = ep_state_to_r(s);
    out["proper"] = true;
    out["kuu_jitter"] = p.jitter;
    if (gradient) out["gradient"] = fitc_kernel_gradient(kernel, xm, zm, p, s);
    out["dlogz_deps_sum"] = s.dlogz_deps.sum();
    return out;
  } catch (const NumericalError& e) {
    return Rcpp::List::create(Rcpp::Named("proper") = false,
                              Rcpp::Named("message") = std::string(e.what()),
                              Rcpp::Named("log_z") = R_NegInf);
  }
}

// The full sparse fit (the outer loop on the FITC prior).
// [[Rcpp::export(.gpc_ep_sparse_fit)]]
Rcpp::List gpc_ep_sparse_fit_cpp(const MapMat x, const MapMat z, const MapVec y, Rcpp::List spec,
                                 double epsilon, double probit_scale, bool learn_epsilon,
                                 std::string rule, bool learn_kernel, Rcpp::IntegerVector free,
                                 const MapVec lower, const MapVec upper, int max_outer,
                                 int lbfgs_steps, Rcpp::List ep, double seed,
                                 Rcpp::Nullable<Rcpp::Function> progress = R_NilValue) {
  RMonitor monitor(progress);
  const Kernel kernel = kernel_from_list(spec);
  const FitOptions opt = fit_options_from_r(learn_epsilon, rule, learn_kernel, free, lower, upper,
                                            max_outer, lbfgs_steps, ep);
  const MatrixXd xm = x, zm = z;
  const SparseFitResult r = fit_gpc_ep_fitc(xm, zm, y, kernel, EpLikelihood{epsilon, probit_scale},
                                            opt, static_cast<std::uint64_t>(seed), monitor);
  monitor.flush();
  Rcpp::List out = fit_result_to_r(r.fit);
  out["beta"] = r.predictor.beta;
  out["pred_cov"] = r.predictor.cov;
  return out;
}

// Latent predictive mean and variance from a sparse fit's inducing summary.
// [[Rcpp::export(.gpc_ep_sparse_predict)]]
Rcpp::List gpc_ep_sparse_predict_cpp(const MapMat z, const MapMat xnew, Rcpp::List spec,
                                     const MapVec beta, const MapMat pred_cov) {
  const Kernel kernel = kernel_from_list(spec);
  const MatrixXd zm = z, xn = xnew;
  const MatrixXd ku = kernel.cross(zm, xn);  // m x n*
  VectorXd mean = ku.transpose() * beta;
  const MatrixXd sk = pred_cov * ku;
  VectorXd var = kernel.diag(xn) - ku.cwiseProduct(sk).colwise().sum().transpose();
  return Rcpp::List::create(Rcpp::Named("mean") = mean, Rcpp::Named("var") = var);
}
