// The training driver of sgd_train() (sgd.h): the epoch loop with its step
// guard, per-epoch models (last iterate, epoch average, running average),
// early stopping and the final models, as named steps of one Trainer.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <ctime>
#include <limits>
#include <random>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "sgd/evaluate.h"
#include "sgd/pass.h"
#include "sgd/rows.h"
#include "sgd/sgd.h"
#include "sgd/shuffle.h"
#include "sgd/state.h"

namespace noisylabels {
namespace {

[[noreturn]] void throw_diverged(const SgdOptions& opt, int epoch) {
  std::ostringstream msg;
  msg << "SGD diverged in epoch " << epoch << ": the weights are no longer finite. ";
  if (opt.method == SgdMethod::Pegasos) {
    msg << "Pegasos uses eta = 1/(lambda t); try a larger lambda (was " << opt.lambda << ").";
  } else {
    msg << "Use a smaller eta (this run used eta = " << opt.eta << ").";
  }
  throw std::runtime_error(msg.str());
}

// Wall and process CPU time summed over the sections it timed.
struct Stopwatch {
  double seconds = 0.0;
  std::clock_t ticks = 0;
  std::chrono::steady_clock::time_point t0;
  std::clock_t c0 = 0;
  void start() {
    t0 = std::chrono::steady_clock::now();
    c0 = std::clock();
  }
  void stop() {
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ticks += std::clock() - c0;
  }
  double cpu_seconds() const { return static_cast<double>(ticks) / CLOCKS_PER_SEC; }
};

template <bool Sparse>
class Trainer {
 public:
  Trainer(const SgdData& train, const SgdData* valid, const SgdOptions& opt_in, Monitor& monitor)
      : opt_(opt_in), train_(train), valid_(valid), monitor_(monitor), rows_(train), n_(train.n),
        d_(train.d), dim_(train.d + (opt_in.bias == SgdBias::Feature ? 1 : 0)),
        multi_(train.multiclass()), K_(multi_ ? train.n_classes : 1), rng_(opt_in.seed),
        option_b_(opt_in.method == SgdMethod::Sgd && opt_in.average),
        asgd_(opt_in.method == SgdMethod::Asgd),
        guard_on_(opt_in.evaluate && opt_in.guard > 0.0 && std::isfinite(opt_in.guard) &&
                  opt_in.method != SgdMethod::Pegasos),
        early_stop_(opt_in.early_stop_patience > 0 && valid != nullptr && opt_in.evaluate) {}

  SgdResult run() {
    make_ovr_labels();
    init_states();
    allocate_buffers();
    evaluate_start();
    int epoch = 1;
    while (epoch <= opt_.epochs) {
      monitor_.check();
      epoch_timer_.start();
      begin_epoch(epoch);
      run_epoch_pass();
      if (opt_.lambda_l1 > 0.0) settle_l1();
      const bool finite = epoch_models();
      epoch_timer_.stop();

      const bool can_undo =
          guard_on_ && static_cast<int>(res_.shrinks.size()) < opt_.guard_max_shrinks;
      if (!finite && !can_undo) throw_diverged(opt_, epoch);
      if (!opt_.evaluate) {
        res_.epochs_run = epoch;
        ++epoch;
        continue;
      }
      const SgdEval ev = evaluate_epoch(finite);
      if (!std::isfinite(ev.objective) && !can_undo) throw_diverged(opt_, epoch);
      if (can_undo && guard_rejects(ev.objective)) {
        undo_epoch(epoch, ev.objective);
        continue;
      }
      record_epoch(ev);
      res_.epochs_run = epoch;
      monitor_.progress(epoch, opt_.epochs);
      ++epoch;
      if (early_stop_ && stop_early(epoch)) break;
    }
    final_models();
    if (opt_.evaluate) final_decision();
    res_.seconds_evaluate = eval_timer_.seconds;
    res_.cpu_seconds_evaluate = eval_timer_.cpu_seconds();
    res_.seconds_train = epoch_timer_.seconds;
    res_.cpu_seconds_train = epoch_timer_.cpu_seconds();
    return res_;
  }

