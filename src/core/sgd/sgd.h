// Linear classifiers trained by stochastic gradient descent with bounded robust
// losses (Han, Tsang & Chen, ECML-PKDD 2016, Algorithm 1), plus the baselines
// of the paper's experiments: hinge, logistic and ramp losses, averaged SGD
// (Xu 2011 / Bottou's svmasgd) and Pegasos (Shalev-Shwartz et al. 2007).
//
// Plain C++17, no R headers. Data are read row by row, either from a dense
// d x n column-major block (one column per example, i.e. the transpose of the
// user's n x d matrix) or from CSR arrays (row pointers, 0-based column
// indices, values). Every update costs O(nnz(x_i)): the L2 shrink is a scalar
// (w = a * v) and the epoch average of option B and ASGD is kept with a lazy
// correction (state.h).
//
// Files: loss.cpp (losses), data.cpp (input checks), rows.h (row kernels),
// state.h (learner state), shuffle.h, pass.h (epoch kernels), evaluate.h/.cpp,
// train.cpp (the driver), step_search.cpp (sgd_choose_eta), probes.cpp
// (benchmark floors).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/monitor.h"

namespace noisylabels {

enum class SgdLossType { Hinge, Logistic, Ramp, SmoothRamp, Gompertz };

// A margin loss r(z), z = y f(x), with its derivative r'(z) (seed eq. 4, 5;
// loss.cpp has the numerically stable forms).
struct SgdLoss {
  SgdLossType type = SgdLossType::SmoothRamp;
  double s = -1.0;      // ramp / smooth ramp: bound 1 - s
  double alpha = 2.0;   // smooth ramp steepness
  double beta = -0.03;  // smooth ramp shift
  double c = 2.0;       // reversed Gompertz steepness

  double value(double z) const;
  double deriv(double z) const;
  // Upper bound of r (infinity for hinge and logistic).
  double bound() const;
  // Margin at which the loss enters its flat (saturated) region: the point
  // where the tangent at the steepest point reaches the bound. Ramp: s;
  // smooth ramp: -beta - 2/alpha; Gompertz: -(e - 1)/c. Unbounded losses: 0.
  double flat_start() const;
};

SgdLossType sgd_loss_from_string(const std::string& name);

// Row-wise read-only view of the training data. Exactly one of the two
// layouts is set: dense (values of example i at dense + i*d) or CSR.
struct SgdData {
  int n = 0;
  int d = 0;
  const double* dense = nullptr;
  const int* row_ptr = nullptr;  // length n + 1
  const int* col_idx = nullptr;  // length nnz, 0-based, < d
  const double* values = nullptr;
  const double* y = nullptr;     // length n, entries -1 or +1 (binary fits)
  // Multiclass fits: 0-based class of every row (< n_classes); y is then unused.
  const int* label = nullptr;
  int n_classes = 2;
  // Optional per-row loss weights (>= 0, mean 1 after the R side's
  // normalisation): row i's loss term and step are multiplied by weight[i].
  const double* weight = nullptr;

