// The Vecchia covariance backend: each point conditioned on its m nearest
// earlier neighbours, so a pass costs O(n m^3) and runs over OpenMP threads.
// The dense backend and the factory are in covariance_dense.cpp.
#include "gp/covariance.h"
#include "common/threads.h"
#include "common/constants.h"

#include <algorithm>
#include <cmath>
#include <new>
#include <stdexcept>
#include <string>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace noisylabels {

namespace {

// C[S, S] for the points whose inputs are the first k columns of xs (d x k):
// kernel values with the nugget on the diagonal, plus noise_var[idx[a]];
// if dk is given, row pos of it receives the kernel's log-parameter
// derivatives for the pos-th (a >= b) pair in column-major lower order.
// With `kv`, the kernel entries (before the noise) are also written there,
// packed in the order visited.
void fill_block(const Kernel& kern, const MatrixXd& xs, const std::vector<int>& idx,
                const VectorXd& noise_var, MatrixXd& sigma, MatrixXd* dk,
                std::vector<double>& dkp, double* kv = nullptr) {
  const int k = static_cast<int>(idx.size());
  sigma.resize(k, k);
  int pos = 0;
  for (int b = 0; b < k; ++b) {
    for (int a = b; a < k; ++a, ++pos) {
      const double v = kern.pair_gradient(xs.col(a).data(), xs.col(b).data(),
                                          dk ? dkp.data() : nullptr, a == b);
      sigma(a, b) = v;
      sigma(b, a) = v;
      if (kv) kv[pos] = v;
      if (dk) {
        for (int j = 0; j < static_cast<int>(dkp.size()); ++j) (*dk)(pos, j) = dkp[j];
      }
    }
    sigma(b, b) += noise_var(idx[b]);
  }
}

}  // namespace

// ---------------------------------------------------------------------------
// Vecchia backend.
//
// Derivation (written out in vignettes/gpr-loo.Rmd, "Scaling up"). For point
// i let S = (N(i), i), Sigma = C_SS, L its lower Cholesky factor, u = L^-1 y_S
// and r the last row of L^-1 (as a column). Then
//   y_i - E[y_i | y_N] = u_k L_kk, Var[y_i | y_N] = L_kk^2  (k = |S|, last)
// and the block's term of the negative log-likelihood is
//   f_i = u_k^2 / 2 + log L_kk
//       = 1/2 [y_S' Sigma^-1 y_S - y_N' Sigma_NN^-1 y_N + log|Sigma| - log|Sigma_NN|].
// Its derivative in anything Sigma depends on is -1/2 tr(W_i dSigma) with
//   W_i = (a a' - Sigma^-1) - [b b' - Sigma_NN^-1]_embedded,
//   a = Sigma^-1 y_S, b = Sigma_NN^-1 y_N.
// L_NN is the leading block of L, so L^-1 restricted to N is L_NN^-1 and
//   Sigma^-1 - [Sigma_NN^-1] = r r',   a = [b] + u_k r,
// which gives the O(k^2) form (beta = [b] padded with 0 for i):
//   W_i = u_k (beta r' + r beta') + (u_k^2 - 1) r r'.
// The precision of the approximate model is Q = U U' with U's column i equal
// to r on the rows S, so
//   (Q y)_j = sum_{i: j in S(i)} r_j u_k,    Q_jj = sum_{i: j in S(i)} r_j^2,
// and, since dSigma/ds_j = e_j e_j',
//   d nll / d s_j = -1/2 sum_i W_i[j,j] = 1/2 (Q_jj - g_j),
//   g_j = sum_{i: j in S(i)} (2 u_k beta_j r_j + u_k^2 r_j^2).
// With every earlier point conditioned on (m = n - 1), g_j = (Q y)_j^2 and
// this is the exact-GP gradient; with m < n - 1 it is not, which is why the
// sweeps check every step on the objective.

VecchiaCovariance::VecchiaCovariance(const MatrixXd& x, const VectorXd& y, const Kernel& kernel,
                                     const JitterPolicy& jitter, const Eigen::MatrixXi& neighbors,
                                     int threads)
    : CovarianceOperator(x, y, kernel, jitter), nn_(neighbors), xt_(x.transpose()),
      threads_(std::max(1, threads)) {
  const int n = static_cast<int>(x.rows());
  if (nn_.rows() != n) throw std::invalid_argument("vecchia: neighbour matrix must have one row per point");
  for (int i = 0; i < n; ++i) {
    for (int a = 0; a < nn_.cols(); ++a) {
      const int j = nn_(i, a);
      if (j < -1 || j >= n || j == i) {
        throw std::invalid_argument("vecchia: neighbour index out of range or equal to the point itself");
      }
    }
  }
}

