// Progress and interrupt interface between the C++ core and its host.
// The core never calls R; the glue (rcpp_*.cpp) supplies a Monitor that polls
// R's interrupt flag and drives a progress display. Core loops call
// `monitor.check()` once per sweep/epoch/iteration and `monitor.progress()`
// where they know how far they are.
//
// Threads: a host may only be called from the thread that created it (R is
// single-threaded). Monitors implement that themselves (RMonitor ignores
// calls from other threads), so core code inside an OpenMP region may call
// check()/progress() but must not rely on them there.
#pragma once

#include <atomic>
#include <stdexcept>
#include <string>

namespace noisylabels {

// Thrown by Monitor::check() when the user interrupted; the glue turns it into
// an R interrupt condition.
struct Interrupted : public std::runtime_error {
  Interrupted() : std::runtime_error("interrupted by the user") {}
};

class Monitor {
 public:
  virtual ~Monitor() = default;
  // True if the host asked to stop.
  virtual bool interrupted() { return false; }
  // Called with (step, total): `step` units of `total` are done; total <= 0 if
  // unknown. Steps may stop short of total (early convergence); the host
  // closes its display when the fit returns.
  virtual void progress(int /*step*/, int /*total*/) {}
  void check() {
    if (interrupted()) throw Interrupted();
  }
};

// Polling from inside an OpenMP region, where check() must not throw (an
// exception may not leave the region): the main thread asks the host, every
// thread reads the shared answer and skips its remaining iterations, and
// rethrow() after the region throws Interrupted.
//   ParallelPoll poll(monitor);
//   #pragma omp parallel for
//   for (...) { if (poll.stop(thread_id() == 0)) continue; ... }
//   poll.rethrow();
class ParallelPoll {
 public:
  explicit ParallelPoll(Monitor& monitor) : monitor_(monitor) {}
  bool stop(bool main_thread) {
    if (main_thread && !stop_.load(std::memory_order_relaxed) && monitor_.interrupted()) {
      stop_.store(true, std::memory_order_relaxed);
    }
    return stop_.load(std::memory_order_relaxed);
  }
  void rethrow() const {
    if (stop_.load()) throw Interrupted();
  }

 private:
  Monitor& monitor_;
  std::atomic<bool> stop_{false};
};

// A monitor that never interrupts and shows nothing (tests, benchmarks).
inline Monitor& null_monitor() {
  static Monitor m;
  return m;
}

// Runs a loop over `stages` stages of equal length (restarts, classes, folds)
// against one display: stage s reporting (step, total) appears to the host as
// (s * total + step, stages * total). Interrupts pass through unchanged.
class StageMonitor : public Monitor {
 public:
  StageMonitor(Monitor& host, int stage, int stages)
      : host_(host), stage_(stage), stages_(stages < 1 ? 1 : stages) {}
  bool interrupted() override { return host_.interrupted(); }
  void progress(int step, int total) override {
    if (total <= 0) {
      host_.progress(step, total);
    } else {
      host_.progress(stage_ * total + step, stages_ * total);
    }
  }

 private:
  Monitor& host_;
  int stage_;
  int stages_;
};

}  // namespace noisylabels
