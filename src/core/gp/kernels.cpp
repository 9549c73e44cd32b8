#include "gp/kernels.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace noisylabels {

namespace {
const double kSqrt3 = std::sqrt(3.0);
const double kSqrt5 = std::sqrt(5.0);
// Below this many pairs the OpenMP start-up costs more than it saves.
constexpr long kParallelPairs = 20000;
// Column-block width of the blocked stationary paths.
constexpr int kBlock = 64;

bool main_thread() {
#ifdef _OPENMP
  return omp_get_thread_num() == 0;
#else
  return true;
#endif
}
}  // namespace

KernelType kernel_type_from_string(const std::string& name) {
  if (name == "rbf") return KernelType::Rbf;
  if (name == "matern12") return KernelType::Matern12;
  if (name == "matern32") return KernelType::Matern32;
  if (name == "matern52") return KernelType::Matern52;
  if (name == "linear") return KernelType::Linear;
  if (name == "mixed") return KernelType::Mixed;
  throw std::invalid_argument("unknown kernel type '" + name + "'");
}

Kernel::Kernel(KernelType type, int dim, bool ard, std::vector<bool> categorical)
    : type_(type), dim_(dim), ard_(ard), categorical_(std::move(categorical)) {
  if (dim < 1) throw std::invalid_argument("kernel dimension must be >= 1");
  if (categorical_.empty()) categorical_.assign(dim, false);
  if (static_cast<int>(categorical_.size()) != dim) {
    throw std::invalid_argument("categorical mask length differs from the kernel dimension");
  }
  log_par_ = VectorXd::Zero(n_par());
  set_log_par(log_par_);
}

int Kernel::n_par() const {
  const int q = ard_ ? dim_ : 1;
  switch (type_) {
    case KernelType::Linear: return 2;
    case KernelType::Mixed: return 3 + q;
    default: return 1 + q;
  }
}

void Kernel::set_log_par(const VectorXd& p) {
  if (p.size() != n_par()) {
    throw std::invalid_argument("kernel expects " + std::to_string(n_par()) +
                                " hyperparameters, got " + std::to_string(p.size()));
  }
  for (int j = 0; j < p.size(); ++j) {
    if (!std::isfinite(p(j))) throw std::invalid_argument("non-finite kernel hyperparameter");
  }
  log_par_ = p;
  const int q = ard_ ? dim_ : 1;
  ls_.assign(q, 1.0);
  switch (type_) {
    case KernelType::Linear:
      variance_ = std::exp(p(0));
      bias_ = std::exp(p(1));
      break;
    case KernelType::Mixed:
      variance_ = std::exp(p(0));
      bias_ = std::exp(p(1));
      nugget_ = std::exp(p(2));
      for (int m = 0; m < q; ++m) ls_[m] = std::exp(p(3 + m));
      break;
    default:
      variance_ = std::exp(p(0));
      for (int m = 0; m < q; ++m) ls_[m] = std::exp(p(1 + m));
  }
}

double Kernel::pair(const double* a, const double* b, double* dk) const {
  switch (type_) {
    case KernelType::Linear: {
      double dot = 0;
      for (int m = 0; m < dim_; ++m) dot += a[m] * b[m];
      if (dk) {
        dk[0] = variance_ * dot;
        dk[1] = bias_;
      }
      return bias_ + variance_ * dot;
    }
    case KernelType::Mixed: {
      double s = 0;
      for (int m = 0; m < dim_; ++m) {
        const double dm = categorical_[m] ? (a[m] == b[m] ? 0.0 : 1.0) : (a[m] - b[m]) * (a[m] - b[m]);
        s += length_scale(m) * dm;
      }
      const double e = variance_ * std::exp(-0.5 * s);
      if (dk) {
        dk[0] = e;
        dk[1] = bias_;
        dk[2] = 0.0;  // nugget acts on the diagonal only; added by the caller
        if (ard_) {
          for (int m = 0; m < dim_; ++m) {
            const double dm = categorical_[m] ? (a[m] == b[m] ? 0.0 : 1.0) : (a[m] - b[m]) * (a[m] - b[m]);
            dk[3 + m] = -0.5 * ls_[m] * dm * e;
          }
        } else {
          dk[3] = -0.5 * s * e;
        }
      }
      return e + bias_;
    }
    default: break;
  }
  // Stationary kernels of the scaled distance r.
  double r2 = 0;
  for (int m = 0; m < dim_; ++m) {
    const double u = (a[m] - b[m]) / length_scale(m);
    r2 += u * u;
  }
  double k, w;  // w = (dk/dlog l_m) / (Delta_m / l_m)^2
  switch (type_) {
    case KernelType::Rbf:
      k = variance_ * std::exp(-0.5 * r2);
      w = k;
      break;
    case KernelType::Matern12: {
      const double r = std::sqrt(r2);
      k = variance_ * std::exp(-r);
      w = r > 0 ? k / r : 0.0;
      break;
    }
    case KernelType::Matern32: {
      const double t = kSqrt3 * std::sqrt(r2);
      const double e = std::exp(-t);
      k = variance_ * (1 + t) * e;
      w = 3.0 * variance_ * e;
      break;
    }
    case KernelType::Matern52: {
      const double t = kSqrt5 * std::sqrt(r2);
      const double e = std::exp(-t);
      k = variance_ * (1 + t + t * t / 3.0) * e;
      w = (5.0 / 3.0) * variance_ * (1 + t) * e;
      break;
    }
    default:
      throw std::logic_error("unhandled kernel type");
  }
  if (dk) {
    dk[0] = k;
    if (ard_) {
      for (int m = 0; m < dim_; ++m) {
        const double u = (a[m] - b[m]) / ls_[m];
        dk[1 + m] = w * u * u;
      }
    } else {
      dk[1] = w * r2;
    }
  }
  return k;
}

