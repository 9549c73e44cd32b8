// Numeric consensus: item values, annotator biases and noise scales under
// Student-t noise, by ECM (consensus.h has the model).
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "consensus/consensus.h"

namespace noisylabels {

namespace {

using Eigen::VectorXd;

struct NumericState {
  VectorXd mu, bias, var;  // var = sigma_j^2
  double var0 = 1;
};

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  const size_t h = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + h, v.end());
  double m = v[h];
  if (v.size() % 2 == 0) m = 0.5 * (m + *std::max_element(v.begin(), v.begin() + h));
  return m;
}

bool gaussian(const NumericOptions& opt) { return !std::isfinite(opt.df); }
bool bias_prior(const NumericOptions& opt) {
  return opt.bias_prior_sd > 0 && std::isfinite(opt.bias_prior_sd);
}

// Log density of a residual r at scale^2 var.
double log_noise(double r, double var, const NumericOptions& opt) {
  const double z2 = r * r / var;
  if (gaussian(opt)) return -0.5 * (std::log(2 * M_PI * var) + z2);
  const double nu = opt.df;
  return std::lgamma(0.5 * (nu + 1)) - std::lgamma(0.5 * nu) - 0.5 * std::log(nu * M_PI * var) -
         0.5 * (nu + 1) * std::log1p(z2 / nu);
}

// E-step weight of a residual (1 for Gaussian noise).
double t_weight(double r, double var, const NumericOptions& opt) {
  if (gaussian(opt)) return 1;
  return (opt.df + 1) / (opt.df + r * r / var);
}

double objective(const ConsensusData& d, const NumericState& st, const NumericOptions& opt) {
  double total = 0;
  for (int i = 0; i < d.n_items; ++i)
    for (int q = d.item_ptr[i]; q < d.item_ptr[i + 1]; ++q) {
      const int j = d.annotator[q];
      total += d.weight[q] * log_noise(d.value[q] - st.mu[i] - st.bias[j], st.var[j], opt);
    }
  const double a = opt.scale_shape, beta = a * st.var0;
  for (int j = 0; j < d.n_annotators; ++j) {
    total += a * std::log(beta) - std::lgamma(a) - (a + 1) * std::log(st.var[j]) - beta / st.var[j];
    if (bias_prior(opt)) total -= 0.5 * st.bias[j] * st.bias[j] / (opt.bias_prior_sd * opt.bias_prior_sd);
  }
  return total;
}

// Start: item medians, no bias. sigma0^2, the centre of the scales' prior,
// is the pooled variance of the labels around their item means, fixed for
// the fit: estimated jointly (its conditional maximiser is the harmonic
// mean of the scales) it follows the smallest scales to zero on coarse
// labels (many labels exactly at the consensus), and the fit degenerates.
NumericState start(const ConsensusData& d, double floor_var) {
  NumericState st;
  const int N = d.n_items, J = d.n_annotators;
  st.mu = VectorXd::Zero(N);
  st.bias = VectorXd::Zero(J);
  st.var = VectorXd::Zero(J);
  VectorXd ss = VectorXd::Zero(J), n = VectorXd::Zero(J);
  double ss_all = 0, n_all = 0;
  for (int i = 0; i < N; ++i) {
    std::vector<double> v(d.value.begin() + d.item_ptr[i], d.value.begin() + d.item_ptr[i + 1]);
    st.mu[i] = median(v);
    const int m = static_cast<int>(v.size());
    if (m < 2) continue;
    double mean = 0;
    for (double x : v) mean += x / m;
    for (int q = d.item_ptr[i]; q < d.item_ptr[i + 1]; ++q) {
      // m / (m - 1): the item mean is fitted from the same labels.
      const double r2 = (d.value[q] - mean) * (d.value[q] - mean) * m / (m - 1.0);
      ss[d.annotator[q]] += r2;
      n[d.annotator[q]] += 1;
      ss_all += r2;
      n_all += 1;
    }
  }
  st.var0 = std::max(n_all > 0 ? ss_all / n_all : 1.0, floor_var);
  for (int j = 0; j < J; ++j) st.var[j] = n[j] >= 3 ? std::max(ss[j] / n[j], floor_var) : st.var0;
  return st;
}

}  // namespace

