// The loss derivative with the loss type fixed at compile time, for the epoch
// loop (pass.h).
// Internal to the SGD core: included only by src/core/sgd/*.cpp. The
// definitions sit in an unnamed namespace, so every file that uses them gets
// its own internal copy and the compiler inlines and specialises the kernels
// as it did when the core was one file (the epoch loop's speed depends on it).
#pragma once

#include <cmath>

#include "sgd/sgd.h"

namespace noisylabels {
namespace {

// The derivative with the loss type fixed at compile time, so that the epoch
// loop (run_pass) has no per-step switch, and the loss parameters copied into
// the functor (register-resident for the pass).
template <SgdLossType L>
struct DerivOf {
  double s, alpha, beta, c;
  double smooth_scale;  // -(1 - s) alpha
  // The losses that call exp() and the affine map w = k z + t of the margin
  // that their step() reads (logistic z, smooth ramp alpha (z + beta),
  // Gompertz c z).
  static constexpr bool kExp = L == SgdLossType::Logistic || L == SgdLossType::SmoothRamp ||
                               L == SgdLossType::Gompertz;
  double k, t;
  explicit DerivOf(const SgdLoss& loss)
      : s(loss.s), alpha(loss.alpha), beta(loss.beta), c(loss.c),
        smooth_scale(-(1.0 - loss.s) * loss.alpha),
        k(L == SgdLossType::SmoothRamp ? loss.alpha : L == SgdLossType::Gompertz ? loss.c : 1.0),
        t(L == SgdLossType::SmoothRamp ? loss.alpha * loss.beta : 0.0) {}

  // r'(z) itself: same formulas and operation order as SgdLoss::deriv, so
  // the results are bitwise the same. The early returns skip exp() only
  // where its result is known exactly without calling it (up to the sign of
  // a zero, which only meets the test g != 0): exp(x) is 0 in double
  // precision for x < -745.14 (below half the smallest subnormal, 2^-1075).
  double operator()(double z) const {
    if constexpr (L == SgdLossType::Hinge) {
      return z < 1.0 ? -1.0 : 0.0;
    } else if constexpr (L == SgdLossType::Logistic) {
      if (z > 18.0) return z > 746.0 ? 0.0 : -std::exp(-z);
      if (z < -18.0) return -1.0;
      return -1.0 / (1.0 + std::exp(z));
    } else if constexpr (L == SgdLossType::Ramp) {
      return (z > s && z < 1.0) ? -1.0 : 0.0;
    } else if constexpr (L == SgdLossType::SmoothRamp) {
      const double au = std::fabs(alpha * (z + beta));
      if (au > 746.0) return 0.0;
      const double e = std::exp(-au);
      const double one_e = 1.0 + e;
      return smooth_scale * e / (one_e * one_e);
    } else {
      // Flat region: for v = cz > 6.64, e^v - v > 750, so exp(v - e^v) is 0
      // (for c = 2 that is every margin above 3.32: a quarter to a half of
      // the examples of a typical epoch). Far left: for v < -40, e^v <
      // 4.3e-18 is below half an ulp of v (>= 3.5e-15), so v - e^v == v
      // exactly and one exp suffices.
      const double v = c * z;
      if (v > 6.64) return 0.0;
      if (v < -40.0) return -c * std::exp(v);
      return -c * std::exp(v - std::exp(v));
    }
  }

  // The step coefficient m r'(z) of the epoch loop and r'(z) itself (needed
  // by the separate bias only; dead code otherwise). The multiplier
  // m = -eta y / a does not depend on z, so it is folded into the numerator
  // of each formula before exp() returns: after exp() the dependency chain
  // dot -> z -> r'(z) -> axpy -> next dot then holds one division (logistic,
  // smooth ramp) or one multiplication (Gompertz) instead of r'(z) followed
  // by two multiplications. Hinge and ramp give -m, bitwise the old
  // ((y (-eta)) (-1)) / a; the other losses move at the rounding level.
  struct Step {
    double v, g;
  };
  // z is the margin (hinge, ramp), w = k z + t as computed by the epoch
  // loop (the other losses).
  Step step(double z, double w, double m) const {
    if constexpr (L == SgdLossType::Hinge) {
      return z < 1.0 ? Step{-m, -1.0} : Step{0.0, 0.0};
    } else if constexpr (L == SgdLossType::Logistic) {
      if (w > 18.0) {
        if (w > 746.0) return Step{0.0, 0.0};
        const double e = std::exp(-w);
        return Step{-m * e, -e};
      }
      if (w < -18.0) return Step{-m, -1.0};
      const double q = 1.0 + std::exp(w);
      return Step{-m / q, -1.0 / q};
    } else if constexpr (L == SgdLossType::Ramp) {
      return (z > s && z < 1.0) ? Step{-m, -1.0} : Step{0.0, 0.0};
    } else if constexpr (L == SgdLossType::SmoothRamp) {
      const double au = std::fabs(w);
      if (au > 746.0) return Step{0.0, 0.0};
      const double e = std::exp(-au);
      const double one_e = 1.0 + e;
      const double q2 = one_e * one_e;
      return Step{smooth_scale * m * e / q2, smooth_scale * e / q2};
    } else {
      const double v = w;
      if (v > 6.64) return Step{0.0, 0.0};
      const double e = v < -40.0 ? std::exp(v) : std::exp(v - std::exp(v));
      return Step{-c * m * e, -c * e};
    }
  }
};

}  // namespace
}  // namespace noisylabels
