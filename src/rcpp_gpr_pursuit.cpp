// Glue: relevance pursuit (src/core/gpr/gpr_pursuit.*) for R/gpr_pursuit.R.
#include "noisylabels_types.h"
#include "rcpp_common.h"
#include "rcpp_monitor.h"
#include "gpr/forward_search.h"
#include "gpr/gpr_pursuit.h"
#include "gpr/gpr_trimmed.h"

#include <limits>

using namespace noisylabels;

namespace {

PursuitOptions options_from_list(const Rcpp::List& ctl) {
  PursuitOptions o;
  o.backward = Rcpp::as<bool>(ctl["backward"]);
  o.convex = Rcpp::as<bool>(ctl["convex"]);
  o.s_max = Rcpp::as<double>(ctl["s_max"]);
  o.rho_max = Rcpp::as<double>(ctl["rho_max"]);
  o.levels = Rcpp::as<std::vector<int>>(ctl["levels"]);
  o.reset_rho = Rcpp::as<bool>(ctl["reset_rho"]);
  o.coordinate_steps = Rcpp::as<bool>(ctl["coordinate_steps"]);
  o.reuse_factor = Rcpp::as<bool>(ctl["reuse_factor"]);
  o.max_outer = Rcpp::as<int>(ctl["max_outer"]);
  o.sweeps = Rcpp::as<int>(ctl["sweeps"]);
  o.polish_iter = Rcpp::as<int>(ctl["polish_iter"]);
  o.block_fraction = Rcpp::as<double>(ctl["block_fraction"]);
  o.inner_iter = Rcpp::as<int>(ctl["inner_iter"]);
  o.profiled = required<bool>(ctl, "profiled");
  o.profile_sweeps = required<int>(ctl, "profile_sweeps");
  o.reseed_sweeps = required<int>(ctl, "reseed_sweeps");
  SEXP initial_support = nullable(ctl, "initial_support");
  if (!Rf_isNull(initial_support)) {
    for (int i : Rcpp::as<std::vector<int>>(initial_support)) o.initial_support.push_back(i - 1);
  }
  o.box.max_iter = Rcpp::as<int>(ctl["max_iter"]);
  o.box.pgtol = Rcpp::as<double>(ctl["pgtol"]);
  o.box.ftol = Rcpp::as<double>(ctl["ftol"]);
  o.jitter.backend = backend_from_string(Rcpp::as<std::string>(ctl["backend"]));
  SEXP neighbors = nullable(ctl, "neighbors");
  if (!Rf_isNull(neighbors)) o.neighbors = Rcpp::as<Eigen::MatrixXi>(Rcpp::IntegerMatrix(neighbors));
  o.threads = required<int>(ctl, "threads");
  SEXP prior_mu = nullable(ctl, "prior_mu");
  if (!Rf_isNull(prior_mu)) {
    o.prior_mu = Rcpp::as<Eigen::VectorXd>(prior_mu);
    o.prior_sd = required<Eigen::VectorXd>(ctl, "prior_sd");
  }
  return o;
}

Rcpp::List step_to_list(const PursuitStep& s) {
  Rcpp::IntegerVector support(s.support.size());
  for (std::size_t j = 0; j < s.support.size(); ++j) support[j] = s.support[j] + 1;
  return Rcpp::List::create(
      Rcpp::Named("support") = support, Rcpp::Named("value") = s.value,
      Rcpp::Named("rho") = s.rho, Rcpp::Named("log_par") = s.log_par,
      Rcpp::Named("mean") = s.mean, Rcpp::Named("log_noise") = s.log_noise,
      Rcpp::Named("nll") = s.nll, Rcpp::Named("penalty") = s.penalty,
      Rcpp::Named("iterations") = s.iterations,
      Rcpp::Named("evaluations") = s.evaluations, Rcpp::Named("converged") = s.converged,
      Rcpp::Named("message") = s.message, Rcpp::Named("trace") = Rcpp::wrap(s.trace));
}

}  // namespace

