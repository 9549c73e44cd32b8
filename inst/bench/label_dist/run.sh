#!/usr/bin/env bash
# Build and run the label_dist benchmarks from the package root:
#   inst/bench/label_dist/run.sh [threads]
# (1) Google Benchmark of the C++ core blocks (per-block cost vs P),
# (2) whole fits from R at three sizes (needs the package installed).
set -euo pipefail
here=inst/bench/label_dist
build=inst/bench/build/label_dist
cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=Release > /dev/null
cmake --build "$build" > /dev/null
"$build/bench_label_dist_core" --benchmark_min_time=0.2 | tee inst/experiments/label_dist_vb/results/bench_label_dist_core.txt
Rscript "$here/bench_label_dist.R" "${1:-1}" inst/experiments/label_dist_vb/results/bench_label_dist.csv
