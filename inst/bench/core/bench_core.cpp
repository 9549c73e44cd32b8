// Google Benchmark over the GP core: Cholesky (LAPACK vs Eigen), diag(K^-1),
// full inverse, and one gpr_loo hyperparameter-step evaluation (NLL +
// gradient) at n = 500 .. 4000.
#include <benchmark/benchmark.h>

#include <random>

#include "gpr/gpr_loo.h"
#include "gp/kernels.h"
#include "linalg/linalg.h"

using namespace noisylabels;

namespace {

MatrixXd inputs(int n, int d = 2) {
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> u(-2, 2);
  MatrixXd x(n, d);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < d; ++j) x(i, j) = u(rng);
  return x;
}

Kernel rbf(int d) {
  Kernel k(KernelType::Rbf, d, true);
  VectorXd p = VectorXd::Constant(1 + d, std::log(0.5));
  p(0) = 0.0;
  k.set_log_par(p);
  return k;
}

MatrixXd covariance(int n) {
  MatrixXd x = inputs(n);
  MatrixXd c = rbf(2).gram(x);
  c.diagonal().array() += 1e-2;
  return c;
}

void BM_Cholesky(benchmark::State& state, CholBackend backend) {
  const MatrixXd c = covariance(static_cast<int>(state.range(0)));
  JitterPolicy policy;
  policy.backend = backend;
  for (auto _ : state) {
    Cholesky chol(c, policy);
    benchmark::DoNotOptimize(chol.logdet());
  }
}

void BM_InverseDiagonal(benchmark::State& state, CholBackend backend) {
  const MatrixXd c = covariance(static_cast<int>(state.range(0)));
  JitterPolicy policy;
  policy.backend = backend;
  const Cholesky chol(c, policy);
  for (auto _ : state) benchmark::DoNotOptimize(chol.inverse_diagonal()(0));
}

void BM_FullInverse(benchmark::State& state) {
  const Cholesky chol(covariance(static_cast<int>(state.range(0))));
  for (auto _ : state) benchmark::DoNotOptimize(chol.inverse()(0, 0));
}

void BM_KernelGradient(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const MatrixXd x = inputs(n);
  const Kernel k = rbf(2);
  const MatrixXd w = MatrixXd::Identity(n, n);
  for (auto _ : state) benchmark::DoNotOptimize(k.gradient(x, w)(0));
}

void BM_NllGradient(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const MatrixXd x = inputs(n);
  VectorXd y(n);
  for (int i = 0; i < n; ++i) y(i) = std::sin(2 * x(i, 0)) * std::cos(2 * x(i, 1));
  const Kernel k = rbf(2);
  GprLooOptions opt;
  GprLoo model(x, y, k, opt);
  const VectorXd sigma = VectorXd::Constant(n, 0.01);
  VectorXd grad(k.n_par());
  for (auto _ : state) benchmark::DoNotOptimize(model.objective_and_gradient(k.log_par(), sigma, grad));
}

}  // namespace

BENCHMARK_CAPTURE(BM_Cholesky, lapack, CholBackend::Lapack)->Arg(500)->Arg(1000)->Arg(2000)->Arg(4000)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Cholesky, eigen, CholBackend::Eigen)->Arg(500)->Arg(1000)->Arg(2000)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_InverseDiagonal, lapack, CholBackend::Lapack)->Arg(500)->Arg(1000)->Arg(2000)->Arg(4000)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_InverseDiagonal, eigen, CholBackend::Eigen)->Arg(500)->Arg(1000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FullInverse)->Arg(500)->Arg(1000)->Arg(2000)->Arg(4000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_KernelGradient)->Arg(500)->Arg(1000)->Arg(2000)->Arg(4000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_NllGradient)->Arg(500)->Arg(1000)->Arg(2000)->Arg(4000)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
