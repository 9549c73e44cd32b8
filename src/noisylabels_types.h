// Types used in Rcpp-exported signatures; included by RcppExports.cpp.
#pragma once

#include <RcppEigen.h>

using MapMat = Eigen::Map<Eigen::MatrixXd>;
using MapVec = Eigen::Map<Eigen::VectorXd>;
