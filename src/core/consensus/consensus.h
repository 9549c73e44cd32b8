// Consensus labels from several annotators per item.
//
// Classes (consensus_classes.cpp): a Dawid-Skene model (Dawid and Skene
// 1979) fitted by EM. Annotator j gives label l to an item of true class k
// with probability pi_j[k, l]. Each annotator's rows are shrunk toward a
// shared crowd matrix pi0 by a penalty -s * sum_k KL(pi0[k, ] || pi_j[k, ]),
// the log density of a Dirichlet(s pi0[k, ]) prior up to the terms that do
// not involve pi_j, plus a small symmetric pseudo-count `smoothing` on every
// cell. Both blocks have closed forms: pi_j[k, ] is proportional to
// counts + s pi0[k, ] + smoothing, and pi0[k, ] to exp of the mean over
// annotators of log pi_j[k, ] (the Gibbs maximiser of the penalty). So each
// EM step raises one objective (log marginal likelihood + penalties), which
// the fit records.
//
// The class prior of item i is softmax(b + gamma * log p_i), p_i a model's
// predicted probabilities (gamma = 0 and no model: one prior rho for all
// items). gamma >= 0 is the model's learned tempering exponent: its weight as
// evidence next to the annotators (0 = ignored, 1 = taken as calibrated).
// (b, gamma) maximise the expected log prior, a concave multinomial-logistic
// problem solved by damped Newton steps that are kept only if they improve.
//
// Numbers (consensus_numeric.cpp): y_l = mu_i + bias_j + sigma_j e_l with e
// Student-t with `df` degrees of freedom (df = Inf: Gaussian), an
// inverse-gamma(a, a sigma0^2) prior on sigma_j^2 shrinking the scales
// toward sigma0 (the pooled spread of the labels around their item means)
// and optionally a N(0, tau^2) prior on the biases.
// ECM (Meng and Rubin 1993): the t weights, then mu, bias and scales in
// turn, each a closed-form conditional maximiser; the biases are
// centred (mean zero over annotators), which leaves the likelihood unchanged.
//
// Input is long and sparse: labels sorted by item (item_ptr, CSR), each with
// an annotator, a class (or value) and a weight (the count of identical
// labels). One EM iteration costs O(labels x K).
#pragma once

#include <Eigen/Dense>
#include <vector>

#include "common/monitor.h"

namespace noisylabels {

struct ConsensusData {
  int n_items = 0, n_annotators = 0, n_classes = 0;
  std::vector<int> item_ptr;    // n_items + 1 offsets, labels sorted by item
  std::vector<int> annotator;   // per label, 0-based
  std::vector<int> label;       // per label, class 0..K-1 (classes only)
  std::vector<double> weight;   // per label, > 0
  std::vector<double> value;    // per label (numbers only)
  // Throws std::invalid_argument on inconsistent sizes or out-of-range codes.
  void validate(bool numeric) const;
};

struct ConsensusOptions {
  double shrinkage = 10;     // s: prior weight of the crowd matrix, in labels per row
  double smoothing = 0.01;   // pseudo-count on every confusion cell
  double prior_count = 1;    // pseudo-count on the class prior
  bool fit_tempering = true; // learn gamma (else keep gamma_init)
  double gamma_init = 1;
  int max_iter = 500;
  double tol = 1e-8;         // relative change of the objective
  int threads = 1;
};

struct ConsensusClassFit {
  Eigen::MatrixXd posterior;   // K x N, column i = P(true class of item i)
  std::vector<double> log_conf;  // J*K*K, log pi_j[k, l] at ((j*K + l)*K + k)
  Eigen::MatrixXd crowd;       // K x K pi0 (rows: true class)
  Eigen::VectorXd prior_b;     // K intercepts (b[0] = 0)
  double gamma = 0;
  std::vector<double> objective;  // one value per iteration, before its M-step
  int iterations = 0;
  bool converged = false;
};

// `log_probs`: K x N log model probabilities (floored), or empty for none.
ConsensusClassFit consensus_classes(const ConsensusData& data, const Eigen::MatrixXd& log_probs,
                                    const ConsensusOptions& opt, Monitor& monitor);

// The objective of the class model at given parameters (tests, traces).
double consensus_class_objective(const ConsensusData& data, const Eigen::MatrixXd& log_probs,
                                 const ConsensusClassFit& par, const ConsensusOptions& opt);

struct NumericOptions {
  double df = 4;                // Student-t degrees of freedom (inf: Gaussian)
  double scale_shape = 2;       // a of the inverse-gamma prior on sigma_j^2
  double bias_prior_sd = 0;     // tau; <= 0 or inf: no prior (biases only centred)
  bool bias = true;             // false: all biases 0
  int max_iter = 500;
  double tol = 1e-9;
};

struct ConsensusNumericFit {
  Eigen::VectorXd mu;        // N consensus values
  Eigen::VectorXd mu_se;     // N standard errors (inverse Fisher information)
  Eigen::VectorXd bias;      // J
  Eigen::VectorXd scale;     // J, sigma_j
  double scale0 = 1;         // sigma0
  Eigen::VectorXd residual;  // per label, (y - mu - bias) / sigma
  Eigen::VectorXd weight;    // per label, last t weight
  std::vector<double> objective;
  int iterations = 0;
  bool converged = false;
};

ConsensusNumericFit consensus_numeric(const ConsensusData& data, const NumericOptions& opt,
                                      Monitor& monitor);

}  // namespace noisylabels
