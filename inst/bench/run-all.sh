#!/usr/bin/env bash
# make bench: build every Google Benchmark program with CMake (inst/bench/
# CMakeLists.txt, core sources from src/Makevars) and run each briefly. With
# BENCH_R=1 it also runs the R benchmark scripts (peer comparisons; hours,
# and they need the package installed, which `make bench BENCH_R=1` does).
#   BENCH_MIN_TIME  seconds per Google Benchmark case (default 0.05)
#   BENCH_JOBS      parallel build jobs (default 2)
set -euo pipefail
cd "$(dirname "$0")/../.."
build=inst/bench/build
cmake -S inst/bench -B "$build" -DCMAKE_BUILD_TYPE=Release > /dev/null
cmake --build "$build" -j "${BENCH_JOBS:-2}"

# Every executable the build made (one per bench directory or more).
programs=$(find "$build" -maxdepth 2 -type f -perm -u+x -name "*bench*" | sort)
for p in $programs; do
  echo "== $p"
  "$p" --benchmark_min_time="${BENCH_MIN_TIME:-0.05}"
done

if [ "${BENCH_R:-0}" = 1 ]; then
  # R scripts that are entry points (helpers sourced by others are skipped).
  for f in $(find inst/bench -name "*.R" -not -path "*/build/*" | sort); do
    case "$f" in */sim_sparse.R|*/summarise.R) continue ;; esac
    echo "== $f"
    Rscript "$f"
  done
else
  echo "(R benchmark scripts skipped; run 'make bench BENCH_R=1' for them)"
fi
