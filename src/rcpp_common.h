// Conversions shared by the GP glue files.
#pragma once

#include <RcppEigen.h>

#include <string>
#include <vector>

#include "gp/kernels.h"
#include "rcpp_options.h"
#include "linalg/linalg.h"

namespace noisylabels {

// A kernel from the list R's internal kernel_spec() builds:
// list(type = "rbf", dim = d, ard = TRUE, log_par = numeric, categorical = logical).
inline Kernel kernel_from_list(const Rcpp::List& spec) {
  const std::string type = Rcpp::as<std::string>(spec["type"]);
  const int dim = Rcpp::as<int>(spec["dim"]);
  const bool ard = Rcpp::as<bool>(spec["ard"]);
  std::vector<bool> categorical;
  SEXP cat_sexp = nullable(spec, "categorical");
  if (!Rf_isNull(cat_sexp)) {
    Rcpp::LogicalVector cat(cat_sexp);
    for (int j = 0; j < cat.size(); ++j) categorical.push_back(cat[j] == TRUE);
  }
  Kernel k(kernel_type_from_string(type), dim, ard, categorical);
  k.set_log_par(Rcpp::as<Eigen::VectorXd>(spec["log_par"]));
  return k;
}

inline CholBackend backend_from_string(const std::string& s) {
  if (s == "lapack") return CholBackend::Lapack;
  if (s == "eigen") return CholBackend::Eigen;
  Rcpp::stop("unknown linear-algebra backend '" + s + "'");
}

}  // namespace noisylabels
