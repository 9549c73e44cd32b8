// Glue test of the progress path (RMonitor + StageMonitor): a core-style loop
// of `stages` x `steps` iterations reporting to an R callback, without a model
// around it. Used by tests/testthat/test-utils-progress.R.
#include "rcpp_hooks.h"  // first: RcppEigen.h must come before Rcpp.h
#include "rcpp_monitor.h"

#include <thread>

using namespace noisylabels;

namespace {

// What a core loop does: check for interrupts and report progress per step.
void demo_loop(Monitor& monitor, int steps, int stop_at) {
  for (int i = 1; i <= steps && i <= stop_at; ++i) {
    monitor.check();
    monitor.progress(i, steps);
  }
}

}  // namespace

// The loop stops after `stop_at` steps (early convergence). With
// `other_thread`, it runs on a second thread, whose calls the
// monitor must ignore (only R's main thread may call R).
// Hook "monitor_demo" (rcpp_hooks.h), not an export: reached through .hook().
int monitor_demo_cpp(SEXP progress, int steps, int stages, int min_interval_ms,
                     bool other_thread, int stop_at) {
  RMonitor monitor(progress, min_interval_ms);
  for (int s = 0; s < stages; ++s) {
    StageMonitor stage(monitor, s, stages);
    if (other_thread) {
      std::thread worker([&] { demo_loop(stage, steps, stop_at); });
      worker.join();
    } else {
      demo_loop(stage, steps, stop_at);
    }
  }
  monitor.flush();
  return monitor.callback_calls();
}

namespace noisylabels {

namespace {
SEXP poll_condition = nullptr;  // preserved while held
}  // namespace

void set_poll_condition(SEXP cond) {
  if (poll_condition != nullptr) R_ReleaseObject(poll_condition);
  R_PreserveObject(cond);
  poll_condition = cond;
}

}  // namespace noisylabels

// The condition the monitor's last failed poll caught (an error such as R's
// time limit, or an interrupt), or NULL; clears it. Called by
// signal_interrupt() after the core stopped. rng = false: call_core() calls
// it before every core call, also in future jobs that draw no random numbers
// (an RNGScope would write .Random.seed, which future reports as misuse).
// [[Rcpp::export(.poll_condition_take, rng = false)]]
SEXP poll_condition_take_cpp() {
  if (noisylabels::poll_condition == nullptr) return R_NilValue;
  SEXP out = PROTECT(noisylabels::poll_condition);
  R_ReleaseObject(out);
  noisylabels::poll_condition = nullptr;
  UNPROTECT(1);
  return out;
}

// A poll of R as the core makes it, without the rate limit (tests: an R
// error raised by R_CheckUserInterrupt must come back as itself).
// Hook "monitor_poll" (rcpp_hooks.h), not an export: reached through .hook().
bool monitor_poll_cpp() {
  return RMonitor::poll_r();
}
