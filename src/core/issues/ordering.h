// Orders, q-values and in-place permutations over one value per label, for
// results with 10^7 rows: besides its output, each needs one index array and
// one double per row of scratch (and the permutation 5 bytes a row more).
// R-free.
#pragma once

#include <cstddef>
#include <vector>

namespace noisylabels {

// 0-based order of `key` by decreasing value, ties by increasing index (R's
// order(-key, seq_along(key))); -0 and 0 tie. `key` must be free of NaN.
// `scratch` holds n doubles, and on return the keys in that order (-0 read
// as 0). A radix sort on the bits of the doubles, kept beside the indices in
// `scratch` so that no key is read twice out of order: most significant
// byte first, rows moved between 256 buckets in place, runs of up to 64
// rows and runs of equal keys sorted by index.
void order_decreasing(const double* key, std::ptrdiff_t n, int* order, double* scratch);

// The same order of the key 1 - x[i] (computed as R's `1 - x`), without
// storing it.
void order_decreasing_complement(const double* x, std::ptrdiff_t n, int* order, double* scratch);

// q-values of fdr_qvalues() (R/issues-fdr.R): with p sorted by decreasing
// value, q_r = min over s >= r of mean(1 - p_1..p_s) (cumulative sums in long
// double, as R's cumsum()), tied p sharing the q of the last of them, clamped
// to [0, 1]. Writes q in the original order; `order` holds n ints and
// `scratch` n doubles.
void fdr_qvalues(const double* p_wrong, std::ptrdiff_t n, double* q, int* order, double* scratch);

// Columns permuted in place so that column_new[i] = column_old[order[i]]
// (order 0-based, a permutation of 0..n-1) through `scratch` (n doubles)
// and 5 bytes a row of its own: the rows are grouped once by blocks of
// source rows, and every column is gathered block by block, then read back
// in order, so that no read or write jumps across the whole column (on
// 10^7 rows half the time of a direct gather).
void permute_columns(const int* order, std::ptrdiff_t n, const std::vector<double*>& doubles,
                     const std::vector<int*>& ints, double* scratch);

}  // namespace noisylabels
