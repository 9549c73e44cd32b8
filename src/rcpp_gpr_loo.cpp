// Glue for gpr_loo(): converts R inputs, runs the core, returns lists.
#include "noisylabels_types.h"
#include "gpr/gpr_loo.h"
#include "rcpp_common.h"
#include "rcpp_monitor.h"

using namespace noisylabels;

namespace {

GprLooOptions options_from_list(const Rcpp::List& o) {
  GprLooOptions opt;
  const std::string noise = Rcpp::as<std::string>(o["noise"]);
  opt.noise = noise == "full" ? NoiseModel::Full : noise == "uniform" ? NoiseModel::Uniform : NoiseModel::None;
  const std::string solver = Rcpp::as<std::string>(o["solver"]);
  opt.solver = solver == "jacobi" ? SigmaSolver::Jacobi : SigmaSolver::Multiplicative;
  opt.lambda = Rcpp::as<double>(o["lambda"]);
  opt.p = Rcpp::as<double>(o["p"]);
  opt.sigma_floor = Rcpp::as<double>(o["sigma_floor"]);
  opt.damping = Rcpp::as<double>(o["damping"]);
  opt.max_sweeps = Rcpp::as<int>(o["max_sweeps"]);
  opt.max_outer = Rcpp::as<int>(o["max_outer"]);
  opt.max_hyper_iter = Rcpp::as<int>(o["max_hyper_iter"]);
  opt.tol_sweep = Rcpp::as<double>(o["tol_sweep"]);
  opt.tol_outer = Rcpp::as<double>(o["tol_outer"]);
  opt.learn_hyper = Rcpp::as<bool>(o["learn_hyper"]);
  opt.jitter.base = Rcpp::as<double>(o["jitter"]);
  opt.jitter.backend = backend_from_string(Rcpp::as<std::string>(o["backend"]));
  SEXP neighbors = nullable(o, "neighbors");
  if (!Rf_isNull(neighbors)) opt.neighbors = Rcpp::as<Eigen::MatrixXi>(neighbors);
  opt.threads = required<int>(o, "threads");
  opt.screen_rounds = required<int>(o, "screen_rounds");
  opt.screen_hyper_iter = required<int>(o, "screen_hyper_iter");
  opt.tol_stationary = required<double>(o, "tol_stationary");
  opt.adaptive_sweeps = required<bool>(o, "adaptive_sweeps");
  return opt;
}

}  // namespace

// [[Rcpp::export(.gpr_loo_fit)]]
Rcpp::List gpr_loo_fit_cpp(const MapMat x, const MapVec y, Rcpp::List spec, const MapMat sigma0,
                           const MapMat starts, const MapVec lower, const MapVec upper,
                           Rcpp::List options,
                           Rcpp::Nullable<Rcpp::Function> progress = R_NilValue) {
  const Eigen::MatrixXd xm = x;
  const Eigen::VectorXd ym = y;
  Kernel kernel = kernel_from_list(spec);
  GprLooOptions opt = options_from_list(options);
  RMonitor monitor(progress);
  const Eigen::MatrixXd s0 = sigma0;
  GprLooResult r = gpr_loo_fit(xm, ym, kernel, s0, starts, lower, upper, opt, monitor);
  monitor.flush();
  return Rcpp::List::create(
      Rcpp::Named("sigma") = r.noise_var, Rcpp::Named("log_par") = r.log_par,
      Rcpp::Named("objective") = r.objective, Rcpp::Named("trace") = r.trace,
      Rcpp::Named("trace_factorizations") = r.trace_factorizations,
      Rcpp::Named("factorizations") = r.factorizations, Rcpp::Named("sweeps") = r.sweeps,
      Rcpp::Named("outer_iterations") = r.outer_iterations, Rcpp::Named("fallbacks") = r.fallbacks,
      Rcpp::Named("converged") = r.converged, Rcpp::Named("jitter") = r.max_jitter,
      Rcpp::Named("alpha") = r.alpha, Rcpp::Named("inverse_diagonal") = r.inv_diag,
      Rcpp::Named("restart") = r.restart + 1, Rcpp::Named("restart_objectives") = r.restart_objectives);
}

