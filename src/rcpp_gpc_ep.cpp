// Glue: dense EP Gaussian-process classification (src/core/ep/) for R, and
// the options reader and result writers shared with the sparse glue.
#include "noisylabels_types.h"
#include "rcpp_common.h"
#include "rcpp_monitor.h"
#include "ep/gpc_ep.h"
#include "rcpp_gpc_ep.h"

using namespace noisylabels;

namespace {

std::uint64_t seed_from(double seed) { return static_cast<std::uint64_t>(seed); }

}  // namespace

// Tilted moments for vectors of cavities (tests compare them with quadrature).
// Hook "gpc_ep_moments" (rcpp_hooks.h), not an export: reached through .hook().
Rcpp::DataFrame gpc_ep_moments_cpp(const MapVec y, const MapVec cav_mean, const MapVec cav_var,
                                   double epsilon, double probit_scale) {
  const int n = static_cast<int>(y.size());
  Rcpp::NumericVector log_z(n), mean(n), var(n), tau(n), nu(n), deps(n), flip(n), z(n);
  EpLikelihood lik{epsilon, probit_scale};
  for (int i = 0; i < n; ++i) {
    const SiteMoments m = tilted_moments(y(i), cav_mean(i), cav_var(i), lik);
    log_z[i] = m.log_z; mean[i] = m.tilted_mean; var[i] = m.tilted_var;
    tau[i] = m.site_tau; nu[i] = m.site_nu; deps[i] = m.dlogz_deps; flip[i] = m.flip_prob;
    z[i] = m.z;
  }
  return Rcpp::DataFrame::create(Rcpp::Named("z") = z, Rcpp::Named("log_z") = log_z,
                                 Rcpp::Named("mean") = mean, Rcpp::Named("var") = var,
                                 Rcpp::Named("site_tau") = tau, Rcpp::Named("site_nu") = nu,
                                 Rcpp::Named("dlogz_deps") = deps, Rcpp::Named("flip_prob") = flip);
}

// EP on a given prior covariance K (used by tests and the objective probe).
// Hook "gpc_ep_run_k" (rcpp_hooks.h), not an export: reached through .hook().
Rcpp::List gpc_ep_run_k_cpp(const MapMat k, const MapVec y, double epsilon, double probit_scale,
                            Rcpp::List ep, double seed) {
  std::mt19937_64 rng(seed_from(seed));
  RMonitor monitor;
  EpLikelihood lik{epsilon, probit_scale};
  try {
    const EpState s = run_ep(k, y, lik, ep_options_from_r(ep), rng, monitor);
    Rcpp::List out = ep_state_to_r(s);
    out["proper"] = true;
    return out;
  } catch (const NumericalError& e) {
    return Rcpp::List::create(Rcpp::Named("proper") = false, Rcpp::Named("message") = std::string(e.what()),
                              Rcpp::Named("log_z") = R_NegInf);
  }
}

// Posterior and log Z_EP for given sites (no EP iterations). With
// diagonal_only (the refresh between parallel-EP sweeps) only var and mu are
// computed and `sigma` (the posterior covariance) is not returned.
// Hook "gpc_ep_evidence_k" (rcpp_hooks.h), not an export: reached through .hook().
Rcpp::List gpc_ep_evidence_k_cpp(const MapMat k, const MapVec y, const MapVec site_tau,
                                 const MapVec site_nu, double epsilon, double probit_scale,
                                 bool diagonal_only = false) {
  EpState s;
  s.site_tau = site_tau;
  s.site_nu = site_nu;
  JitterPolicy exact;
  exact.max_tries = 0;
  Cholesky chol_k;
  try {
    chol_k.compute(MatrixXd(k), exact);
  } catch (const NumericalError& e) {
    return Rcpp::List::create(Rcpp::Named("proper") = false, Rcpp::Named("log_z") = R_NegInf);
  }
  EpLikelihood lik{epsilon, probit_scale};
  const bool ok = ep_refresh(k, chol_k, s, diagonal_only) && ep_evidence(y, lik, s);
  if (!ok) return Rcpp::List::create(Rcpp::Named("proper") = false, Rcpp::Named("log_z") = R_NegInf);
  Rcpp::List out = ep_state_to_r(s);
  out["proper"] = true;
  if (!diagonal_only) out["sigma"] = s.post_cov;
  return out;
}

