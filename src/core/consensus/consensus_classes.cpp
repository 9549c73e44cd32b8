// Dawid-Skene EM with annotator confusion matrices shrunk toward the crowd's
// and an optional tempered model prior (consensus.h has the model).
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "consensus/consensus.h"
#include "common/threads.h"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace noisylabels {

namespace {

using Eigen::MatrixXd;
using Eigen::VectorXd;

double log_sum_exp(const double* v, int n) {
  double m = -std::numeric_limits<double>::infinity();
  for (int k = 0; k < n; ++k) m = std::max(m, v[k]);
  if (!std::isfinite(m)) return m;
  double s = 0;
  for (int k = 0; k < n; ++k) s += std::exp(v[k] - m);
  return m + std::log(s);
}

// Labels grouped by annotator (the M-step of the confusion matrices runs
// annotator by annotator, with no shared accumulators).
struct AnnotatorIndex {
  std::vector<int> ptr, labels, item;
};

AnnotatorIndex annotator_index(const ConsensusData& d) {
  AnnotatorIndex ix;
  const int L = static_cast<int>(d.annotator.size());
  ix.item.resize(L);
  for (int i = 0; i < d.n_items; ++i)
    for (int q = d.item_ptr[i]; q < d.item_ptr[i + 1]; ++q) ix.item[q] = i;
  ix.ptr.assign(d.n_annotators + 1, 0);
  for (int q = 0; q < L; ++q) ++ix.ptr[d.annotator[q] + 1];
  for (int j = 0; j < d.n_annotators; ++j) ix.ptr[j + 1] += ix.ptr[j];
  ix.labels.resize(L);
  std::vector<int> next(ix.ptr.begin(), ix.ptr.end() - 1);
  for (int q = 0; q < L; ++q) ix.labels[next[d.annotator[q]]++] = q;
  return ix;
}

// Log prior of item i's classes into out[0..K-1].
void log_prior(const ConsensusClassFit& par, const MatrixXd& log_probs, int i, int K, double* out) {
  for (int k = 0; k < K; ++k) out[k] = par.prior_b[k];
  if (log_probs.size()) {
    for (int k = 0; k < K; ++k) out[k] += par.gamma * log_probs(k, i);
  }
  const double z = log_sum_exp(out, K);
  for (int k = 0; k < K; ++k) out[k] -= z;
}

// E-step: posterior of every item; returns the log marginal likelihood and
// the prior term (prior_count / N) sum_i sum_k log q_ik.
double e_step(const ConsensusData& d, const MatrixXd& log_probs, const ConsensusClassFit& par,
              const ConsensusOptions& opt, MatrixXd* posterior) {
  const int K = d.n_classes, N = d.n_items;
  const double c_item = opt.prior_count / std::max(1, N);
  double total = 0;
#pragma omp parallel for schedule(static) reduction(+ : total) num_threads(std::max(1, opt.threads))
  for (int i = 0; i < N; ++i) {
    std::vector<double> lp(K), acc(K);
    log_prior(par, log_probs, i, K, lp.data());
    double prior_term = 0;
    for (int k = 0; k < K; ++k) prior_term += lp[k];
    acc = lp;
    for (int q = d.item_ptr[i]; q < d.item_ptr[i + 1]; ++q) {
      const double* lc = &par.log_conf[(static_cast<size_t>(d.annotator[q]) * K + d.label[q]) * K];
      const double w = d.weight[q];
      for (int k = 0; k < K; ++k) acc[k] += w * lc[k];
    }
    const double z = log_sum_exp(acc.data(), K);
    if (posterior) {
      for (int k = 0; k < K; ++k) (*posterior)(k, i) = std::exp(acc[k] - z);
    }
    total += z + c_item * prior_term;
  }
  return total;
}

// -s sum KL(pi0_k || pi_jk) + smoothing sum log pi_jkl over all annotators.
double penalty(const ConsensusClassFit& par, const ConsensusOptions& opt, int J, int K) {
  const MatrixXd log_crowd = par.crowd.array().log().matrix();
  double total = 0;
  for (int j = 0; j < J; ++j)
    for (int l = 0; l < K; ++l)
      for (int k = 0; k < K; ++k) {
        const double lc = par.log_conf[(static_cast<size_t>(j) * K + l) * K + k];
        total += opt.smoothing * lc + opt.shrinkage * par.crowd(k, l) * (lc - log_crowd(k, l));
      }
  return total;
}

// Expected log prior sum_i sum_k t_ik log q_ik(b, gamma) with t = posterior
// + prior_count / N; with `grad`/`hess` its derivatives in theta =
// (b_1..b_{K-1}, gamma).
double prior_objective(const MatrixXd& post, const MatrixXd& log_probs, const VectorXd& b,
                       double gamma, double c_item, int threads, VectorXd* grad, MatrixXd* hess) {
  const int K = static_cast<int>(post.rows()), N = static_cast<int>(post.cols());
  const int P = K;  // K-1 intercepts + gamma
  double total = 0;
  VectorXd g = VectorXd::Zero(P);
  MatrixXd h = MatrixXd::Zero(P, P);
#pragma omp parallel num_threads(std::max(1, threads))
  {
    VectorXd gl = VectorXd::Zero(P), zbar(P);
    MatrixXd hl = MatrixXd::Zero(P, P);
    std::vector<double> lq(K);
    double tl = 0;
#pragma omp for schedule(static)
    for (int i = 0; i < N; ++i) {
      for (int k = 0; k < K; ++k) lq[k] = b[k] + gamma * log_probs(k, i);
      const double z = log_sum_exp(lq.data(), K);
      double mass = 0, ez = 0, ez2 = 0, tz = 0;
      for (int k = 0; k < K; ++k) {
        lq[k] -= z;
        const double t = post(k, i) + c_item;
        tl += t * lq[k];
        mass += t;
        const double q = std::exp(lq[k]), x = log_probs(k, i);
        ez += q * x;
        ez2 += q * x * x;
        tz += t * x;
        if (k > 0) gl[k - 1] += t;  // observed part; the expected part below
      }
      if (!grad) continue;
      // Gradient: sum_k (t_k - mass q_k) z_k with z_k = (e_k, x_k).
      for (int k = 1; k < K; ++k) gl[k - 1] -= mass * std::exp(lq[k]);
      gl[P - 1] += tz - mass * ez;
      // Hessian: -mass * Cov_q(z).
      for (int k = 1; k < K; ++k) zbar[k - 1] = std::exp(lq[k]);
      zbar[P - 1] = ez;
      for (int a = 1; a < K; ++a) {
        const double qa = std::exp(lq[a]), xa = log_probs(a, i);
        hl(a - 1, a - 1) -= mass * qa;
        hl(a - 1, P - 1) -= mass * qa * xa;
      }
      hl(P - 1, P - 1) -= mass * ez2;
      hl.noalias() += mass * zbar * zbar.transpose();
    }
#pragma omp critical
    {
      total += tl;
      g += gl;
      h += hl;
    }
  }
  if (grad) {
    // The (gamma, b) block was filled in the upper triangle only.
    for (int a = 0; a < P - 1; ++a) h(P - 1, a) = h(a, P - 1);
    *grad = g;
    *hess = h;
  }
  return total;
}

// M-step of the prior. Without a model: rho_k = (S_k + c) / (N + K c).
// With one: damped Newton on the concave expected log prior, each step
// halved until it improves (gamma kept >= 0; fixed when not fitted).
void update_prior(const MatrixXd& post, const MatrixXd& log_probs, const ConsensusOptions& opt,
                  ConsensusClassFit& par) {
  const int K = static_cast<int>(post.rows()), N = static_cast<int>(post.cols());
  const double c_item = opt.prior_count / std::max(1, N);
  if (!log_probs.size()) {
    VectorXd s = post.rowwise().sum().array() + opt.prior_count;
    VectorXd lr = (s / s.sum()).array().log();
    par.prior_b = lr.array() - lr[0];
    par.gamma = 0;
    return;
  }
  VectorXd g;
  MatrixXd h;
  for (int it = 0; it < 5; ++it) {
    double f0 = prior_objective(post, log_probs, par.prior_b, par.gamma, c_item, opt.threads, &g, &h);
    if (!opt.fit_tempering) {
      g[K - 1] = 0;
      h.row(K - 1).setZero();
      h.col(K - 1).setZero();
      h(K - 1, K - 1) = -1;
    }
    MatrixXd neg = -h;
    neg.diagonal().array() += 1e-9 * (1 + neg.diagonal().cwiseAbs().maxCoeff());
    VectorXd step = neg.ldlt().solve(g);
    if (!step.allFinite() || g.norm() < 1e-10 * (1 + std::abs(f0))) break;
    double t = 1;
    bool improved = false;
    for (int half = 0; half < 30; ++half, t *= 0.5) {
      VectorXd b = par.prior_b;
      for (int a = 1; a < K; ++a) b[a] += t * step[a - 1];
      const double gam = std::max(0.0, par.gamma + t * step[K - 1]);
      const double f1 = prior_objective(post, log_probs, b, gam, c_item, opt.threads, nullptr, nullptr);
      if (f1 >= f0) {
        improved = f1 > f0;
        par.prior_b = b;
        par.gamma = gam;
        break;
      }
    }
    if (!improved) break;
  }
}

// M-step of the confusion matrices given the crowd matrix, annotator by
// annotator: pi_j[k, ] proportional to counts + s pi0[k, ] + smoothing.
void update_confusions(const ConsensusData& d, const AnnotatorIndex& ix, const MatrixXd& post,
                       const ConsensusOptions& opt, ConsensusClassFit& par) {
  const int K = d.n_classes, J = d.n_annotators;
#pragma omp parallel for schedule(dynamic, 16) num_threads(std::max(1, opt.threads))
  for (int j = 0; j < J; ++j) {
    MatrixXd counts(K, K);  // (k, l)
    for (int k = 0; k < K; ++k)
      for (int l = 0; l < K; ++l) counts(k, l) = opt.shrinkage * par.crowd(k, l) + opt.smoothing;
    for (int r = ix.ptr[j]; r < ix.ptr[j + 1]; ++r) {
      const int q = ix.labels[r];
      counts.col(d.label[q]) += d.weight[q] * post.col(ix.item[q]);
    }
    for (int k = 0; k < K; ++k) {
      const double row = counts.row(k).sum();
      for (int l = 0; l < K; ++l)
        par.log_conf[(static_cast<size_t>(j) * K + l) * K + k] = std::log(counts(k, l) / row);
    }
  }
}

// pi0[k, ] proportional to exp(mean_j log pi_j[k, ]).
void update_crowd(const ConsensusData& d, ConsensusClassFit& par) {
  const int K = d.n_classes, J = d.n_annotators;
  MatrixXd mean_log = MatrixXd::Zero(K, K);
  for (int j = 0; j < J; ++j)
    for (int l = 0; l < K; ++l)
      for (int k = 0; k < K; ++k) mean_log(k, l) += par.log_conf[(static_cast<size_t>(j) * K + l) * K + k];
  mean_log /= J;
  for (int k = 0; k < K; ++k) {
    const double m = mean_log.row(k).maxCoeff();
    VectorXd e = (mean_log.row(k).array() - m).exp();
    par.crowd.row(k) = e / e.sum();
  }
}

void m_step(const ConsensusData& d, const AnnotatorIndex& ix, const MatrixXd& log_probs,
            const MatrixXd& post, const ConsensusOptions& opt, ConsensusClassFit& par,
            bool first) {
  update_prior(post, log_probs, opt, par);
  if (first) {
    // Start the crowd matrix at the pooled confusion of the starting posterior.
    MatrixXd pooled = MatrixXd::Constant(d.n_classes, d.n_classes, opt.smoothing + 1e-3);
    for (int i = 0; i < d.n_items; ++i)
      for (int q = d.item_ptr[i]; q < d.item_ptr[i + 1]; ++q)
        pooled.col(d.label[q]) += d.weight[q] * post.col(i);
    for (int k = 0; k < d.n_classes; ++k) par.crowd.row(k) = pooled.row(k) / pooled.row(k).sum();
  }
  update_confusions(d, ix, post, opt, par);
  update_crowd(d, par);
}

}  // namespace

