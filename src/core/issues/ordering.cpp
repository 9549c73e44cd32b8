#include "issues/ordering.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <utility>

namespace noisylabels {

namespace {

// Runs up to this length are sorted as (key, index) pairs.
constexpr std::ptrdiff_t kPairRun = 64;
// Bits of one radix digit: 256 buckets, whose cursors stay in the caches
// and the address translation buffers while rows move between them.
constexpr int kDigitBits = 8;
constexpr std::ptrdiff_t kBuckets = std::ptrdiff_t{1} << kDigitBits;

// An unsigned integer whose increasing order is the decreasing order of x
// (-0 read as 0), and back.
std::uint64_t descending_bits(double x) {
  if (x == 0) x = 0.0;
  std::uint64_t u;
  std::memcpy(&u, &x, sizeof u);
  u = (u >> 63) ? ~u : (u | (std::uint64_t{1} << 63));
  return ~u;
}

double from_descending_bits(std::uint64_t u) {
  u = ~u;
  u = (u >> 63) ? (u & ~(std::uint64_t{1} << 63)) : ~u;
  double x;
  std::memcpy(&x, &u, sizeof x);
  return x;
}

void sort_pairs(std::uint64_t* keys, int* idx, std::ptrdiff_t len) {
  std::pair<std::uint64_t, int> pairs[kPairRun];
  for (std::ptrdiff_t i = 0; i < len; ++i) pairs[i] = {keys[i], idx[i]};
  std::sort(pairs, pairs + len);
  for (std::ptrdiff_t i = 0; i < len; ++i) {
    keys[i] = pairs[i].first;
    idx[i] = pairs[i].second;
  }
}

// Sorts the (key, index) pairs of a run in place by key, then index, where
// the keys agree above their lowest `bits` bits: most significant digit
// first, rows moved between buckets by following cycles (no buffer; not
// stable, so runs of equal keys have their indices sorted at the end).
void sort_run(std::uint64_t* keys, int* idx, std::ptrdiff_t len, int bits) {
  if (len < 2) return;
  if (len <= kPairRun) {
    sort_pairs(keys, idx, len);
    return;
  }
  std::ptrdiff_t count[kBuckets];
  int shift = 0;
  for (;;) {
    if (bits <= 0) {  // every key equal: index order
      std::sort(idx, idx + len);
      return;
    }
    shift = bits > kDigitBits ? bits - kDigitBits : 0;
    std::fill(count, count + kBuckets, 0);
    for (std::ptrdiff_t i = 0; i < len; ++i) ++count[(keys[i] >> shift) & (kBuckets - 1)];
    bits = shift;
    if (count[(keys[0] >> shift) & (kBuckets - 1)] != len) break;  // else: a digit all share
  }
  std::ptrdiff_t next[kBuckets], end[kBuckets];
  std::ptrdiff_t at = 0;
  for (std::ptrdiff_t b = 0; b < kBuckets; ++b) {
    next[b] = at;
    at += count[b];
    end[b] = at;
  }
  for (std::ptrdiff_t b = 0; b < kBuckets; ++b) {
    while (next[b] < end[b]) {
      std::uint64_t k = keys[next[b]];
      int i = idx[next[b]];
      std::ptrdiff_t d = static_cast<std::ptrdiff_t>((k >> shift) & (kBuckets - 1));
      while (d != b) {
        const std::ptrdiff_t to = next[d]++;
        std::swap(k, keys[to]);
        std::swap(i, idx[to]);
        d = static_cast<std::ptrdiff_t>((k >> shift) & (kBuckets - 1));
      }
      keys[next[b]] = k;
      idx[next[b]] = i;
      ++next[b];
    }
  }
  std::ptrdiff_t from = 0;
  for (std::ptrdiff_t b = 0; b < kBuckets; ++b) {
    sort_run(keys + from, idx + from, count[b], bits);
    from += count[b];
  }
}

template <class Key>
void order_by(const Key& key, std::ptrdiff_t n, int* order, double* scratch) {
  auto* keys = reinterpret_cast<std::uint64_t*>(scratch);
  for (std::ptrdiff_t i = 0; i < n; ++i) {
    keys[i] = descending_bits(key(i));
    order[i] = static_cast<int>(i);
  }
  sort_run(keys, order, n, 64);
  for (std::ptrdiff_t i = 0; i < n; ++i) scratch[i] = from_descending_bits(keys[i]);
}

}  // namespace

void order_decreasing(const double* key, std::ptrdiff_t n, int* order, double* scratch) {
  order_by([key](std::ptrdiff_t i) { return key[i]; }, n, order, scratch);
}

void order_decreasing_complement(const double* x, std::ptrdiff_t n, int* order, double* scratch) {
  order_by([x](std::ptrdiff_t i) { return 1 - x[i]; }, n, order, scratch);
}

void fdr_qvalues(const double* p_wrong, std::ptrdiff_t n, double* q, int* order, double* scratch) {
  if (n == 0) return;
  order_decreasing(p_wrong, n, order, scratch);
  // `scratch` holds p_wrong in sorted order (-0 as 0, which 1 - p and the
  // tie test read alike); `q`, until the end, the running share of clean
  // labels among the first r.
  const double* ps = scratch;
  long double clean = 0;
  for (std::ptrdiff_t r = 0; r < n; ++r) {
    clean += 1 - ps[r];
    q[r] = static_cast<double>(clean) / static_cast<double>(r + 1);
  }
  // Backwards: the running minimum, read at the last of each run of ties.
  double run_min = q[n - 1];
  double group = run_min;
  for (std::ptrdiff_t r = n - 1; r >= 0; --r) {
    if (q[r] < run_min) run_min = q[r];
    const bool last = r == n - 1 || ps[r] != ps[r + 1];
    if (last) group = run_min;
    double v = group;
    if (0 > v) v = 0;
    if (1 < v) v = 1;
    q[r] = v;
  }
  std::memcpy(scratch, q, sizeof(double) * static_cast<std::size_t>(n));
  for (std::ptrdiff_t r = 0; r < n; ++r) q[order[r]] = scratch[r];
}

void permute_columns(const int* order, std::ptrdiff_t n, const std::vector<double*>& doubles,
                     const std::vector<int*>& ints, double* scratch) {
  if (n < 2) return;
  // Rows in up to 256 blocks of consecutive source rows (a block's values
  // stay in the caches): `block[i]`, the block of order[i]; `from`, the
  // source rows grouped by block, each group in destination order.
  const std::ptrdiff_t blocks = std::min<std::ptrdiff_t>(256, (n + 4095) / 4096);
  const std::ptrdiff_t size = (n + blocks - 1) / blocks;
  std::vector<std::uint8_t> block(static_cast<std::size_t>(n));
  std::vector<int> from(static_cast<std::size_t>(n));
  std::vector<std::ptrdiff_t> start(static_cast<std::size_t>(blocks) + 1, 0), next(static_cast<std::size_t>(blocks));
  for (std::ptrdiff_t i = 0; i < n; ++i) {
    block[i] = static_cast<std::uint8_t>(order[i] / size);
    ++start[block[i] + 1];
  }
  for (std::ptrdiff_t b = 0; b < blocks; ++b) start[b + 1] += start[b];
  std::copy(start.begin(), start.end() - 1, next.begin());
  for (std::ptrdiff_t i = 0; i < n; ++i) from[next[block[i]]++] = order[i];
  // Each column: gathered block by block into `scratch`, then read back in
  // destination order from the blocks' runs, one cursor per block.
  auto permute = [&](auto* col, auto* tmp) {
    for (std::ptrdiff_t t = 0; t < n; ++t) tmp[t] = col[from[t]];
    std::copy(start.begin(), start.end() - 1, next.begin());
    for (std::ptrdiff_t i = 0; i < n; ++i) col[i] = tmp[next[block[i]]++];
  };
  for (double* col : doubles) permute(col, scratch);
  for (int* col : ints) permute(col, reinterpret_cast<int*>(scratch));
}

}  // namespace noisylabels
