#!/usr/bin/env bash
# Build and run every benchmark (make bench). Needs the package installed.
set -euo pipefail
cd "$(dirname "$0")/../.."
cmake -S inst/bench/core -B inst/bench/build -DCMAKE_BUILD_TYPE=Release > /dev/null
cmake --build inst/bench/build -j2 > /dev/null
inst/bench/build/bench_core
for f in $(find inst/bench -name "*.R" -not -path "*/build/*" | sort); do
  echo "== $f"
  Rscript "$f"
done