 private:
  static constexpr int kReserveEpochs = 1024;
  std::size_t reserve_epochs() const {
    return static_cast<std::size_t>(std::min(opt_.epochs, kReserveEpochs));
  }
  // One-vs-rest labels: block k is +1 for class k and -1 for the rest.
  void make_ovr_labels() {
    if (!multi_ || opt_.multinomial) return;
    y_ovr_.resize(static_cast<std::size_t>(K_) * n_);
    for (int k = 0; k < K_; ++k)
      for (int i = 0; i < n_; ++i)
        y_ovr_[static_cast<std::size_t>(k) * n_ + i] = train_.label[i] == k ? 1.0 : -1.0;
  }

  // Zero states, or the starting point of w_init / b_init, and the step counter.
  void init_states() {
    st_.resize(K_);
    for (State& s : st_) {
      s.allocate(dim_);
      if (opt_.lambda_l1 > 0.0 && (opt_.average || asgd_)) s.l1_nz.assign(d_, 0);
    }
    if (!opt_.w_init.empty()) {
      if (opt_.w_init.size() != static_cast<std::size_t>(dim_) * K_)
        throw std::invalid_argument("the starting weights must have one entry per feature (and bias feature) and model");
      for (int k = 0; k < K_; ++k)
        std::copy(opt_.w_init.begin() + static_cast<std::ptrdiff_t>(k) * dim_,
                  opt_.w_init.begin() + static_cast<std::ptrdiff_t>(k + 1) * dim_, st_[k].v.begin());
    }
    if (opt_.bias == SgdBias::Separate && !opt_.b_init.empty()) {
      if (static_cast<int>(opt_.b_init.size()) != K_)
        throw std::invalid_argument("the starting biases must have one entry per model");
      for (int k = 0; k < K_; ++k) st_[k].b = opt_.b_init[k];
    }
    for (State& s : st_) s.t = opt_.t_init;
  }

  // Everything the epoch loop touches is allocated here.
  void allocate_buffers() {
    avg_.assign(K_, std::vector<double>(dim_, 0.0));
    perm_.resize(n_);
    for (int i = 0; i < n_; ++i) perm_[i] = i;
    perm_next_.resize(n_);
    if (opt_.method == SgdMethod::Pegasos) {
      xnorm2_.resize(n_);
      for (int i = 0; i < n_; ++i)
        xnorm2_[i] = rows_.sqnorm(i) + (opt_.bias == SgdBias::Feature ? 1.0 : 0.0);
    }
    res_.n_models = K_;
    if (opt_.record_iterates) {
      if (multi_) throw std::invalid_argument("record_iterates is for binary fits only");
      // Reserved for at most kReserveEpochs epochs: the traces grow past
      // that as epochs are run, so a huge `epochs` allocates nothing up front.
      res_.iterates.reserve(static_cast<std::size_t>(dim_ + 2) * n_ * reserve_epochs());
      iterates_ = &res_.iterates;
    }
    res_.objective.reserve(reserve_epochs());
    res_.train_error.reserve(reserve_epochs());
    if (valid_ != nullptr) res_.valid_error.reserve(reserve_epochs());
    scratch_.resize(K_);
    models_.resize(K_);
  }

  SgdEval evaluate_models(const SgdData& data, bool with_loss) {
    if (!multi_) return evaluate_state(data, *models_[0].v, models_[0].a, models_[0].b, opt_, with_loss);
    return data.sparse() ? evaluate_multi<true>(data, models_, opt_, with_loss, nullptr)
                         : evaluate_multi<false>(data, models_, opt_, with_loss, nullptr);
  }

  // Objective at the starting point: the reference of the first epoch (for
  // the convergence test and the step guard).
  void evaluate_start() {
    if (!opt_.evaluate) return;
    eval_timer_.start();
    for (int k = 0; k < K_; ++k) models_[k] = ModelView{&st_[k].v, st_[k].a, st_[k].b};
    obj_prev_ = evaluate_models(train_, true).objective;
    res_.objective_start = obj_prev_;
    eval_timer_.stop();
  }

