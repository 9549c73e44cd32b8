#include "common/optimize.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>

#include "common/errors.h"

namespace noisylabels {

namespace {

VectorXd project(const VectorXd& x, const VectorXd& lo, const VectorXd& hi) {
  return x.cwiseMax(lo).cwiseMin(hi);
}

// Max-norm of the projected gradient step P(x - g) - x.
double projected_gradient_norm(const VectorXd& x, const VectorXd& g, const VectorXd& lo,
                               const VectorXd& hi) {
  return (project(x - g, lo, hi) - x).lpNorm<Eigen::Infinity>();
}

double safe_eval(const Objective& f, const VectorXd& x, VectorXd& g, int& evals) {
  ++evals;
  try {
    const double v = f(x, g);
    if (!std::isfinite(v) || !g.allFinite()) return std::numeric_limits<double>::infinity();
    return v;
  } catch (const NumericalError&) {
    return std::numeric_limits<double>::infinity();
  }
}

}  // namespace

BoxResult minimize_box(const Objective& f, const VectorXd& x0, const VectorXd& lower,
                       const VectorXd& upper, const BoxOptions& opt, Monitor& monitor) {
  const int p = static_cast<int>(x0.size());
  BoxResult res;
  if (lower.size() != p || upper.size() != p) throw std::invalid_argument("minimize_box: bound length mismatch");
  if ((lower.array() > upper.array()).any()) throw std::invalid_argument("minimize_box: lower > upper");
  VectorXd x = project(x0, lower, upper);
  VectorXd g(p);
  double fx = safe_eval(f, x, g, res.evaluations);
  if (!std::isfinite(fx)) {
    throw NumericalError("the objective is not finite at the starting point");
  }
  res.trace.push_back(fx);
  std::deque<VectorXd> s_hist, y_hist;
  std::deque<double> rho_hist;
  const double eps_bound = 1e-12;

  for (int iter = 0; iter < opt.max_iter; ++iter) {
    monitor.check();
    if (p == 0 || projected_gradient_norm(x, g, lower, upper) < opt.pgtol) {
      res.converged = true;
      res.message = "projected gradient below tolerance";
      break;
    }
    // Free variables: not at a bound with the gradient pushing outward.
    Eigen::Array<bool, Eigen::Dynamic, 1> free(p);
    for (int j = 0; j < p; ++j) {
      const bool at_lo = x(j) <= lower(j) + eps_bound && g(j) > 0;
      const bool at_hi = x(j) >= upper(j) - eps_bound && g(j) < 0;
      free(j) = !(at_lo || at_hi);
    }
    // Two-loop recursion on the free subspace. q and d stay zero off it, so
    // a dot product with them needs no masked copy of the history vector
    // (the zero terms add nothing), and an update adds the history vector
    // times the 0/1 mask: the same arithmetic as masked copies, without
    // 2 m vector copies per iteration (at 10^6 variables most of an
    // iteration's own work).
    const VectorXd fm = free.cast<double>().matrix();
    VectorXd q = g.cwiseProduct(fm);
    const int m = static_cast<int>(s_hist.size());
    std::vector<double> a(m);
    for (int k = m - 1; k >= 0; --k) {
      a[k] = rho_hist[k] * s_hist[k].dot(q);
      q.noalias() -= a[k] * y_hist[k].cwiseProduct(fm);
    }
    double gamma = 1.0;
    if (m > 0) gamma = s_hist.back().dot(y_hist.back()) / y_hist.back().squaredNorm();
    VectorXd d = gamma * q;
    for (int k = 0; k < m; ++k) {
      const double b = rho_hist[k] * y_hist[k].dot(d);
      d.noalias() += (a[k] - b) * s_hist[k].cwiseProduct(fm);
    }
    d = -d;  // already zero off the free subspace
    if (!(g.dot(d) < 0)) {  // not a descent direction: restart from steepest descent
      s_hist.clear(); y_hist.clear(); rho_hist.clear();
      d = -g.cwiseProduct(fm);
    }
    double t = 1.0;
    if (s_hist.empty()) t = std::min(1.0, 1.0 / std::max(d.lpNorm<Eigen::Infinity>(), 1e-12));
    VectorXd x_new(p), g_new(p);
    double f_new = std::numeric_limits<double>::infinity();
    bool accepted = false;
    for (int bt = 0; bt < opt.max_backtracks; ++bt) {
      x_new = project(x + t * d, lower, upper);
      f_new = safe_eval(f, x_new, g_new, res.evaluations);
      if (std::isfinite(f_new) && f_new <= fx + 1e-4 * g.dot(x_new - x)) {
        accepted = true;
        break;
      }
      t *= 0.5;
    }
    if (!accepted) {
      if (!s_hist.empty()) {  // retry once from steepest descent
        s_hist.clear(); y_hist.clear(); rho_hist.clear();
        continue;
      }
      res.message = "line search failed to decrease the objective";
      res.converged = projected_gradient_norm(x, g, lower, upper) < std::sqrt(opt.pgtol);
      break;
    }
    const VectorXd s = x_new - x, yv = g_new - g;
    const double sy = s.dot(yv);
    if (sy > 1e-10 * s.squaredNorm()) {
      s_hist.push_back(s); y_hist.push_back(yv); rho_hist.push_back(1.0 / sy);
      if (static_cast<int>(s_hist.size()) > opt.memory) {
        s_hist.pop_front(); y_hist.pop_front(); rho_hist.pop_front();
      }
    }
    const double f_old = fx;
    x = x_new; g = g_new; fx = f_new;
    res.iterations = iter + 1;
    res.trace.push_back(fx);
    if (f_old - fx <= opt.ftol * std::max({std::abs(f_old), std::abs(fx), 1.0})) {
      res.converged = true;
      res.message = "relative reduction of the objective below tolerance";
      break;
    }
  }
  if (res.message.empty()) res.message = "iteration limit reached";
  res.x = x;
  res.value = fx;
  return res;
}

}  // namespace noisylabels
