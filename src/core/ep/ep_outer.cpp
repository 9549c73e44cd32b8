// The outer (epsilon / kernel hyperparameter) loop shared by the dense and
// the sparse EP fits (see ep_outer.h).
#include "ep/ep_outer.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "common/optimize.h"

namespace noisylabels {

FitResult fit_ep_outer(const Kernel& kernel, const VectorXd& y, EpLikelihood lik,
                       const FitOptions& opt, const EpRunner& run,
                       const EpGradient& gradient, Monitor& monitor) {
  FitResult res;
  VectorXd log_par = kernel.log_par();
  VectorXd warm_tau, warm_nu;
  bool have_warm = false;

  auto run_at = [&](const VectorXd& lp) -> EpState {
    ++res.ep_runs;
    EpState st = run(lp, lik, have_warm ? &warm_tau : nullptr, have_warm ? &warm_nu : nullptr);
    if (!st.converged) ++res.ep_not_converged;
    warm_tau = st.site_tau;
    warm_nu = st.site_nu;
    have_warm = true;
    return st;
  };

  // EP at lp, warm-started; if that finds no proper posterior, once more from
  // zero sites (a warm start from other hyperparameters or another epsilon
  // can lead EP astray where a cold start does not). Throws if both fail.
  auto run_robust = [&](const VectorXd& lp) -> EpState {
    try {
      return run_at(lp);
    } catch (const NumericalError&) {
      if (!have_warm) throw;
      have_warm = false;
      return run_at(lp);
    }
  };
  // After a failed step the previous state stands: warm-start from it again.
  auto keep_state = [&](const EpState& prev) {
    warm_tau = prev.site_tau;
    warm_nu = prev.site_nu;
    have_warm = true;
    ++res.ep_failures;
  };

  const int nf = static_cast<int>(opt.free.size());
  const bool learn_kernel = opt.learn_kernel && nf > 0;
  // The optimiser's variables: the free log-hyperparameters, then (joint
  // mode) log(epsilon).
  const bool joint = opt.learn_epsilon && opt.joint_epsilon && opt.rule == EpsilonRule::Tilted &&
                     learn_kernel;
  const int nv = nf + (joint ? 1 : 0);
  VectorXd lo(nv), hi(nv);
  for (int j = 0; j < nf; ++j) {
    lo(j) = opt.lower(opt.free[j]);
    hi(j) = opt.upper(opt.free[j]);
  }
  if (joint) {
    lo(nf) = std::log(opt.eps_min);
    hi(nf) = std::log(opt.eps_max);
  }
  // Progress: the outer (epsilon) iterations when epsilon is learned, else
  // the objective evaluations of the kernel optimiser (total unknown).
  int evaluations = 0;
  Objective objective = [&](const VectorXd& tf, VectorXd& grad) -> double {
    if (!opt.learn_epsilon) monitor.progress(++evaluations, -1);
    VectorXd lp = log_par;
    for (int j = 0; j < nf; ++j) lp(opt.free[j]) = tf(j);
    if (joint) lik.epsilon = std::exp(tf(nf));
    EpState st;
    try {
      st = run_robust(lp);
    } catch (const NumericalError&) {
      ++res.ep_failures;  // the optimiser treats this point as +inf
      throw;
    }
    const VectorXd g = gradient(lp, st);
    for (int j = 0; j < nf; ++j) grad(j) = -g(opt.free[j]);
    // d log Z_EP / d log eps = eps * sum_i (1 - 2 Phi(z_i)) / Z_i
    if (joint) grad(nf) = -lik.epsilon * st.dlogz_deps.sum();
    return -st.log_z;
  };
  auto optimise = [&](int iters) {
    VectorXd x0(nv);
    for (int j = 0; j < nf; ++j) x0(j) = log_par(opt.free[j]);
    if (joint) x0(nf) = std::min(hi(nf), std::max(lo(nf), std::log(lik.epsilon)));
    BoxOptions bo;
    bo.max_iter = iters;
    const BoxResult br = minimize_box(objective, x0, lo, hi, bo, monitor);
    for (int j = 0; j < nf; ++j) log_par(opt.free[j]) = br.x(j);
    if (joint) lik.epsilon = std::exp(br.x(nf));
    return br;
  };

  EpState st = run_at(log_par);
  if (!opt.learn_epsilon && !learn_kernel) {
    res.converged = st.converged;
  } else if (!opt.learn_epsilon) {
    const VectorXd lp_start = log_par;
    BoxResult br;
    try {
      br = optimise(opt.max_outer * opt.lbfgs_steps);
    } catch (const NumericalError&) {
      // EP lost its proper posterior at the optimiser's start (EP's random
      // visiting order can decide this near the edge): keep the start.
      br.x = VectorXd();
      br.iterations = 0;
      br.converged = false;
      br.message = "stopped: no proper EP posterior at the optimiser's start";
    }
    try {
      st = run_robust(log_par);
    } catch (const NumericalError&) {  // keep the start, which had a proper posterior
      log_par = lp_start;
      keep_state(st);
    }
    res.outer_iterations = br.iterations;
    res.converged = br.converged;
    res.logz_trace = br.trace;
    for (double& v : res.logz_trace) v = -v;
    res.eps_trace.assign(res.logz_trace.size(), lik.epsilon);
    res.message = br.message;
  } else {
    double log_z_old = st.log_z;
    for (int t = 1; t <= opt.max_outer; ++t) {
      monitor.check();
      const double eps_old = lik.epsilon;
      const VectorXd lp_old = log_par;
      bool stuck = false;
      lik.epsilon = epsilon_update(y, st, lik, opt.rule, opt.eps_min, opt.eps_max);
      try {
        st = run_robust(log_par);
      } catch (const NumericalError&) {  // reject the epsilon step
        lik.epsilon = eps_old;
        keep_state(st);
        stuck = true;
      }
      if (learn_kernel) {
        const double eps_em = lik.epsilon;
        bool stepped = true;
        try {
          optimise(opt.lbfgs_steps);
        } catch (const NumericalError&) {
          // no proper EP posterior at the optimiser's start (a fresh EP run
          // at the point just accepted, with another visiting order): the
          // kernel (and joint epsilon) step is skipped and the accepted state
          // stands
          log_par = lp_old;
          lik.epsilon = eps_em;
          keep_state(st);
          stepped = false;
        }
        if (stepped) {
          try {
            st = run_robust(log_par);
            stuck = false;
          } catch (const NumericalError&) {  // reject the kernel (and joint epsilon) step
            log_par = lp_old;
            lik.epsilon = eps_em;
            keep_state(st);
          }
        }
      }
      if (stuck && (!learn_kernel || log_par == lp_old)) {
        res.outer_iterations = t;
        res.message = "stopped: no proper EP posterior at the next epsilon or kernel step";
        break;
      }
      res.outer_iterations = t;
      monitor.progress(t, opt.max_outer);
      res.logz_trace.push_back(st.log_z);
      res.eps_trace.push_back(lik.epsilon);
      res.par_trace.push_back(log_par);
      const double dtheta = nf > 0 ? (log_par - lp_old).cwiseAbs().maxCoeff() : 0.0;
      const bool small_step = std::abs(lik.epsilon - eps_old) < opt.tol_eps && dtheta < opt.tol_theta;
      const bool flat = std::abs(st.log_z - log_z_old) < opt.tol_logz;
      log_z_old = st.log_z;
      if (small_step || flat) {
        res.converged = true;
        break;
      }
    }
    if (joint && res.converged) {
      // The joint L-BFGS steps end wherever their last line search did; a
      // final EM step at the converged kernel puts epsilon at the maximiser
      // of log Z_EP given the cavities, as the EM-only loop ends.
      const double eps_last = lik.epsilon;
      lik.epsilon = epsilon_update(y, st, lik, opt.rule, opt.eps_min, opt.eps_max);
      try {
        EpState polished = run_robust(log_par);
        if (polished.log_z >= st.log_z - opt.tol_logz) {
          st = std::move(polished);
          res.logz_trace.back() = st.log_z;
          res.eps_trace.back() = lik.epsilon;
        } else {
          lik.epsilon = eps_last;
        }
      } catch (const NumericalError&) {
        lik.epsilon = eps_last;
        keep_state(st);
      }
    }
    if (res.message.empty()) {
      res.message = res.converged ? "converged" : "maximum number of outer iterations reached";
    }
  }
  res.jitter = st.jitter;
  res.log_par = log_par;
  res.epsilon = lik.epsilon;
  res.state = std::move(st);
  return res;
}

}  // namespace noisylabels