double Kernel::pair_gradient(const double* a, const double* b, double* dk, bool same) const {
  double v = pair(a, b, dk);
  if (same && type_ == KernelType::Mixed) {
    v += nugget_;
    if (dk) dk[2] += nugget_;
  }
  return v;
}

MatrixXd Kernel::scaled(const MatrixXd& x) const {
  MatrixXd u = x;
  for (int m = 0; m < dim_; ++m) u.col(m) /= length_scale(m);
  return u;
}

MatrixXd Kernel::squared_distances(const MatrixXd& u, const MatrixXd& v, bool symmetric) {
  const VectorXd nu = u.rowwise().squaredNorm(), nv = v.rowwise().squaredNorm();
  MatrixXd r2 = -2.0 * u * v.transpose();
  r2.colwise() += nu;
  r2.rowwise() += nv.transpose();
  r2 = r2.cwiseMax(0.0);
  if (symmetric) r2.diagonal().setZero();
  return r2;
}

void Kernel::stationary_values(const MatrixXd& r2, MatrixXd& k, MatrixXd* w) const {
  switch (type_) {
    case KernelType::Rbf:
      k = variance_ * (-0.5 * r2.array()).exp();
      if (w) *w = k;
      break;
    case KernelType::Matern12: {
      const Eigen::ArrayXXd r = r2.array().sqrt();
      k = variance_ * (-r).exp();
      if (w) *w = (r > 0).select(k.array() / r, 0.0);
      break;
    }
    case KernelType::Matern32: {
      const Eigen::ArrayXXd t = kSqrt3 * r2.array().sqrt();
      const Eigen::ArrayXXd e = (-t).exp();
      k = variance_ * (1.0 + t) * e;
      if (w) *w = 3.0 * variance_ * e;
      break;
    }
    case KernelType::Matern52: {
      const Eigen::ArrayXXd t = kSqrt5 * r2.array().sqrt();
      const Eigen::ArrayXXd e = (-t).exp();
      k = variance_ * (1.0 + t + t.square() / 3.0) * e;
      if (w) *w = (5.0 / 3.0) * variance_ * (1.0 + t) * e;
      break;
    }
    default:
      throw std::logic_error("stationary_values: not a stationary kernel");
  }
}

MatrixXd Kernel::gram(const MatrixXd& x, Monitor& monitor) const {
  if (x.cols() != dim_) throw std::invalid_argument("kernel/data dimension mismatch");
  if (stationary()) {
    // Column blocks: r^2 of a block by one small GEMM, then k(r^2) while the
    // block is in cache. Blocks are independent, so threads may share them.
    const int n = static_cast<int>(x.rows());
    const MatrixXd u = scaled(x);
    const VectorXd nu = u.rowwise().squaredNorm();
    MatrixXd k(n, n);
    const int nb = (n + kBlock - 1) / kBlock;
    const bool par = static_cast<long>(n) * n / 2 > kParallelPairs;
    ParallelPoll poll(monitor);
#pragma omp parallel for schedule(dynamic, 1) if (par)
    for (int b = 0; b < nb; ++b) {
      if (poll.stop(main_thread())) continue;
      const int j0 = b * kBlock, bs = std::min(kBlock, n - j0);
      MatrixXd r2 = -2.0 * u * u.middleRows(j0, bs).transpose();
      r2.colwise() += nu;
      r2.rowwise() += nu.segment(j0, bs).transpose();
      r2 = r2.cwiseMax(0.0);
      for (int c = 0; c < bs; ++c) r2(j0 + c, c) = 0.0;
      MatrixXd kb;
      stationary_values(r2, kb, nullptr);
      k.middleCols(j0, bs) = kb;
    }
    poll.rethrow();
    return k;
  }
  const int n = static_cast<int>(x.rows());
  const MatrixXd xt = x.transpose();
  MatrixXd k(n, n);
  const bool par = static_cast<long>(n) * n / 2 > kParallelPairs;
  ParallelPoll poll(monitor);
#pragma omp parallel for schedule(dynamic, 16) if (par)
  for (int j = 0; j < n; ++j) {
    if (poll.stop(j % 16 == 0 && main_thread())) continue;
    for (int i = j; i < n; ++i) {
      const double v = pair(xt.col(i).data(), xt.col(j).data(), nullptr);
      k(i, j) = v;
      k(j, i) = v;
    }
  }
  poll.rethrow();
  if (type_ == KernelType::Mixed) k.diagonal().array() += nugget_;
  return k;
}