void ConsensusData::validate(bool numeric) const {
  if (n_items < 1 || n_annotators < 1 || (!numeric && n_classes < 2))
    throw std::invalid_argument("consensus: need at least one item, one annotator and two classes");
  if (static_cast<int>(item_ptr.size()) != n_items + 1 || item_ptr[0] != 0)
    throw std::invalid_argument("consensus: item_ptr must have n_items + 1 offsets from 0");
  const size_t L = annotator.size();
  if (static_cast<size_t>(item_ptr[n_items]) != L || weight.size() != L ||
      (numeric ? value.size() != L : label.size() != L))
    throw std::invalid_argument("consensus: label arrays of different lengths");
  for (int i = 0; i < n_items; ++i)
    if (item_ptr[i + 1] < item_ptr[i]) throw std::invalid_argument("consensus: item_ptr decreases");
  for (size_t q = 0; q < L; ++q) {
    if (annotator[q] < 0 || annotator[q] >= n_annotators)
      throw std::invalid_argument("consensus: annotator code out of range");
    if (!numeric && (label[q] < 0 || label[q] >= n_classes))
      throw std::invalid_argument("consensus: class code out of range");
    if (!(weight[q] > 0) || !std::isfinite(weight[q]))
      throw std::invalid_argument("consensus: label weights must be positive");
    if (numeric && !std::isfinite(value[q]))
      throw std::invalid_argument("consensus: values must be finite");
  }
}

