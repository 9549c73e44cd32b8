// Exceptions of the core other than the standard ones (see ARCHITECTURE.md,
// "Conventions"): the glue's call_core() turns each into a classed R error.
// Interrupted (a user interrupt) lives with the Monitor that throws it
// (common/monitor.h).
#pragma once

#include <stdexcept>
#include <string>

namespace noisylabels {

// A numerical failure: a factorization failed even at the largest jitter the
// policy allows, an objective is not finite at its starting point, ...
struct NumericalError : public std::runtime_error {
  explicit NumericalError(const std::string& what) : std::runtime_error(what) {}
};

}  // namespace noisylabels
