// Glue-side Monitor: polls R's interrupt flag without longjmp-ing through C++
// frames (R_CheckUserInterrupt is run under R_ToplevelExec).
#pragma once

#include <Rcpp.h>
#include "monitor.h"

namespace noisylabels {

class RMonitor : public Monitor {
 public:
  bool interrupted() override {
    return !R_ToplevelExec(check_interrupt_fn, nullptr);
  }

 private:
  static void check_interrupt_fn(void*) { R_CheckUserInterrupt(); }
};

}  // namespace noisylabels

