// The outer hyperparameter loop around EP runs, for any EP backend: EP,
// an epsilon M-step, a few L-BFGS steps on -log Z_EP in the free kernel
// log-hyperparameters (and log epsilon), with nested, warm-started EP. The
// backend enters only through an EpRunner and an EpGradient.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "common/monitor.h"
#include "ep/ep_epsilon.h"
#include "ep/ep_types.h"
#include "gp/kernels.h"

namespace noisylabels {

struct FitOptions {
  EpOptions ep;
  bool learn_epsilon = true;
  EpsilonRule rule = EpsilonRule::Tilted;
  double eps_min = 1e-6, eps_max = 0.49;
  bool learn_kernel = true;
  std::vector<int> free;      // indices of free log-hyperparameters
  VectorXd lower, upper;      // bounds for all log-hyperparameters
  int max_outer = 50;
  int lbfgs_steps = 5;        // L-BFGS iterations per outer iteration
  double tol_eps = 1e-5, tol_theta = 1e-4, tol_logz = 1e-6;
  // Tilted rule with a learned kernel: the L-BFGS steps move log(epsilon)
  // together with the kernel hyperparameters (gradient d log Z_EP / d eps),
  // after each EM step. EM alone crawls along the ridge where epsilon and
  // the latent scale trade off (overlapping classes).
  bool joint_epsilon = true;
};

struct FitResult {
  VectorXd log_par;
  double epsilon = 0;
  EpState state;
  MatrixXd k;                 // dense path: prior covariance at the final hyperparameters
  double jitter = 0;
  int outer_iterations = 0;
  bool converged = false;
  int ep_runs = 0;
  int ep_failures = 0;        // EP runs with no proper posterior (told to the optimiser)
  int ep_not_converged = 0;
  std::vector<double> logz_trace, eps_trace;
  std::vector<VectorXd> par_trace;  // log-hyperparameters after each outer iteration
  std::string message;
};

// EP at log hyperparameters lp and the given likelihood, warm-started from
// the given sites when they are non-null (throws NumericalError if no proper
// posterior is found), and d log Z_EP / d log theta at a converged state.
using EpRunner = std::function<EpState(const VectorXd& lp, const EpLikelihood& lik,
                                       const VectorXd* warm_tau, const VectorXd* warm_nu)>;
using EpGradient = std::function<VectorXd(const VectorXd& lp, const EpState& s)>;

// The outer loop for any EP backend. Fills everything in FitResult except `k`.
FitResult fit_ep_outer(const Kernel& kernel, const VectorXd& y, EpLikelihood lik,
                       const FitOptions& opt, const EpRunner& run,
                       const EpGradient& gradient, Monitor& monitor);

}  // namespace noisylabels