void VecchiaCovariance::set_rows(std::vector<int> rows) {
  const int n = this->n();
  std::vector<char> seen(n, 0);
  for (int i : rows) {
    if (i < 0 || i >= n || seen[i]) throw std::invalid_argument("vecchia: rows out of range or repeated");
    seen[i] = 1;
  }
  rows_ = std::move(rows);
}

namespace {

// Per-thread work space for one conditioning set.
struct BlockWork {
  std::vector<int> idx;
  MatrixXd xs;     // d x k inputs of the set
  MatrixXd sigma;  // k x k covariance
  MatrixXd dk;     // (k(k+1)/2) x p kernel derivatives of the lower triangle
  VectorXd ys, u, r, beta;
  std::vector<double> dkp;
};

// Factor `sigma` in place with the escalating jitter policy; returns the
// jitter used (0 if none) or a negative number if every attempt failed.
double factor_block(MatrixXd& sigma, const JitterPolicy& policy, Eigen::LLT<MatrixXd>& llt) {
  if (policy.base > 0) sigma.diagonal().array() += policy.base;
  llt.compute(sigma);
  if (llt.info() == Eigen::Success) return policy.base;
  const double mean_diag = sigma.diagonal().mean();
  double extra = policy.first_relative * std::max(mean_diag, 1e-300);
  for (int t = 0; t < policy.max_tries; ++t, extra *= policy.growth) {
    MatrixXd trial = sigma;
    trial.diagonal().array() += extra;
    llt.compute(trial);
    if (llt.info() == Eigen::Success) return policy.base + extra;
  }
  return -1.0;
}

// The same block from kernel entries kept by an earlier pass (packed as
// fill_block() visits them).
void fill_block_cached(const double* kv, const std::vector<int>& idx, const VectorXd& noise_var,
                       MatrixXd& sigma) {
  const int k = static_cast<int>(idx.size());
  sigma.resize(k, k);
  int pos = 0;
  for (int b = 0; b < k; ++b) {
    for (int a = b; a < k; ++a, ++pos) {
      sigma(a, b) = kv[pos];
      sigma(b, a) = kv[pos];
    }
    sigma(b, b) += noise_var(idx[b]);
  }
}

}  // namespace

bool VecchiaCovariance::reserve_cache() {
  if (cache_refused_) return false;
  const double per_point = 0.5 * (nn_.cols() + 1.0) * (nn_.cols() + 2.0);
  const double bytes = per_point * n() * sizeof(double);
  if (bytes > kKernelCacheMaxBytes) {
    cache_refused_ = true;
    return false;
  }
  try {
    kernel_cache_.resize(static_cast<std::size_t>(per_point) * static_cast<std::size_t>(n()));
  } catch (const std::bad_alloc&) {
    // Not retried on every later pass: each attempt would ask for the same block again.
    kernel_cache_.clear();
    kernel_cache_.shrink_to_fit();
    cache_refused_ = true;
    return false;
  }
  return true;
}

