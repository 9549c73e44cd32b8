// Progress and interrupt interface between the C++ core and its host.
// The core never calls R; the glue (rcpp_*.cpp) supplies a Monitor that polls
// R's interrupt flag and drives a progress display. Core loops call
// `monitor.check()` once per sweep/epoch/iteration.
#pragma once

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
  // Called with (step, total); total <= 0 if unknown.
  virtual void progress(int /*step*/, int /*total*/) {}
  void check() {
    if (interrupted()) throw Interrupted();
  }
};

// A monitor that never interrupts and shows nothing (tests, benchmarks).
inline Monitor& null_monitor() {
  static Monitor m;
  return m;
}

}  // namespace noisylabels
