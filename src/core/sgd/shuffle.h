// Seeded Fisher-Yates shuffles of the visiting order: one up front, and one
// spread over the steps of the previous epoch.
// Internal to the SGD core: included only by src/core/sgd/*.cpp. The
// definitions sit in an unnamed namespace, so every file that uses them gets
// its own internal copy and the compiler inlines and specialises the kernels
// as it did when the core was one file (the epoch loop's speed depends on it).
#pragma once

#include <algorithm>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

namespace noisylabels {
namespace {

// Uniform integer in [0, bound) from one 64-bit draw by a multiply-shift
// (Lemire 2019) instead of a 64-bit division, which cost about as much per
// element as the sparse rows of a7a. Deterministic for a given seed on every
// platform.
inline std::uint64_t draw_below(std::mt19937_64& rng, std::uint64_t bound) {
#if defined(__SIZEOF_INT128__)
  return static_cast<std::uint64_t>((static_cast<unsigned __int128>(rng()) * bound) >> 64);
#else
  return rng() % bound;
#endif
}

inline void shuffle(std::vector<int>& perm, std::mt19937_64& rng) {
  // Fisher-Yates with our own index draw so that a seed gives the same
  // permutation on every standard library.
  for (int i = static_cast<int>(perm.size()) - 1; i > 0; --i) {
    const int j = static_cast<int>(draw_below(rng, static_cast<std::uint64_t>(i + 1)));
    std::swap(perm[i], perm[j]);
  }
}

// The Fisher-Yates shuffle of the next epoch, advanced one swap per SGD step
// of the current epoch. The draws and swaps are exactly those of shuffle()
// (same generator, same order, on a copy of the current permutation), so the
// visiting order is unchanged; but they no longer form a pass of their own:
// they are independent of the update chain dot -> r'(z) -> axpy, which is
// latency-bound, so the processor executes them in its idle slots.
struct PendingShuffle {
  int* perm = nullptr;
  int i = 0;       // next position to fix; 0 = done
  int j_next = 0;  // its partner, drawn one step early so it can be prefetched
  std::mt19937_64* rng = nullptr;

  void start(std::vector<int>& next, const std::vector<int>& current, std::mt19937_64& r) {
    std::copy(current.begin(), current.end(), next.begin());
    perm = next.data();
    i = static_cast<int>(next.size()) - 1;
    rng = &r;
    draw();
  }
  void draw() {
    if (i > 0) {
      j_next = static_cast<int>(draw_below(*rng, static_cast<std::uint64_t>(i + 1)));
#if defined(__GNUC__) || defined(__clang__)
      __builtin_prefetch(perm + j_next, 1);
#endif
    }
  }
  void step() {
    if (i > 0) {
      std::swap(perm[i], perm[j_next]);
      --i;
      draw();
    }
  }
  void finish() {
    while (i > 0) step();
  }
};

}  // namespace
}  // namespace noisylabels