  // Saves the state for the step guard, sets this epoch's visiting order and
  // starts the states' averages.
  void begin_epoch(int epoch) {
    if (guard_on_) {
      saved_ = st_;
      saved_iterates_ = res_.iterates.size();
    }
    // The first pass shuffles up front; later passes' orders were drawn
    // during the previous pass (PendingShuffle), with the same draws in the
    // same order. Without shuffling: the stored order every epoch.
    if (opt_.shuffle) {
      if (first_pass_) {
        shuffle(perm_, rng_);
        first_pass_ = false;
      } else {
        pending_.finish();
        perm_.swap(perm_next_);
      }
    }
    for (State& s : st_) {
      if (opt_.method == SgdMethod::Pegasos) {
        // Recompute ||v||^2 once per epoch so rounding in its running update cannot drift.
        s.vnorm2 = 0.0;
        for (double vj : s.v) s.vnorm2 += vj * vj;
      }
      if (option_b_ || (asgd_ && epoch == opt_.asgd_start_epochs + 1)) {
        s.averaging = true;
        s.reset_average();
      }
    }
    if (opt_.shuffle) pending_.start(perm_next_, perm_, rng_);
  }

  void run_epoch_pass() {
    PendingShuffle* pend = opt_.shuffle ? &pending_ : nullptr;
    if (!multi_) {
      run_pass<Sparse>(rows_, perm_.data(), n_, opt_, xnorm2_, st_[0], iterates_, pend, train_.y,
                       train_.weight);
    } else if (opt_.multinomial) {
      run_pass_multinomial<Sparse>(rows_, perm_.data(), n_, opt_, st_, train_.label, train_.weight,
                                   pend, scratch_);
    } else {
      run_pass_ovr<Sparse>(rows_, perm_.data(), n_, opt_, xnorm2_, st_, y_ovr_.data(), n_,
                           train_.weight, pend);
    }
  }

  // Every weight gets its outstanding L1 penalty at the end of the pass
  // (weights of rows not visited lately have not been clipped yet).
  void settle_l1() {
    for (State& s : st_)
      for (int j = 0; j < d_; ++j) s.l1_clip(j);
  }

  // The model reported for this epoch: last iterate (option A, Pegasos),
  // epoch average (option B, which also restarts the next epoch from it),
  // running average (ASGD). Returns whether every model is finite.
  bool epoch_models() {
    bool finite = true;
    for (int k = 0; k < K_; ++k) {
      State& s = st_[k];
      models_[k] = ModelView{&s.v, s.a, s.b};
      if (option_b_) {
        s.b = s.average_into(avg_[k]);
        s.v.swap(avg_[k]);
        s.a = 1.0;
        s.averaging = false;
        if (opt_.lambda_l1 > 0.0) {
          // One proximal L1 step on the epoch average (soft threshold by
          // eta lambda_l1): a weight the iterates held at 0 for most of the
          // epoch averages to a small value that would otherwise only decay
          // geometrically over the epochs, never reaching 0.
          const double thr = opt_.eta * opt_.lambda_l1;
          for (int j = 0; j < d_; ++j) {
            const double w = s.v[j];
            s.v[j] = w > thr ? w - thr : (w < -thr ? w + thr : 0.0);
          }
        }
        models_[k] = ModelView{&s.v, 1.0, s.b};
      } else if (asgd_ && s.averaging && s.count > 0) {
        const double bb = s.average_into(avg_[k]);
        models_[k] = ModelView{&avg_[k], 1.0, bb};
      }
      finite = finite && std::isfinite(s.a) && std::isfinite(s.b) && all_finite(s.v) &&
               std::isfinite(models_[k].b) && all_finite(*models_[k].v);
    }
    return finite;
  }

