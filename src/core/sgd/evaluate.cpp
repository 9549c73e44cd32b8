// Public evaluation entry points: objective and error of one model, and
// decision values (sgd.h).
#include <vector>

#include "sgd/evaluate.h"
#include "sgd/rows.h"
#include "sgd/sgd.h"

namespace noisylabels {

SgdEval sgd_evaluate(const SgdData& data, const std::vector<double>& weights, double bias,
                     const SgdLoss& loss, double lambda, SgdBias bias_mode) {
  SgdEval ev = data.sparse() ? evaluate_impl<true>(data, weights.data(), 0.0, bias, 1.0, loss)
                             : evaluate_impl<false>(data, weights.data(), 0.0, bias, 1.0, loss);
  double norm2 = 0.0;
  for (double w : weights) norm2 += w * w;
  if (bias_mode == SgdBias::Feature) norm2 += bias * bias;
  ev.objective += 0.5 * lambda * norm2;
  return ev;
}

std::vector<double> sgd_decision(const SgdData& data, const std::vector<double>& weights,
                                 double bias) {
  std::vector<double> f(data.n);
  if (data.sparse()) {
    Rows<true> rows(data);
    for (int i = 0; i < data.n; ++i) f[i] = rows.dot(i, weights.data()) + bias;
  } else {
    Rows<false> rows(data);
    for (int i = 0; i < data.n; ++i) f[i] = rows.dot(i, weights.data()) + bias;
  }
  return f;
}

}  // namespace noisylabels