// [[Rcpp::export(.gpr_pursuit_fit)]]
Rcpp::List gpr_pursuit_fit_cpp(const MapMat x, const MapVec y, Rcpp::List spec,
                               const MapVec kernel_lower, const MapVec kernel_upper,
                               double mean0, double log_noise0, Rcpp::NumericVector mean_bounds,
                               Rcpp::NumericVector log_noise_bounds, Rcpp::List control,
                               Rcpp::Nullable<Rcpp::Function> progress = R_NilValue) {
  const Eigen::MatrixXd xm = x;
  const Eigen::VectorXd yv = y;
  Kernel kernel = kernel_from_list(spec);
  PursuitBounds b;
  b.kernel_lower = kernel_lower;
  b.kernel_upper = kernel_upper;
  b.mean_lower = mean_bounds[0];
  b.mean_upper = mean_bounds[1];
  b.log_noise_lower = log_noise_bounds[0];
  b.log_noise_upper = log_noise_bounds[1];
  const PursuitOptions opt = options_from_list(control);
  RMonitor monitor(progress);
  PursuitResult res = relevance_pursuit(xm, yv, kernel, kernel.log_par(), mean0, log_noise0, b,
                                        opt, monitor);
  monitor.flush();
  Rcpp::List steps(res.steps.size());
  for (std::size_t t = 0; t < res.steps.size(); ++t) steps[t] = step_to_list(res.steps[t]);
  return Rcpp::List::create(Rcpp::Named("steps") = steps,
                            Rcpp::Named("factorizations") = static_cast<double>(res.factorizations),
                            Rcpp::Named("rank_one_updates") = static_cast<double>(res.rank_one_updates),
                            Rcpp::Named("stopped_early") = res.stopped_early,
                            Rcpp::Named("jitter") = res.max_jitter);
}

// Packed objective NLL/n and its gradient (tests).
// Hook "gpr_pursuit_objective" (rcpp_hooks.h), not an export: reached through .hook().
Rcpp::List gpr_pursuit_objective_cpp(const MapMat x, const MapVec y, Rcpp::List spec,
                                     const MapVec z, Rcpp::IntegerVector support, bool convex,
                                     Rcpp::Nullable<Rcpp::NumericVector> prior_mu = R_NilValue,
                                     Rcpp::Nullable<Rcpp::NumericVector> prior_sd = R_NilValue,
                                     Rcpp::Nullable<Rcpp::IntegerMatrix> neighbors = R_NilValue) {
  const Eigen::MatrixXd xm = x;
  PursuitOptions opt;
  opt.convex = convex;
  if (neighbors.isNotNull()) {
    opt.neighbors = Rcpp::as<Eigen::MatrixXi>(Rcpp::IntegerMatrix(neighbors.get()));
  }
  if (prior_mu.isNotNull()) {
    opt.prior_mu = Rcpp::as<Eigen::VectorXd>(prior_mu.get());
    opt.prior_sd = Rcpp::as<Eigen::VectorXd>(prior_sd.get());
  }
  PursuitModel model(xm, y, kernel_from_list(spec), opt);
  std::vector<int> s;
  for (int i : support) s.push_back(i - 1);
  Eigen::VectorXd g(z.size());
  const double v = model.objective(z, s, &g);
  return Rcpp::List::create(Rcpp::Named("value") = v, Rcpp::Named("gradient") = g,
                            Rcpp::Named("rho") = model.rho_of(z, s));
}

namespace {

// Lemma-1 values (rho* or gain) of the model with noise variances
// sigma2 + rho_i, from the leave-one-out quantities of the covariance
// operator: dense, or Vecchia with these conditioning sets (Q r and diag(Q)).
Eigen::VectorXd lemma1_of_model(const MapMat& x, const MapVec& y, Rcpp::List spec, double mean,
                                double noise, const MapVec& rho, const JitterPolicy& jitter,
                                Rcpp::Nullable<Rcpp::IntegerMatrix> neighbors, int threads,
                                bool gain) {
  const Eigen::MatrixXd xm = x;
  const Eigen::VectorXd r = y.array() - mean;
  const Kernel kernel = kernel_from_list(spec);
  RMonitor monitor;
  if (neighbors.isNotNull()) {
    const Eigen::MatrixXi nn = Rcpp::as<Eigen::MatrixXi>(Rcpp::IntegerMatrix(neighbors.get()));
    VecchiaCovariance cov(xm, r, kernel, jitter, nn, threads);
    const MonitorScope poll(cov, monitor);
    const CovEval e = cov.evaluate(Eigen::VectorXd(rho.array() + noise));
    return lemma1_values(loo_quantities(e), rho, gain, noise);
  }
  // K + sigma2 I, then + diag(rho), as the pursuit's dense objective forms it.
  DenseCovariance cov(xm, r, kernel, jitter);
  const MonitorScope poll(cov, monitor);
  Eigen::MatrixXd c = cov.matrix(Eigen::VectorXd::Constant(r.size(), noise), false);
  c.diagonal() += rho;
  const Cholesky chol = cov.factor(std::move(c));
  return lemma1_values(loo_quantities(chol, r, monitor), rho, gain,
                       -std::numeric_limits<double>::infinity());
}

}  // namespace