  bool sparse() const { return dense == nullptr; }
  bool multiclass() const { return label != nullptr; }
  // Validates shapes and index ranges; throws std::invalid_argument.
  void validate() const;
};

enum class SgdMethod { Sgd, Asgd, Pegasos };
enum class SgdBias { None, Feature, Separate };

struct SgdOptions {
  SgdMethod method = SgdMethod::Sgd;
  SgdLoss loss;
  double lambda = 1e-4;
  double eta = 0.0;            // step (SGD) or eta0 (ASGD); ignored by Pegasos
  int epochs = 15;
  bool average = false;        // option B of Algorithm 1 (SGD only)
  SgdBias bias = SgdBias::Feature;
  double bias_step = 0.01;     // eta_b / eta for SgdBias::Separate (Bottou)
  int asgd_start_epochs = 1;   // ASGD averages from the end of this epoch on
  bool record_iterates = false;  // for tests: store w after every step (small n only)
  bool evaluate = true;        // per-epoch objective/error and final margins (off in benchmarks)
  // Multiclass (data.label set): false = one-vs-rest, one binary model per
  // class trained in one shared pass over the rows; true = multinomial
  // (softmax) logistic regression (logistic loss only).
  bool multinomial = false;
  // Step guard: an epoch whose objective exceeds the previous epoch's (or the
  // starting point's) by more than this fraction is undone, eta is halved and
  // the epoch is run again (at most guard_max_shrinks times per fit). 0 or
  // infinity switches the guard off; it needs evaluate = true.
  double guard = 0.25;
  int guard_max_shrinks = 20;
  // Starting point: empty = w = 0 (Algorithm 1). Otherwise (d entries, plus the
  // bias feature's weight when bias == Feature) per model, models one after
  // the other; b_init starts the separate biases (one per model, or empty).
  std::vector<double> w_init;
  std::vector<double> b_init;
  std::uint64_t seed = 1;
  // Step counter at the start (continued training: the ASGD and Pegasos
  // schedules go on from where the previous fit stopped).
  long long t_init = 0;
  // false: visit the rows in their stored order every epoch (no shuffle).
  bool shuffle = true;
  // Early stopping (needs validation data): stop when the validation error
  // has not improved for this many epochs and return the model of the epoch
  // with the lowest validation error. 0 = off.
  int early_stop_patience = 0;
  // L1 penalty lambda_l1 ||w||_1 added to the L2 term lambda/2 ||w||^2 (the
  // bias is never in the L1 term). It uses the cumulative penalty of
  // Tsuruoka, Tsujii and Ananiadou (2009), as scikit-learn's SGD does: O(nnz)
  // per step, exact zeros; every weight gets its outstanding penalty at the
  // end of each pass.
  double lambda_l1 = 0.0;
};

// One undone epoch of the step guard.
struct SgdShrink {
  int epoch = 0;             // the epoch that was run again
  double eta_from = 0.0;
  double eta_to = 0.0;
  double objective_rejected = 0.0;
  double objective_before = 0.0;
};

struct SgdResult {
  int n_models = 1;              // 1 (binary) or the number of classes
  std::vector<double> weights;   // d x n_models, column-major (the bias weight is separate)
  double bias = 0.0;             // binary fits
  std::vector<double> biases;    // one per model
  double objective_start = 0.0;  // objective at the starting point
  double eta_final = 0.0;        // eta after the step guard's halvings
  std::vector<SgdShrink> shrinks;
  std::vector<double> decision;  // multiclass: f_k(x_i), n x n_models column-major
  std::vector<double> objective; // primal objective after each epoch
  std::vector<double> train_error;
  std::vector<double> valid_error;  // empty when no validation data
  std::vector<double> margins;   // y_i f(x_i) of the final model (binary fits)
  std::vector<double> iterates;  // (row, w_t, b_t) per step, (dim + 2) x steps, if recorded
  int epochs_run = 0;
  long long t_final = 0;         // step counter at the end
  int best_epoch = 0;            // early stopping: the epoch returned
  bool stopped_early = false;
  long long renormalisations = 0;
  double seconds_train = 0.0;    // wall time of the epoch loops only
  double cpu_seconds_train = 0.0;  // process CPU time (std::clock) of the same sections
  double seconds_evaluate = 0.0;   // wall time of the per-epoch objective/error passes and final margins
  double cpu_seconds_evaluate = 0.0;
};

// Trains one model. `valid` may be null. Throws NumericalError-like
// std::runtime_error (message suggests a smaller eta) if the weights become
// non-finite, Interrupted if the monitor says so.
SgdResult sgd_train(const SgdData& train, const SgdData* valid, const SgdOptions& options,
                    Monitor& monitor);

// Bottou's determineEta0 search: starting from eta = 1,
// double or halve while the primal objective after one constant-step pass over
// a sample of at most `sample_size` rows improves. The result is capped so that
// eta * lambda < 1.
double sgd_choose_eta(const SgdData& train, const SgdOptions& options, int sample_size);

// Primal objective G(w) = lambda/2 ||w||^2 + mean r(y (w.x + b)) (the bias is
// included in the penalty when bias == Feature) and the 0-1 error.
struct SgdEval {
  double objective = 0.0;
  double error = 0.0;
};
SgdEval sgd_evaluate(const SgdData& data, const std::vector<double>& weights, double bias,
                     const SgdLoss& loss, double lambda, SgdBias bias_mode);

// Seconds for one sequential read of every array the epoch loop reads (dense
// values, or CSR values, indices and row pointers, plus the labels): the
// memory-streaming floor of an epoch. Best of `repeats`; `checksum` receives
// the sum so the reads cannot be optimised away.
double sgd_stream_seconds(const SgdData& data, int repeats, double* checksum);

// Seconds for the cheapest conceivable SGD epoch over these data: one pass in
// storage order that reads each example's non-zeros, forms the dot product
// with a weight vector and adds a multiple of the example back (dot + axpy),
// with no shuffle, loss, shrink or averaging. Best of `repeats`; `checksum`
// receives the sum of the final weights and `cpu_seconds`, if given, the best
// process CPU time (std::clock) of the same passes.
double sgd_floor_seconds(const SgdData& data, int repeats, double* checksum,
                         double* cpu_seconds = nullptr);

// Decision values f(x_i) = w.x_i + b for every row.
std::vector<double> sgd_decision(const SgdData& data, const std::vector<double>& weights,
                                 double bias);

}  // namespace noisylabels
