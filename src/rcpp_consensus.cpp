// Glue for consensus_labels(): converts R objects, calls the core in
// core/consensus/consensus.h.
#include "noisylabels_types.h"
#include "consensus/consensus.h"
#include "rcpp_monitor.h"

using namespace noisylabels;

namespace {

ConsensusData data_from(const Rcpp::IntegerVector& item_ptr, const Rcpp::IntegerVector& annotator,
                        const Rcpp::NumericVector& weight, int n_items, int n_annotators) {
  ConsensusData d;
  d.n_items = n_items;
  d.n_annotators = n_annotators;
  d.item_ptr = Rcpp::as<std::vector<int>>(item_ptr);
  d.annotator = Rcpp::as<std::vector<int>>(annotator);
  d.weight = Rcpp::as<std::vector<double>>(weight);
  return d;
}

}  // namespace

// Class labels. `label`, `annotator` 0-based, sorted by item; `probs`: NULL
// or the n_items x K model probabilities (already floored, rows summing to 1).
// [[Rcpp::export(.consensus_classes_fit)]]
Rcpp::List consensus_classes_cpp(Rcpp::IntegerVector item_ptr, Rcpp::IntegerVector annotator,
                                 Rcpp::IntegerVector label, Rcpp::NumericVector weight,
                                 int n_items, int n_annotators, int n_classes,
                                 Rcpp::Nullable<Rcpp::NumericMatrix> probs, Rcpp::List options,
                                 Rcpp::Nullable<Rcpp::Function> progress = R_NilValue) {
  ConsensusData d = data_from(item_ptr, annotator, weight, n_items, n_annotators);
  d.n_classes = n_classes;
  d.label = Rcpp::as<std::vector<int>>(label);
  Eigen::MatrixXd log_probs;
  if (probs.isNotNull()) {
    const MapMat p = Rcpp::as<MapMat>(Rcpp::NumericMatrix(probs));
    log_probs = p.transpose().array().log().matrix();
  }
  ConsensusOptions opt;
  opt.shrinkage = Rcpp::as<double>(options["shrinkage"]);
  opt.smoothing = Rcpp::as<double>(options["smoothing"]);
  opt.prior_count = Rcpp::as<double>(options["prior_count"]);
  opt.fit_tempering = Rcpp::as<bool>(options["fit_tempering"]);
  opt.gamma_init = Rcpp::as<double>(options["tempering"]);
  opt.max_iter = Rcpp::as<int>(options["max_iter"]);
  opt.tol = Rcpp::as<double>(options["tol"]);
  opt.threads = Rcpp::as<int>(options["threads"]);
  RMonitor monitor(progress);
  ConsensusClassFit f = consensus_classes(d, log_probs, opt, monitor);
  monitor.flush();
  Rcpp::NumericVector conf(f.log_conf.begin(), f.log_conf.end());
  conf.attr("dim") = Rcpp::IntegerVector::create(n_classes, n_classes, n_annotators);
  return Rcpp::List::create(
      Rcpp::Named("posterior") = Eigen::MatrixXd(f.posterior.transpose()),
      Rcpp::Named("log_confusion") = conf, Rcpp::Named("crowd") = f.crowd,
      Rcpp::Named("prior_b") = f.prior_b, Rcpp::Named("tempering") = f.gamma,
      Rcpp::Named("objective") = f.objective, Rcpp::Named("iterations") = f.iterations,
      Rcpp::Named("converged") = f.converged);
}

// Numeric labels; `value` sorted by item as `annotator`.
// [[Rcpp::export(.consensus_numeric_fit)]]
Rcpp::List consensus_numeric_cpp(Rcpp::IntegerVector item_ptr, Rcpp::IntegerVector annotator,
                                 Rcpp::NumericVector value, Rcpp::NumericVector weight,
                                 int n_items, int n_annotators, Rcpp::List options,
                                 Rcpp::Nullable<Rcpp::Function> progress = R_NilValue) {
  ConsensusData d = data_from(item_ptr, annotator, weight, n_items, n_annotators);
  d.value = Rcpp::as<std::vector<double>>(value);
  NumericOptions opt;
  opt.df = Rcpp::as<double>(options["df"]);
  opt.scale_shape = Rcpp::as<double>(options["scale_shape"]);
  opt.bias_prior_sd = Rcpp::as<double>(options["bias_prior_sd"]);
  opt.bias = Rcpp::as<bool>(options["bias"]);
  opt.max_iter = Rcpp::as<int>(options["max_iter"]);
  opt.tol = Rcpp::as<double>(options["tol"]);
  RMonitor monitor(progress);
  ConsensusNumericFit f = consensus_numeric(d, opt, monitor);
  monitor.flush();
  return Rcpp::List::create(
      Rcpp::Named("mu") = f.mu, Rcpp::Named("mu_se") = f.mu_se, Rcpp::Named("bias") = f.bias,
      Rcpp::Named("scale") = f.scale, Rcpp::Named("scale0") = f.scale0,
      Rcpp::Named("residual") = f.residual, Rcpp::Named("weight") = f.weight,
      Rcpp::Named("objective") = f.objective, Rcpp::Named("iterations") = f.iterations,
      Rcpp::Named("converged") = f.converged);
}