double consensus_class_objective(const ConsensusData& data, const MatrixXd& log_probs,
                                 const ConsensusClassFit& par, const ConsensusOptions& opt) {
  return e_step(data, log_probs, par, opt, nullptr) +
         penalty(par, opt, data.n_annotators, data.n_classes);
}

ConsensusClassFit consensus_classes(const ConsensusData& d, const MatrixXd& log_probs,
                                    const ConsensusOptions& opt, Monitor& monitor) {
  d.validate(false);
  const int K = d.n_classes, N = d.n_items, J = d.n_annotators;
  if (log_probs.size() && (log_probs.rows() != K || log_probs.cols() != N))
    throw std::invalid_argument("consensus: log_probs must be K x n_items");
  if (!(opt.shrinkage >= 0) || !(opt.smoothing > 0) || !(opt.prior_count >= 0))
    throw std::invalid_argument("consensus: shrinkage >= 0, smoothing > 0 and prior_count >= 0");
  const AnnotatorIndex ix = annotator_index(d);

  ConsensusClassFit par;
  par.log_conf.assign(static_cast<size_t>(J) * K * K, 0.0);
  par.crowd = MatrixXd::Constant(K, K, 1.0 / K);
  par.prior_b = VectorXd::Zero(K);
  par.gamma = log_probs.size() ? opt.gamma_init : 0.0;

  // Start: weighted vote shares (the model's probabilities for an item with
  // no labels).
  MatrixXd post = MatrixXd::Zero(K, N);
  for (int i = 0; i < N; ++i) {
    for (int q = d.item_ptr[i]; q < d.item_ptr[i + 1]; ++q) post(d.label[q], i) += d.weight[q];
    const double s = post.col(i).sum();
    if (s > 0) post.col(i) /= s;
    else if (log_probs.size()) post.col(i) = log_probs.col(i).array().exp() / log_probs.col(i).array().exp().sum();
    else post.col(i).setConstant(1.0 / K);
  }
  m_step(d, ix, log_probs, post, opt, par, true);

  double previous = -std::numeric_limits<double>::infinity();
  for (int it = 0; it < opt.max_iter; ++it) {
    monitor.check();
    const double obj = e_step(d, log_probs, par, opt, &post) + penalty(par, opt, J, K);
    if (!std::isfinite(obj)) throw std::runtime_error("consensus: the objective is not finite");
    par.objective.push_back(obj);
    par.iterations = it + 1;
    if (std::isfinite(previous) && std::abs(obj - previous) <= opt.tol * (1 + std::abs(obj))) {
      par.converged = true;
      break;
    }
    previous = obj;
    m_step(d, ix, log_probs, post, opt, par, false);
    monitor.progress(it + 1, opt.max_iter);
  }
  // The returned posterior belongs to the returned parameters.
  e_step(d, log_probs, par, opt, &post);
  par.posterior = post;
  return par;
}

}  // namespace noisylabels
