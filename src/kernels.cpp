#include "kernels.h"

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

MatrixXd Kernel::gram(const MatrixXd& x) const {
  if (x.cols() != dim_) throw std::invalid_argument("kernel/data dimension mismatch");
  if (stationary()) {
    // Vectorised path: r^2 by one GEMM, then k(r^2) elementwise.
    const MatrixXd u = scaled(x);
    MatrixXd k;
    stationary_values(squared_distances(u, u, true), k, nullptr);
    return k;
  }
  const int n = static_cast<int>(x.rows());
  const MatrixXd xt = x.transpose();
  MatrixXd k(n, n);
  const bool par = static_cast<long>(n) * n / 2 > kParallelPairs;
#pragma omp parallel for schedule(dynamic, 16) if (par)
  for (int j = 0; j < n; ++j) {
    for (int i = j; i < n; ++i) {
      const double v = pair(xt.col(i).data(), xt.col(j).data(), nullptr);
      k(i, j) = v;
      k(j, i) = v;
    }
  }
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

VectorXd Kernel::gradient(const MatrixXd& x, const MatrixXd& w) const {
  if (x.cols() != dim_) throw std::invalid_argument("kernel/data dimension mismatch");
  const int n = static_cast<int>(x.rows()), p = n_par();
  if (w.rows() != n || w.cols() != n) throw std::invalid_argument("gradient: weight matrix has the wrong size");
  if (stationary()) {
    // g_0 = 1/2 sum W o K; with B = W o w(r^2) and u = x / l:
    // g_m = 1/2 sum_kl B_kl (u_km - u_lm)^2 = sum_k u_km^2 (B 1)_k - u_m' B u_m.
    const MatrixXd u = scaled(x);
    const MatrixXd r2 = squared_distances(u, u, true);
    MatrixXd k, wk;
    stationary_values(r2, k, &wk);
    VectorXd g(p);
    g(0) = 0.5 * w.cwiseProduct(k).sum();
    const MatrixXd b = w.cwiseProduct(wk);
    if (ard_) {
      const VectorXd row_sums = b.rowwise().sum();
      const MatrixXd bu = b * u;
      for (int m = 0; m < dim_; ++m) {
        g(1 + m) = u.col(m).cwiseAbs2().dot(row_sums) - u.col(m).dot(bu.col(m));
      }
    } else {
      g(1) = 0.5 * b.cwiseProduct(r2).sum();
    }
    return g;
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
  VectorXd total = VectorXd::Zero(p);
  for (int t = 0; t < n_threads; ++t)
    for (int j = 0; j < p; ++j) total(j) += partial[t][j];
  if (type_ == KernelType::Mixed) total(2) += 0.5 * nugget_ * w.diagonal().sum();
  return total;
}

}  // namespace noisylabels
