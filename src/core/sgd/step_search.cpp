// The automatic step search of sgd_choose_eta() (sgd.h): Bottou's
// determineEta0 on a sample, then a stability cap.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "sgd/evaluate.h"
#include "sgd/pass.h"
#include "sgd/rows.h"
#include "sgd/sgd.h"
#include "sgd/shuffle.h"
#include "sgd/state.h"

namespace noisylabels {

double sgd_choose_eta(const SgdData& train, const SgdOptions& options, int sample_size) {
  train.validate();
  const int m = std::max(1, std::min(train.n, sample_size));
  std::mt19937_64 rng(options.seed ^ 0x9e3779b97f4a7c15ULL);
  std::vector<int> perm(train.n);
  for (int i = 0; i < train.n; ++i) perm[i] = i;
  shuffle(perm, rng);
  perm.resize(m);
  // The sample as its own data set (evaluation runs over the sample only).
  std::vector<double> ys(m);
  std::vector<double> dense_s;
  std::vector<int> rp, ci;
  std::vector<double> vals;
  SgdData sample;
  sample.n = m;
  sample.d = train.d;
  for (int k = 0; k < m; ++k) ys[k] = train.y[perm[k]];
  if (train.sparse()) {
    rp.push_back(0);
    for (int k = 0; k < m; ++k) {
      const int i = perm[k];
      for (int q = train.row_ptr[i]; q < train.row_ptr[i + 1]; ++q) {
        ci.push_back(train.col_idx[q]);
        vals.push_back(train.values[q]);
      }
      rp.push_back(static_cast<int>(ci.size()));
    }
    sample.row_ptr = rp.data();
    sample.col_idx = ci.data();
    sample.values = vals.data();
  } else {
    dense_s.resize(static_cast<std::size_t>(m) * train.d);
    for (int k = 0; k < m; ++k)
      std::copy(train.dense + static_cast<std::size_t>(perm[k]) * train.d,
                train.dense + static_cast<std::size_t>(perm[k] + 1) * train.d,
                dense_s.begin() + static_cast<std::size_t>(k) * train.d);
    sample.dense = dense_s.data();
  }
  sample.y = ys.data();
  std::vector<int> order(m);
  for (int k = 0; k < m; ++k) order[k] = k;
  const int dim = train.d + (options.bias == SgdBias::Feature ? 1 : 0);
  std::vector<double> empty;

  auto cost = [&](double eta) {
    SgdOptions opt = options;
    opt.eta = eta;
    if (opt.method == SgdMethod::Sgd && eta * opt.lambda >= 1.0)
      return std::numeric_limits<double>::infinity();
    State st;
    st.allocate(dim);
    if (sample.sparse()) {
      run_pass<true>(Rows<true>(sample), order.data(), m, opt, empty, st, nullptr, nullptr,
                     sample.y, nullptr);
    } else {
      run_pass<false>(Rows<false>(sample), order.data(), m, opt, empty, st, nullptr, nullptr,
                      sample.y, nullptr);
    }
    if (!std::isfinite(st.a) || !all_finite(st.v) || !std::isfinite(st.b))
      return std::numeric_limits<double>::infinity();
    const double obj = evaluate_state(sample, st.v, st.a, st.b, opt).objective;
    return std::isfinite(obj) ? obj : std::numeric_limits<double>::infinity();
  };

  const double factor = 2.0;
  const double eta_min = std::ldexp(1.0, -40), eta_max = std::ldexp(1.0, 20);
  double lo_eta = 1.0, lo_cost = cost(lo_eta);
  double hi_eta = lo_eta * factor, hi_cost = cost(hi_eta);
  if (lo_cost < hi_cost) {
    while (lo_cost < hi_cost && lo_eta > eta_min) {
      hi_eta = lo_eta;
      hi_cost = lo_cost;
      lo_eta = hi_eta / factor;
      lo_cost = cost(lo_eta);
    }
  } else if (hi_cost < lo_cost) {
    while (hi_cost < lo_cost && hi_eta < eta_max) {
      lo_eta = hi_eta;
      lo_cost = hi_cost;
      hi_eta = lo_eta * factor;
      hi_cost = cost(hi_eta);
    }
  } else if (!std::isfinite(lo_cost)) {
    // Both diverge: keep halving until one pass stays finite.
    while (!std::isfinite(lo_cost) && lo_eta > eta_min) {
      lo_eta /= factor;
      lo_cost = cost(lo_eta);
    }
  }
  double eta = lo_eta;
  // Stability cap: a step is contractive when
  // eta * (lambda + max|r''| * max_i ||x_i||^2) < 2; we keep a factor 2 margin.
  // Hinge and ramp are not smooth; they get the curvature 1 of a unit-width
  // smoothed hinge. The one-pass search alone favours steps so large that
  // bounded losses push most margins deep into their flat region.
  double max_sq = 0.0;
  for (int i = 0; i < train.n; ++i) {
    const double sq = train.sparse() ? Rows<true>(train).sqnorm(i) : Rows<false>(train).sqnorm(i);
    max_sq = std::max(max_sq, sq + (options.bias == SgdBias::Feature ? 1.0 : 0.0));
  }
  const SgdLoss& loss = options.loss;
  double curvature = 1.0;
  switch (loss.type) {
    case SgdLossType::Logistic: curvature = 0.25; break;
    case SgdLossType::SmoothRamp:
      curvature = (1.0 - loss.s) * loss.alpha * loss.alpha / (6.0 * std::sqrt(3.0));
      break;
    case SgdLossType::Gompertz: curvature = 0.309 * loss.c * loss.c; break;
    default: break;
  }
  const double cap = 1.0 / (options.lambda + curvature * std::max(max_sq, 1e-12));
  while (eta > cap && eta > eta_min) eta /= factor;
  while (options.lambda > 0.0 && eta * options.lambda > 0.5) eta /= factor;
  return eta;
}

}  // namespace noisylabels