double VecchiaCovariance::pass(const VectorXd& noise_var, CovEval* eval, VectorXd* grad_theta,
                               VectorXd* grad_noise_var) {
  const int n = this->n();
  const int m = static_cast<int>(nn_.cols());
  const int d = static_cast<int>(xt_.rows());
  const int p = kernel_.n_par();
  if (noise_var.size() != n) throw std::invalid_argument("vecchia: noise vector has the wrong length");
  const bool want_scatter = eval != nullptr || grad_noise_var != nullptr;
  const bool want_theta = grad_theta != nullptr;
  const int n_rows = rows_.empty() ? n : static_cast<int>(rows_.size());
  // Kernel entries: from the cache, or computed (and kept, the first time
  // after hold_kernel() at this theta; only by a pass over every point).
  const bool use_cache = hold_ && cache_ready_ && !want_theta;
  const bool fill_cache = hold_ && !cache_ready_ && !want_theta && rows_.empty() && reserve_cache();
  const std::size_t per_point = static_cast<std::size_t>(m + 1) * static_cast<std::size_t>(m + 2) / 2;
  const int n_threads = threads_;
  std::vector<double> nll_part(n_threads, 0.0), jitter_part(n_threads, 0.0);
  std::vector<VectorXd> qy(n_threads), qd(n_threads), gneg(n_threads), gt(n_threads);
  std::vector<std::string> error(n_threads);
  const Kernel& kern = kernel_;
  const JitterPolicy policy = jitter_policy_;
  ParallelPoll poll(monitor());
#pragma omp parallel num_threads(n_threads)
  {
    const int tid = thread_id();
    if (want_scatter) {
      qy[tid] = VectorXd::Zero(n);
      qd[tid] = VectorXd::Zero(n);
      gneg[tid] = VectorXd::Zero(n);
    }
    if (want_theta) gt[tid] = VectorXd::Zero(p);
    BlockWork w;
    w.idx.reserve(m + 1);
    w.xs.resize(d, m + 1);
    w.dkp.resize(p);
    if (want_theta) w.dk.resize((m + 1) * (m + 2) / 2, p);
    Eigen::LLT<MatrixXd> llt(m + 1);
    double nll = 0, max_jit = 0;
#pragma omp for schedule(static)
    for (int t = 0; t < n_rows; ++t) {
      const int i = rows_.empty() ? t : rows_[t];
      if (!error[tid].empty() || poll.stop(tid == 0 && t % 64 == 0)) continue;
      w.idx.clear();
      for (int a = 0; a < m; ++a) {
        const int j = nn_(i, a);
        if (j >= 0) w.idx.push_back(j);
      }
      w.idx.push_back(i);
      const int k = static_cast<int>(w.idx.size());
      double* kv = (use_cache || fill_cache) ? kernel_cache_.data() + per_point * static_cast<std::size_t>(i)
                                             : nullptr;
      if (use_cache) {
        fill_block_cached(kv, w.idx, noise_var, w.sigma);
      } else {
        for (int a = 0; a < k; ++a) w.xs.col(a) = xt_.col(w.idx[a]);
        fill_block(kern, w.xs, w.idx, noise_var, w.sigma, want_theta ? &w.dk : nullptr, w.dkp, kv);
      }
      const double jit = factor_block(w.sigma, policy, llt);
      if (jit < 0) {
        error[tid] = "the covariance of conditioning set " + std::to_string(i + 1) +
                     " is not positive definite even with jitter";
        continue;
      }
      max_jit = std::max(max_jit, jit);
      const auto lower = llt.matrixL();
      w.ys.resize(k);
      for (int a = 0; a < k; ++a) w.ys(a) = y_(w.idx[a]);
      w.u = lower.solve(w.ys);
      const double uk = w.u(k - 1);
      const double lkk = llt.matrixLLT()(k - 1, k - 1);
      nll += 0.5 * uk * uk + std::log(lkk);
      if (!want_scatter && !want_theta) continue;
      // r = last row of L^-1: solve L' r = e_k.
      w.r = VectorXd::Zero(k);
      w.r(k - 1) = 1.0;
      llt.matrixU().solveInPlace(w.r);
      // beta = [Sigma_NN^-1 y_N ; 0] = [L_NN^-T u_N ; 0].
      w.beta = VectorXd::Zero(k);
      if (k > 1) {
        w.beta.head(k - 1) = w.u.head(k - 1);
        llt.matrixLLT()
            .topLeftCorner(k - 1, k - 1)
            .triangularView<Eigen::Lower>()
            .transpose()
            .solveInPlace(w.beta.head(k - 1));
      }
      if (want_scatter) {
        for (int a = 0; a < k; ++a) {
          const int j = w.idx[a];
          const double ra = w.r(a);
          qy[tid](j) += ra * uk;
          qd[tid](j) += ra * ra;
          gneg[tid](j) += 2.0 * uk * w.beta(a) * ra + uk * uk * ra * ra;
        }
      }
      if (want_theta) {
        // d f_i / d theta = -1/2 sum_ab W_ab dSigma_ab; lower triangle twice,
        // diagonal once.
        int pos = 0;
        const double c2 = uk * uk - 1.0;
        for (int b = 0; b < k; ++b) {
          for (int a = b; a < k; ++a, ++pos) {
            double wab = uk * (w.beta(a) * w.r(b) + w.r(a) * w.beta(b)) + c2 * w.r(a) * w.r(b);
            if (a != b) wab *= 2.0;
            gt[tid].noalias() -= (0.5 * wab) * w.dk.row(pos).transpose();
          }
        }
      }
    }
    nll_part[tid] = nll;
    jitter_part[tid] = max_jit;
  }
  poll.rethrow();
  for (int t = 0; t < n_threads; ++t) {
    if (!error[t].empty()) throw NumericalError(error[t]);
  }
  if (fill_cache) cache_ready_ = true;
  ++factorizations_;
  double nll = 0.5 * n_rows * kLog2Pi;
  for (int t = 0; t < n_threads; ++t) {
    nll += nll_part[t];
    max_jitter_ = std::max(max_jitter_, jitter_part[t]);
  }
  if (want_scatter) {
    VectorXd a = VectorXd::Zero(n), q = VectorXd::Zero(n), g = VectorXd::Zero(n);
    for (int t = 0; t < n_threads; ++t) {
      a += qy[t];
      q += qd[t];
      g += gneg[t];
    }
    if (grad_noise_var) *grad_noise_var = 0.5 * (q - g);
    if (eval) {
      eval->nll = nll;
      eval->alpha = std::move(a);
      eval->inv_diag = std::move(q);
      eval->grad_neg = std::move(g);
    }
  }
  if (want_theta) {
    grad_theta->setZero(p);
    for (int t = 0; t < n_threads; ++t) *grad_theta += gt[t];
  }
  return nll;
}

