// Glue: the thread count of the BLAS that R links to, read and set at run
// time. The core's dense steps call BLAS on panels of a few hundred rows
// inside loops that may already run on OpenMP threads; a multithreaded
// OpenBLAS then oversubscribes the cores, and its spinning workers lose the
// CPU to any other process (a 1,000-label dense gpr_loo() took 3.7x longer
// on 2 cores with OpenBLAS's default of 2 threads than with 1). call_core()
// runs every C++ entry point with the BLAS set to the package option
// `noisylabels.blas_threads` and restores the BLAS's own setting afterwards.
//
// The setter is found by name among the symbols already loaded into the
// process (OpenBLAS, BLIS, MKL); with any other BLAS (R's reference BLAS,
// Accelerate) there is nothing to set and both functions return NA.
#include <Rcpp.h>

#if defined(__unix__) || defined(__APPLE__)
#include <dlfcn.h>
#define NOISYLABELS_HAVE_DLSYM 1
#endif

namespace {

using SetThreads = void (*)(int);
using GetThreads = int (*)(void);

struct BlasThreadControl {
  SetThreads set = nullptr;
  GetThreads get = nullptr;
};

BlasThreadControl find_control() {
  BlasThreadControl c;
#ifdef NOISYLABELS_HAVE_DLSYM
  // Pairs of (setter, getter) by library; the first pair found wins.
  static const char* const names[][2] = {
      {"openblas_set_num_threads", "openblas_get_num_threads"},
      {"bli_thread_set_num_threads", "bli_thread_get_num_threads"},
      {"MKL_Set_Num_Threads", "MKL_Get_Max_Threads"},
  };
  for (const auto& pair : names) {
    void* s = dlsym(RTLD_DEFAULT, pair[0]);
    void* g = dlsym(RTLD_DEFAULT, pair[1]);
    if (s != nullptr && g != nullptr) {
      c.set = reinterpret_cast<SetThreads>(s);
      c.get = reinterpret_cast<GetThreads>(g);
      break;
    }
  }
#endif
  return c;
}

const BlasThreadControl& control() {
  static const BlasThreadControl c = find_control();
  return c;
}

}  // namespace

// The BLAS's current thread count, NA when it cannot be read.
// Hook "blas_threads_get" (rcpp_hooks.h), not an export: reached through .hook().
int blas_threads_get_cpp() {
  const BlasThreadControl& c = control();
  return c.get != nullptr ? c.get() : NA_INTEGER;
}

// Sets the BLAS's thread count and returns the previous one (NA, and nothing
// set, when the BLAS offers no setter).
// [[Rcpp::export(.blas_threads_set, rng = false)]]
int blas_threads_set_cpp(int threads) {
  const BlasThreadControl& c = control();
  if (c.set == nullptr || c.get == nullptr || threads == NA_INTEGER || threads < 1) return NA_INTEGER;
  const int old = c.get();
  if (old != threads) c.set(threads);
  return old;
}