// The clean labels' noise level and the LOO residuals/variances at it, for
// the flag rule (gpr_loo_clean_level).
// [[Rcpp::export(.gpr_loo_clean_level)]]
Rcpp::List gpr_loo_clean_level_cpp(const MapMat x, const MapVec y, Rcpp::List spec,
                                   const MapVec sigma, Rcpp::List options) {
  const Eigen::MatrixXd xm = x;
  const Eigen::VectorXd ym = y;
  const Eigen::VectorXd sm = sigma;
  RMonitor monitor;
  CleanLevel c = gpr_loo_clean_level(xm, ym, kernel_from_list(spec), sm, options_from_list(options),
                                     monitor);
  return Rcpp::List::create(Rcpp::Named("level") = c.level, Rcpp::Named("residual") = c.residual,
                            Rcpp::Named("variance") = c.variance,
                            Rcpp::Named("statistic") = c.statistic,
                            Rcpp::Named("evaluations") = c.evaluations);
}

// Objective and gradients at fixed (sigma, theta): for tests and benchmarks.
// Hook "gpr_loo_eval" (rcpp_hooks.h), not an export: reached through .hook().
Rcpp::List gpr_loo_eval_cpp(const MapMat x, const MapVec y, Rcpp::List spec, const MapVec sigma,
                            Rcpp::List options) {
  const Eigen::MatrixXd xm = x;
  const Eigen::VectorXd ym = y;
  GprLooOptions opt = options_from_list(options);
  GprLoo model(xm, ym, kernel_from_list(spec), opt);
  GprLooEval e = model.evaluate(sigma);
  Eigen::VectorXd grad_sigma, grad_theta;
  model.covariance().nll_gradient(sigma, grad_theta, &grad_sigma);
  model.add_penalty_gradient(sigma, grad_sigma);
  return Rcpp::List::create(Rcpp::Named("objective") = e.objective,
                            Rcpp::Named("grad_sigma") = grad_sigma,
                            Rcpp::Named("grad_theta") = grad_theta,
                            Rcpp::Named("alpha") = e.alpha,
                            Rcpp::Named("inverse_diagonal") = e.inv_diag,
                            Rcpp::Named("grad_neg") = e.grad_neg,
                            Rcpp::Named("jitter") = model.max_jitter());
}

// One hyperparameter-step evaluation (J and its theta gradient): benchmarks.
// Hook "gpr_loo_nll_grad" (rcpp_hooks.h), not an export: reached through .hook().
Rcpp::List gpr_loo_nll_grad_cpp(const MapMat x, const MapVec y, Rcpp::List spec, const MapVec sigma,
                                Rcpp::List options, int reps) {
  const Eigen::MatrixXd xm = x;
  const Eigen::VectorXd ym = y;
  Kernel kernel = kernel_from_list(spec);
  GprLoo model(xm, ym, kernel, options_from_list(options));
  Eigen::VectorXd grad(kernel.n_par());
  double j = 0;
  for (int r = 0; r < reps; ++r) j = model.objective_and_gradient(kernel.log_par(), sigma, grad);
  return Rcpp::List::create(Rcpp::Named("objective") = j, Rcpp::Named("gradient") = grad,
                            Rcpp::Named("jitter") = model.max_jitter());
}

// Sigma sweeps only (theta fixed) from sigma0: the solver comparison of Fig. 3.
// Hook "gpr_loo_sweeps" (rcpp_hooks.h), not an export: reached through .hook().
Rcpp::List gpr_loo_sweeps_cpp(const MapMat x, const MapVec y, Rcpp::List spec, const MapVec sigma0,
                              Rcpp::List options, int sweeps) {
  const Eigen::MatrixXd xm = x;
  const Eigen::VectorXd ym = y;
  GprLooOptions opt = options_from_list(options);
  opt.learn_hyper = false;
  GprLoo model(xm, ym, kernel_from_list(spec), opt);
  Eigen::VectorXd sigma = sigma0;
  GprLooEval e = model.evaluate(sigma);
  std::vector<double> trace{e.objective};
  std::vector<int> fact{model.factorizations()};
  RMonitor monitor;
  for (int s = 0; s < sweeps; ++s) {
    monitor.check();
    model.sweep(sigma, e);
    trace.push_back(e.objective);
    fact.push_back(model.factorizations());
  }
  return Rcpp::List::create(Rcpp::Named("sigma") = sigma, Rcpp::Named("trace") = trace,
                            Rcpp::Named("factorizations") = fact);
}

