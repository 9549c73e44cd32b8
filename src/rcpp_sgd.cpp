// Glue: robust-loss SGD (src/core/sgd/sgd.h) and the LIBSVM parser
// (src/core/io/libsvm.h) for R. Only converts R objects and calls the core.
#include "noisylabels_types.h"
#include "rcpp_monitor.h"
#include "rcpp_options.h"
#include "io/libsvm.h"
#include "sgd/sgd.h"

#include <cmath>
#include <string>

using namespace noisylabels;

namespace {

// The R side passes list(n, d, y, dense = d x n matrix or NULL,
// p = , j = , x = ) where p/j/x are the slots of t(X) as a dgCMatrix, i.e. the
// CSR arrays of X. The list keeps the vectors alive; nothing is copied.
SgdData data_from_list(const Rcpp::List& spec) {
  SgdData data;
  data.n = Rcpp::as<int>(spec["n"]);
  data.d = Rcpp::as<int>(spec["d"]);
  // Binary fits: y = +-1 doubles. Multiclass fits: label = 0-based integer
  // classes and n_classes.
  SEXP label = nullable(spec, "label");
  if (!Rf_isNull(label)) {
    if (TYPEOF(label) != INTSXP || Rf_xlength(label) != data.n)
      Rcpp::stop("label must be an integer vector of length n");
    data.label = INTEGER(label);
    data.n_classes = Rcpp::as<int>(spec["n_classes"]);
  } else {
    SEXP y = spec["y"];
    if (TYPEOF(y) != REALSXP || Rf_xlength(y) != data.n) Rcpp::stop("y must be a double vector of length n");
    data.y = REAL(y);
  }
  SEXP w = nullable(spec, "weight");
  if (!Rf_isNull(w)) {
    if (TYPEOF(w) != REALSXP || Rf_xlength(w) != data.n) Rcpp::stop("weight must be a double vector of length n");
    data.weight = REAL(w);
  }
  SEXP dense = spec["dense"];
  if (!Rf_isNull(dense)) {
    if (TYPEOF(dense) != REALSXP || Rf_xlength(dense) != static_cast<R_xlen_t>(data.n) * data.d)
      Rcpp::stop("dense data must be a double d x n matrix");
    data.dense = REAL(dense);
  } else {
    SEXP p = spec["p"], j = spec["j"], x = spec["x"];
    if (TYPEOF(p) != INTSXP || TYPEOF(j) != INTSXP || TYPEOF(x) != REALSXP)
      Rcpp::stop("CSR slots must be integer, integer, double");
    if (Rf_xlength(p) != data.n + 1) Rcpp::stop("CSR row pointer has the wrong length");
    if (Rf_xlength(j) != Rf_xlength(x) || Rf_xlength(x) < INTEGER(p)[data.n])
      Rcpp::stop("CSR column index and value arrays disagree");
    data.row_ptr = INTEGER(p);
    data.col_idx = INTEGER(j);
    data.values = REAL(x);
  }
  return data;
}

SgdLoss loss_from_list(const Rcpp::List& spec) {
  SgdLoss loss;
  loss.type = sgd_loss_from_string(Rcpp::as<std::string>(spec["name"]));
  loss.s = Rcpp::as<double>(spec["s"]);
  loss.alpha = Rcpp::as<double>(spec["alpha"]);
  loss.beta = Rcpp::as<double>(spec["beta"]);
  loss.c = Rcpp::as<double>(spec["c"]);
  return loss;
}

SgdOptions options_from_list(const Rcpp::List& o) {
  SgdOptions opt;
  const std::string method = Rcpp::as<std::string>(o["method"]);
  if (method == "sgd") opt.method = SgdMethod::Sgd;
  else if (method == "asgd") opt.method = SgdMethod::Asgd;
  else if (method == "pegasos") opt.method = SgdMethod::Pegasos;
  else Rcpp::stop("unknown method '" + method + "'");
  opt.loss = loss_from_list(o["loss"]);
  opt.lambda = Rcpp::as<double>(o["lambda"]);
  opt.eta = Rcpp::as<double>(o["eta"]);
  opt.epochs = Rcpp::as<int>(o["epochs"]);
  opt.average = Rcpp::as<bool>(o["average"]);
  const std::string bias = Rcpp::as<std::string>(o["bias"]);
  if (bias == "feature") opt.bias = SgdBias::Feature;
  else if (bias == "separate") opt.bias = SgdBias::Separate;
  else if (bias == "none") opt.bias = SgdBias::None;
  else Rcpp::stop("unknown bias mode '" + bias + "'");
  opt.bias_step = required<double>(o, "bias_step");
  opt.record_iterates = Rcpp::as<bool>(o["record_iterates"]);
  SEXP w_init = nullable(o, "w_init");
  if (!Rf_isNull(w_init)) {
    opt.w_init = Rcpp::as<std::vector<double>>(w_init);
    opt.b_init = required<std::vector<double>>(o, "b_init");
  }
  opt.t_init = static_cast<long long>(required<double>(o, "t_init"));
  opt.shuffle = required<bool>(o, "shuffle");
  opt.early_stop_patience = required<int>(o, "early_stop_patience");
  opt.lambda_l1 = required<double>(o, "lambda_l1");
  opt.multinomial = required<bool>(o, "multinomial");
  opt.guard = required<double>(o, "guard");
  opt.guard_max_shrinks = required<int>(o, "guard_max_shrinks");
  // The seed arrives as a double holding a non-negative integer < 2^31.
  opt.seed = static_cast<std::uint64_t>(Rcpp::as<double>(o["seed"]));
  return opt;
}

// Interrupt polling of RMonitor plus a per-epoch call of an R function
// (the cli progress bar of sgd_robust()); R errors in it become C++
// exceptions (Rcpp::Function), so they unwind the core safely.
class SgdProgressMonitor : public RMonitor {
 public:
  explicit SgdProgressMonitor(SEXP callback) : callback_(callback) {}
  void progress(int step, int total) override {
    if (Rf_isNull(callback_)) return;
    Rcpp::Function f(callback_);
    f(step, total);
  }

