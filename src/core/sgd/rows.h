// Row kernels of the SGD core: dot product, axpy, prefetch and squared norm
// of one example, for dense rows (contiguous: the data are stored d x n) and
// CSR rows.
// Internal to the SGD core: included only by src/core/sgd/*.cpp. The
// definitions sit in an unnamed namespace, so every file that uses them gets
// its own internal copy and the compiler inlines and specialises the kernels
// as it did when the core was one file (the epoch loop's speed depends on it).
#pragma once

#include <cstddef>

#include "sgd/sgd.h"

#if defined(__GNUC__) || defined(__clang__)
#define NL_RESTRICT __restrict__
#define NL_ALWAYS_INLINE __attribute__((always_inline)) inline
#define NL_NOINLINE __attribute__((noinline))
#define NL_ALIGN64 __attribute__((aligned(64)))
#else
#define NL_RESTRICT
#define NL_ALWAYS_INLINE inline
#define NL_NOINLINE
#define NL_ALIGN64
#endif

namespace noisylabels {
namespace {

template <bool Sparse>
struct Rows {
  // Copies of the data pointers: the kernels below write through double
  // pointers, and a reference to SgdData would make the compiler reload every
  // pointer after each store (it cannot rule out aliasing).
  const SgdData& data;
  const double* dense;
  const int* row_ptr;
  const int* col_idx;
  const double* values;
  int d;
  explicit Rows(const SgdData& dt)
      : data(dt), dense(dt.dense), row_ptr(dt.row_ptr), col_idx(dt.col_idx), values(dt.values),
        d(dt.d) {}

  const double* row(int i) const { return dense + static_cast<std::size_t>(i) * d; }

  // One accumulator, in storage order: a dense row then adds exactly the same
  // non-zero products in the same order as its CSR form (the zeros add
  // nothing), so dense and sparse input give bitwise identical fits. Two
  // partial sums shortened the dependency chain but broke that identity
  // (Pegasos, whose 1/(lambda t) steps amplify rounding, then diverged).
  double dot(int i, const double* NL_RESTRICT v) const {
    double acc = 0.0;
    if constexpr (Sparse) {
      const int end = row_ptr[i + 1];
      for (int k = row_ptr[i]; k < end; ++k) acc += values[k] * v[col_idx[k]];
    } else {
      const double* NL_RESTRICT x = row(i);
      for (int j = 0; j < d; ++j) acc += x[j] * v[j];
    }
    return acc;
  }
  // v += coef_v x and u += coef_u x in one pass over the row (option B / ASGD
  // keep the correction u next to v, see State). Element-wise, so the
  // dense loops are unrolled by two (the compiler pairs them into one SIMD
  // operation at -O2) with results identical to the plain loop.
  void axpy2(int i, double coef_v, double* NL_RESTRICT v, double coef_u,
             double* NL_RESTRICT u) const {
    if constexpr (Sparse) {
      const int end = row_ptr[i + 1];
      for (int k = row_ptr[i]; k < end; ++k) {
        const int j = col_idx[k];
        const double xk = values[k];
        v[j] += coef_v * xk;
        u[j] += coef_u * xk;
      }
    } else {
      const double* NL_RESTRICT x = row(i);
      int j = 0;
      for (; j + 1 < d; j += 2) {
        v[j] += coef_v * x[j];
        v[j + 1] += coef_v * x[j + 1];
        u[j] += coef_u * x[j];
        u[j + 1] += coef_u * x[j + 1];
      }
      if (j < d) {
        v[j] += coef_v * x[j];
        u[j] += coef_u * x[j];
      }
    }
  }
  void axpy(int i, double coef, double* NL_RESTRICT v) const {
    if constexpr (Sparse) {
      const int end = row_ptr[i + 1];
      for (int k = row_ptr[i]; k < end; ++k) v[col_idx[k]] += coef * values[k];
    } else {
      const double* NL_RESTRICT x = row(i);
      int j = 0;
      for (; j + 1 < d; j += 2) {
        v[j] += coef * x[j];
        v[j + 1] += coef * x[j + 1];
      }
      if (j < d) v[j] += coef * x[j];
    }
  }
  // Software prefetch of a row visited a few steps ahead: with a fresh
  // permutation every epoch, rows are a random gather.
  // The last element is prefetched too: an unaligned dense row spans one
  // cache line more than d/8. always_inline is not cosmetic: as an ordinary
  // member of a class in an anonymous namespace, GCC 12 at -O2 found this
  // function free of side effects (__builtin_prefetch counts as none) and
  // deleted every call to it before inlining, so no prefetch instruction was
  // emitted at all and a covtype-sized epoch waited on DRAM for every row.
  NL_ALWAYS_INLINE void prefetch(int i) const {
#if defined(__GNUC__) || defined(__clang__)
    if constexpr (Sparse) {
      const int beg = row_ptr[i];
      const int end = row_ptr[i + 1];
      for (int k = beg; k < end; k += 8) {
        __builtin_prefetch(values + k);
        __builtin_prefetch(col_idx + k);
      }
      if (end > beg) {
        __builtin_prefetch(values + end - 1);
        __builtin_prefetch(col_idx + end - 1);
      }
    } else {
      const double* x = row(i);
      for (int j = 0; j < d; j += 8) __builtin_prefetch(x + j);
      __builtin_prefetch(x + d - 1);
    }
#else
    (void)i;
#endif
  }
  // Calls fn(j) for every stored non-zero x_ij of row i (dense rows: the
  // entries that are not 0, so that dense and sparse input agree).
  template <class Fn>
  void for_each_nonzero(int i, Fn&& fn) const {
    if constexpr (Sparse) {
      const int end = row_ptr[i + 1];
      for (int k = row_ptr[i]; k < end; ++k)
        if (values[k] != 0.0) fn(col_idx[k]);
    } else {
      const double* x = row(i);
      for (int j = 0; j < d; ++j)
        if (x[j] != 0.0) fn(j);
    }
  }
  double sqnorm(int i) const {
    double acc = 0.0;
    if constexpr (Sparse) {
      const int end = row_ptr[i + 1];
      for (int k = row_ptr[i]; k < end; ++k) acc += values[k] * values[k];
    } else {
      const double* x = row(i);
      for (int j = 0; j < d; ++j) acc += x[j] * x[j];
    }
    return acc;
  }
};

}  // namespace
}  // namespace noisylabels