// Posterior mean/variance of f at new inputs given the fitted noise, from the
// dense operator or (when `neighbors` is given) the Vecchia one, each new
// point conditioned on its rows of `new_neighbors` or, with `block_start`
// (0-based offsets, new points ordered by block), each block of new points on
// one shared row.
// [[Rcpp::export(.gp_predict)]]
Rcpp::List gp_predict_cpp(const MapMat x, const MapVec y, Rcpp::List spec, const MapVec noise,
                          const MapMat xnew, bool want_var, double jitter, std::string backend,
                          Rcpp::Nullable<Rcpp::IntegerMatrix> new_neighbors = R_NilValue,
                          int threads = 1,
                          Rcpp::Nullable<Rcpp::IntegerVector> block_start = R_NilValue) {
  const Eigen::MatrixXd xm = x;
  const Eigen::VectorXd ym = y;
  JitterPolicy policy;
  policy.base = jitter;
  policy.backend = backend_from_string(backend);
  Eigen::MatrixXi nn;
  Eigen::MatrixXi nn_new;
  if (new_neighbors.isNotNull()) {
    nn_new = Rcpp::as<Eigen::MatrixXi>(Rcpp::IntegerMatrix(new_neighbors.get()));
    nn = Eigen::MatrixXi::Constant(xm.rows(), 1, -1);  // training sets are not used
  }
  std::unique_ptr<CovarianceOperator> cov = make_covariance(xm, ym, kernel_from_list(spec), policy, nn, threads);
  Eigen::VectorXi starts;
  if (block_start.isNotNull()) starts = Rcpp::as<Eigen::VectorXi>(Rcpp::IntegerVector(block_start.get()));
  if (new_neighbors.isNotNull()) static_cast<VecchiaCovariance&>(*cov).set_prediction_neighbors(nn_new, starts);
  RMonitor monitor;
  const MonitorScope poll(*cov, monitor);
  GpPrediction p = cov->predict(noise, xnew, want_var);
  return Rcpp::List::create(Rcpp::Named("mean") = p.mean,
                            Rcpp::Named("var") = want_var ? Rcpp::wrap(p.var) : R_NilValue,
                            Rcpp::Named("jitter") = cov->max_jitter());
}

// Leave-one-out residuals and standard deviations of a GP with noise
// variances `noise_var` (find_label_issues' GP path), from one evaluation of
// the covariance operator: dense, or Vecchia with these conditioning sets.
// The sd includes the label's own noise.
// [[Rcpp::export(.gp_loo)]]
Rcpp::List gp_loo_cpp(const MapMat x, const MapVec y, Rcpp::List spec, const MapVec noise_var,
                      Rcpp::Nullable<Rcpp::IntegerMatrix> neighbors = R_NilValue,
                      int threads = 1) {
  const Eigen::MatrixXd xm = x;
  const Eigen::VectorXd ym = y;
  Eigen::MatrixXi nn;
  if (neighbors.isNotNull()) nn = Rcpp::as<Eigen::MatrixXi>(Rcpp::IntegerMatrix(neighbors.get()));
  auto cov = make_covariance(xm, ym, kernel_from_list(spec), JitterPolicy(), nn, threads);
  RMonitor monitor;
  const MonitorScope poll(*cov, monitor);
  const LooQuantities loo = loo_quantities(cov->evaluate(noise_var));
  return Rcpp::List::create(Rcpp::Named("residual") = loo.residual,
                            Rcpp::Named("sd") = loo.variance.cwiseSqrt(),
                            Rcpp::Named("jitter") = cov->max_jitter());
}

// One piece of the Vecchia leave-one-out pass (R/gp-pieces.R): the
// conditioning sets of the points `rows` (0-based) of a local problem (x, y,
// noise_var and neighbours restricted to those points and their
// neighbours), on one thread, so that the piece's numbers do not depend on
// where it runs. Returns the piece's contributions to Q y and diag(Q) at
// every local point; pieces over a partition of the points add up to
// .gp_loo()'s pass. rng = false: a job on a fresh worker must not create a
// seed (future would report random numbers drawn).
// [[Rcpp::export(.gp_vecchia_piece, rng = false)]]
Rcpp::List gp_vecchia_piece_cpp(const MapMat x, const MapVec y, Rcpp::List spec, const MapVec noise_var,
                                Rcpp::IntegerMatrix neighbors, Rcpp::IntegerVector rows) {
  const Eigen::MatrixXd xm = x;
  const Eigen::VectorXd ym = y;
  const Eigen::MatrixXi nn = Rcpp::as<Eigen::MatrixXi>(neighbors);
  VecchiaCovariance cov(xm, ym, kernel_from_list(spec), JitterPolicy(), nn, 1);
  cov.set_rows(Rcpp::as<std::vector<int>>(rows));
  RMonitor monitor;
  const MonitorScope poll(cov, monitor);
  const CovEval e = cov.evaluate(noise_var);
  return Rcpp::List::create(Rcpp::Named("alpha") = e.alpha, Rcpp::Named("inv_diag") = e.inv_diag,
                            Rcpp::Named("jitter") = cov.max_jitter());
}
