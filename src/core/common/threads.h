// The OpenMP thread number of the calling thread (0 without OpenMP), for
// per-thread scratch buffers and for letting only the first thread poll the
// monitor.
#pragma once

#ifdef _OPENMP
#include <omp.h>
#endif

namespace noisylabels {

inline int thread_id() {
#ifdef _OPENMP
  return omp_get_thread_num();
#else
  return 0;
#endif
}

}  // namespace noisylabels