// log Z_EP and its gradient w.r.t. log kernel hyperparameters and epsilon,
// with EP run to convergence at the given hyperparameters; `value` and
// `proper` are the objective the hyperparameter optimiser sees (-log Z_EP;
// +Inf with proper = FALSE where EP finds no proper posterior or K cannot be
// factorised, exactly as inside fit_gpc_ep()).
// Hook "gpc_ep_gradient" (rcpp_hooks.h), not an export: reached through .hook().
Rcpp::List gpc_ep_gradient_cpp(const MapMat x, const MapVec y, Rcpp::List spec, double epsilon,
                               double probit_scale, Rcpp::List ep, double seed) {
  std::mt19937_64 rng(seed_from(seed));
  RMonitor monitor;
  const Kernel kernel = kernel_from_list(spec);
  const MatrixXd xm = x;
  EpLikelihood lik{epsilon, probit_scale};
  try {
    const EpState s = run_ep(kernel.gram(xm), y, lik, ep_options_from_r(ep), rng, monitor);
    return Rcpp::List::create(Rcpp::Named("log_z") = s.log_z,
                              Rcpp::Named("gradient") = ep_kernel_gradient(kernel, xm, s),
                              Rcpp::Named("dlogz_deps") = s.dlogz_deps.sum(),
                              Rcpp::Named("sweeps") = s.sweeps, Rcpp::Named("converged") = s.converged,
                              Rcpp::Named("value") = -s.log_z, Rcpp::Named("proper") = true);
  } catch (const NumericalError& e) {
    return Rcpp::List::create(Rcpp::Named("log_z") = R_NegInf, Rcpp::Named("value") = R_PosInf,
                              Rcpp::Named("proper") = false,
                              Rcpp::Named("message") = std::string(e.what()));
  }
}

// The full fit: EP, epsilon M-steps and kernel hyperparameters.
// [[Rcpp::export(.gpc_ep_fit)]]
Rcpp::List gpc_ep_fit_cpp(const MapMat x, const MapVec y, Rcpp::List spec, double epsilon,
                          double probit_scale, bool learn_epsilon, std::string rule,
                          bool learn_kernel, Rcpp::IntegerVector free, const MapVec lower,
                          const MapVec upper, int max_outer, int lbfgs_steps, Rcpp::List ep,
                          double seed, Rcpp::Nullable<Rcpp::Function> progress = R_NilValue) {
  RMonitor monitor(progress);
  const Kernel kernel = kernel_from_list(spec);
  const FitOptions opt = fit_options_from_r(learn_epsilon, rule, learn_kernel, free, lower, upper,
                                            max_outer, lbfgs_steps, ep);
  const MatrixXd xm = x;
  const FitResult r = fit_gpc_ep(xm, y, kernel, EpLikelihood{epsilon, probit_scale}, opt,
                                 seed_from(seed), monitor);
  monitor.flush();
  return fit_result_to_r(r);
}

// Predictive latent mean and variance at new inputs from the fitted sites.
// [[Rcpp::export(.gpc_ep_predict)]]
Rcpp::List gpc_ep_predict_cpp(const MapMat x, const MapMat xnew, Rcpp::List spec, double jitter,
                              const MapVec site_tau, const MapVec site_nu) {
  const Kernel kernel = kernel_from_list(spec);
  const MatrixXd xm = x, xn = xnew;
  MatrixXd k = kernel.gram(xm);
  if (jitter > 0) k.diagonal().array() += jitter;
  JitterPolicy exact;
  exact.max_tries = 0;
  Cholesky chol_k;
  if ((site_tau.array() < 0).any()) chol_k.compute(k, exact);
  EpState s;
  s.site_tau = site_tau;
  s.site_nu = site_nu;
  if (!ep_refresh(k, chol_k, s)) throw NumericalError("the stored EP sites give an improper posterior");
  VectorXd mean, var;
  ep_predict(s, kernel.cross(xm, xn), kernel.diag(xn), mean, var);
  return Rcpp::List::create(Rcpp::Named("mean") = mean, Rcpp::Named("var") = var);
}

