# One CMake include for every Google Benchmark program in inst/bench: it
# builds the package's R-free C++ core (src/core/) from the same source list
# the R package uses, so a bench can never drift from the package's files.
#
#   include(${CMAKE_CURRENT_LIST_DIR}/../cmake/core.cmake)
#   noisylabels_bench(bench_foo bench_foo.cpp)
#
# What it provides:
# - NOISYLABELS_CORE_SOURCES: src/core/<area>/<file>.cpp for every
#   core/<area>/<file>.o in CORE_OBJECTS of src/Makevars (re-read when
#   Makevars changes);
# - the static library target `noisylabels_core` built from them, with the
#   include paths (src/ and src/core/, as Makevars' -I. -Icore), Eigen from
#   the installed RcppEigen (the headers the package compiles with), the
#   package's defines, LAPACK/BLAS and OpenMP (when found);
# - noisylabels_bench(<target> <sources>...): an executable linked to the
#   core and Google Benchmark.
# Flags follow R's defaults: -O2, no -march=native.
include_guard(GLOBAL)

if(NOT CMAKE_BUILD_TYPE AND NOT CMAKE_CONFIGURATION_TYPES)
  set(CMAKE_BUILD_TYPE Release CACHE STRING "Build type" FORCE)
endif()
set(CMAKE_CXX_FLAGS_RELEASE "-O2 -DNDEBUG" CACHE STRING "Release flags (R's -O2)" FORCE)
set(CMAKE_CXX_STANDARD 17)
set(CMAKE_CXX_STANDARD_REQUIRED ON)

# ccache (configured on the development machines) makes rebuilds cheap.
find_program(NOISYLABELS_CCACHE ccache)
if(NOISYLABELS_CCACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  set(CMAKE_CXX_COMPILER_LAUNCHER "${NOISYLABELS_CCACHE}")
endif()

get_filename_component(NOISYLABELS_SRC "${CMAKE_CURRENT_LIST_DIR}/../../../src" ABSOLUTE)

# --- the core source list, from src/Makevars ---------------------------------
set(_nl_makevars "${NOISYLABELS_SRC}/Makevars")
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${_nl_makevars}")
file(READ "${_nl_makevars}" _nl_text)
# CORE_OBJECTS = <lines ending in a backslash> <last line>
string(REGEX MATCH "\nCORE_OBJECTS[ \t]*=([^\n]*\\\\\n)*[^\n]*" _nl_block "${_nl_text}")
if(NOT _nl_block)
  message(FATAL_ERROR "core.cmake: no CORE_OBJECTS list in ${_nl_makevars}")
endif()
string(REGEX MATCHALL "core/[A-Za-z0-9_/]+\\.o" _nl_objects "${_nl_block}")
set(NOISYLABELS_CORE_SOURCES "")
foreach(_obj IN LISTS _nl_objects)
  string(REGEX REPLACE "\\.o$" ".cpp" _cpp "${_obj}")
  list(APPEND NOISYLABELS_CORE_SOURCES "${NOISYLABELS_SRC}/${_cpp}")
endforeach()

# --- dependencies --------------------------------------------------------------
find_program(NOISYLABELS_RSCRIPT Rscript REQUIRED)
execute_process(
  COMMAND "${NOISYLABELS_RSCRIPT}" -e "cat(system.file('include', package = 'RcppEigen'))"
  OUTPUT_VARIABLE NOISYLABELS_EIGEN_INCLUDE OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT EXISTS "${NOISYLABELS_EIGEN_INCLUDE}/Eigen/Dense")
  message(FATAL_ERROR "core.cmake: Eigen not found through RcppEigen (install the R package RcppEigen)")
endif()
find_package(LAPACK REQUIRED)  # also finds BLAS (BLAS_LIBRARIES is part of LAPACK_LIBRARIES)
find_package(OpenMP)
find_package(benchmark REQUIRED)
find_package(Threads REQUIRED)

# --- the core library, built once for all benches ------------------------------
if(NOT TARGET noisylabels_core)
  add_library(noisylabels_core STATIC ${NOISYLABELS_CORE_SOURCES})
  target_include_directories(noisylabels_core PUBLIC "${NOISYLABELS_SRC}" "${NOISYLABELS_SRC}/core")
  target_include_directories(noisylabels_core SYSTEM PUBLIC "${NOISYLABELS_EIGEN_INCLUDE}")
  target_compile_definitions(noisylabels_core PUBLIC EIGEN_NO_DEBUG EIGEN_DONT_PARALLELIZE)
  target_compile_options(noisylabels_core PUBLIC -Wno-ignored-attributes)
  target_link_libraries(noisylabels_core PUBLIC ${LAPACK_LIBRARIES} Threads::Threads)
  if(OpenMP_CXX_FOUND)
    target_link_libraries(noisylabels_core PUBLIC OpenMP::OpenMP_CXX)
  endif()
endif()

# noisylabels_bench(<target> <source>...): one Google Benchmark program.
function(noisylabels_bench target)
  add_executable(${target} ${ARGN})
  target_link_libraries(${target} PRIVATE noisylabels_core benchmark::benchmark)
endfunction()
