// Glue for label_dist_vb(): converts R objects, calls the core in label_dist.h.
#include "noisylabels_types.h"
#include "label_dist/label_dist.h"
#include "rcpp_monitor.h"
#include "rcpp_options.h"

using namespace noisylabels;

namespace {

LdHyper hyper_from(const Rcpp::NumericVector& h) {
  LdHyper hy;
  hy.alpha_w = h["alpha_w"];
  hy.alpha_s = h["alpha_s"];
  hy.alpha_c0 = h["alpha_c0"];
  hy.alpha_c1 = h["alpha_c1"];
  return hy;
}

LdProblem problem_from(const MapMat& x, const MapMat& s, const Rcpp::IntegerVector& group_ptr,
                       const Rcpp::IntegerVector& pair_unit) {
  return LdProblem(x.data(), static_cast<int>(x.rows()), static_cast<int>(x.cols()), s.data(),
                   static_cast<int>(s.rows()), static_cast<int>(s.cols()),
                   Rcpp::as<std::vector<int>>(group_ptr), Rcpp::as<std::vector<int>>(pair_unit));
}

// R holds eta_cond as P x M*M in pair order; the core as M*M x P in instance order.
LdState state_from(const Rcpp::List& l, const LdProblem& prob) {
  LdState st;
  st.eta = Rcpp::as<Eigen::MatrixXd>(l["eta"]);
  SEXP eta_cond = nullable(l, "eta_cond");
  if (!Rf_isNull(eta_cond)) {
    const Eigen::MatrixXd r_cond = Rcpp::as<Eigen::MatrixXd>(eta_cond);
    st.eta_cond.resize(r_cond.cols(), r_cond.rows());
    for (int q = 0; q < prob.P; ++q) st.eta_cond.col(q) = r_cond.row(prob.unit_pairs[q]).transpose();
  }
  st.zeta = Rcpp::as<Eigen::MatrixXd>(l["zeta"]);
  st.w = Rcpp::as<Eigen::MatrixXd>(l["w"]);
  st.cpar = Rcpp::as<Eigen::MatrixXd>(l["cpar"]);
  return st;
}

Rcpp::List state_to(const LdState& st, const LdProblem& prob) {
  Eigen::MatrixXd r_cond;
  if (st.eta_cond.size()) {
    r_cond.resize(st.eta_cond.cols(), st.eta_cond.rows());
    for (int q = 0; q < prob.P; ++q) r_cond.row(prob.unit_pairs[q]) = st.eta_cond.col(q).transpose();
  }
  return Rcpp::List::create(Rcpp::Named("eta") = st.eta,
                            Rcpp::Named("eta_cond") = st.eta_cond.size() ? Rcpp::wrap(r_cond)
                                                                         : R_NilValue,
                            Rcpp::Named("zeta") = st.zeta, Rcpp::Named("w") = st.w,
                            Rcpp::Named("cpar") = st.cpar);
}

Rcpp::NumericVector elbo_to(const LdElbo& e) {
  return Rcpp::NumericVector::create(
      Rcpp::Named("gauss") = e.gauss, Rcpp::Named("confusion") = e.confusion,
      Rcpp::Named("softmax") = e.softmax, Rcpp::Named("entropy_y") = e.entropy_y,
      Rcpp::Named("entropy_t") = e.entropy_t, Rcpp::Named("prior_w") = e.prior_w,
      Rcpp::Named("prior_c") = e.prior_c, Rcpp::Named("total") = e.total());
}

}  // namespace

