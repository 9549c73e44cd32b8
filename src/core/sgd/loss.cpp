// Margin losses of the robust SGD: values, derivatives, bounds (sgd.h).
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "sgd/sgd.h"

namespace noisylabels {

double SgdLoss::value(double z) const {
  switch (type) {
    case SgdLossType::Hinge:
      return z < 1.0 ? 1.0 - z : 0.0;
    case SgdLossType::Logistic:
      // Bottou's shortcuts (svm/loss.h): log(1 + e^-z) ~ e^-z for z > 18, -z for z < -18.
      if (z > 18.0) return std::exp(-z);
      if (z < -18.0) return -z;
      return std::log1p(std::exp(-z));
    case SgdLossType::Ramp:
      return std::min(1.0 - s, std::max(0.0, 1.0 - z));
    case SgdLossType::SmoothRamp: {
      // (1 - s) / (1 + e^u), u = alpha (z + beta), written with e = exp(-|u|) <= 1.
      const double u = alpha * (z + beta);
      const double e = std::exp(-std::fabs(u));
      return u > 0.0 ? (1.0 - s) * e / (1.0 + e) : (1.0 - s) / (1.0 + e);
    }
    case SgdLossType::Gompertz:
      // exp(-exp(c z)): exp(cz) = inf gives exp(-inf) = 0, no branch needed.
      return std::exp(-std::exp(c * z));
  }
  return std::numeric_limits<double>::quiet_NaN();
}

double SgdLoss::deriv(double z) const {
  switch (type) {
    case SgdLossType::Hinge:
      return z < 1.0 ? -1.0 : 0.0;
    case SgdLossType::Logistic:
      if (z > 18.0) return -std::exp(-z);
      if (z < -18.0) return -1.0;
      return -1.0 / (1.0 + std::exp(z));
    case SgdLossType::Ramp:
      return (z > s && z < 1.0) ? -1.0 : 0.0;
    case SgdLossType::SmoothRamp: {
      // -(1 - s) alpha sigma(u) sigma(-u) = -(1 - s) alpha e / (1 + e)^2, e = exp(-|u|).
      const double u = alpha * (z + beta);
      const double e = std::exp(-std::fabs(u));
      const double one_e = 1.0 + e;
      return -(1.0 - s) * alpha * e / (one_e * one_e);
    }
    case SgdLossType::Gompertz: {
      const double v = c * z;
      return -c * std::exp(v - std::exp(v));
    }
  }
  return std::numeric_limits<double>::quiet_NaN();
}

double SgdLoss::bound() const {
  switch (type) {
    case SgdLossType::Ramp:
    case SgdLossType::SmoothRamp:
      return 1.0 - s;
    case SgdLossType::Gompertz:
      return 1.0;
    default:
      return std::numeric_limits<double>::infinity();
  }
}

double SgdLoss::flat_start() const {
  switch (type) {
    case SgdLossType::Ramp:
      return s;
    case SgdLossType::SmoothRamp:
      // Tangent at the inflection z = -beta (value (1-s)/2, slope -(1-s) alpha/4)
      // reaches 1 - s at z = -beta - 2/alpha.
      return -beta - 2.0 / alpha;
    case SgdLossType::Gompertz:
      // Tangent at z = 0 (value 1/e, slope -c/e) reaches 1 at z = -(e - 1)/c.
      return -(std::exp(1.0) - 1.0) / c;
    default:
      return 0.0;
  }
}

SgdLossType sgd_loss_from_string(const std::string& name) {
  if (name == "hinge") return SgdLossType::Hinge;
  if (name == "logistic") return SgdLossType::Logistic;
  if (name == "ramp") return SgdLossType::Ramp;
  if (name == "smooth_ramp") return SgdLossType::SmoothRamp;
  if (name == "gompertz") return SgdLossType::Gompertz;
  throw std::invalid_argument("unknown loss '" + name + "'");
}

}  // namespace noisylabels
