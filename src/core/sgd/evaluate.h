// Objective and error of binary and multiclass models on a data set, as the
// training driver and the step search read them.
// Internal to the SGD core: included only by src/core/sgd/*.cpp. The
// definitions sit in an unnamed namespace, so every file that uses them gets
// its own internal copy and the compiler inlines and specialises the kernels
// as it did when the core was one file (the epoch loop's speed depends on it).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

#include "sgd/rows.h"
#include "sgd/sgd.h"

namespace noisylabels {
namespace {

// `with_loss = false` counts errors only (validation data: the trace keeps
// only their error, so exp()/log1p() per row would be wasted).
template <bool Sparse>
SgdEval evaluate_impl(const SgdData& data, const double* w, double wbias_feature, double b,
                      double scale, const SgdLoss& loss, bool with_loss = true) {
  Rows<Sparse> rows(data);
  double loss_sum = 0.0;
  long long wrong = 0;
  for (int i = 0; i < data.n; ++i) {
    const double f = scale * (rows.dot(i, w) + wbias_feature) + b;
    const double z = data.y[i] * f;
    if (with_loss) loss_sum += data.weight != nullptr ? data.weight[i] * loss.value(z) : loss.value(z);
    if (z <= 0.0) ++wrong;
  }
  SgdEval ev;
  ev.objective = loss_sum / data.n;
  ev.error = static_cast<double>(wrong) / data.n;
  return ev;
}

inline SgdEval evaluate_state(const SgdData& data, const std::vector<double>& v, double a, double b,
                       const SgdOptions& opt, bool with_loss = true) {
  const int d = data.d;
  const double wb = opt.bias == SgdBias::Feature ? v[d] : 0.0;
  SgdEval ev = data.sparse() ? evaluate_impl<true>(data, v.data(), wb, b, a, opt.loss, with_loss)
                             : evaluate_impl<false>(data, v.data(), wb, b, a, opt.loss, with_loss);
  double norm2 = 0.0;
  for (double vj : v) norm2 += vj * vj;  // includes the bias feature when present
  ev.objective += 0.5 * opt.lambda * a * a * norm2;
  if (opt.lambda_l1 > 0.0) {
    double norm1 = 0.0;
    for (int j = 0; j < d; ++j) norm1 += std::fabs(v[j]);
    ev.objective += opt.lambda_l1 * std::fabs(a) * norm1;
  }
  return ev;
}

inline bool all_finite(const std::vector<double>& v) {
  for (double x : v)
    if (!std::isfinite(x)) return false;
  return true;
}


// A model as the evaluation reads it: f(x) = a (v.x + v_bias) + b.
struct ModelView {
  const std::vector<double>* v = nullptr;
  double a = 1.0;
  double b = 0.0;
};

// Objective and error of the K models of a multiclass fit. One-vs-rest: the
// sum over models of the binary objectives (each model's own +-1 labels);
// multinomial: mean cross-entropy of the softmax. Both add lambda/2 times
// the sum of the squared norms. The error is that of the argmax rule.
// `decision`, if non-null, receives f_k(x_i) (n x K, column-major).
template <bool Sparse>
SgdEval evaluate_multi(const SgdData& data, const std::vector<ModelView>& models,
                       const SgdOptions& opt, bool with_loss, std::vector<double>* decision) {
  Rows<Sparse> rows(data);
  const int K = static_cast<int>(models.size());
  const int d = data.d;
  const int n = data.n;
  const bool bias_feature = opt.bias == SgdBias::Feature;
  std::vector<double> f(K);
  double loss_sum = 0.0;
  long long wrong = 0;
  for (int i = 0; i < n; ++i) {
    int best = 0;
    for (int k = 0; k < K; ++k) {
      const std::vector<double>& v = *models[k].v;
      f[k] = models[k].a * (rows.dot(i, v.data()) + (bias_feature ? v[d] : 0.0)) + models[k].b;
      if (f[k] > f[best]) best = k;
      if (decision != nullptr) (*decision)[static_cast<std::size_t>(k) * n + i] = f[k];
    }
    const int yi = data.label[i];
    if (best != yi) ++wrong;
    if (!with_loss) continue;
    double li = 0.0;
    if (opt.multinomial) {
      double sum = 0.0;
      for (int k = 0; k < K; ++k) sum += std::exp(f[k] - f[best]);
      li = f[best] + std::log(sum) - f[yi];
    } else {
      for (int k = 0; k < K; ++k) li += opt.loss.value(k == yi ? f[k] : -f[k]);
    }
    loss_sum += data.weight != nullptr ? data.weight[i] * li : li;
  }
  SgdEval ev;
  ev.objective = loss_sum / n;
  ev.error = static_cast<double>(wrong) / n;
  double norm2 = 0.0;
  double norm1 = 0.0;
  for (const ModelView& m : models) {
    double s2 = 0.0;
    for (double vj : *m.v) s2 += vj * vj;
    norm2 += m.a * m.a * s2;
    for (int j = 0; j < d; ++j) norm1 += std::fabs(m.a * (*m.v)[j]);
  }
  ev.objective += 0.5 * opt.lambda * norm2 + opt.lambda_l1 * norm1;
  return ev;
}

}  // namespace
}  // namespace noisylabels
