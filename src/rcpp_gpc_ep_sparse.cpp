// Glue: sparse (FITC) EP Gaussian-process classification (src/gpc_ep_sparse.*).
#include "noisylabels_types.h"
#include "rcpp_common.h"
#include "rcpp_monitor.h"
#include "ep/gpc_ep_sparse.h"
#include "rcpp_gpc_ep.h"

using namespace noisylabels;

namespace {

EpOptions sparse_ep_options(const Rcpp::List& o) {
  EpOptions e;
  e.max_sweeps = Rcpp::as<int>(o["max_sweeps"]);
  e.min_sweeps = Rcpp::as<int>(o["min_sweeps"]);
  e.tol_logz = Rcpp::as<double>(o["tol_logz"]);
  e.tol_site = Rcpp::as<double>(o["tol_site"]);
  e.damping = Rcpp::as<double>(o["damping"]);
  e.clamp = Rcpp::as<bool>(o["clamp"]);
  if (o.containsElementNamed("schedule"))
    e.parallel = Rcpp::as<std::string>(o["schedule"]) == "parallel";
  return e;
}

Rcpp::List sparse_state_to_list(const EpState& s) {
  Rcpp::List out;
  out["site_tau"] = s.site_tau; out["site_nu"] = s.site_nu;
  out["mu"] = s.mu; out["var"] = s.var;
  out["cav_tau"] = s.cav_tau; out["cav_nu"] = s.cav_nu;
  out["z"] = s.z; out["log_zi"] = s.log_zi;
  out["dlogz_deps"] = s.dlogz_deps; out["flip_prob"] = s.flip_prob;
  out["b"] = ep_b(s); out["log_z"] = s.log_z;
  out["half_logdet"] = s.half_logdet; out["sweeps"] = s.sweeps;
  out["reverts"] = s.reverts; out["skipped"] = s.skipped;
  out["damping"] = s.damping; out["jitter"] = s.jitter;
  out["converged"] = s.converged; out["negative_tau"] = s.negative_tau;
  out["trace"] = s.trace;
  return out;
}

}  // namespace

// EP on the FITC prior with given inducing inputs, at fixed hyperparameters,
// with the log Z_EP gradient (tests compare it with dense EP and finite
// differences).
// [[Rcpp::export(.gpc_ep_sparse_run)]]
Rcpp::List gpc_ep_sparse_run_cpp(const MapMat x, const MapMat z, const MapVec y, Rcpp::List spec,
                                 double epsilon, double sigma, Rcpp::List ep, double seed,
                                 bool gradient = true) {
  std::mt19937_64 rng(static_cast<std::uint64_t>(seed));
  RMonitor monitor;
  const Kernel kernel = kernel_from_list(spec);
  const MatrixXd xm = x, zm = z;
  EpLikelihood lik{epsilon, sigma};
  try {
    const FitcPrior p = fitc_prior(kernel, xm, zm, JitterPolicy());
    const EpState s = run_ep_fitc(p, y, lik, sparse_ep_options(ep), rng, monitor);
    Rcpp::List out = sparse_state_to_list(s);
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

// The full sparse fit (spec §4.4 outer loop on the FITC prior).
// [[Rcpp::export(.gpc_ep_sparse_fit)]]
Rcpp::List gpc_ep_sparse_fit_cpp(const MapMat x, const MapMat z, const MapVec y, Rcpp::List spec,
                                 double epsilon, double sigma, bool learn_epsilon,
                                 std::string rule, bool learn_kernel, Rcpp::IntegerVector free,
                                 const MapVec lower, const MapVec upper, int max_outer,
                                 int lbfgs_steps, Rcpp::List ep, double seed,
                                 Rcpp::Nullable<Rcpp::Function> progress = R_NilValue) {
  RMonitor monitor(progress);
  const Kernel kernel = kernel_from_list(spec);
  const FitOptions opt = fit_options_from_r(sparse_ep_options(ep), learn_epsilon, rule,
                                            learn_kernel, free, lower, upper, max_outer,
                                            lbfgs_steps, ep);
  const MatrixXd xm = x, zm = z;
  const SparseFitResult r = fit_gpc_ep_fitc(xm, zm, y, kernel, EpLikelihood{epsilon, sigma}, opt,
                                            static_cast<std::uint64_t>(seed), monitor);
  monitor.flush();
  return Rcpp::List::create(
      Rcpp::Named("state") = sparse_state_to_list(r.fit.state), Rcpp::Named("log_par") = r.fit.log_par,
      Rcpp::Named("epsilon") = r.fit.epsilon, Rcpp::Named("jitter") = r.fit.jitter,
      Rcpp::Named("outer_iterations") = r.fit.outer_iterations,
      Rcpp::Named("converged") = r.fit.converged, Rcpp::Named("ep_runs") = r.fit.ep_runs,
      Rcpp::Named("ep_failures") = r.fit.ep_failures,
      Rcpp::Named("ep_not_converged") = r.fit.ep_not_converged,
      Rcpp::Named("logz_trace") = r.fit.logz_trace, Rcpp::Named("eps_trace") = r.fit.eps_trace,
      Rcpp::Named("par_trace") = par_trace_matrix(r.fit),
      Rcpp::Named("message") = r.fit.message, Rcpp::Named("beta") = r.predictor.beta,
      Rcpp::Named("pred_cov") = r.predictor.cov);
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