namespace noisylabels {

EpOptions ep_options_from_r(const Rcpp::List& o) {
  EpOptions e;
  e.max_sweeps = Rcpp::as<int>(o["max_sweeps"]);
  e.min_sweeps = Rcpp::as<int>(o["min_sweeps"]);
  e.tol_logz = Rcpp::as<double>(o["tol_logz"]);
  e.tol_site = Rcpp::as<double>(o["tol_site"]);
  e.damping = Rcpp::as<double>(o["damping"]);
  e.clamp = Rcpp::as<bool>(o["clamp"]);
  e.block_size = required<int>(o, "block_size");
  e.refresh_every = required<int>(o, "refresh_every");
  e.parallel = required<std::string>(o, "schedule") == "parallel";
  return e;
}

FitOptions fit_options_from_r(bool learn_epsilon, const std::string& rule, bool learn_kernel,
                              const Rcpp::IntegerVector& free, const Eigen::VectorXd& lower,
                              const Eigen::VectorXd& upper, int max_outer, int lbfgs_steps,
                              const Rcpp::List& ep) {
  FitOptions opt;
  opt.ep = ep_options_from_r(ep);
  opt.learn_epsilon = learn_epsilon;
  opt.rule = rule == "paper" ? EpsilonRule::Paper : EpsilonRule::Tilted;
  opt.learn_kernel = learn_kernel;
  for (int j = 0; j < free.size(); ++j) opt.free.push_back(free[j]);
  opt.lower = lower;
  opt.upper = upper;
  opt.max_outer = max_outer;
  opt.lbfgs_steps = lbfgs_steps;
  opt.tol_eps = Rcpp::as<double>(ep["tol_outer_eps"]);
  opt.tol_theta = Rcpp::as<double>(ep["tol_outer_theta"]);
  opt.tol_logz = Rcpp::as<double>(ep["tol_outer_logz"]);
  opt.joint_epsilon = required<bool>(ep, "joint_epsilon");
  return opt;
}

Rcpp::List ep_state_to_r(const EpState& s) {
  Rcpp::List out;
  out["site_tau"] = s.site_tau; out["site_nu"] = s.site_nu;
  out["mu"] = s.mu; out["var"] = s.marginal_var();
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

Rcpp::List fit_result_to_r(const FitResult& r) {
  // Log-hyperparameters after each outer iteration, one row per iteration.
  Rcpp::NumericMatrix par_trace(static_cast<int>(r.par_trace.size()),
                                static_cast<int>(r.log_par.size()));
  for (int t = 0; t < par_trace.nrow(); ++t) {
    for (int j = 0; j < par_trace.ncol(); ++j) par_trace(t, j) = r.par_trace[t](j);
  }
  return Rcpp::List::create(
      Rcpp::Named("state") = ep_state_to_r(r.state), Rcpp::Named("log_par") = r.log_par,
      Rcpp::Named("epsilon") = r.epsilon, Rcpp::Named("jitter") = r.jitter,
      Rcpp::Named("outer_iterations") = r.outer_iterations, Rcpp::Named("converged") = r.converged,
      Rcpp::Named("ep_runs") = r.ep_runs, Rcpp::Named("ep_failures") = r.ep_failures,
      Rcpp::Named("ep_not_converged") = r.ep_not_converged,
      Rcpp::Named("logz_trace") = r.logz_trace, Rcpp::Named("eps_trace") = r.eps_trace,
      Rcpp::Named("par_trace") = par_trace, Rcpp::Named("message") = r.message);
}

}  // namespace noisylabels
