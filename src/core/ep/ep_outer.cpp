// The outer (epsilon / kernel hyperparameter) loop shared by the dense and
// the sparse EP fits (see ep_outer.h), as the named steps of one class:
// EP runs with warm starts and their recovery, the kernel optimiser's
// objective, and the three loops (nothing learned, the kernel only, epsilon
// by EM with or without the kernel), then the joint-epsilon polish.
#include "ep/ep_outer.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "common/errors.h"
#include "common/optimize.h"

namespace noisylabels {

namespace {

class EpOuterLoop {
 public:
  EpOuterLoop(const Kernel& kernel, const VectorXd& y, EpLikelihood lik, const FitOptions& opt,
              const EpRunner& run, const EpGradient& gradient, Monitor& monitor)
      : y_(y), lik_(lik), opt_(opt), run_(run), gradient_(gradient), monitor_(monitor),
        log_par_(kernel.log_par()), nf_(static_cast<int>(opt.free.size())),
        learn_kernel_(opt.learn_kernel && nf_ > 0),
        // The optimiser's variables: the free log-hyperparameters, then
        // (joint mode) log(epsilon).
        joint_(opt.learn_epsilon && opt.joint_epsilon && opt.rule == EpsilonRule::Tilted &&
               learn_kernel_),
        nv_(nf_ + (joint_ ? 1 : 0)), lo_(nv_), hi_(nv_) {
    for (int j = 0; j < nf_; ++j) {
      lo_(j) = opt.lower(opt.free[j]);
      hi_(j) = opt.upper(opt.free[j]);
    }
    if (joint_) {
      lo_(nf_) = std::log(opt.eps_min);
      hi_(nf_) = std::log(opt.eps_max);
    }
  }

  FitResult fit() {
    st_ = run_at(log_par_);
    if (!opt_.learn_epsilon && !learn_kernel_) {
      res_.converged = st_.converged;
    } else if (!opt_.learn_epsilon) {
      fit_kernel_only();
    } else {
      fit_epsilon();
    }
    res_.jitter = st_.jitter;
    res_.log_par = log_par_;
    res_.epsilon = lik_.epsilon;
    res_.state = std::move(st_);
    return std::move(res_);
  }

 private:
  // EP at lp, warm-started from the last run's sites.
  EpState run_at(const VectorXd& lp) {
    ++res_.ep_runs;
    EpState st = run_(lp, lik_, have_warm_ ? &warm_tau_ : nullptr, have_warm_ ? &warm_nu_ : nullptr);
    if (!st.converged) ++res_.ep_not_converged;
    warm_tau_ = st.site_tau;
    warm_nu_ = st.site_nu;
    have_warm_ = true;
    return st;
  }

  // EP at lp, warm-started; if that finds no proper posterior, once more from
  // zero sites (a warm start from other hyperparameters or another epsilon
  // can lead EP astray where a cold start does not). Throws if both fail.
  EpState run_robust(const VectorXd& lp) {
    try {
      return run_at(lp);
    } catch (const NumericalError&) {
      if (!have_warm_) throw;
      have_warm_ = false;
      return run_at(lp);
    }
  }

  // After a failed step the previous state stands: warm-start from it again.
  void keep_state(const EpState& prev) {
    warm_tau_ = prev.site_tau;
    warm_nu_ = prev.site_nu;
    have_warm_ = true;
    ++res_.ep_failures;
  }

  // -log Z_EP and its gradient in the optimiser's variables. Progress: the
  // objective evaluations when epsilon is not learned (total unknown).
  double objective(const VectorXd& tf, VectorXd& grad) {
    if (!opt_.learn_epsilon) monitor_.progress(++evaluations_, -1);
    VectorXd lp = log_par_;
    for (int j = 0; j < nf_; ++j) lp(opt_.free[j]) = tf(j);
    if (joint_) lik_.epsilon = std::exp(tf(nf_));
    EpState st;
    try {
      st = run_robust(lp);
    } catch (const NumericalError&) {
      ++res_.ep_failures;  // the optimiser treats this point as +inf
      throw;
    }
    const VectorXd g = gradient_(lp, st);
    for (int j = 0; j < nf_; ++j) grad(j) = -g(opt_.free[j]);
    // d log Z_EP / d log eps = eps * sum_i (1 - 2 Phi(z_i)) / Z_i
    if (joint_) grad(nf_) = -lik_.epsilon * st.dlogz_deps.sum();
    return -st.log_z;
  }

  // `iters` L-BFGS iterations from the current point; moves log_par_ (and
  // epsilon in joint mode) to where they ended.
  BoxResult optimise(int iters) {
    VectorXd x0(nv_);
    for (int j = 0; j < nf_; ++j) x0(j) = log_par_(opt_.free[j]);
    if (joint_) x0(nf_) = std::min(hi_(nf_), std::max(lo_(nf_), std::log(lik_.epsilon)));
    BoxOptions bo;
    bo.max_iter = iters;
    Objective f = [this](const VectorXd& tf, VectorXd& grad) { return objective(tf, grad); };
    const BoxResult br = minimize_box(f, x0, lo_, hi_, bo, monitor_);
    for (int j = 0; j < nf_; ++j) log_par_(opt_.free[j]) = br.x(j);
    if (joint_) lik_.epsilon = std::exp(br.x(nf_));
    return br;
  }

