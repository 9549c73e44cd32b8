// Glue: kernel matrices and gradients for R (used by gp_kernel methods and tests).
#include "noisylabels_types.h"
#include "rcpp_common.h"
#include "rcpp_hooks.h"

using namespace noisylabels;

// [[Rcpp::export(.kernel_gram)]]
Eigen::MatrixXd kernel_gram_cpp(const MapMat x, Rcpp::List spec) {
  return kernel_from_list(spec).gram(x);
}

// [[Rcpp::export(.kernel_cross)]]
Eigen::MatrixXd kernel_cross_cpp(const MapMat x, const MapMat z, Rcpp::List spec) {
  return kernel_from_list(spec).cross(x, z);
}

// Hook "kernel_diag" (rcpp_hooks.h), not an export: reached through .hook().
Eigen::VectorXd kernel_diag_cpp(const MapMat x, Rcpp::List spec) {
  return kernel_from_list(spec).diag(x);
}

// Hook "kernel_gradient" (rcpp_hooks.h), not an export: reached through .hook().
Eigen::VectorXd kernel_gradient_cpp(const MapMat x, const MapMat w, Rcpp::List spec) {
  return kernel_from_list(spec).gradient(x, w);
}

// Hook "kernel_diag_gradient" (rcpp_hooks.h), not an export: reached through .hook().
Eigen::MatrixXd kernel_diag_gradient_cpp(const MapMat x, Rcpp::List spec) {
  return kernel_from_list(spec).diag_gradient(x);
}