  SgdEval evaluate_epoch(bool finite) {
    eval_timer_.start();
    SgdEval ev;
    ev.objective = std::numeric_limits<double>::infinity();
    if (finite) ev = evaluate_models(train_, true);
    eval_timer_.stop();
    return ev;
  }

  // Step guard: a much worse objective than at the end of the last epoch
  // means the constant step overshot.
  bool guard_rejects(double objective) const {
    return !std::isfinite(objective) ||
           objective > obj_prev_ + opt_.guard * std::max(std::fabs(obj_prev_), 1e-12);
  }

  // Undoes the epoch and halves the step; the loop then runs it again.
  void undo_epoch(int epoch, double objective) {
    SgdShrink sh;
    sh.epoch = epoch;
    sh.eta_from = opt_.eta;
    sh.eta_to = opt_.eta * 0.5;
    sh.objective_rejected = objective;
    sh.objective_before = obj_prev_;
    res_.shrinks.push_back(sh);
    st_ = saved_;
    if (iterates_ != nullptr) iterates_->resize(saved_iterates_);
    opt_.eta *= 0.5;
  }

  void record_epoch(const SgdEval& ev) {
    res_.objective.push_back(ev.objective);
    res_.train_error.push_back(ev.error);
    if (valid_ != nullptr) {
      eval_timer_.start();
      res_.valid_error.push_back(evaluate_models(*valid_, false).error);
      eval_timer_.stop();
    }
    obj_prev_ = ev.objective;
  }

  // Early stopping after the epoch before `next_epoch`: keeps the best model
  // so far and says whether patience has run out.
  bool stop_early(int next_epoch) {
    const double err = res_.valid_error.back();
    if (err < best_error_) {
      best_error_ = err;
      res_.best_epoch = next_epoch - 1;
      since_best_ = 0;
      snapshot(best_weights_, best_biases_);
      return false;
    }
    if (++since_best_ >= opt_.early_stop_patience) {
      res_.stopped_early = next_epoch <= opt_.epochs;
      return true;
    }
    return false;
  }

  // The current epoch's models in their final form (weights d x K, biases K).
  void snapshot(std::vector<double>& w_out, std::vector<double>& b_out) const {
    w_out.assign(static_cast<std::size_t>(d_) * K_, 0.0);
    b_out.assign(K_, 0.0);
    for (int k = 0; k < K_; ++k) {
      const std::vector<double>& v = *models_[k].v;
      for (int j = 0; j < d_; ++j) w_out[static_cast<std::size_t>(k) * d_ + j] = models_[k].a * v[j];
      b_out[k] = models_[k].b + (opt_.bias == SgdBias::Feature ? models_[k].a * v[d_] : 0.0);
    }
  }

  void final_models() {
    res_.weights.assign(static_cast<std::size_t>(d_) * K_, 0.0);
    res_.biases.assign(K_, 0.0);
    for (int k = 0; k < K_; ++k) {
      const std::vector<double>* model = &st_[k].v;
      double model_a = st_[k].a;
      double b = st_[k].b;
      if (asgd_ && st_[k].averaging && st_[k].count > 0) {
        b = st_[k].average_into(avg_[k]);
        model = &avg_[k];
        model_a = 1.0;
      }
      for (int j = 0; j < d_; ++j)
        res_.weights[static_cast<std::size_t>(k) * d_ + j] = model_a * (*model)[j];
      if (opt_.bias == SgdBias::Feature) b += model_a * (*model)[d_];
      res_.biases[k] = b;
      res_.renormalisations += st_[k].renorms;
    }
    if (early_stop_ && !best_weights_.empty()) {
      res_.weights = best_weights_;
      res_.biases = best_biases_;
    }
    res_.bias = res_.biases[0];
    res_.eta_final = opt_.eta;
    res_.t_final = st_[0].t;
  }

