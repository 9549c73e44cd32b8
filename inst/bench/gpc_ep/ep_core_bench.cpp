// Google Benchmark of the gpc_ep core (no R): one EP sweep (rank-one updates
// plus the refresh) against one Cholesky factorisation of K, and the refresh
// alone. Build: cmake -S inst/bench/gpc_ep -B build/gpc_ep && cmake --build build/gpc_ep
// Run:   OPENBLAS_NUM_THREADS=1 build/gpc_ep/ep_core_bench
#include <benchmark/benchmark.h>

#include <random>

#include "gpc_ep.h"

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

// An EP run of exactly 4 sweeps (each: n rank-one updates plus a refresh);
// its setup is one Cholesky of K and O(n) work, so time / 4 is close to the
// cost of one sweep.
void BM_EpSweep(benchmark::State& state) {
  const Problem p = make_problem(static_cast<int>(state.range(0)));
  EpOptions opt;
  opt.max_sweeps = 4;
  opt.min_sweeps = 4;
  opt.tol_logz = 0;
  opt.tol_site = 0;
  EpLikelihood lik{0.05, 0.0};
  for (auto _ : state) {
    std::mt19937_64 rng(1);
    EpState s = run_ep(p.k, p.y, lik, opt, rng, null_monitor());
    benchmark::DoNotOptimize(s.log_z);
  }
  state.counters["sweeps"] = 4;
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

BENCHMARK(BM_EpSweep)->Arg(200)->Arg(500)->Arg(1000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Refresh)->Arg(200)->Arg(500)->Arg(1000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Cholesky)->Arg(200)->Arg(500)->Arg(1000)->Unit(benchmark::kMillisecond);
BENCHMARK_MAIN();
