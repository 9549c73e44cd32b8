// Glue-side Monitor: polls R's interrupt flag without longjmp-ing through C++
// frames (R_CheckUserInterrupt is run under R_ToplevelExec, inside an R-level
// tryCatch(error =, interrupt =) made by R_tryCatch) and, when given
// an R function, reports progress to it (noisylabels:::progress_bar() makes
// one that drives a cli progress bar). Asking R costs milliseconds per call
// (measured ~2.7 ms in Rscript), so polls closer than 50 ms apart are
// answered "no" without asking, and progress reaches R at most every 100 ms
// (and always for the last step). Only the thread that constructed the
// monitor (R's main thread) talks to R; calls from other threads (OpenMP
// workers) are ignored.
//
// Usage in a glue function:
//   Rcpp::List fit_cpp(..., Rcpp::Nullable<Rcpp::Function> progress = R_NilValue) {
//     RMonitor monitor(progress);
//     core_fit(..., monitor);   // the core calls monitor.progress(step, total)
//     monitor.flush();          // report the last step the rate limit held back
//   }
// An R error or interrupt raised inside the callback unwinds the C++ frames
// as a C++ exception (Rcpp::Function evaluates under R_UnwindProtect).
//
// Interrupt or error: R_CheckUserInterrupt raises a user interrupt, but also
// R's own errors from R_ProcessEvents (setTimeLimit()'s "reached elapsed time
// limit", which R.utils::withTimeout(), Shiny and callr use). The poll keeps
// the condition it caught (set_poll_condition()) and reports "stop" to the
// core, which unwinds with Interrupted; R-side, signal_interrupt()
// (R/utils-resources.R) takes the condition back (.poll_condition_take()) and
// re-raises an error as the error it is, an interrupt as R's interrupt.
#pragma once

#include <Rcpp.h>

#include <chrono>
#include <thread>
#include "common/monitor.h"

namespace noisylabels {

// The condition (error or interrupt) the last poll of R caught, kept until
// the R side takes it (rcpp_monitor.cpp).
void set_poll_condition(SEXP cond);

class RMonitor : public Monitor {
 public:
  RMonitor() = default;
  // `min_interval_ms`: least time between two calls of the callback (the
  // last step of a known total always gets through).
  explicit RMonitor(SEXP callback, int min_interval_ms = 100) : min_interval_(min_interval_ms) {
    if (!Rf_isNull(callback)) {
      if (!Rf_isFunction(callback)) Rcpp::stop("progress must be NULL or a function");
      callback_ = callback;
      has_callback_ = true;
    }
  }
  explicit RMonitor(const Rcpp::Nullable<Rcpp::Function>& callback) : RMonitor(SEXP(callback)) {}

  bool interrupted() override {
    if (!on_main_thread()) return false;
    const auto now = std::chrono::steady_clock::now();
    if (now - last_poll_ < std::chrono::milliseconds(50)) return false;
    last_poll_ = now;
    return poll_r();
  }

  // One poll of R (no rate limit): true if R asked to stop. The condition R
  // raised, if any, is kept for the R side (see above).
  static bool poll_r() {
    SEXP cond = R_NilValue;
    const Rboolean ok = R_ToplevelExec(check_interrupt_fn, &cond);
    if (!Rf_isNull(cond)) {
      set_poll_condition(cond);
      R_ReleaseObject(cond);
      return true;
    }
    return !ok;  // a jump the tryCatch did not catch: treat as an interrupt
  }

  void progress(int step, int total) override {
    if (!has_callback_ || !on_main_thread()) return;
    const auto now = std::chrono::steady_clock::now();
    const bool last = total > 0 && step >= total;
    if (!last && reported_ && now - last_report_ < min_interval_) {
      pending_ = true;  // held back; flush() sends it
      pending_step_ = step;
      pending_total_ = total;
      return;
    }
    last_report_ = now;
    send(step, total);
  }

  // Send the last step held back by the rate limit, so the display ends where
  // the core stopped. Glue calls it after the core returns (not from a
  // destructor: the callback may throw).
  void flush() {
    if (pending_ && has_callback_ && on_main_thread()) send(pending_step_, pending_total_);
  }

  // Number of times the R callback was called (tests).
  int callback_calls() const { return calls_; }

 private:
  bool on_main_thread() const { return std::this_thread::get_id() == owner_; }
  void send(int step, int total) {
    pending_ = false;
    reported_ = true;
    ++calls_;
    Rcpp::Function f(callback_);
    f(step, total);
  }
  const std::thread::id owner_ = std::this_thread::get_id();
  std::chrono::steady_clock::time_point last_poll_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_report_;
  std::chrono::milliseconds min_interval_{100};
  Rcpp::RObject callback_;
  bool has_callback_ = false;
  bool reported_ = false;
  bool pending_ = false;
  int pending_step_ = 0, pending_total_ = 0;
  int calls_ = 0;
  static SEXP check_body(void*) {
    R_CheckUserInterrupt();
    return R_NilValue;
  }
  static SEXP catch_handler(SEXP cond, void* data) {
    R_PreserveObject(cond);
    *static_cast<SEXP*>(data) = cond;
    return R_NilValue;
  }
  static void check_interrupt_fn(void* data) {
    static SEXP conds = nullptr;
    if (conds == nullptr) {
      conds = Rf_allocVector(STRSXP, 2);
      R_PreserveObject(conds);
      SET_STRING_ELT(conds, 0, Rf_mkChar("error"));
      SET_STRING_ELT(conds, 1, Rf_mkChar("interrupt"));
    }
    R_tryCatch(check_body, nullptr, conds, catch_handler, data, nullptr, nullptr);
  }
};

}  // namespace noisylabels