MatrixXd Kernel::cross(const MatrixXd& x, const MatrixXd& z) const {
  if (x.cols() != dim_ || z.cols() != dim_) throw std::invalid_argument("kernel/data dimension mismatch");
  if (stationary()) {
    MatrixXd k;
    stationary_values(squared_distances(scaled(x), scaled(z), false), k, nullptr);
    return k;
  }
  const int n = static_cast<int>(x.rows()), m = static_cast<int>(z.rows());
  const MatrixXd xt = x.transpose(), zt = z.transpose();
  MatrixXd k(n, m);
  const bool par = static_cast<long>(n) * m > kParallelPairs;
#pragma omp parallel for schedule(static) if (par)
  for (int j = 0; j < m; ++j) {
    for (int i = 0; i < n; ++i) k(i, j) = pair(xt.col(i).data(), zt.col(j).data(), nullptr);
  }
  return k;
}

VectorXd Kernel::diag(const MatrixXd& x) const {
  if (x.cols() != dim_) throw std::invalid_argument("kernel/data dimension mismatch");
  const int n = static_cast<int>(x.rows());
  const MatrixXd xt = x.transpose();
  VectorXd d(n);
  for (int i = 0; i < n; ++i) d(i) = pair(xt.col(i).data(), xt.col(i).data(), nullptr);
  if (type_ == KernelType::Mixed) d.array() += nugget_;
  return d;
}

MatrixXd Kernel::diag_gradient(const MatrixXd& x) const {
  if (x.cols() != dim_) throw std::invalid_argument("kernel/data dimension mismatch");
  const int n = static_cast<int>(x.rows()), p = n_par();
  const MatrixXd xt = x.transpose();
  MatrixXd g(n, p);
  std::vector<double> dk(p);
  for (int i = 0; i < n; ++i) {
    pair(xt.col(i).data(), xt.col(i).data(), dk.data());
    for (int j = 0; j < p; ++j) g(i, j) = dk[j];
    if (type_ == KernelType::Mixed) g(i, 2) += nugget_;
  }
  return g;
}

VectorXd Kernel::gradient(const MatrixXd& x, const MatrixXd& w, Monitor& monitor) const {
  if (x.cols() != dim_) throw std::invalid_argument("kernel/data dimension mismatch");
  const int n = static_cast<int>(x.rows()), p = n_par();
  if (w.rows() != n || w.cols() != n) throw std::invalid_argument("gradient: weight matrix has the wrong size");
  if (stationary()) {
    return stationary_gradient(x, monitor, [&](int j0, int bs, MatrixXd& wb) {
      wb = w.block(j0, j0, n - j0, bs);
    });
  }
  const MatrixXd xt = x.transpose();
  // Per-thread partial sums over a fixed cyclic schedule, added in thread
  // order: the result is bitwise reproducible for a given thread count.
  int n_threads = 1;
#ifdef _OPENMP
  const bool par = static_cast<long>(n) * n / 2 > kParallelPairs;
  if (par) n_threads = omp_get_max_threads();
#endif
  std::vector<std::vector<double>> partial(n_threads, std::vector<double>(p, 0.0));
  ParallelPoll poll(monitor);
#pragma omp parallel num_threads(n_threads) if (n_threads > 1)
  {
    int tid = 0;
#ifdef _OPENMP
    tid = omp_get_thread_num();
#endif
    std::vector<double>& acc = partial[tid];
    std::vector<double> dk(p);
#pragma omp for schedule(static, 8)
    for (int j = 0; j < n; ++j) {
      if (poll.stop(tid == 0)) continue;
      // Diagonal pair counts once with weight 1/2, off-diagonal pairs twice.
      pair(xt.col(j).data(), xt.col(j).data(), dk.data());
      const double wjj = 0.5 * w(j, j);
      for (int t = 0; t < p; ++t) acc[t] += wjj * dk[t];
      for (int i = j + 1; i < n; ++i) {
        const double wij = w(i, j);
        if (wij == 0.0) continue;
        pair(xt.col(i).data(), xt.col(j).data(), dk.data());
        for (int t = 0; t < p; ++t) acc[t] += wij * dk[t];
      }
    }
  }
  poll.rethrow();
  VectorXd total = VectorXd::Zero(p);
  for (int t = 0; t < n_threads; ++t)
    for (int j = 0; j < p; ++j) total(j) += partial[t][j];
  if (type_ == KernelType::Mixed) total(2) += 0.5 * nugget_ * w.diagonal().sum();
  return total;
}

