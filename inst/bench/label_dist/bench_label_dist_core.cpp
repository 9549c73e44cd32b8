// Per-block cost of the label_dist core against the number of (group, member)
// pairs P (groups of 30, U = P / 3 instances, M = 4, D = 20): each block should
// scale linearly in P (spec section 3.5), so the reported time per pair
// (counter "pairs_per_s") should stay flat across the three sizes.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <random>

#include "label_dist/label_dist.h"

using namespace noisylabels;

namespace {

struct Fixture {
  Eigen::MatrixXd x, s;
  std::vector<int> gp, pu;
  LdHyper hy;
  Fixture(int N, int size = 30, int M = 4, int D = 20) {
    const int U = N * 10;  // each instance in about 3 groups, as in the R benchmark
    std::mt19937_64 rng(1);
    std::normal_distribution<double> nrm;
    std::uniform_int_distribution<int> unit(0, U - 1);
    x.resize(U, D);
    for (int i = 0; i < x.size(); ++i) x.data()[i] = nrm(rng);
    s.resize(N, M);
    for (int i = 0; i < s.size(); ++i) s.data()[i] = 0.25 + 0.3 * nrm(rng);
    gp.push_back(0);
    for (int i = 0; i < N; ++i) {
      std::vector<int> g;
      while (static_cast<int>(g.size()) < size) {
        const int u = unit(rng);
        if (std::find(g.begin(), g.end(), u) == g.end()) g.push_back(u);
      }
      std::sort(g.begin(), g.end());
      pu.insert(pu.end(), g.begin(), g.end());
      gp.push_back(static_cast<int>(pu.size()));
    }
  }
};

void run(benchmark::State& state, const char* block, bool structured) {
  Fixture f(static_cast<int>(state.range(0)));
  LdProblem prob(f.x.data(), static_cast<int>(f.x.rows()), static_cast<int>(f.x.cols()), f.s.data(),
                 static_cast<int>(f.s.rows()), static_cast<int>(f.s.cols()), f.gp, f.pu);
  LdOptions opt;
  opt.structured = structured;
  LdState st = ld_initial_state(prob, f.hy, opt, ld_deconvolve(prob, 1e-2), 0, 1);
  const std::string b = block;
  for (auto _ : state) {
    if (b == "eta") ld_update_eta(prob, f.hy, st, false, 1);
    else if (b == "zeta") ld_update_zeta(prob, st, false);
    else if (b == "structured") ld_update_structured(prob, f.hy, st, false, null_monitor());
    else if (b == "c") ld_update_c(prob, f.hy, st, structured, false);
    else if (b == "elbo") benchmark::DoNotOptimize(ld_elbo(prob, f.hy, st, structured, false).total());
    else if (b == "w_objective") {
      Eigen::MatrixXd g;
      benchmark::DoNotOptimize(ld_w_objective(prob, st.zeta, 1.0, st.w, &g));
    }
  }
  // pairs processed per second; flat across sizes = linear cost in P
  state.counters["pairs_per_s"] =
      benchmark::Counter(static_cast<double>(prob.P), benchmark::Counter::kIsIterationInvariantRate);
}

void BM_eta(benchmark::State& s) { run(s, "eta", false); }
void BM_zeta(benchmark::State& s) { run(s, "zeta", false); }
void BM_c(benchmark::State& s) { run(s, "c", false); }
void BM_elbo(benchmark::State& s) { run(s, "elbo", false); }
void BM_w_objective(benchmark::State& s) { run(s, "w_objective", false); }
void BM_structured(benchmark::State& s) { run(s, "structured", true); }

}  // namespace

BENCHMARK(BM_eta)->Arg(2500)->Arg(5000)->Arg(10000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_zeta)->Arg(2500)->Arg(5000)->Arg(10000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_c)->Arg(2500)->Arg(5000)->Arg(10000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_elbo)->Arg(2500)->Arg(5000)->Arg(10000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_w_objective)->Arg(2500)->Arg(5000)->Arg(10000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_structured)->Arg(2500)->Arg(5000)->Arg(10000)->Unit(benchmark::kMillisecond);
BENCHMARK_MAIN();