ConsensusNumericFit consensus_numeric(const ConsensusData& d, const NumericOptions& opt,
                                      Monitor& monitor) {
  d.validate(true);
  if (!(opt.df > 0) || !(opt.scale_shape > 0))
    throw std::invalid_argument("consensus: df and scale_shape must be positive");
  const int N = d.n_items, J = d.n_annotators;
  const size_t L = d.value.size();
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (double v : d.value) { lo = std::min(lo, v); hi = std::max(hi, v); }
  // Scales are kept above a tiny fraction of the data's range so that
  // identical labels do not send the likelihood to infinity.
  const double floor_var = 1e-12 * std::max(1.0, (hi - lo) * (hi - lo));
  NumericState st = start(d, floor_var);
  std::vector<int> item_of(L);
  for (int i = 0; i < N; ++i)
    for (int q = d.item_ptr[i]; q < d.item_ptr[i + 1]; ++q) item_of[q] = i;

  ConsensusNumericFit fit;
  std::vector<double> w(L);
  double previous = -std::numeric_limits<double>::infinity();
  const double tau2 = bias_prior(opt) ? opt.bias_prior_sd * opt.bias_prior_sd : 0;
  for (int it = 0; it < opt.max_iter; ++it) {
    monitor.check();
    const double obj = objective(d, st, opt);
    if (!std::isfinite(obj)) throw std::runtime_error("consensus: the objective is not finite");
    fit.objective.push_back(obj);
    fit.iterations = it + 1;
    if (std::isfinite(previous) && std::abs(obj - previous) <= opt.tol * (1 + std::abs(obj))) {
      fit.converged = true;
      break;
    }
    previous = obj;
    // E-step: t weights at the current residuals.
    for (size_t q = 0; q < L; ++q) {
      const int j = d.annotator[q];
      w[q] = d.weight[q] * t_weight(d.value[q] - st.mu[item_of[q]] - st.bias[j], st.var[j], opt);
    }
    // Item values.
    for (int i = 0; i < N; ++i) {
      double num = 0, den = 0;
      for (int q = d.item_ptr[i]; q < d.item_ptr[i + 1]; ++q) {
        const int j = d.annotator[q];
        num += w[q] * (d.value[q] - st.bias[j]) / st.var[j];
        den += w[q] / st.var[j];
      }
      if (den > 0) st.mu[i] = num / den;
    }
    // Biases, then centred: (mu + c, bias - c) has the same likelihood and
    // c = mean(bias) minimises the bias prior.
    if (opt.bias) {
      VectorXd num = VectorXd::Zero(J), den = VectorXd::Zero(J);
      for (size_t q = 0; q < L; ++q) {
        const int j = d.annotator[q];
        num[j] += w[q] * (d.value[q] - st.mu[item_of[q]]) / st.var[j];
        den[j] += w[q] / st.var[j];
      }
      for (int j = 0; j < J; ++j)
        st.bias[j] = den[j] > 0 ? num[j] / (den[j] + (tau2 > 0 ? 1 / tau2 : 0)) : 0;
      const double c = st.bias.mean();
      st.bias.array() -= c;
      st.mu.array() += c;
    }
    // Scales: the inverse-gamma posterior mode given the weights.
    {
      VectorXd ss = VectorXd::Zero(J), n = VectorXd::Zero(J);
      for (size_t q = 0; q < L; ++q) {
        const int j = d.annotator[q];
        const double r = d.value[q] - st.mu[item_of[q]] - st.bias[j];
        ss[j] += w[q] * r * r;
        n[j] += d.weight[q];
      }
      const double a = opt.scale_shape, beta = a * st.var0;
      for (int j = 0; j < J; ++j)
        st.var[j] = std::max((ss[j] + 2 * beta) / (n[j] + 2 * a + 2), floor_var);
    }
    monitor.progress(it + 1, opt.max_iter);
  }

  const double fisher = gaussian(opt) ? 1.0 : (opt.df + 1) / (opt.df + 3);
  fit.mu = st.mu;
  fit.mu_se = VectorXd::Zero(N);
  fit.residual = VectorXd::Zero(static_cast<int>(L));
  fit.weight = VectorXd::Zero(static_cast<int>(L));
  for (int i = 0; i < N; ++i) {
    double info = 0;
    for (int q = d.item_ptr[i]; q < d.item_ptr[i + 1]; ++q) {
      const int j = d.annotator[q];
      info += d.weight[q] * fisher / st.var[j];
      const double r = d.value[q] - st.mu[i] - st.bias[j];
      fit.residual[q] = r / std::sqrt(st.var[j]);
      fit.weight[q] = t_weight(r, st.var[j], opt);
    }
    fit.mu_se[i] = info > 0 ? 1 / std::sqrt(info) : std::numeric_limits<double>::infinity();
  }
  fit.bias = st.bias;
  fit.scale = st.var.cwiseSqrt();
  fit.scale0 = std::sqrt(st.var0);
  return fit;
}

}  // namespace noisylabels