 private:
  SEXP callback_;
};

}  // namespace

// [[Rcpp::export(.sgd_fit)]]
Rcpp::List sgd_fit_cpp(Rcpp::List data, Rcpp::Nullable<Rcpp::List> valid, Rcpp::List options) {
  const SgdData train = data_from_list(data);
  SgdData valid_data;
  const SgdData* valid_ptr = nullptr;
  if (valid.isNotNull()) {
    valid_data = data_from_list(Rcpp::List(valid.get()));
    valid_ptr = &valid_data;
  }
  const SgdOptions opt = options_from_list(options);
  SgdProgressMonitor monitor(nullable(options, "progress"));
  SgdResult res;
  try {
    res = sgd_train(train, valid_ptr, opt, monitor);
  } catch (const Interrupted&) {
    Rcpp::stop("interrupted by the user");
  }
  Rcpp::List out = Rcpp::List::create(
      Rcpp::Named("weights") = Rcpp::wrap(res.weights),
      Rcpp::Named("bias") = res.bias,
      Rcpp::Named("objective") = Rcpp::wrap(res.objective),
      Rcpp::Named("train_error") = Rcpp::wrap(res.train_error),
      Rcpp::Named("valid_error") = Rcpp::wrap(res.valid_error),
      Rcpp::Named("margins") = Rcpp::wrap(res.margins),
      Rcpp::Named("epochs_run") = res.epochs_run,
      Rcpp::Named("renormalisations") = static_cast<double>(res.renormalisations),
      Rcpp::Named("seconds_train") = res.seconds_train,
      Rcpp::Named("cpu_seconds_train") = res.cpu_seconds_train,
      Rcpp::Named("seconds_evaluate") = res.seconds_evaluate,
      Rcpp::Named("cpu_seconds_evaluate") = res.cpu_seconds_evaluate);
  out["n_models"] = res.n_models;
  out["biases"] = Rcpp::wrap(res.biases);
  out["decision"] = Rcpp::wrap(res.decision);
  out["objective_start"] = res.objective_start;
  out["eta_final"] = res.eta_final;
  out["t_final"] = static_cast<double>(res.t_final);
  out["best_epoch"] = res.best_epoch;
  out["stopped_early"] = res.stopped_early;
  const int ns = static_cast<int>(res.shrinks.size());
  Rcpp::IntegerVector sh_epoch(ns);
  Rcpp::NumericVector sh_from(ns), sh_to(ns), sh_rej(ns), sh_before(ns);
  for (int k = 0; k < ns; ++k) {
    sh_epoch[k] = res.shrinks[k].epoch;
    sh_from[k] = res.shrinks[k].eta_from;
    sh_to[k] = res.shrinks[k].eta_to;
    sh_rej[k] = res.shrinks[k].objective_rejected;
    sh_before[k] = res.shrinks[k].objective_before;
  }
  out["shrinks"] = Rcpp::DataFrame::create(
      Rcpp::Named("epoch") = sh_epoch, Rcpp::Named("eta_from") = sh_from,
      Rcpp::Named("eta_to") = sh_to, Rcpp::Named("objective_rejected") = sh_rej,
      Rcpp::Named("objective_before") = sh_before);
  if (opt.record_iterates) out["iterates"] = Rcpp::wrap(res.iterates);
  return out;
}