// Lemma 1's rho_i* for every point from one factor of K = K_f + sigma2 I + diag(rho)
// (or, with `neighbors`, from the Vecchia precision).
// [[Rcpp::export(.gpr_pursuit_lemma1)]]
Eigen::VectorXd gpr_pursuit_lemma1_cpp(const MapMat x, const MapVec y, Rcpp::List spec,
                                       double mean, double noise, const MapVec rho,
                                       Rcpp::Nullable<Rcpp::IntegerMatrix> neighbors = R_NilValue,
                                       int threads = 1) {
  return lemma1_of_model(x, y, spec, mean, noise, rho, JitterPolicy(), neighbors, threads, false);
}

// Lemma-1 gain in log marginal likelihood of each point's own optimal rho_i.
// [[Rcpp::export(.gpr_pursuit_gain)]]
Eigen::VectorXd gpr_pursuit_gain_cpp(const MapMat x, const MapVec y, Rcpp::List spec,
                                     double mean, double noise, const MapVec rho,
                                     std::string backend,
                                     Rcpp::Nullable<Rcpp::IntegerMatrix> neighbors = R_NilValue,
                                     int threads = 1) {
  JitterPolicy jitter;
  jitter.backend = backend_from_string(backend);
  return lemma1_of_model(x, y, spec, mean, noise, rho, jitter, neighbors, threads, true);
}

// Trimmed-MLL subset step (Andrade & Takeda) at fixed K = K_f + sigma2 I,
// K formed by the dense covariance operator from x and the kernel.
// [[Rcpp::export(.gpr_trimmed_subset)]]
Rcpp::List gpr_trimmed_subset_cpp(const MapMat x, Rcpp::List spec, double noise, const MapVec r,
                                  int n_trim, int max_iter, double tol, std::string backend) {
  JitterPolicy jitter;
  jitter.backend = backend_from_string(backend);
  const Eigen::MatrixXd xm = x;
  const Eigen::VectorXd rv = r;
  DenseCovariance cov(xm, rv, kernel_from_list(spec), jitter);
  const Eigen::MatrixXd k = cov.matrix(Eigen::VectorXd::Constant(rv.size(), noise), false);
  TrimmedSubset t = trimmed_subset(k, rv, n_trim, max_iter, tol, jitter);
  Rcpp::IntegerVector out(t.outliers.size());
  for (std::size_t j = 0; j < t.outliers.size(); ++j) out[j] = t.outliers[j] + 1;
  return Rcpp::List::create(Rcpp::Named("offset") = t.offset, Rcpp::Named("outliers") = out,
                            Rcpp::Named("objective") = t.objective,
                            Rcpp::Named("iterations") = t.iterations,
                            Rcpp::Named("converged") = t.converged);
}

// Forward search of N(0, K_f + sigma2 I) for the residuals r (selection =
// "esd"): entry order (1-based) and statistics; R applies the test.
// [[Rcpp::export(.gp_forward_search)]]
Rcpp::List gp_forward_search_cpp(const MapMat x, Rcpp::List spec, double noise, const MapVec r) {
  const Eigen::MatrixXd xm = x;
  const Eigen::VectorXd rv = r;
  DenseCovariance cov(xm, rv, kernel_from_list(spec), JitterPolicy());
  const ForwardSearch fs = forward_search(cov, Eigen::VectorXd::Constant(rv.size(), noise), rv);
  Rcpp::IntegerVector entered(fs.entered.size());
  for (std::size_t j = 0; j < fs.entered.size(); ++j) entered[j] = fs.entered[j] + 1;
  return Rcpp::List::create(Rcpp::Named("entered") = entered,
                            Rcpp::Named("statistic") = fs.statistic);
}
