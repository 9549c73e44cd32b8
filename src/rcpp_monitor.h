// Glue-side Monitor: polls R's interrupt flag without longjmp-ing through C++
// frames (R_CheckUserInterrupt is run under R_ToplevelExec). Asking R costs
// milliseconds per call (measured ~2.7 ms in Rscript), so polls closer than
// 50 ms apart are answered "no" without asking.
#pragma once

#include <Rcpp.h>

#include <chrono>
#include "monitor.h"

namespace noisylabels {

class RMonitor : public Monitor {
 public:
  bool interrupted() override {
    const auto now = std::chrono::steady_clock::now();
    if (now - last_poll_ < std::chrono::milliseconds(50)) return false;
    last_poll_ = now;
    return !R_ToplevelExec(check_interrupt_fn, nullptr);
  }

 private:
  std::chrono::steady_clock::time_point last_poll_ = std::chrono::steady_clock::now();
  static void check_interrupt_fn(void*) { R_CheckUserInterrupt(); }
};

}  // namespace noisylabels

