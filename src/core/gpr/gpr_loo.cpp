#include "gpr/gpr_loo.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <string>

#include "common/optimize.h"

namespace noisylabels {

GprLoo::GprLoo(const MatrixXd& x, const VectorXd& y, const Kernel& kernel,
               const GprLooOptions& options)
    : x_(x), y_(y), opt_(options),
      cov_(make_covariance(x, y, kernel, options.jitter, options.neighbors, options.threads)) {
  if (x.rows() != y.size()) throw std::invalid_argument("gpr_loo: x and y differ in length");
  // Every theta is followed by many evaluations at new noise variances.
  cov_->hold_kernel();
}

double GprLoo::penalty(const VectorXd& noise_var) const {
  if (opt_.lambda <= 0 || opt_.noise == NoiseModel::None) return 0.0;
  return 0.5 * opt_.lambda * noise_var.array().pow(opt_.p).sum();
}

void GprLoo::add_penalty_gradient(const VectorXd& noise_var, VectorXd& grad) const {
  if (opt_.lambda > 0) grad.array() += 0.5 * opt_.lambda * opt_.p * noise_var.array().pow(opt_.p - 1);
}

void GprLoo::record(double j) {
  trace_.push_back(j);
  trace_fact_.push_back(cov_->factorizations());
}

GprLooEval GprLoo::evaluate(const VectorXd& noise_var) {
  CovEval c = cov_->evaluate(noise_var);
  GprLooEval e;
  e.alpha = std::move(c.alpha);
  e.inv_diag = std::move(c.inv_diag);
  e.grad_neg = std::move(c.grad_neg);
  e.objective = c.nll + penalty(noise_var);
  return e;
}

VectorXd GprLoo::jacobi_target(const VectorXd& noise_var, const GprLooEval& eval) const {
  const int n = static_cast<int>(noise_var.size());
  VectorXd target(n);
  for (int i = 0; i < n; ++i) {
    const double e2 = std::max(eval.grad_neg(i), 0.0) / (eval.inv_diag(i) * eval.inv_diag(i));
    const double v = 1.0 / eval.inv_diag(i) - noise_var(i);
    double t;  // optimal total variance v + sigma_i
    if (opt_.lambda > 0) {
      t = (-1.0 + std::sqrt(1.0 + 4.0 * opt_.lambda * e2)) / (2.0 * opt_.lambda);
    } else {
      t = e2;
    }
    target(i) = std::max(0.0, t - v);
  }
  return target;
}

void GprLoo::sweep(VectorXd& noise_var, GprLooEval& eval) {
  const int n = static_cast<int>(noise_var.size());
  const double floor = opt_.sigma_floor;
  const double j_old = eval.objective;
  const double slack = 1e-12 * std::max(1.0, std::abs(j_old));
  auto accept = [&](const VectorXd& cand) {
    GprLooEval e = evaluate(cand);
    if (e.objective <= j_old + slack) {
      noise_var = cand;
      eval = std::move(e);
      return true;
    }
    return false;
  };
  // Multiplicative update, eq. 8 / 18 (uniform: the trace form of §4.1):
  // sigma_i times the ratio of the negative to the positive part of dJ/dsigma_i.
  // Dense: grad_neg = alpha^2, the paper's update. Vecchia: the parts of the
  // approximate gradient (covariance_vecchia.cpp), so its fixed points are the
  // stationary points of the objective actually optimised.
  auto multiplicative = [&]() {
    VectorXd cand(n);
    if (opt_.noise == NoiseModel::Uniform) {
      const double s = noise_var(0);
      double denom = eval.inv_diag.sum();
      if (opt_.lambda > 0) denom += opt_.lambda * opt_.p * std::pow(s, opt_.p - 1);
      cand.setConstant(std::max(floor, s * eval.grad_neg.sum() / denom));
    } else {
      for (int i = 0; i < n; ++i) {
        double denom = eval.inv_diag(i);
        if (opt_.lambda > 0) denom += opt_.lambda * opt_.p * std::pow(noise_var(i), opt_.p - 1);
        cand(i) = std::max(floor, noise_var(i) * eval.grad_neg(i) / denom);
      }
    }
    return cand;
  };
  const bool jacobi_ok = opt_.solver == SigmaSolver::Jacobi && opt_.noise == NoiseModel::Full &&
                         (opt_.lambda <= 0 || opt_.p == 1.0);
  if (jacobi_ok) {
    // Exact per-label optimum with the others fixed (vignettes/gpr-loo.Rmd): the LOO residual
    // e_i = alpha_i/d_i does not depend on sigma_i and 1/d_i = v_i + sigma_i.
    // e_i^2 is read as grad_neg_i / d_i^2: for the dense operator grad_neg =
    // alpha^2, the LOO residual; for Vecchia the negative part of the
    // approximate gradient, so that the target's fixed point is a stationary
    // point of the approximate objective (grad_neg_i = d_i), not of the
    // exact-GP formula evaluated on the approximate precision.
    const VectorXd target = jacobi_target(noise_var, eval);
    double omega = opt_.damping;
    for (int halving = 0; halving < 3; ++halving, omega *= 0.5) {
      VectorXd cand = ((1.0 - omega) * noise_var + omega * target).cwiseMax(floor);
      if (accept(cand)) return;
      ++fallbacks_;
    }
  }
  if (opt_.noise == NoiseModel::None) return;
  VectorXd cand = multiplicative();
  if (accept(cand)) return;
  // eq. 8 is monotone only for diagonal K (Theorem 1): step back toward the
  // current noise_var until J does not increase.
  for (int halving = 0; halving < 6; ++halving) {
    cand = 0.5 * (cand + noise_var);
    if (accept(cand)) return;
  }
  ++fallbacks_;
}

void GprLoo::fit_noise_var(VectorXd& noise_var, GprLooEval& eval, int max_sweeps, double tol) {
  if (opt_.noise == NoiseModel::None) return;
  if (tol < 0) tol = opt_.tol_sweep;
  if (opt_.neighbors.size() > 0 && opt_.solver == SigmaSolver::Jacobi) {
    // Vecchia: the per-label Jacobi targets ignore how sigma_i enters the
    // conditioning sets of its neighbours, and most damped steps were rejected
    // (measured: 8-10 evaluations per sweep at n = 1,000); a quasi-Newton
    // descent on the approximate objective takes one or two per iteration.
    // Checked Jacobi steps first, while each is accepted at the damped step
    // (they make the large early moves at one pass each), then quasi-Newton.
    if (opt_.noise == NoiseModel::Full && (opt_.lambda <= 0 || opt_.p == 1.0)) {
      for (int s = 0; s < max_sweeps; ++s) {
        const double j_old = eval.objective;
        const VectorXd cand =
            ((1.0 - opt_.damping) * noise_var + opt_.damping * jacobi_target(noise_var, eval)).cwiseMax(opt_.sigma_floor);
        GprLooEval e = evaluate(cand);
        if (!(e.objective < j_old)) break;
        noise_var = cand;
        eval = std::move(e);
        record(eval.objective);
        if (std::abs(j_old - eval.objective) <= tol * (1.0 + std::abs(eval.objective))) break;
      }
    }
    // Iterations are cheap passes here; at 10^4 labels in 3 inputs the
    // stopping rule held after about 1,600 of them (a cap of 1,000 stopped
    // short of it with a warning).
    fit_noise_var_scaled(noise_var, eval, 25 * max_sweeps, tol);
    return;
  }
  for (int s = 0; s < max_sweeps; ++s) {
    const double j_old = eval.objective;
    sweep(noise_var, eval);
    record(eval.objective);
    if (std::abs(j_old - eval.objective) <= tol * (1.0 + std::abs(eval.objective))) break;
  }
}

double GprLoo::objective_and_gradient(const VectorXd& lp, const VectorXd& noise_var, VectorXd& grad) {
  set_log_par(lp);
  return cov_->nll_gradient(noise_var, grad, nullptr) + penalty(noise_var);
}

GprLooEval GprLoo::fit_hyper(const VectorXd& noise_var, const VectorXd& lower, const VectorXd& upper) {
  Objective obj = [&](const VectorXd& lp, VectorXd& grad) {
    return objective_and_gradient(lp, noise_var, grad);
  };
  BoxOptions bo;
  bo.max_iter = hyper_cap_ > 0 ? std::min(hyper_cap_, opt_.max_hyper_iter) : opt_.max_hyper_iter;
  bo.pgtol = 1e-5;
  bo.ftol = 1e-10;
  const VectorXd start = kernel().log_par();
  BoxResult r = minimize_box(obj, start, lower, upper, bo);
  set_log_par(r.x);
  return evaluate(noise_var);
}

void GprLoo::start(const VectorXd& noise_var0, const VectorXd& log_par0) {
  set_log_par(log_par0);
  noise_var_ = noise_var0.cwiseMax(opt_.sigma_floor);
  if (opt_.noise == NoiseModel::Uniform) noise_var_.setConstant(noise_var_.mean());
  if (opt_.noise == NoiseModel::None) noise_var_.setConstant(opt_.sigma_floor);
  eval_ = evaluate(noise_var_);
  record(eval_.objective);
  outer_ = 0;
  converged_ = false;
}

void GprLoo::run(int rounds, const VectorXd& lower, const VectorXd& upper, Monitor& monitor) {
  const bool any_free = (upper - lower).maxCoeff() > 0;
  const bool learn = opt_.learn_hyper && any_free;
  const MonitorScope poll(*cov_, monitor);  // the factorizations poll it too

  for (int r = 0; r < rounds && outer_ < opt_.max_outer && !converged_; ++r) {
    monitor.check();
    const double j_start = eval_.objective;
    double tol = opt_.tol_sweep;
    if (learn) {
      eval_ = fit_hyper(noise_var_, lower, upper);
      record(eval_.objective);
      // Inexact inner solves: while a theta step still moves J, converging
      // noise_var far below that change is wasted work (block coordinate descent
      // stays monotone either way); the last rounds, where theta has settled,
      // run to tol_sweep.
      if (opt_.adaptive_sweeps) {
        const double moved = std::abs(j_start - eval_.objective) / (1.0 + std::abs(eval_.objective));
        tol = std::max(tol, 1e-2 * moved);
      }
    }
    fit_noise_var(noise_var_, eval_, opt_.max_sweeps, tol);
    ++outer_;
    monitor.progress(outer_, opt_.max_outer);
    if (!learn || std::abs(j_start - eval_.objective) <= opt_.tol_outer * (1.0 + std::abs(eval_.objective))) {
      converged_ = true;
    }
  }
  if (!learn && opt_.noise != NoiseModel::None && opt_.neighbors.size() > 0 &&
      opt_.solver == SigmaSolver::Jacobi) {
    converged_ = qn_converged_;
  } else if (!learn && opt_.noise != NoiseModel::None && trace_.size() >= 2) {
    const double a = trace_[trace_.size() - 2], b = trace_.back();
    converged_ = std::abs(a - b) <= opt_.tol_sweep * (1.0 + std::abs(b)) * 10;
  }
}

GprLooResult GprLoo::result() const {
  GprLooResult res;
  res.outer_iterations = outer_;
  res.converged = converged_;
  res.noise_var = noise_var_;
  res.log_par = kernel().log_par();
  res.objective = eval_.objective;
  res.trace = trace_;
  res.trace_factorizations = trace_fact_;
  res.factorizations = cov_->factorizations();
  res.sweeps = static_cast<int>(trace_.size());
  res.fallbacks = fallbacks_;
  res.max_jitter = cov_->max_jitter();
  res.alpha = eval_.alpha;
  res.inv_diag = eval_.inv_diag;
  return res;
}

GprLooResult GprLoo::fit(const VectorXd& noise_var0, const VectorXd& log_par0, const VectorXd& lower,
                         const VectorXd& upper, Monitor& monitor) {
  start(noise_var0, log_par0);
  run(opt_.max_outer, lower, upper, monitor);
  return result();
}

GprLooResult gpr_loo_fit(const MatrixXd& x, const VectorXd& y, const Kernel& kernel,
                         const MatrixXd& noise_var0, const MatrixXd& starts, const VectorXd& lower,
                         const VectorXd& upper, const GprLooOptions& options, Monitor& monitor) {
  if (noise_var0.rows() != x.rows() || noise_var0.cols() != starts.rows()) {
    throw std::invalid_argument("gpr_loo: noise_var0 must be n x (number of starts)");
  }
  const int n_starts = static_cast<int>(starts.rows());
  // Every start runs `screen_rounds` alternating rounds; only the best one is
  // continued to convergence (0 = run every start to the end, the old rule).
  const int screen = n_starts > 1 ? options.screen_rounds : 0;
  std::vector<std::unique_ptr<GprLoo>> models(n_starts);
  std::vector<double> objectives(n_starts, std::numeric_limits<double>::infinity());
  int total_fact = 0;
  std::string last_error;
  for (int r = 0; r < n_starts; ++r) {
    monitor.check();
    try {
      models[r] = std::make_unique<GprLoo>(x, y, kernel, options);
      const MonitorScope poll(models[r]->covariance(), monitor);  // start() factors too
      models[r]->start(noise_var0.col(r), starts.row(r).transpose());
      // Screening rounds cap the theta step: they only have to rank the starts.
      if (screen > 0) models[r]->set_hyper_cap(options.screen_hyper_iter);
      // One display over the starts (and the continued best one).
      StageMonitor stage(monitor, r, screen > 0 ? n_starts + 1 : n_starts);
      models[r]->run(screen > 0 ? screen : options.max_outer, lower, upper, stage);
      models[r]->set_hyper_cap(0);
      objectives[r] = models[r]->objective();
    } catch (const NumericalError& e) {
      last_error = e.what();
      if (models[r]) total_fact += models[r]->factorizations();
      models[r].reset();
    }
  }
  int best = -1;
  for (int r = 0; r < n_starts; ++r) {
    if (models[r] && std::isfinite(objectives[r]) && (best < 0 || objectives[r] < objectives[best])) best = r;
  }
  if (best < 0) throw NumericalError("every start failed: " + last_error);
  if (screen > 0) {
    StageMonitor stage(monitor, n_starts, n_starts + 1);
    models[best]->run(options.max_outer, lower, upper, stage);
  }
  GprLooResult res = models[best]->result();
  for (int r = 0; r < n_starts; ++r) {
    if (models[r]) total_fact += models[r]->factorizations();
  }
  res.restart = best;
  res.restart_objectives = objectives;
  res.factorizations = total_fact;
  return res;
}

CleanLevel gpr_loo_clean_level(const MatrixXd& x, const VectorXd& y, const Kernel& kernel,
                               const VectorXd& noise_var, const GprLooOptions& options,
                               Monitor& monitor) {
  const int n = static_cast<int>(y.size());
  // The chi-squared(1) median.
  constexpr double kMedianChi2 = 0.45493642311957283;
  GprLoo model(x, y, kernel, options);
  const MonitorScope poll(model.covariance(), monitor);
  CleanLevel out;
  std::vector<double> ratio(n);
  VectorXd e, v;
  double s_eval = 0;  // the level of the last evaluation (e, v belong to it)
  // g(t) = median of e^2 / (v + s) - chi-squared median at s = exp(t); e and
  // v of the last evaluation are kept.
  auto g = [&](double t) {
    const double s = std::exp(t);
    s_eval = s;
    const VectorXd floored = noise_var.cwiseMax(s);
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

}  // namespace noisylabels