// [[Rcpp::export(.sgd_choose_eta)]]
double sgd_choose_eta_cpp(Rcpp::List data, Rcpp::List options, int sample_size) {
  const SgdData train = data_from_list(data);
  SgdOptions opt = options_from_list(options);
  opt.eta = 1.0;
  return sgd_choose_eta(train, opt, sample_size);
}

// Memory-streaming floor of one epoch over these data (seconds), for inst/bench.
// Hook "sgd_stream_seconds" (rcpp_hooks.h), not an export: reached through .hook().
double sgd_stream_seconds_cpp(Rcpp::List data, int repeats) {
  const SgdData d = data_from_list(data);
  double checksum = 0.0;
  const double secs = sgd_stream_seconds(d, repeats, &checksum);
  if (!std::isfinite(checksum)) Rcpp::warning("non-finite checksum");
  return secs;
}

// Dot + axpy floor of one epoch over these data, for inst/bench: best wall
// and best process CPU seconds of `repeats` passes, c(wall = , cpu = ).
// Hook "sgd_floor_seconds" (rcpp_hooks.h), not an export: reached through .hook().
Rcpp::NumericVector sgd_floor_seconds_cpp(Rcpp::List data, int repeats) {
  const SgdData d = data_from_list(data);
  double checksum = 0.0, cpu = 0.0;
  const double secs = sgd_floor_seconds(d, repeats, &checksum, &cpu);
  if (!std::isfinite(checksum)) Rcpp::warning("non-finite checksum");
  return Rcpp::NumericVector::create(Rcpp::Named("wall") = secs, Rcpp::Named("cpu") = cpu);
}

// Loss values and derivatives at the margins z (for tests and plots).
// [[Rcpp::export(.sgd_loss_eval)]]
Rcpp::List sgd_loss_eval_cpp(Rcpp::List loss_spec, Rcpp::NumericVector z) {
  const SgdLoss loss = loss_from_list(loss_spec);
  Rcpp::NumericVector value(z.size()), deriv(z.size());
  for (R_xlen_t k = 0; k < z.size(); ++k) {
    value[k] = loss.value(z[k]);
    deriv[k] = loss.deriv(z[k]);
  }
  return Rcpp::List::create(Rcpp::Named("value") = value, Rcpp::Named("deriv") = deriv,
                            Rcpp::Named("bound") = loss.bound(),
                            Rcpp::Named("flat_start") = loss.flat_start());
}

// LIBSVM lines -> triplets, for R/io-libsvm.R (parser in core/io/libsvm.h).
// On the first bad line it returns its position (1-based within `lines`),
// the kind of error (1 label, 2 pair, 3 order) and the offending token; the
// R side raises the error.
// [[Rcpp::export(.libsvm_parse_lines)]]
Rcpp::List libsvm_parse_lines_cpp(Rcpp::CharacterVector lines) {
  LibsvmTriplets out;
  const R_xlen_t m = lines.size();
  for (R_xlen_t li = 0; li < m; ++li) {
    if (!libsvm_parse_line(CHAR(STRING_ELT(lines, li)), static_cast<int>(li) + 1, out)) break;
  }
  return Rcpp::List::create(
      Rcpp::Named("n") = out.n, Rcpp::Named("y") = Rcpp::wrap(out.y),
      Rcpp::Named("row") = Rcpp::wrap(out.row), Rcpp::Named("idx") = Rcpp::wrap(out.idx),
      Rcpp::Named("val") = Rcpp::wrap(out.val), Rcpp::Named("max_index") = out.max_index,
      Rcpp::Named("bad_line") = out.bad_line, Rcpp::Named("bad_kind") = out.bad_kind,
      Rcpp::Named("bad_token") = out.bad_token, Rcpp::Named("bad_index") = out.bad_index);
}

// Decision values f_k(x_i) of K models (weights d x K column-major, biases K)
// on data in the core's layout, as an n x K matrix (for chunked fits: no
// sparse-matrix copy per chunk on the R side).
// [[Rcpp::export(.sgd_decision)]]
Rcpp::NumericMatrix sgd_decision_cpp(Rcpp::List data, Rcpp::NumericVector weights,
                                     Rcpp::NumericVector biases) {
  SgdData d = data_from_list(data);
  const int K = biases.size();
  if (weights.size() != static_cast<R_xlen_t>(d.d) * K) Rcpp::stop("weights must be d x K");
  Rcpp::NumericMatrix out(d.n, K);
  std::vector<double> w(d.d);
  for (int k = 0; k < K; ++k) {
    std::copy(weights.begin() + static_cast<R_xlen_t>(k) * d.d,
              weights.begin() + static_cast<R_xlen_t>(k + 1) * d.d, w.begin());
    const std::vector<double> f = sgd_decision(d, w, biases[k]);
    std::copy(f.begin(), f.end(), out.begin() + static_cast<R_xlen_t>(k) * d.n);
  }
  return out;
}
