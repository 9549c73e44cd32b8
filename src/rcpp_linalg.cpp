// Glue: the linalg module exposed for tests and benchmarks (hooks, see
// rcpp_hooks.h).
#include <chrono>

#include "common/optimize.h"
#include "linalg/blas.h"
#include "linalg/blocked.h"
#include "noisylabels_types.h"
#include "rcpp_common.h"
#include "rcpp_hooks.h"
#include "rcpp_monitor.h"

using namespace noisylabels;

// Factor A and return the LOO quantities for targets r (R&W eq. 5.12).
// Hook "chol_loo" (rcpp_hooks.h), not an export: reached through .hook().
Rcpp::List chol_loo_cpp(const MapMat a, const MapVec r, std::string backend,
                        double base_jitter) {
  JitterPolicy policy;
  policy.backend = backend_from_string(backend);
  policy.base = base_jitter;
  Cholesky chol{Eigen::MatrixXd(a), policy};
  LooQuantities q = loo_quantities(chol, r);
  return Rcpp::List::create(
      Rcpp::Named("logdet") = chol.logdet(), Rcpp::Named("alpha") = q.alpha,
      Rcpp::Named("inverse_diagonal") = q.inverse_diagonal, Rcpp::Named("loo_residual") = q.residual,
      Rcpp::Named("loo_variance") = q.variance, Rcpp::Named("nll") = gaussian_nll(chol, r, q.alpha),
      Rcpp::Named("jitter") = chol.jitter(), Rcpp::Named("attempts") = chol.attempts(),
      Rcpp::Named("factor") = Eigen::MatrixXd(chol.factor().triangularView<Eigen::Lower>()));
}

// Hook "chol_inverse" (rcpp_hooks.h), not an export: reached through .hook().
Eigen::MatrixXd chol_inverse_cpp(const MapMat a, std::string backend) {
  JitterPolicy policy;
  policy.backend = backend_from_string(backend);
  return Cholesky(Eigen::MatrixXd(a), policy).inverse();
}

// Lower factor of A + sigma v v' obtained by updating the factor of A.
// Hook "chol_rank_one" (rcpp_hooks.h), not an export: reached through .hook().
Eigen::MatrixXd chol_rank_one_cpp(const MapMat a, const MapVec v, double sigma) {
  Cholesky chol{Eigen::MatrixXd(a)};
  chol.rank_one_update(v, sigma);
  return Eigen::MatrixXd(chol.factor().triangularView<Eigen::Lower>());
}

// Timing helper for inst/bench: factor + diag-inverse (+ full inverse) `reps` times.
// Hook "chol_timing" (rcpp_hooks.h), not an export: reached through .hook().
double chol_timing_cpp(const MapMat a, std::string backend, bool full_inverse, int reps) {
  JitterPolicy policy;
  policy.backend = backend_from_string(backend);
  double checksum = 0;
  for (int r = 0; r < reps; ++r) {
    Cholesky chol{Eigen::MatrixXd(a), policy};
    if (full_inverse) checksum += chol.inverse()(0, 0);
    else checksum += chol.inverse_diagonal()(0);
  }
  return checksum;
}

// The blocked factorizations of linalg/blocked.h with `block` columns per
// block (0: the default), polling R: factor L of A, L^{-1} and the lower
// triangle of A^{-1}, each from its own routine, and their info codes.
// Hook "chol_blocked" (rcpp_hooks.h), not an export: reached through .hook().
Rcpp::List chol_blocked_cpp(const MapMat a, int block) {
  RMonitor monitor;
  Eigen::MatrixXd l = a;
  const int info_potrf = blocked_potrf(l, monitor, block);
  Eigen::MatrixXd linv = l, ainv = l;
  const int info_trtri = info_potrf == 0 ? blocked_trtri(linv, monitor, block) : -1;
  const int info_potri = info_potrf == 0 ? blocked_potri(ainv, monitor, block) : -1;
  return Rcpp::List::create(Rcpp::Named("factor") = l, Rcpp::Named("factor_inverse") = linv,
                            Rcpp::Named("inverse") = ainv, Rcpp::Named("info_potrf") = info_potrf,
                            Rcpp::Named("info_trtri") = info_trtri,
                            Rcpp::Named("info_potri") = info_potri);
}

// Timing helper for inst/bench/interrupt/blocked_chol.R: `reps` times the
// factorization (`what` = "potrf") or factorization + inverse ("potri"),
// by the blocked routines (`block` columns per block, 0: the default) or by
// one LAPACK call each; returns the seconds.
// Hook "chol_blocked_timing" (rcpp_hooks.h), not an export: reached through .hook().
double chol_blocked_timing_cpp(const MapMat a, std::string what, bool blocked, int reps,
                               int block) {
  RMonitor monitor;
  const int n = static_cast<int>(a.rows());
  double seconds = 0;
  for (int r = 0; r < reps; ++r) {
    Eigen::MatrixXd m = a;
    const auto t0 = std::chrono::steady_clock::now();
    int info = 0;
    if (blocked) {
      info = blocked_potrf(m, monitor, block);
      if (info == 0 && what == "potri") info = blocked_potri(m, monitor, block);
    } else {
      dpotrf_("L", &n, m.data(), &n, &info, 1);
      if (info == 0 && what == "potri") dpotri_("L", &n, m.data(), &n, &info, 1);
    }
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (info != 0) Rcpp::stop("the matrix is not positive definite");
  }
  return seconds;
}

// Minimise an R function fn(x) -> list(value, gradient) within bounds (tests).
// Hook "minimize_box" (rcpp_hooks.h), not an export: reached through .hook().
Rcpp::List minimize_box_cpp(Rcpp::Function fn, Eigen::VectorXd x0, Eigen::VectorXd lower,
                            Eigen::VectorXd upper, int max_iter) {
  Objective obj = [&fn](const Eigen::VectorXd& x, Eigen::VectorXd& g) {
    Rcpp::List out = fn(Rcpp::wrap(x));
    g = Rcpp::as<Eigen::VectorXd>(out["gradient"]);
    return Rcpp::as<double>(out["value"]);
  };
  BoxOptions opt;
  opt.max_iter = max_iter;
  opt.pgtol = 1e-8;
  opt.ftol = 1e-14;
  RMonitor monitor;
  BoxResult r = minimize_box(obj, x0, lower, upper, opt, monitor);
  return Rcpp::List::create(Rcpp::Named("par") = r.x, Rcpp::Named("value") = r.value,
                            Rcpp::Named("iterations") = r.iterations,
                            Rcpp::Named("evaluations") = r.evaluations,
                            Rcpp::Named("converged") = r.converged,
                            Rcpp::Named("message") = r.message);
}