template <class Fill>
VectorXd Kernel::stationary_gradient(const MatrixXd& x, Monitor& monitor, Fill fill) const {
  // g = sum_{i>j} W_ij dK_ij + 1/2 sum_i W_ii dK_ii over column blocks J of
  // the lower triangle (rows j0..n-1). With B = W o w(r^2) and u = x / l:
  //   g_0 = sum W o K,  g_iso = sum B o r^2,
  //   g_m = sum_ij B_ij (u_im - u_jm)^2 = rowsum(B).u_m^2 + colsum(B).u_Jm^2 - 2 u_Jm.(B'u_m).
  // Partial sums are kept per block and added in block order, so the result
  // does not depend on the number of threads.
  const int n = static_cast<int>(x.rows()), p = n_par();
  const MatrixXd u = scaled(x);
  const VectorXd nu = u.rowwise().squaredNorm();
  const int nb = (n + kBlock - 1) / kBlock;
  MatrixXd partial = MatrixXd::Zero(p, nb);
  const bool par = static_cast<long>(n) * n / 2 > kParallelPairs;
  ParallelPoll poll(monitor);
#pragma omp parallel for schedule(dynamic, 1) if (par)
  for (int b = 0; b < nb; ++b) {
    if (poll.stop(main_thread())) continue;
    const int j0 = b * kBlock, bs = std::min(kBlock, n - j0), m = n - j0;
    const auto ui = u.middleRows(j0, m);
    const auto uj = u.middleRows(j0, bs);
    MatrixXd r2 = -2.0 * ui * uj.transpose();
    r2.colwise() += nu.segment(j0, m);
    r2.rowwise() += nu.segment(j0, bs).transpose();
    r2 = r2.cwiseMax(0.0);
    MatrixXd wb;
    fill(j0, bs, wb);
    // Keep the strict lower triangle, halve the diagonal, drop the rest of
    // the leading square (set, not multiplied: it may hold anything).
    for (int c = 0; c < bs; ++c) {
      for (int r = 0; r < c; ++r) wb(r, c) = 0.0;
      wb(c, c) *= 0.5;
      r2(c, c) = 0.0;
    }
    MatrixXd k, wk;
    stationary_values(r2, k, &wk);
    auto g = partial.col(b);
    g(0) = wb.cwiseProduct(k).sum();
    const MatrixXd bw = wb.cwiseProduct(wk);
    if (ard_) {
      const VectorXd row_sums = bw.rowwise().sum();
      const VectorXd col_sums = bw.colwise().sum().transpose();
      const MatrixXd btu = bw.transpose() * ui;  // bs x d
      for (int d = 0; d < dim_; ++d) {
        g(1 + d) = ui.col(d).cwiseAbs2().dot(row_sums) + uj.col(d).cwiseAbs2().dot(col_sums) -
                   2.0 * uj.col(d).dot(btu.col(d));
      }
    } else {
      g(1) = bw.cwiseProduct(r2).sum();
    }
  }
  poll.rethrow();
  VectorXd total = VectorXd::Zero(p);
  for (int b = 0; b < nb; ++b) total += partial.col(b);
  return total;
}

VectorXd Kernel::gradient(const MatrixXd& x, const VectorXd& a, const MatrixXd& m_lower,
                          Monitor& monitor) const {
  if (x.cols() != dim_) throw std::invalid_argument("kernel/data dimension mismatch");
  const int n = static_cast<int>(x.rows());
  if (a.size() != n || m_lower.rows() != n || m_lower.cols() != n) {
    throw std::invalid_argument("gradient: weight terms have the wrong size");
  }
  if (stationary()) {
    return stationary_gradient(x, monitor, [&](int j0, int bs, MatrixXd& wb) {
      wb.noalias() = a.tail(n - j0) * a.segment(j0, bs).transpose();
      wb -= m_lower.block(j0, j0, n - j0, bs);
    });
  }
  MatrixXd w(n, n);
  w = m_lower.selfadjointView<Eigen::Lower>();
  w *= -1.0;
  w.noalias() += a * a.transpose();
  return gradient(x, w, monitor);
}

}  // namespace noisylabels