CovEval VecchiaCovariance::evaluate(const VectorXd& noise_var) {
  CovEval e;
  pass(noise_var, &e, nullptr, nullptr);
  return e;
}

double VecchiaCovariance::nll_gradient(const VectorXd& noise_var, VectorXd& grad_theta,
                                       VectorXd* grad_noise_var) {
  return pass(noise_var, nullptr, &grad_theta, grad_noise_var);
}

GpPrediction VecchiaCovariance::predict(const VectorXd& noise_var, const MatrixXd& xnew,
                                        bool want_var) {
  const int n_new = static_cast<int>(xnew.rows());
  const int m = static_cast<int>(new_neighbors_.cols());
  const int d = static_cast<int>(xt_.rows());
  // Per-point sets are blocks of one point each.
  const bool blocked = new_block_start_.size() > 0;
  const int n_blocks = blocked ? static_cast<int>(new_block_start_.size()) - 1 : n_new;
  if (new_neighbors_.rows() != n_blocks ||
      (blocked && (new_block_start_(0) != 0 || new_block_start_(n_blocks) != n_new))) {
    throw std::invalid_argument("vecchia: prediction neighbours are missing for the new inputs");
  }
  auto first = [&](int b) { return blocked ? new_block_start_(b) : b; };
  GpPrediction p;
  p.mean.resize(n_new);
  if (want_var) p.var.resize(n_new);
  const MatrixXd xnt = xnew.transpose();
  std::vector<std::string> error(threads_);
  std::vector<double> jit_part(threads_, 0.0);
  const JitterPolicy policy = jitter_policy_;
  ParallelPoll poll(monitor());
#pragma omp parallel num_threads(threads_)
  {
    const int tid = thread_id();
    std::vector<int> idx;
    std::vector<double> no_dk;
    MatrixXd xs(d, m), sigma;
    VectorXd kstar, ys, wv;
    Eigen::LLT<MatrixXd> llt(m);
#pragma omp for schedule(dynamic)
    for (int b = 0; b < n_blocks; ++b) {
      if (!error[tid].empty() || poll.stop(tid == 0 && b % 64 == 0)) continue;
      idx.clear();
      for (int a = 0; a < m; ++a) {
        if (new_neighbors_(b, a) >= 0) idx.push_back(new_neighbors_(b, a));
      }
      const int k = static_cast<int>(idx.size());
      if (k > 0) {
        for (int a = 0; a < k; ++a) xs.col(a) = xt_.col(idx[a]);
        fill_block(kernel_, xs, idx, noise_var, sigma, nullptr, no_dk);
        const double jit = factor_block(sigma, policy, llt);
        if (jit < 0) {
          error[tid] = "the covariance of the neighbours of new point " + std::to_string(first(b) + 1) +
                       " is not positive definite even with jitter";
          continue;
        }
        jit_part[tid] = std::max(jit_part[tid], jit);
        ys.resize(k);
        for (int a = 0; a < k; ++a) ys(a) = y_(idx[a]);
        wv = llt.matrixL().solve(ys);
        kstar.resize(k);
      }
      for (int j = first(b); j < first(b + 1); ++j) {
        const double* xj = xnt.col(j).data();
        const double kjj = kernel_.pair_gradient(xj, xj, nullptr, true);
        if (k == 0) {
          p.mean(j) = 0.0;
          if (want_var) p.var(j) = kjj;
          continue;
        }
        for (int a = 0; a < k; ++a) kstar(a) = kernel_.pair_gradient(xs.col(a).data(), xj, nullptr, false);
        const VectorXd v = llt.matrixL().solve(kstar);
        p.mean(j) = v.dot(wv);
        if (want_var) p.var(j) = std::max(0.0, kjj - v.squaredNorm());
      }
    }
  }
  poll.rethrow();
  for (int t = 0; t < threads_; ++t) {
    if (!error[t].empty()) throw NumericalError(error[t]);
    max_jitter_ = std::max(max_jitter_, jit_part[t]);
  }
  return p;
}

}  // namespace noisylabels
