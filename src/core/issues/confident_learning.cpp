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

// cl_unmix() and the posterior under the unmixed model: truth = max(T^-1 p,
// 0) renormalised, each entry of T^-1 p a row sum of products; `alt` the
// posterior of the true class given label l. Returns the label's p_wrong.
double unmixed_posterior(const double* prob, std::ptrdiff_t l, const ClScoreModel& m, double* work,
                         double* truth, double* alt) {
  const std::ptrdiff_t k = m.k;
  const double* inv = m.unmix.data();
  // Four entries at a time: four independent sums, each still adding its
  // products in class order as row_sum() does (one sum alone would wait on
  // every addition).
  std::ptrdiff_t j = 0;
  for (; j + 4 <= k; j += 4) {
    long double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    for (std::ptrdiff_t c = 0; c < k; ++c) {
      const double p = prob[c];
      const double* u = inv + j + c * k;
      const double t0 = p * u[0], t1 = p * u[1], t2 = p * u[2], t3 = p * u[3];
      s0 += t0;
      s1 += t1;
      s2 += t2;
      s3 += t3;
    }
    const double v[4] = {static_cast<double>(s0), static_cast<double>(s1), static_cast<double>(s2),
                         static_cast<double>(s3)};
    for (int r = 0; r < 4; ++r) truth[j + r] = v[r] < 0 ? 0.0 : v[r];
  }
  for (; j < k; ++j) {
    for (std::ptrdiff_t c = 0; c < k; ++c) work[c] = prob[c] * inv[j + c * k];
    const double v = row_sum(work, k);
    truth[j] = v < 0 ? 0.0 : v;
  }
  double tot = row_sum(truth, k);
  if (!(tot > 0)) tot = 1;
  for (std::ptrdiff_t j = 0; j < k; ++j) alt[j] = m.unmix_noise[l + j * k] * (truth[j] / tot);
  double den = row_sum(alt, k);
  if (den <= 0) den = 1;
  for (std::ptrdiff_t j = 0; j < k; ++j) alt[j] /= den;
  return clamp01(1 - alt[l]);
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
  const bool unmixed = !m.unmix.empty();
  std::vector<double> buf(6 * k);
  double* prob = buf.data();          // the row, clamped
  double* adjusted = prob + k;        // threshold-adjusted row
  double* work = adjusted + k;        // posterior numerators
  double* post = work + k;            // noise-model posterior
  double* truth = post + k;           // unmixed model: P(true | x)
  double* alt = truth + k;            // unmixed model: posterior
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
    // cl_wrong_block(): tempered probabilities (P^a / sum P^a through log P
    // minus its maximum), then the posterior of the true class under the
    // noise matrix.
    for (std::ptrdiff_t j = 0; j < k; ++j) work[j] = std::log(prob[j] < 1e-300 ? 1e-300 : prob[j]);
    const double top = work[first_max(work, k)];
    for (std::ptrdiff_t j = 0; j < k; ++j) {
      const double scaled = m.temper * (work[j] - top);
      work[j] = scaled == 0 ? 1.0 : std::exp(scaled);  // exp(0) (the largest, at least) is 1
    }
    const double tot = row_sum(work, k);
    for (std::ptrdiff_t j = 0; j < k; ++j) {
      const double truth = work[j] / tot;
      post[j] = m.noise[l + j * k] * truth;
    }
    double den = row_sum(post, k);
    if (den <= 0) den = 1;
    for (std::ptrdiff_t j = 0; j < k; ++j) post[j] /= den;
    out.p_wrong[i] = clamp01(1 - post[l]);
    if (unmixed && unmixed_posterior(prob, l, m, work, truth, alt) > out.p_wrong[i]) {
      for (std::ptrdiff_t j = 0; j < k; ++j) post[j] = alt[j];
      out.p_wrong[i] = clamp01(1 - post[l]);
    }
    const std::ptrdiff_t best = first_max(post, k);
    out.best[i] = static_cast<int>(best + 1);
    out.prob_best[i] = post[best];
    const double own = post[l];
    post[l] = -std::numeric_limits<double>::infinity();
    const std::ptrdiff_t other = first_max(post, k);
    out.other[i] = static_cast<int>(other + 1);
    out.prob_other[i] = post[other];
    post[l] = own;
  }
}

}  // namespace noisylabels
