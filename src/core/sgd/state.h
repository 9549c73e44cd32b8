// The learner's state (scaled weights, running average, L1 bookkeeping), its
// renormalisation thresholds and the step-size schedules.
// Internal to the SGD core: included only by src/core/sgd/*.cpp. The
// definitions sit in an unnamed namespace, so every file that uses them gets
// its own internal copy and the compiler inlines and specialises the kernels
// as it did when the core was one file (the epoch loop's speed depends on it).
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "sgd/sgd.h"

namespace noisylabels {
namespace {

// Cumulative L1 penalty on weight j of w = a v (Tsuruoka et al. 2009,
// scikit-learn's l1penalty): clip w_j towards 0 by what it is owed, never
// across 0; the change is mirrored into the averaging correction U.
inline void l1_apply(int j, double a, double u, double* v, double* q, double* U, double c,
                     bool averaging, unsigned char* nz) {
  const double z = a * v[j];
  // u and q[j] are long running sums whose rounding error grows with u; a
  // clipped weight within that error of 0 is 0 (otherwise such weights stay
  // at 1e-17 and averaging turns them into residue instead of zeros).
  const double tiny = 64.0 * std::numeric_limits<double>::epsilon() * u;
  double w_new = z;
  if (z > 0.0) {
    w_new = z - (u + q[j]);
    if (w_new <= tiny) w_new = 0.0;
  } else if (z < 0.0) {
    w_new = z + (u - q[j]);
    if (w_new >= -tiny) w_new = 0.0;
  }
  q[j] += w_new - z;
  if (w_new != z) {
    const double dv = (w_new - z) / a;
    v[j] = w_new == 0.0 ? 0.0 : v[j] + dv;
    if (averaging && c != 0.0) U[j] += c * dv;
  }
  if (nz != nullptr && w_new != 0.0) nz[j] = 1;
}

// w = a v is renormalised (v <- a v, a <- 1) when |a| falls below the
// threshold. With averaging, c * v and U each grow like mean(a) / a times the
// sum they represent, and their difference loses that factor in relative
// accuracy, so the threshold is higher there and the running sum is folded
// into S first (c = 0, U = 0 afterwards): the loss is then at most a factor
// 1e3 (plus the steps since the last fold), instead of up to 1e9.
constexpr double kRenormThreshold = 1e-9;  // scikit-learn's float64 wscale threshold
constexpr double kRenormThresholdAveraging = 1e-3;

// The body of a renormalisation: v <- a v, after folding the average's
// running sum c v - U into S when averaging. The caller then sets a = 1 (and
// c = 0 when averaging); the binary pass kernel does so on its register
// copies of a and c, State::renormalise on its own fields.
inline void rescale_weights(int dim, double a, double c, bool averaging, double* v, double* U,
                            double* S) {
  if (averaging) {
    for (int j = 0; j < dim; ++j) {
      S[j] += c * v[j] - U[j];
      U[j] = 0.0;
    }
  }
  for (int j = 0; j < dim; ++j) v[j] *= a;
}

// Learner state: w = a * v (v has d entries, plus one for the bias feature),
// separate bias b. For averaging (option B, ASGD): sum of the iterates since
// the last reset = S + c * v - U (the lazy average: c sums the scales a, U
// corrects for the steps, and the dense S is what renormalisation folds the
// running sum into), sum of biases = bias_sum.
struct State {
  std::vector<double> v;
  double a = 1.0;
  double b = 0.0;
  bool averaging = false;
  std::vector<double> U;
  std::vector<double> S;
  double c = 0.0;
  double bias_sum = 0.0;
  long long count = 0;        // iterates in the running average
  double vnorm2 = 0.0;        // ||v||^2, kept for the Pegasos projection
  long long t = 0;            // global step counter (1-based after the first step)
  long long renorms = 0;
  // Cumulative L1 penalty (Tsuruoka et al. 2009): l1_u = total penalty per
  // weight so far, l1_q[j] = penalty actually applied to w_j.
  double l1_u = 0.0;
  std::vector<double> l1_q;
  // With L1 and averaging: l1_nz[j] = 1 if w_j was non-zero at the start of
  // the averaging window or at any iterate since. The average of a weight
  // that was 0 throughout is then exactly 0 (the lazy correction U would
  // leave rounding residue), so averaged L1 fits keep their exact zeros.
  std::vector<unsigned char> l1_nz;

  // Zero state for a weight vector of `dim` entries (w = 0, nothing averaged).
  void allocate(int dim) {
    v.assign(dim, 0.0);
    l1_q.assign(dim, 0.0);
    U.assign(dim, 0.0);
    S.assign(dim, 0.0);
  }
  void reset_average() {
    for (std::size_t j = 0; j < l1_nz.size(); ++j) l1_nz[j] = v[j] != 0.0;
    std::fill(U.begin(), U.end(), 0.0);
    std::fill(S.begin(), S.end(), 0.0);
    c = 0.0;
    bias_sum = 0.0;
    count = 0;
  }
  // Explicit average of the iterates into `out` (size of v) and its bias.
  double average_into(std::vector<double>& out) const {
    const double inv = 1.0 / static_cast<double>(count);
    for (std::size_t j = 0; j < v.size(); ++j) out[j] = (S[j] + (c * v[j] - U[j])) * inv;
    // L1 fits: weights 0 throughout the window average to exactly 0, and so
    // does an average within its rounding error of 0 (the lazy sum S + c v -
    // U cancels; its error is about eps (|S| + |c v| + |U|)).
    constexpr double kEps = std::numeric_limits<double>::epsilon();
    for (std::size_t j = 0; j < l1_nz.size(); ++j) {
      if (!l1_nz[j] ||
          std::fabs(S[j] + (c * v[j] - U[j])) <= 64.0 * kEps * (std::fabs(S[j]) + std::fabs(c * v[j]) + std::fabs(U[j])))
        out[j] = 0.0;
    }
    return bias_sum * inv;
  }

  // L1 clip of weight j (see l1_apply) with this state's bookkeeping.
  void l1_clip(int j) {
    l1_apply(j, a, l1_u, v.data(), l1_q.data(), U.data(), c, averaging,
             l1_nz.empty() ? nullptr : l1_nz.data());
  }
  bool needs_renormalisation() const {
    return std::fabs(a) < (averaging ? kRenormThresholdAveraging : kRenormThreshold);
  }
  // v <- a v, a <- 1 (see rescale_weights).
  void renormalise() {
    rescale_weights(static_cast<int>(v.size()), a, c, averaging, v.data(), U.data(), S.data());
    if (averaging) c = 0.0;
    a = 1.0;
    ++renorms;
  }
};

inline double step_size(const SgdOptions& opt, long long t) {
  switch (opt.method) {
    case SgdMethod::Sgd:
      return opt.eta;
    case SgdMethod::Asgd:
      // Xu (2011) as in Bottou's svmasgd: eta0 / (1 + lambda eta0 t)^0.75.
      return opt.eta / std::pow(1.0 + opt.lambda * opt.eta * static_cast<double>(t), 0.75);
    case SgdMethod::Pegasos:
      return 1.0 / (opt.lambda * static_cast<double>(t));
  }
  return opt.eta;
}

}  // namespace
}  // namespace noisylabels