// Whole fit with restarts.
// [[Rcpp::export(.ld_fit)]]
Rcpp::List ld_fit_cpp(const MapMat x, const MapMat s, Rcpp::IntegerVector group_ptr,
                      Rcpp::IntegerVector pair_unit, Rcpp::NumericVector hyper, Rcpp::List options,
                      Rcpp::Nullable<Rcpp::Function> progress = R_NilValue) {
  LdProblem prob = problem_from(x, s, group_ptr, pair_unit);
  LdOptions opt;
  opt.structured = Rcpp::as<bool>(options["structured"]);
  opt.vb_c = Rcpp::as<bool>(options["vb_c"]);
  opt.exact = Rcpp::as<bool>(options["exact"]);
  opt.max_iter = Rcpp::as<int>(options["max_iter"]);
  opt.tol = Rcpp::as<double>(options["tol"]);
  opt.stable_iter = Rcpp::as<int>(options["stable_iter"]);
  opt.stable_tol = Rcpp::as<double>(options["stable_tol"]);
  opt.lbfgs_max_iter = Rcpp::as<int>(options["lbfgs_max_iter"]);
  opt.init_lambda = Rcpp::as<double>(options["init_lambda"]);
  opt.init_diag = Rcpp::as<double>(options["init_diag"]);
  opt.restarts = Rcpp::as<int>(options["restarts"]);
  opt.debug = Rcpp::as<bool>(options["debug"]);
  opt.threads = Rcpp::as<int>(options["threads"]);
  opt.seed = static_cast<std::uint64_t>(Rcpp::as<double>(options["seed"]));
  RMonitor monitor(progress);
  LdFit f = ld_fit(prob, hyper_from(hyper), opt, monitor);
  monitor.flush();
  return Rcpp::List::create(
      Rcpp::Named("state") = state_to(f.state, prob), Rcpp::Named("elbo_trace") = f.elbo_trace,
      Rcpp::Named("changes_trace") = f.changes_trace, Rcpp::Named("block_deltas") = f.block_deltas,
      Rcpp::Named("block_names") = f.block_names, Rcpp::Named("restart_elbo") = f.restart_elbo,
      Rcpp::Named("best_restart") = f.best_restart + 1, Rcpp::Named("iterations") = f.iterations,
      Rcpp::Named("converged") = f.converged, Rcpp::Named("stop_reason") = f.stop_reason,
      Rcpp::Named("elbo") = elbo_to(f.elbo), Rcpp::Named("lbfgs_evaluations") = f.lbfgs_evaluations,
      Rcpp::Named("log_c") = ld_log_c(f.state.cpar, opt.vb_c));
}

// ELBO terms of a given state (tests).
// Hook "ld_elbo" (rcpp_hooks.h), not an export: reached through .hook().
Rcpp::NumericVector ld_elbo_cpp(const MapMat x, const MapMat s, Rcpp::IntegerVector group_ptr,
                                Rcpp::IntegerVector pair_unit, Rcpp::NumericVector hyper,
                                Rcpp::List state, bool structured, bool vb_c, bool exact = true) {
  LdProblem prob = problem_from(x, s, group_ptr, pair_unit);
  return elbo_to(ld_elbo(prob, hyper_from(hyper), state_from(state, prob), structured, vb_c, exact));
}

// One block update of a given state (tests): "c", "w", "eta", "zeta", "structured".
// Hook "ld_update" (rcpp_hooks.h), not an export: reached through .hook().
Rcpp::List ld_update_cpp(const MapMat x, const MapMat s, Rcpp::IntegerVector group_ptr,
                         Rcpp::IntegerVector pair_unit, Rcpp::NumericVector hyper, Rcpp::List state,
                         std::string block, bool structured, bool vb_c, bool exact = true) {
  LdProblem prob = problem_from(x, s, group_ptr, pair_unit);
  LdHyper hy = hyper_from(hyper);
  LdState st = state_from(state, prob);
  RMonitor monitor;
  if (block == "c") ld_update_c(prob, hy, st, structured, vb_c);
  else if (block == "w") ld_update_w(prob, hy, st, 100, monitor);
  else if (block == "eta") ld_update_eta(prob, hy, st, vb_c, 1, exact);
  else if (block == "zeta") ld_update_zeta(prob, st, vb_c);
  else if (block == "structured") ld_update_structured(prob, hy, st, vb_c, monitor);
  else Rcpp::stop("unknown block '" + block + "'");
  return state_to(st, prob);
}

// W objective l(W) and its gradient (tests).
// Hook "ld_w_objective" (rcpp_hooks.h), not an export: reached through .hook().
Rcpp::List ld_w_objective_cpp(const MapMat x, const MapMat zeta, double alpha_w, const MapMat w) {
  // A single dummy group makes a valid problem; only x is used.
  Eigen::MatrixXd s = Eigen::MatrixXd::Constant(1, zeta.cols(), 1.0 / zeta.cols());
  LdProblem prob(x.data(), static_cast<int>(x.rows()), static_cast<int>(x.cols()), s.data(), 1,
                 static_cast<int>(zeta.cols()), {0, 1}, {0});
  Eigen::MatrixXd grad;
  const double v = ld_w_objective(prob, Eigen::MatrixXd(zeta), alpha_w, Eigen::MatrixXd(w), &grad);
  return Rcpp::List::create(Rcpp::Named("value") = v, Rcpp::Named("gradient") = grad);
}