  // Margins y f(x) (binary) or decision values (multiclass) of the training rows.
  void final_decision() {
    eval_timer_.start();
    if (!multi_) {
      res_.margins = sgd_decision(train_, res_.weights, res_.bias);
      for (int i = 0; i < n_; ++i) res_.margins[i] *= train_.y[i];
    } else {
      res_.decision.resize(static_cast<std::size_t>(n_) * K_);
      std::vector<double> wk(d_);
      for (int k = 0; k < K_; ++k) {
        std::copy(res_.weights.begin() + static_cast<std::ptrdiff_t>(k) * d_,
                  res_.weights.begin() + static_cast<std::ptrdiff_t>(k + 1) * d_, wk.begin());
        const std::vector<double> fk = sgd_decision(train_, wk, res_.biases[k]);
        std::copy(fk.begin(), fk.end(), res_.decision.begin() + static_cast<std::ptrdiff_t>(k) * n_);
      }
    }
    eval_timer_.stop();
  }

  SgdOptions opt_;  // the step guard may halve eta
  const SgdData& train_;
  const SgdData* valid_;
  Monitor& monitor_;
  Rows<Sparse> rows_;
  const int n_, d_, dim_;
  const bool multi_;
  const int K_;
  std::mt19937_64 rng_;
  const bool option_b_, asgd_, guard_on_, early_stop_;

  std::vector<double> y_ovr_;
  std::vector<State> st_, saved_;
  std::vector<std::vector<double>> avg_;
  std::vector<int> perm_, perm_next_;
  PendingShuffle pending_;
  bool first_pass_ = true;
  std::vector<double> xnorm2_, scratch_;
  std::vector<ModelView> models_;
  std::vector<double>* iterates_ = nullptr;
  std::size_t saved_iterates_ = 0;
  double obj_prev_ = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> best_weights_, best_biases_;
  double best_error_ = std::numeric_limits<double>::infinity();
  int since_best_ = 0;
  Stopwatch epoch_timer_, eval_timer_;
  SgdResult res_;
};

void check_options(const SgdOptions& opt) {
  if (!(opt.lambda >= 0.0) || !std::isfinite(opt.lambda))
    throw std::invalid_argument("lambda must be finite and >= 0");
  if (opt.method == SgdMethod::Pegasos) {
    if (!(opt.lambda > 0.0)) throw std::invalid_argument("Pegasos needs lambda > 0");
  } else {
    if (!(opt.eta > 0.0) || !std::isfinite(opt.eta))
      throw std::invalid_argument("eta must be finite and > 0");
    if (opt.eta * opt.lambda >= 1.0)
      throw std::invalid_argument("eta * lambda must be < 1 (the shrink step would wipe out w)");
  }
  if (opt.epochs < 1) throw std::invalid_argument("epochs must be >= 1");
  if (opt.multinomial && opt.loss.type != SgdLossType::Logistic)
    throw std::invalid_argument("the multinomial model needs the logistic loss");
  if (!(opt.lambda_l1 >= 0.0) || !std::isfinite(opt.lambda_l1))
    throw std::invalid_argument("lambda_l1 must be finite and >= 0");
  if (opt.lambda_l1 > 0.0 && opt.method == SgdMethod::Pegasos)
    throw std::invalid_argument("Pegasos has no L1 penalty");
  if (opt.multinomial && opt.method == SgdMethod::Pegasos)
    throw std::invalid_argument("Pegasos has no multinomial form");
}

}  // namespace

SgdResult sgd_train(const SgdData& train, const SgdData* valid, const SgdOptions& options,
                    Monitor& monitor) {
  train.validate();
  if (valid != nullptr) {
    valid->validate();
    if (valid->d != train.d) throw std::invalid_argument("validation data have a different number of columns");
    if (valid->multiclass() != train.multiclass() ||
        (train.multiclass() && valid->n_classes != train.n_classes))
      throw std::invalid_argument("validation labels are not coded like the training labels");
  }
  check_options(options);
  return train.sparse() ? Trainer<true>(train, valid, options, monitor).run()
                        : Trainer<false>(train, valid, options, monitor).run();
}


}  // namespace noisylabels