  // Epsilon fixed: one L-BFGS run on the kernel, then EP at its end.
  void fit_kernel_only() {
    const VectorXd lp_start = log_par_;
    BoxResult br;
    try {
      br = optimise(opt_.max_outer * opt_.lbfgs_steps);
    } catch (const NumericalError&) {
      // EP lost its proper posterior at the optimiser's start (EP's random
      // visiting order can decide this near the edge): keep the start.
      br.x = VectorXd();
      br.iterations = 0;
      br.converged = false;
      br.message = "stopped: no proper EP posterior at the optimiser's start";
    }
    try {
      st_ = run_robust(log_par_);
    } catch (const NumericalError&) {  // keep the start, which had a proper posterior
      log_par_ = lp_start;
      keep_state(st_);
    }
    res_.outer_iterations = br.iterations;
    res_.converged = br.converged;
    res_.logz_trace = br.trace;
    for (double& v : res_.logz_trace) v = -v;
    res_.eps_trace.assign(res_.logz_trace.size(), lik_.epsilon);
    res_.message = br.message;
  }

  // Epsilon learned: outer iterations of an EM step in epsilon and, with a
  // learned kernel, a few L-BFGS steps; then the joint-epsilon polish.
  void fit_epsilon() {
    double log_z_old = st_.log_z;
    for (int t = 1; t <= opt_.max_outer; ++t) {
      monitor_.check();
      const double eps_old = lik_.epsilon;
      const VectorXd lp_old = log_par_;
      const bool stuck = outer_step(lp_old);
      if (stuck && (!learn_kernel_ || log_par_ == lp_old)) {
        res_.outer_iterations = t;
        res_.message = "stopped: no proper EP posterior at the next epsilon or kernel step";
        break;
      }
      res_.outer_iterations = t;
      monitor_.progress(t, opt_.max_outer);
      res_.logz_trace.push_back(st_.log_z);
      res_.eps_trace.push_back(lik_.epsilon);
      res_.par_trace.push_back(log_par_);
      const double dtheta = nf_ > 0 ? (log_par_ - lp_old).cwiseAbs().maxCoeff() : 0.0;
      const bool small_step = std::abs(lik_.epsilon - eps_old) < opt_.tol_eps && dtheta < opt_.tol_theta;
      const bool flat = std::abs(st_.log_z - log_z_old) < opt_.tol_logz;
      log_z_old = st_.log_z;
      if (small_step || flat) {
        res_.converged = true;
        break;
      }
    }
    if (joint_ && res_.converged) polish_joint_epsilon();
    if (res_.message.empty()) {
      res_.message = res_.converged ? "converged" : "maximum number of outer iterations reached";
    }
  }

  // One outer iteration: the epsilon EM step, then (learned kernel) the
  // kernel step. Returns true if the iteration found no step to take.
  bool outer_step(const VectorXd& lp_old) {
    const double eps_old = lik_.epsilon;
    bool stuck = false;
    lik_.epsilon = epsilon_update(y_, st_, lik_, opt_.rule, opt_.eps_min, opt_.eps_max);
    try {
      st_ = run_robust(log_par_);
    } catch (const NumericalError&) {  // reject the epsilon step
      lik_.epsilon = eps_old;
      keep_state(st_);
      stuck = true;
    }
    if (!learn_kernel_) return stuck;
    const double eps_em = lik_.epsilon;
    try {
      optimise(opt_.lbfgs_steps);
    } catch (const NumericalError&) {
      // no proper EP posterior at the optimiser's start (a fresh EP run at
      // the point just accepted, with another visiting order): the kernel
      // (and joint epsilon) step is skipped and the accepted state stands
      log_par_ = lp_old;
      lik_.epsilon = eps_em;
      keep_state(st_);
      return stuck;
    }
    try {
      st_ = run_robust(log_par_);
      stuck = false;
    } catch (const NumericalError&) {  // reject the kernel (and joint epsilon) step
      log_par_ = lp_old;
      lik_.epsilon = eps_em;
      keep_state(st_);
    }
    return stuck;
  }

  // The joint L-BFGS steps end wherever their last line search did; a final
  // EM step at the converged kernel puts epsilon at the maximiser of log Z_EP
  // given the cavities, as the EM-only loop ends.
  void polish_joint_epsilon() {
    const double eps_last = lik_.epsilon;
    lik_.epsilon = epsilon_update(y_, st_, lik_, opt_.rule, opt_.eps_min, opt_.eps_max);
    try {
      EpState polished = run_robust(log_par_);
      if (polished.log_z >= st_.log_z - opt_.tol_logz) {
        st_ = std::move(polished);
        res_.logz_trace.back() = st_.log_z;
        res_.eps_trace.back() = lik_.epsilon;
      } else {
        lik_.epsilon = eps_last;
      }
    } catch (const NumericalError&) {
      lik_.epsilon = eps_last;
      keep_state(st_);
    }
  }

  const VectorXd& y_;
  EpLikelihood lik_;
  const FitOptions& opt_;
  const EpRunner& run_;
  const EpGradient& gradient_;
  Monitor& monitor_;
  FitResult res_;
  EpState st_;
  VectorXd log_par_;
  VectorXd warm_tau_, warm_nu_;
  bool have_warm_ = false;
  int evaluations_ = 0;
  const int nf_;
  const bool learn_kernel_;
  const bool joint_;
  const int nv_;
  VectorXd lo_, hi_;
};

}  // namespace

FitResult fit_ep_outer(const Kernel& kernel, const VectorXd& y, EpLikelihood lik,
                       const FitOptions& opt, const EpRunner& run,
                       const EpGradient& gradient, Monitor& monitor) {
  return EpOuterLoop(kernel, y, lik, opt, run, gradient, monitor).fit();
}

}  // namespace noisylabels
