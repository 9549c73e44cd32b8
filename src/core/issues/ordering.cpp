#include "issues/ordering.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <utility>

namespace noisylabels {

namespace {

constexpr int kDigitBits = 16;
constexpr std::ptrdiff_t kBuckets = std::ptrdiff_t{1} << kDigitBits;
// Runs up to this length are sorted as (key, index) pairs in cache.
constexpr std::ptrdiff_t kSmallRun = 4096;

// An unsigned integer whose increasing order is the decreasing order of x
// (-0 read as 0).
std::uint64_t descending_bits(double x) {
  if (x == 0) x = 0.0;
  std::uint64_t u;
  std::memcpy(&u, &x, sizeof u);
  u = (u >> 63) ? ~u : (u | (std::uint64_t{1} << 63));
  return ~u;
}

std::ptrdiff_t digit(std::uint64_t u, int shift) {
  return static_cast<std::ptrdiff_t>((u >> shift) & (kBuckets - 1));
}

// Sorts idx[0, len) (increasing indices on entry, so equal keys stay in
// index order) by the bits of the key below shift + 16: most significant
// digit first, short runs as pairs.
void sort_run(const double* key, int* idx, int* scratch, std::ptrdiff_t len, int shift,
              std::vector<std::pair<std::uint64_t, int>>& pairs) {
  if (len < 2 || shift < 0) return;  // shift < 0: all 64 bits equal, index order stands
  if (len <= kSmallRun) {
    pairs.resize(static_cast<std::size_t>(len));
    for (std::ptrdiff_t i = 0; i < len; ++i) pairs[i] = {descending_bits(key[idx[i]]), idx[i]};
    std::sort(pairs.begin(), pairs.end());
    for (std::ptrdiff_t i = 0; i < len; ++i) idx[i] = pairs[i].second;
    return;
  }
  std::vector<std::ptrdiff_t> start(kBuckets + 1, 0);
  for (std::ptrdiff_t i = 0; i < len; ++i) ++start[digit(descending_bits(key[idx[i]]), shift) + 1];
  for (std::ptrdiff_t b = 0; b < kBuckets; ++b) start[b + 1] += start[b];
  if (start[kBuckets] == 0) return;
  std::vector<std::ptrdiff_t> next(start.begin(), start.end() - 1);
  for (std::ptrdiff_t i = 0; i < len; ++i) {
    scratch[next[digit(descending_bits(key[idx[i]]), shift)]++] = idx[i];
  }
  std::memcpy(idx, scratch, sizeof(int) * static_cast<std::size_t>(len));
  for (std::ptrdiff_t b = 0; b < kBuckets; ++b) {
    const std::ptrdiff_t from = start[b], size = start[b + 1] - from;
    sort_run(key, idx + from, scratch + from, size, shift - kDigitBits, pairs);
  }
}

}  // namespace

void order_decreasing(const double* key, std::ptrdiff_t n, int* order, int* scratch) {
  for (std::ptrdiff_t i = 0; i < n; ++i) order[i] = static_cast<int>(i);
  std::vector<std::pair<std::uint64_t, int>> pairs;
  sort_run(key, order, scratch, n, 64 - kDigitBits, pairs);
}

void fdr_qvalues(const double* p_wrong, std::ptrdiff_t n, double* q, int* order, double* scratch) {
  if (n == 0) return;
  order_decreasing(p_wrong, n, order, reinterpret_cast<int*>(scratch));
  // In sorted order: the running share of clean labels among the first r.
  double* sorted = scratch;
  long double clean = 0;
  for (std::ptrdiff_t r = 0; r < n; ++r) {
    clean += 1 - p_wrong[order[r]];
    sorted[r] = static_cast<double>(clean) / static_cast<double>(r + 1);
  }
  // Backwards: the running minimum, read at the last of each run of ties.
  double run_min = sorted[n - 1];
  double group = run_min;
  for (std::ptrdiff_t r = n - 1; r >= 0; --r) {
    if (sorted[r] < run_min) run_min = sorted[r];
    const bool last = r == n - 1 || p_wrong[order[r]] != p_wrong[order[r + 1]];
    if (last) group = run_min;
    double v = group;
    if (0 > v) v = 0;
    if (1 < v) v = 1;
    sorted[r] = v;
  }
  for (std::ptrdiff_t r = 0; r < n; ++r) q[order[r]] = sorted[r];
}

void permute_columns(const int* order, std::ptrdiff_t n, const std::vector<double*>& doubles,
                     const std::vector<int*>& ints, double* scratch) {
  for (double* col : doubles) {
    for (std::ptrdiff_t i = 0; i < n; ++i) scratch[i] = col[order[i]];
    std::memcpy(col, scratch, sizeof(double) * static_cast<std::size_t>(n));
  }
  int* iscratch = reinterpret_cast<int*>(scratch);
  for (int* col : ints) {
    for (std::ptrdiff_t i = 0; i < n; ++i) iscratch[i] = col[order[i]];
    std::memcpy(col, iscratch, sizeof(int) * static_cast<std::size_t>(n));
  }
}

}  // namespace noisylabels
