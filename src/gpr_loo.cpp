#include "gpr_loo.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "optimize.h"

namespace noisylabels {

GprLoo::GprLoo(const MatrixXd& x, const VectorXd& y, const Kernel& kernel,
               const GprLooOptions& options)
    : x_(x), y_(y), kernel_(kernel), opt_(options) {
  if (x.rows() != y.size()) throw std::invalid_argument("gpr_loo: x and y differ in length");
}

double GprLoo::penalty(const VectorXd& sigma) const {
  if (opt_.lambda <= 0 || opt_.noise == NoiseModel::None) return 0.0;
  return 0.5 * opt_.lambda * sigma.array().pow(opt_.p).sum();
}

void GprLoo::record(double j) {
  trace_.push_back(j);
  trace_fact_.push_back(factorizations_);
}

GprLooEval GprLoo::evaluate(const VectorXd& sigma) {
  GprLooEval e;
  if (kernel_matrix_.size() == 0) kernel_matrix_ = kernel_.gram(x_);
  MatrixXd c = kernel_matrix_;
  c.diagonal() += sigma;
  e.chol.compute(std::move(c), opt_.jitter);
  ++factorizations_;
  max_jitter_ = std::max(max_jitter_, e.chol.jitter());
  e.alpha = e.chol.solve(y_);
  e.inv_diag = e.chol.inverse_diagonal();
  e.objective = gaussian_nll(e.chol, y_, e.alpha) + penalty(sigma);
  return e;
}

void GprLoo::sweep(VectorXd& sigma, GprLooEval& eval) {
  const int n = static_cast<int>(sigma.size());
  const double floor = opt_.sigma_floor;
  const double j_old = eval.objective;
  const double slack = 1e-12 * std::max(1.0, std::abs(j_old));
  auto accept = [&](const VectorXd& cand) {
    GprLooEval e = evaluate(cand);
    if (e.objective <= j_old + slack) {
      sigma = cand;
      eval = std::move(e);
      return true;
    }
    return false;
  };
  // Multiplicative update, eq. 8 / 18 (uniform: the trace form of §4.1).
  auto multiplicative = [&]() {
    VectorXd cand(n);
    if (opt_.noise == NoiseModel::Uniform) {
      const double s = sigma(0);
      double denom = eval.inv_diag.sum();
      if (opt_.lambda > 0) denom += opt_.lambda * opt_.p * std::pow(s, opt_.p - 1);
      cand.setConstant(std::max(floor, s * eval.alpha.squaredNorm() / denom));
    } else {
      for (int i = 0; i < n; ++i) {
        double denom = eval.inv_diag(i);
        if (opt_.lambda > 0) denom += opt_.lambda * opt_.p * std::pow(sigma(i), opt_.p - 1);
        cand(i) = std::max(floor, sigma(i) * eval.alpha(i) * eval.alpha(i) / denom);
      }
    }
    return cand;
  };
  const bool jacobi_ok = opt_.solver == SigmaSolver::Jacobi && opt_.noise == NoiseModel::Full &&
                         (opt_.lambda <= 0 || opt_.p == 1.0);
  if (jacobi_ok) {
    // Exact per-label optimum with the others fixed (spec §1): the LOO residual
    // e_i = alpha_i/d_i does not depend on sigma_i and 1/d_i = v_i + sigma_i.
    VectorXd target(n);
    for (int i = 0; i < n; ++i) {
      const double e2 = std::pow(eval.alpha(i) / eval.inv_diag(i), 2);
      const double v = 1.0 / eval.inv_diag(i) - sigma(i);
      double t;  // optimal total variance v + sigma_i
      if (opt_.lambda > 0) {
        t = (-1.0 + std::sqrt(1.0 + 4.0 * opt_.lambda * e2)) / (2.0 * opt_.lambda);
      } else {
        t = e2;
      }
      target(i) = std::max(0.0, t - v);
    }
    double omega = opt_.damping;
    for (int halving = 0; halving < 3; ++halving, omega *= 0.5) {
      VectorXd cand = ((1.0 - omega) * sigma + omega * target).cwiseMax(floor);
      if (accept(cand)) return;
      ++fallbacks_;
    }
  }
  if (opt_.noise == NoiseModel::None) return;
  VectorXd cand = multiplicative();
  if (accept(cand)) return;
  // eq. 8 is monotone only for diagonal K (Theorem 1): step back toward the
  // current sigma until J does not increase.
  for (int halving = 0; halving < 6; ++halving) {
    cand = 0.5 * (cand + sigma);
    if (accept(cand)) return;
  }
  ++fallbacks_;
}

void GprLoo::fit_sigma(VectorXd& sigma, GprLooEval& eval, int max_sweeps) {
  if (opt_.noise == NoiseModel::None) return;
  for (int s = 0; s < max_sweeps; ++s) {
    const double j_old = eval.objective;
    sweep(sigma, eval);
    record(eval.objective);
    if (std::abs(j_old - eval.objective) <= opt_.tol_sweep * (1.0 + std::abs(eval.objective))) break;
  }
}

VectorXd GprLoo::hyper_gradient(const GprLooEval& eval) const {
  // W = alpha alpha' - C^{-1}; dJ/dtheta = -1/2 sum W dK/dtheta (DESIGN.md §3).
  return -kernel_.gradient(x_, eval.alpha, eval.chol.inverse());
}

double GprLoo::objective_and_gradient(const VectorXd& lp, const VectorXd& sigma, VectorXd& grad) {
  // One n x n buffer end to end: K is built in it, factored in place, turned
  // into C^{-1} by dpotri in place, and the gradient reads its lower triangle.
  set_log_par(lp);
  MatrixXd c = kernel_.gram(x_);
  c.diagonal() += sigma;
  Cholesky chol;
  chol.compute_symmetric(std::move(c), opt_.jitter);
  ++factorizations_;
  max_jitter_ = std::max(max_jitter_, chol.jitter());
  const VectorXd alpha = chol.solve(y_);
  const double j = gaussian_nll(chol, y_, alpha) + penalty(sigma);
  const MatrixXd cinv = chol.release_inverse_lower();
  grad = -kernel_.gradient(x_, alpha, cinv);
  return j;
}

GprLooEval GprLoo::fit_hyper(const VectorXd& sigma, const VectorXd& lower, const VectorXd& upper) {
  Objective obj = [&](const VectorXd& lp, VectorXd& grad) {
    return objective_and_gradient(lp, sigma, grad);
  };
  BoxOptions bo;
  bo.max_iter = opt_.max_hyper_iter;
  bo.pgtol = 1e-5;
  bo.ftol = 1e-10;
  const VectorXd start = kernel_.log_par();
  BoxResult r = minimize_box(obj, start, lower, upper, bo);
  set_log_par(r.x);
  return evaluate(sigma);
}

GprLooResult GprLoo::fit(const VectorXd& sigma0, const VectorXd& log_par0, const VectorXd& lower,
                         const VectorXd& upper, Monitor& monitor) {
  set_log_par(log_par0);
  VectorXd sigma = sigma0.cwiseMax(opt_.sigma_floor);
  if (opt_.noise == NoiseModel::Uniform) sigma.setConstant(sigma.mean());
  if (opt_.noise == NoiseModel::None) sigma.setConstant(opt_.sigma_floor);
  GprLooEval eval = evaluate(sigma);
  record(eval.objective);
  GprLooResult res;
  const bool any_free = (upper - lower).maxCoeff() > 0;
  const bool learn = opt_.learn_hyper && any_free;
  for (int outer = 0; outer < opt_.max_outer; ++outer) {
    monitor.check();
    const double j_start = eval.objective;
    if (learn) {
      eval = fit_hyper(sigma, lower, upper);
      record(eval.objective);
    }
    fit_sigma(sigma, eval, opt_.max_sweeps);
    res.outer_iterations = outer + 1;
    if (!learn || std::abs(j_start - eval.objective) <= opt_.tol_outer * (1.0 + std::abs(eval.objective))) {
      res.converged = true;
      break;
    }
  }
  if (!learn && opt_.noise != NoiseModel::None && trace_.size() >= 2) {
    const double a = trace_[trace_.size() - 2], b = trace_.back();
    res.converged = std::abs(a - b) <= opt_.tol_sweep * (1.0 + std::abs(b)) * 10;
  }
  res.sigma = sigma;
  res.log_par = kernel_.log_par();
  res.objective = eval.objective;
  res.trace = trace_;
  res.trace_factorizations = trace_fact_;
  res.factorizations = factorizations_;
  res.sweeps = static_cast<int>(trace_.size());
  res.fallbacks = fallbacks_;
  res.max_jitter = max_jitter_;
  res.alpha = eval.alpha;
  res.inv_diag = eval.inv_diag;
  return res;
}

GprLooResult gpr_loo_fit(const MatrixXd& x, const VectorXd& y, const Kernel& kernel,
                         const MatrixXd& sigma0, const MatrixXd& starts, const VectorXd& lower,
                         const VectorXd& upper, const GprLooOptions& options, Monitor& monitor) {
  GprLooResult best;
  best.objective = std::numeric_limits<double>::infinity();
  std::vector<double> objectives;
  int total_fact = 0;
  std::string last_error;
  if (sigma0.rows() != x.rows() || sigma0.cols() != starts.rows()) {
    throw std::invalid_argument("gpr_loo: sigma0 must be n x (number of starts)");
  }
  for (int r = 0; r < starts.rows(); ++r) {
    monitor.check();
    try {
      GprLoo model(x, y, kernel, options);
      GprLooResult res = model.fit(sigma0.col(r), starts.row(r).transpose(), lower, upper, monitor);
      total_fact += res.factorizations;
      objectives.push_back(res.objective);
      if (res.objective < best.objective) {
        best = std::move(res);
        best.restart = r;
      }
    } catch (const NumericalError& e) {
      objectives.push_back(std::numeric_limits<double>::infinity());
      last_error = e.what();
    }
  }
  if (!std::isfinite(best.objective)) {
    throw NumericalError("every start failed: " + last_error);
  }
  best.restart_objectives = objectives;
  best.factorizations = total_fact;
  return best;
}

CleanLevel gpr_loo_clean_level(const MatrixXd& x, const VectorXd& y, const Kernel& kernel,
                               const VectorXd& sigma, const GprLooOptions& options) {
  const int n = static_cast<int>(y.size());
  // The chi-squared(1) median.
  constexpr double kMedianChi2 = 0.45493642311957283;
  GprLoo model(x, y, kernel, options);
  CleanLevel out;
  std::vector<double> ratio(n);
  VectorXd e, v;
  double s_eval = 0;  // the level of the last evaluation (e, v belong to it)
  // g(t) = median of e^2 / (v + s) - chi-squared median at s = exp(t); e and
  // v of the last evaluation are kept.
  auto g = [&](double t) {
    const double s = std::exp(t);
    s_eval = s;
    const VectorXd floored = sigma.cwiseMax(s);
    const GprLooEval ev = model.evaluate(floored);
    ++out.evaluations;
    e = ev.alpha.cwiseQuotient(ev.inv_diag);
    v = (ev.inv_diag.cwiseInverse() - floored).cwiseMax(0.0);
    for (int i = 0; i < n; ++i) ratio[i] = e[i] * e[i] / (v[i] + s);
    // The median as R's median(): mean of the two middle values for even n.
    const int mid = n / 2;
    std::nth_element(ratio.begin(), ratio.begin() + mid, ratio.end());
    double med = ratio[mid];
    if (n % 2 == 0) med = 0.5 * (med + *std::max_element(ratio.begin(), ratio.begin() + mid));
    return med - kMedianChi2;
  };
  // Targets are standardised (variance 1): bracket in [1e-10, 10], widened
  // upwards if needed.
  double lo = std::log(1e-10), hi = std::log(10.0);
  auto finish = [&](double level) {
    out.level = level;
    out.residual = e;
    out.variance = v;
    out.statistic = e.array().square() / (v.array() + s_eval);
    return out;
  };
  double g_lo = g(lo);
  if (g_lo <= 0) return finish(0.0);
  double g_hi = g(hi);
  while (g_hi > 0 && hi < std::log(1e6)) {
    lo = hi;
    g_lo = g_hi;
    hi += std::log(10.0);
    g_hi = g(hi);
  }
  if (g_hi > 0) throw NumericalError("the clean noise level could not be bracketed");
  // Illinois regula falsi on t = log s: the median is piecewise smooth in t.
  double t = hi, g_t = g_hi;
  int side = 0;
  for (int it = 0; it < 100 && hi - lo > 1e-7; ++it) {
    t = (lo * g_hi - hi * g_lo) / (g_hi - g_lo);
    if (!(t > lo && t < hi)) t = 0.5 * (lo + hi);
    g_t = g(t);
    if (g_t == 0) break;
    if (g_t > 0) {
      lo = t;
      g_lo = g_t;
      if (side == -1) g_hi *= 0.5;
      side = -1;
    } else {
      hi = t;
      g_hi = g_t;
      if (side == 1) g_lo *= 0.5;
      side = 1;
    }
  }
  // e and v belong to the last evaluation, at t.
  return finish(s_eval);
}

GpPrediction gp_predict(const MatrixXd& x, const VectorXd& alpha, const Cholesky& chol,
                        const Kernel& kernel, const MatrixXd& xnew, bool want_var) {
  GpPrediction p;
  const MatrixXd kx = kernel.cross(x, xnew);  // n x m
  p.mean = kx.transpose() * alpha;
  if (want_var) {
    const MatrixXd v = chol.factor().triangularView<Eigen::Lower>().solve(kx);
    p.var = (kernel.diag(xnew).array() - v.colwise().squaredNorm().transpose().array()).max(0.0);
  }
  return p;
}

}  // namespace noisylabels
