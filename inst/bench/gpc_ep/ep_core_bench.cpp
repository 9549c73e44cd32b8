// Google Benchmark of the gpc_ep core (no R): EP runs of 1 and 5 sweeps
// (sequential with several block sizes, the unblocked reference, parallel),
// the refresh alone, and one Cholesky factorisation of K.
// Build: cmake -S inst/bench/gpc_ep -B build/gpc_ep && cmake --build build/gpc_ep
// Run:   OPENBLAS_NUM_THREADS=1 build/gpc_ep/ep_core_bench
#include <benchmark/benchmark.h>

#include <random>

#include "ep/gpc_ep.h"

using namespace noisylabels;

namespace {

struct Problem {
  MatrixXd k;
  VectorXd y;
};

Problem make_problem(int n) {
  std::mt19937_64 rng(n);
  std::normal_distribution<double> nd;
  MatrixXd x(n, 2);
  VectorXd y(n);
  for (int i = 0; i < n; ++i) {
    x(i, 0) = nd(rng);
    x(i, 1) = nd(rng);
    y(i) = (x(i, 0) + 0.5 * x(i, 1) * x(i, 1) - 0.5 > 0) ? 1.0 : -1.0;
    if (i % 20 == 0) y(i) = -y(i);  // 5% flipped labels
  }
  Kernel kern(KernelType::Mixed, 2, false);
  VectorXd lp(4);
  lp << std::log(4.0), std::log(0.1), 0.0, 0.0;
  kern.set_log_par(lp);
  return {kern.gram(x), y};
}

// An EP run of exactly `sweeps` sweeps (each: n site updates plus a
// refresh) with the given block size (0 = one-at-a-time rank-one updates) or
// the parallel schedule (block = -1). Its setup is one Cholesky of K and the
// zero start, so (time(5 sweeps) - time(1 sweep)) / 4 is one sweep.
void BM_EpRun(benchmark::State& state) {
  const Problem p = make_problem(static_cast<int>(state.range(0)));
  EpOptions opt;
  opt.max_sweeps = opt.min_sweeps = static_cast<int>(state.range(1));
  opt.tol_logz = 0;
  opt.tol_site = 0;
  const int block = static_cast<int>(state.range(2));
  opt.parallel = block < 0;
  if (opt.parallel) opt.damping = 0.8;
  opt.block_size = std::max(0, block);
  EpLikelihood lik{0.05, 0.0};
  for (auto _ : state) {
    std::mt19937_64 rng(1);
    EpState s = run_ep(p.k, p.y, lik, opt, rng, null_monitor());
    benchmark::DoNotOptimize(s.log_z);
  }
}

void BM_Refresh(benchmark::State& state) {
  const Problem p = make_problem(static_cast<int>(state.range(0)));
  Cholesky chol_k(p.k);
  EpState s;
  s.site_tau = VectorXd::Constant(p.y.size(), 0.5);
  s.site_nu = p.y * 0.3;
  for (auto _ : state) {
    benchmark::DoNotOptimize(ep_refresh(p.k, chol_k, s));
  }
}

void BM_Cholesky(benchmark::State& state) {
  const Problem p = make_problem(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    Cholesky c(p.k);
    benchmark::DoNotOptimize(c.factor().data());
  }
}

}  // namespace

BENCHMARK(BM_EpRun)
    ->ArgsProduct({{500, 1000, 2000}, {1, 5}, {64}})
    ->ArgsProduct({{500, 1000}, {1, 5}, {0, 16, 32, 128, -1}})
    ->ArgNames({"n", "sweeps", "block"})
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Refresh)->Arg(500)->Arg(1000)->Arg(2000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Cholesky)->Arg(500)->Arg(1000)->Arg(2000)->Unit(benchmark::kMillisecond);
BENCHMARK_MAIN();
