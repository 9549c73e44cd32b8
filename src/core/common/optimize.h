// Box-constrained quasi-Newton minimisation shared by the GP methods
// (kernel hyperparameters, relevance-pursuit supports, EP hyperparameters).
//
// Projected L-BFGS: variables at a bound whose gradient points outward are
// held fixed, the two-loop recursion acts on the free ones, and a projected
// backtracking (Armijo) line search keeps every iterate inside the box. The
// objective may throw NumericalError (e.g. a failed factorization); the line
// search then treats the point as infinitely bad and backtracks.
#pragma once

#include <Eigen/Dense>
#include <functional>
#include <string>
#include <vector>

#include "common/monitor.h"

namespace noisylabels {

using Eigen::VectorXd;

// Returns f(x) and writes the gradient into `grad` (already sized).
using Objective = std::function<double(const VectorXd& x, VectorXd& grad)>;

struct BoxOptions {
  int max_iter = 200;
  int memory = 10;
  double pgtol = 1e-6;   // stop when the projected gradient's max-norm is below
  double ftol = 1e-10;   // stop when the relative decrease is below
  int max_backtracks = 40;
};

struct BoxResult {
  VectorXd x;
  double value = 0;
  int iterations = 0;
  int evaluations = 0;
  bool converged = false;
  std::string message;
  std::vector<double> trace;  // objective after each iteration
};

BoxResult minimize_box(const Objective& f, const VectorXd& x0, const VectorXd& lower,
                       const VectorXd& upper, const BoxOptions& options = BoxOptions(),
                       Monitor& monitor = null_monitor());

}  // namespace noisylabels
