// Confident learning (Northcutt, Jiang & Chuang 2021) on a block of rows of
// class probabilities: the per-row work of the three passes that
// find_label_issues() makes over probabilities read chunk by chunk
// (R/issues-chunked.R). R-free.
//
// Every result equals, bit for bit, the one of the vectorised R code that
// computes the same quantity on all rows at once (R/issues-count.R,
// -rank.R, -filter.R; the tests compare them): the same operations in the
// same order, with row sums accumulated in long double as R's rowSums()
// does. Class codes are
// 1..k, as R stores them.
#pragma once

#include <cstddef>
#include <vector>

#include "common/monitor.h"

namespace noisylabels {

// Rows x k probabilities; element (i, j) at data[i * row_stride + j *
// col_stride] (column-major R matrix: 1, ld; row-major chunk: k, 1). Reads
// are clamped to [0, 1], as check_prob_block() clamps in R.
struct ProbBlock {
  const double* data = nullptr;
  std::ptrdiff_t rows = 0;
  std::ptrdiff_t k = 0;
  std::ptrdiff_t row_stride = 0;
  std::ptrdiff_t col_stride = 0;
  double operator()(std::ptrdiff_t i, std::ptrdiff_t j) const {
    const double v = data[i * row_stride + j * col_stride];
    return v < 0 ? 0.0 : (v > 1 ? 1.0 : v);
  }
  double raw(std::ptrdiff_t i, std::ptrdiff_t j) const { return data[i * row_stride + j * col_stride]; }
};

// R's check_prob_block() rule: every value finite and within [-tol, 1 + tol],
// every row summing to 1 within tol. False if any row breaks it (R then
// re-checks the block to word the error).
bool cl_block_ok(const ProbBlock& p, double tol);

// Pass 1, per chunk: given[i] = P[i, labels[i]] (clamped). A chunk's values
// do not depend on any other chunk, so chunks can be read anywhere.
void cl_label_probs(const ProbBlock& p, const int* labels, double* given);

// Pass 1, combined: sums[l - 1] += given[i] for l = labels[i], in row order.
// Called on the chunks in row order, it adds exactly as R does on all rows.
void cl_add_label_sums(const double* given, const int* labels, std::ptrdiff_t rows, double* sums);

// Pass 2: the confident joint. Row i counts under the class with the largest
// probability among those reaching their threshold (P[i, j] >= t_j - 1e-12;
// ties to the lowest class): joint[(c - 1) * k + (l - 1)] += 1 (a k x k
// column-major matrix, rows = given label l, columns = confident class c)
// and confident[i] = c, or `missing` when no class reaches its threshold.
void cl_count_joint(const ProbBlock& p, const int* labels, const double* thresholds, int* joint,
                    int* confident, int missing);

enum class ClRankBy { Posterior, SelfConfidence, NormalizedMargin };

// What pass 3 needs besides the rows: the ranking rule and, for it, the
// thresholds (when `adjust`) and the ranking's noise matrix (k x k,
// column-major).
struct ClScoreModel {
  int k = 0;
  ClRankBy rank_by = ClRankBy::Posterior;
  bool adjust = false;
  std::vector<double> thresholds;
  std::vector<double> rank_noise;
};

// Per-row outputs of pass 3, each pointing at the block's first row.
struct ClScoreOut {
  double* quality;
  double* prob_given;
  int* best;
  int* other;
  double* prob_other;
};

// Pass 3: label quality by the ranking rule (cl_score_block()), P[i, given],
// the model's most probable class, its most probable class other than the
// given one and that class's probability (cl_argmax_block()).
void cl_score_rows(const ProbBlock& p, const int* labels, const ClScoreModel& model,
                   const ClScoreOut& out, Monitor& monitor);

}  // namespace noisylabels
