// Orders, q-values and in-place permutations over one value per label, for
// results with 10^7 rows: besides its output, each needs one index array and
// one double per row of scratch at most. R-free.
#pragma once

#include <cstddef>
#include <vector>

namespace noisylabels {

// 0-based order of `key` by decreasing value, ties by increasing index (R's
// order(-key, seq_along(key))); -0 and 0 tie. `key` must be free of NaN.
// `scratch` holds n ints. A most-significant-digit radix sort on the bits of
// the double (16-bit digits; runs of at most 4,096 rows sorted as (key,
// index) pairs), stable because every bucket keeps its rows in index order.
void order_decreasing(const double* key, std::ptrdiff_t n, int* order, int* scratch);

// q-values of fdr_qvalues() (R/issues-fdr.R): with p sorted by decreasing
// value, q_r = min over s >= r of mean(1 - p_1..p_s) (cumulative sums in long
// double, as R's cumsum()), tied p sharing the q of the last of them, clamped
// to [0, 1]. Writes q in the original order; `order` holds n ints and
// `scratch` n doubles.
void fdr_qvalues(const double* p_wrong, std::ptrdiff_t n, double* q, int* order, double* scratch);

// Columns permuted in place so that column_new[i] = column_old[order[i]]
// (order 0-based, a permutation of 0..n-1), each gathered into `scratch` (n
// doubles) and copied back: independent reads, which the memory system
// overlaps, where following the permutation's cycles would wait on each.
void permute_columns(const int* order, std::ptrdiff_t n, const std::vector<double*>& doubles,
                     const std::vector<int*>& ints, double* scratch);

}  // namespace noisylabels
