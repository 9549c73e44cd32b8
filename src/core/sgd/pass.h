// The pass kernels of the SGD core: one epoch over a visiting order for a
// binary model (per loss, compiled without a per-step switch), for K
// one-vs-rest models in one shared pass, and for the multinomial model.
// Internal to the SGD core: included only by src/core/sgd/*.cpp. The
// definitions sit in an unnamed namespace, so every file that uses them gets
// its own internal copy and the compiler inlines and specialises the kernels
// as it did when the core was one file (the epoch loop's speed depends on it).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <vector>

#include "sgd/loss_kernel.h"
#include "sgd/rows.h"
#include "sgd/sgd.h"
#include "sgd/shuffle.h"
#include "sgd/state.h"

namespace noisylabels {
namespace {

// One pass over rows order[0..count-1]. `xnorm2` (squared row norms including
// the bias feature) is only used by Pegasos. `iterates`, if non-null, receives
// w_t (and b) after every step. `pending`, if non-null, is advanced one swap
// per step. The learner state lives in locals for the pass (written back at
// the end), so that the loop-carried scalars stay in registers instead of
// being stored and reloaded around every write to v.
// `y` holds the +-1 labels of this model (the data's own for a binary fit,
// one class against the rest for one-vs-rest), `wt` the row weights or null.
template <bool Sparse, SgdLossType L>
void run_pass_loss(const Rows<Sparse>& rows, const int* order, int count, const SgdOptions& opt,
                   const std::vector<double>& xnorm2, State& st, std::vector<double>* iterates,
                   PendingShuffle* pending, const double* NL_RESTRICT y,
                   const double* NL_RESTRICT wt) {
  const int d = rows.d;
  const int dim = static_cast<int>(st.v.size());
  const bool bias_feature = opt.bias == SgdBias::Feature;
  const bool bias_separate = opt.bias == SgdBias::Separate;
  const bool pegasos = opt.method == SgdMethod::Pegasos;
  const bool constant_step = opt.method == SgdMethod::Sgd;
  const double lambda = opt.lambda;
  const double eta_const = opt.eta;
  const double bias_step = opt.bias_step;
  const double lambda_l1 = opt.lambda_l1;
  const bool l1 = lambda_l1 > 0.0;
  double l1_u = st.l1_u;
  double* NL_RESTRICT l1_q = l1 ? st.l1_q.data() : nullptr;
  unsigned char* l1_nz = st.l1_nz.empty() ? nullptr : st.l1_nz.data();
  const DerivOf<L> deriv(opt.loss);
  double* NL_RESTRICT v = st.v.data();
  double* NL_RESTRICT U = st.U.data();
  double* NL_RESTRICT S = st.S.data();
  const bool averaging = st.averaging;
  double a = st.a, b = st.b, c = st.c, bias_sum = st.bias_sum, vnorm2 = st.vnorm2;
  long long t = st.t, n_avg = st.count, renorms = st.renorms;

  constexpr int kAhead = 8;
  for (int k = 0; k < count; ++k) {
    const int i = order[k];
    if (k + kAhead < count) {
      const int ia = order[k + kAhead];
      rows.prefetch(ia);
#if defined(__GNUC__) || defined(__clang__)
      __builtin_prefetch(y + ia);  // y[i] is a random read too, and z needs it
#endif
    }
    const double yi = y[i];
    ++t;
    const double eta = constant_step ? eta_const : step_size(opt, t);

    const double dot = rows.dot(i, v);
    double vx = dot;
    if (bias_feature) vx += v[d];
    // z = y (a vx + b) as (y a) vx + y b: bitwise the same (y = +-1, and
    // rounding is symmetric), but y a and y b are ready before the dot
    // product, so the chain gets one multiplication and one addition.
    const double ya = yi * a;
    const double z = ya * vx + yi * b;
    // The losses that call exp() take its argument k z + t straight from
    // the dot product: k (y a) dot + (k (y a v_bias + y b) + t), where
    // everything in brackets is ready before the dot product ends. This
    // takes the bias feature's addition and the loss's own affine map
    // (smooth ramp alpha (z + beta), Gompertz c z) off the chain, at the
    // price of rounding-level changes in the argument.
    double w = 0.0;
    if constexpr (DerivOf<L>::kExp) {
      const double off = bias_feature ? ya * v[d] + yi * b : yi * b;
      w = (deriv.k * ya) * dot + (deriv.k * off + deriv.t);
    }

    // Regularisation step, O(1): w <- (1 - eta lambda) w. 1/a does not depend
    // on this example's margin, so it is formed off the critical path
    // dot -> r'(z) -> axpy, and so is the step multiplier m = -eta y / a.
    const double shrink = 1.0 - eta * lambda;
    double inv_a;
    if (shrink > 0.0) {
      a *= shrink;
      inv_a = 1.0 / a;
    } else {
      // Only Pegasos at t = 1 (eta lambda = 1): w becomes exactly 0.
      std::fill(v, v + dim, 0.0);
      a = 1.0;
      vnorm2 = 0.0;
      vx = 0.0;
      inv_a = 1.0;
    }
    // Row weights scale the loss term (and so the step); without weights
    // the multiplier is formed exactly as before.
    const double wi = wt != nullptr ? wt[i] : 1.0;
    const double m = wt != nullptr ? ((yi * -eta) * wi) * inv_a : (yi * -eta) * inv_a;

    // Loss step: w <- w - eta r'(z) y x, i.e. v <- v + coef * x with
    // coef = m r'(z) (DerivOf::step). A coefficient that underflows to 0
    // leaves v unchanged either way; the separate bias tests r'(z) itself.
    if (pegasos) {
      // Pegasos keeps r'(z) followed by the two multiplications (the order
      // before the folding): its steps 1/(lambda t), 1/lambda at t = 1,
      // amplify rounding-level differences of the bounded losses to about
      // 1e-3 in the final weights, so its fits stay bitwise as they were.
      const double g = deriv(z);
      if (g != 0.0) {
        const double coef = wt != nullptr ? ((yi * -eta) * wi) * g * inv_a : (yi * -eta) * g * inv_a;
        rows.axpy(i, coef, v);
        if (bias_feature) v[d] += coef;
        vnorm2 += 2.0 * coef * vx + coef * coef * xnorm2[i];
        if (bias_separate) b -= bias_step * eta * g * yi * wi;
      }
    } else {
      const auto st1 = deriv.step(z, w, m);
      if (st1.v != 0.0) {
        if (averaging && c != 0.0) {
          // The correction's coefficient c coef is off the chain (U is not
          // read by the next dot product), so it is formed after coef.
          const double cu = c * st1.v;
          rows.axpy2(i, st1.v, v, cu, U);
          if (bias_feature) U[d] += cu;
        } else {
          rows.axpy(i, st1.v, v);
        }
        if (bias_feature) v[d] += st1.v;
      }
      if (bias_separate && st1.g != 0.0) b -= bias_step * eta * st1.g * yi * wi;
    }
    if (l1) {
      l1_u += eta * lambda_l1;
      rows.for_each_nonzero(i, [&](int j) { l1_apply(j, a, l1_u, v, l1_q, U, c, averaging, l1_nz); });
    }
    if (pegasos) {
      // Projection onto the ball of radius 1/sqrt(lambda).
      const double wnorm2 = a * a * vnorm2;
      if (wnorm2 * lambda > 1.0) a *= std::sqrt(1.0 / (lambda * wnorm2));
    }
    if (averaging) {
      c += a;
      bias_sum += b;
      ++n_avg;
    }
    if (std::fabs(a) < (averaging ? kRenormThresholdAveraging : kRenormThreshold)) {
      rescale_weights(dim, a, c, averaging, v, U, S);
      if (averaging) c = 0.0;
      vnorm2 *= a * a;
      a = 1.0;
      ++renorms;
    }
    if (pending != nullptr) pending->step();

    if (iterates != nullptr) {
      iterates->push_back(static_cast<double>(i));
      for (int j = 0; j < dim; ++j) iterates->push_back(a * v[j]);
      iterates->push_back(b);
    }
  }
  st.a = a;
  st.b = b;
  st.c = c;
  st.l1_u = l1_u;
  st.bias_sum = bias_sum;
  st.vnorm2 = vnorm2;
  st.t = t;
  st.count = n_avg;
  st.renorms = renorms;
}

template <bool Sparse>
void run_pass(const Rows<Sparse>& rows, const int* order, int count, const SgdOptions& opt,
              const std::vector<double>& xnorm2, State& st, std::vector<double>* iterates,
              PendingShuffle* pending, const double* y, const double* wt) {
  switch (opt.loss.type) {
    case SgdLossType::Hinge:
      return run_pass_loss<Sparse, SgdLossType::Hinge>(rows, order, count, opt, xnorm2, st, iterates, pending, y, wt);
    case SgdLossType::Logistic:
      return run_pass_loss<Sparse, SgdLossType::Logistic>(rows, order, count, opt, xnorm2, st, iterates, pending, y, wt);
    case SgdLossType::Ramp:
      return run_pass_loss<Sparse, SgdLossType::Ramp>(rows, order, count, opt, xnorm2, st, iterates, pending, y, wt);
    case SgdLossType::SmoothRamp:
      return run_pass_loss<Sparse, SgdLossType::SmoothRamp>(rows, order, count, opt, xnorm2, st, iterates, pending, y, wt);
    case SgdLossType::Gompertz:
      return run_pass_loss<Sparse, SgdLossType::Gompertz>(rows, order, count, opt, xnorm2, st, iterates, pending, y, wt);
  }
}

// One-vs-rest in one shared pass: every row updates the K models in turn,
// each exactly as a binary pass would (run_pass over one row). `y_ovr` holds
// the K label vectors one after the other (model k: +1 for class k).
template <bool Sparse>
void run_pass_ovr(const Rows<Sparse>& rows, const int* order, int count, const SgdOptions& opt,
                  const std::vector<double>& xnorm2, std::vector<State>& states,
                  const double* y_ovr, int n, const double* wt, PendingShuffle* pending) {
  const int K = static_cast<int>(states.size());
  constexpr int kAhead = 8;
  for (int q = 0; q < count; ++q) {
    if (q + kAhead < count) rows.prefetch(order[q + kAhead]);
    for (int k = 0; k < K; ++k)
      run_pass<Sparse>(rows, order + q, 1, opt, xnorm2, states[k], nullptr,
                       k == 0 ? pending : nullptr, y_ovr + static_cast<std::size_t>(k) * n, wt);
  }
}

// One pass of multinomial (softmax) logistic regression: for row i with
// class y_i, model k moves by -eta w_i (p_k(x_i) - [k = y_i]) x_i after its
// L2 shrink. Each model keeps its own lazy scale and average (State), with
// the same bookkeeping as run_pass_loss; not tuned like it.
template <bool Sparse>
void run_pass_multinomial(const Rows<Sparse>& rows, const int* order, int count,
                          const SgdOptions& opt, std::vector<State>& states, const int* label,
                          const double* wt, PendingShuffle* pending, std::vector<double>& f) {
  const int K = static_cast<int>(states.size());
  const int d = rows.d;
  const bool bias_feature = opt.bias == SgdBias::Feature;
  const bool bias_separate = opt.bias == SgdBias::Separate;
  constexpr int kAhead = 8;
  for (int q = 0; q < count; ++q) {
    const int i = order[q];
    if (q + kAhead < count) rows.prefetch(order[q + kAhead]);
    const double wi = wt != nullptr ? wt[i] : 1.0;
    double fmax = -std::numeric_limits<double>::infinity();
    for (int k = 0; k < K; ++k) {
      const State& st = states[k];
      double vx = rows.dot(i, st.v.data());
      if (bias_feature) vx += st.v[d];
      f[k] = st.a * vx + st.b;
      fmax = std::max(fmax, f[k]);
    }
    double sum = 0.0;
    for (int k = 0; k < K; ++k) {
      f[k] = std::exp(f[k] - fmax);
      sum += f[k];
    }
    for (int k = 0; k < K; ++k) {
      State& st = states[k];
      ++st.t;
      const double eta = step_size(opt, st.t);
      const double g = f[k] / sum - (label[i] == k ? 1.0 : 0.0);
      st.a *= 1.0 - eta * opt.lambda;  // > 0: eta lambda < 1 is checked
      const double coef = -eta * wi * g / st.a;
      if (coef != 0.0) {
        if (st.averaging && st.c != 0.0) {
          const double cu = st.c * coef;
          rows.axpy2(i, coef, st.v.data(), cu, st.U.data());
          if (bias_feature) st.U[d] += cu;
        } else {
          rows.axpy(i, coef, st.v.data());
        }
        if (bias_feature) st.v[d] += coef;
      }
      if (bias_separate) st.b -= opt.bias_step * eta * wi * g;
      if (opt.lambda_l1 > 0.0) {
        st.l1_u += eta * opt.lambda_l1;
        rows.for_each_nonzero(i, [&](int j) { st.l1_clip(j); });
      }
      if (st.averaging) {
        st.c += st.a;
        st.bias_sum += st.b;
        ++st.count;
      }
      if (st.needs_renormalisation()) st.renormalise();
    }
    if (pending != nullptr) pending->step();
  }
}

}  // namespace
}  // namespace noisylabels
