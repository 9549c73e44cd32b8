#include "issues/confident_learning.h"

#include <cmath>
#include <limits>

namespace noisylabels {

namespace {

// Rows between interrupt checks: well under 0.1 s of pass-3 work.
constexpr std::ptrdiff_t kCheckRows = 65536;

// A row sum as R's rowSums() forms it: accumulated in long double from 0 in
// column order, then rounded to double.
double row_sum(const double* x, std::ptrdiff_t k) {
  long double s = 0;
  for (std::ptrdiff_t j = 0; j < k; ++j) s += x[j];
  return static_cast<double>(s);
}

// max.col(x, ties.method = "first"), 0-based.
std::ptrdiff_t first_max(const double* x, std::ptrdiff_t k) {
  std::ptrdiff_t m = 0;
  double a = x[0];
  for (std::ptrdiff_t j = 1; j < k; ++j) {
    if (a < x[j]) {
      a = x[j];
      m = j;
    }
  }
  return m;
}

// pmin(pmax(x, 0), 1), NaN kept.
double clamp01(double x) {
  if (0 > x) x = 0;
  if (1 < x) x = 1;
  return x;
}

// cl_adjust(): subtract the thresholds, shift the row to be non-negative,
// renormalise. In place on one row.
void adjust_row(double* a, const std::vector<double>& thr, std::ptrdiff_t k) {
  double mn = std::numeric_limits<double>::infinity();
  for (std::ptrdiff_t j = 0; j < k; ++j) {
    a[j] -= thr[j];
    if (a[j] < mn) mn = a[j];
  }
  const double shift = (0 < mn) ? 0.0 : mn;  // pmin(min, 0)
  for (std::ptrdiff_t j = 0; j < k; ++j) a[j] -= shift;
  double s = row_sum(a, k);
  if (s <= 0) s = 1;
  for (std::ptrdiff_t j = 0; j < k; ++j) a[j] /= s;
}

// Label quality of one row by the ranking rule (cl_posterior(),
// cl_quality()); `probs` adjusted or not, `work` k scratch values.
double row_quality(const double* probs, std::ptrdiff_t l, const ClScoreModel& m, double* work) {
  const std::ptrdiff_t k = m.k;
  switch (m.rank_by) {
    case ClRankBy::SelfConfidence:
      return probs[l];
    case ClRankBy::NormalizedMargin: {
      double mx = -std::numeric_limits<double>::infinity();
      for (std::ptrdiff_t j = 0; j < k; ++j) {
        if (j != l && probs[j] > mx) mx = probs[j];
      }
      return (probs[l] - mx + 1) / 2;
    }
    case ClRankBy::Posterior:
    default: {
      for (std::ptrdiff_t j = 0; j < k; ++j) work[j] = m.rank_noise[l + j * k] * probs[j];
      double den = row_sum(work, k);
      if (den <= 0) den = 1;
      return clamp01(work[l] / den);
    }
  }
}

}  // namespace

bool cl_block_ok(const ProbBlock& p, double tol) {
  const double hi = 1 + tol;
  std::vector<double> row(p.k);
  for (std::ptrdiff_t i = 0; i < p.rows; ++i) {
    for (std::ptrdiff_t j = 0; j < p.k; ++j) {
      const double v = p.raw(i, j);
      if (!std::isfinite(v) || v < -tol || v > hi) return false;
      row[j] = v;
    }
    if (std::fabs(row_sum(row.data(), p.k) - 1) > tol) return false;
  }
  return true;
}

void cl_label_probs(const ProbBlock& p, const int* labels, double* given) {
  for (std::ptrdiff_t i = 0; i < p.rows; ++i) given[i] = p(i, labels[i] - 1);
}

void cl_add_label_sums(const double* given, const int* labels, std::ptrdiff_t rows, double* sums) {
  for (std::ptrdiff_t i = 0; i < rows; ++i) sums[labels[i] - 1] += given[i];
}

void cl_count_joint(const ProbBlock& p, const int* labels, const double* thresholds, int* joint,
                    int* confident, int missing) {
  const std::ptrdiff_t k = p.k;
  std::vector<double> cut(k);
  for (std::ptrdiff_t j = 0; j < k; ++j) cut[j] = thresholds[j] - 1e-12;
  for (std::ptrdiff_t i = 0; i < p.rows; ++i) {
    std::ptrdiff_t c = -1;
    double best = 0;
    for (std::ptrdiff_t j = 0; j < k; ++j) {
      const double v = p(i, j);
      if (v >= cut[j] && (c < 0 || best < v)) {
        best = v;
        c = j;
      }
    }
    if (c < 0) {
      confident[i] = missing;
    } else {
      confident[i] = static_cast<int>(c + 1);
      joint[c * k + labels[i] - 1] += 1;
    }
  }
}

void cl_score_rows(const ProbBlock& p, const int* labels, const ClScoreModel& m,
                   const ClScoreOut& out, Monitor& monitor) {
  const std::ptrdiff_t k = m.k;
  std::vector<double> buf(3 * k);
  double* prob = buf.data();    // the row, clamped
  double* adjusted = prob + k;  // threshold-adjusted row
  double* work = adjusted + k;  // posterior numerators
  for (std::ptrdiff_t i = 0; i < p.rows; ++i) {
    if (i % kCheckRows == 0) monitor.check();
    const std::ptrdiff_t l = labels[i] - 1;
    for (std::ptrdiff_t j = 0; j < k; ++j) prob[j] = p(i, j);
    const double* ranked = prob;
    if (m.adjust) {
      for (std::ptrdiff_t j = 0; j < k; ++j) adjusted[j] = prob[j];
      adjust_row(adjusted, m.thresholds, k);
      ranked = adjusted;
    }
    out.quality[i] = row_quality(ranked, l, m, work);
    out.prob_given[i] = prob[l];
    out.best[i] = static_cast<int>(first_max(prob, k) + 1);
    const double own = prob[l];
    prob[l] = -std::numeric_limits<double>::infinity();
    const std::ptrdiff_t other = first_max(prob, k);
    out.other[i] = static_cast<int>(other + 1);
    out.prob_other[i] = prob[other];
    prob[l] = own;
  }
}

}  // namespace noisylabels
