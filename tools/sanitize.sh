#!/usr/bin/env bash
# Memory and undefined-behaviour checks of the C++ code.
#
#   tools/sanitize.sh            # ASan + UBSan test suite, then the valgrind script
#   tools/sanitize.sh asan       # only the test suite under ASan + UBSan
#   tools/sanitize.sh valgrind   # only tools/valgrind-smoke.R under R -d valgrind
#
# ASan/UBSan: a copy of the sources is installed into sanitize-out/lib-asan
# with -fsanitize=address,undefined -fno-omit-frame-pointer (through a private
# R_MAKEVARS_USER file, so ~/.R/Makevars and the package's Makevars are left
# alone), and the testthat suite runs in an ordinary (non-sanitized) R with
# the ASan runtime LD_PRELOADed. detect_leaks=0: R itself does not free
# everything at exit. Fails on any ASan report, any UBSan "runtime error" or
# any failed test.
# valgrind: an ordinary -O2 build in sanitize-out/lib-plain runs a short
# script fitting every model under `R -d valgrind`; fails on any error
# valgrind reports (--error-exitcode).
# Logs: sanitize-out/*.log. Takes several minutes (sanitized code is slow).
set -uo pipefail
cd "$(dirname "$0")/.."
what=${1:-all}
out=$PWD/sanitize-out
mkdir -p "$out"
CXX=${CXX:-g++}
# ccache (when installed) makes a rebuild after a small change take minutes,
# not the ~10-40 of a full sanitized build; MAKEFLAGS=-j2 etc. pass through.
ccache_lines=""
if command -v ccache > /dev/null; then
  ccache_lines=$(printf 'CC = ccache gcc\nCXX = ccache g++\nCXX17 = ccache g++')
fi

# A clean copy of the sources (tracked files plus new ones not ignored, so
# uncommitted work is checked too). The object files of the previous build of
# the same kind are kept only if src/ is byte-for-byte unchanged, since make
# does not track header dependencies; a sanitized build takes ~10 minutes.
copy_sources() {
  local dest=$1 tmp=$1.new
  rm -rf "$tmp"; mkdir -p "$tmp"
  git ls-files -z --cached --others --exclude-standard | xargs -0 cp --parents -t "$tmp"
  rm -f "$tmp"/src/*.o "$tmp"/src/*.so
  if [ -d "$dest/src" ] && ls "$dest"/src/*.o > /dev/null 2>&1 &&
     diff -rq -x '*.o' -x '*.so' "$tmp/src" "$dest/src" > /dev/null 2>&1; then
    cp "$dest"/src/*.o "$dest"/src/*.so "$tmp/src/" 2>/dev/null
    touch "$tmp"/src/*.o "$tmp"/src/*.so 2>/dev/null
    echo "   src/ unchanged since the last build: reusing its object files"
  fi
  rm -rf "$dest"; mv "$tmp" "$dest"
}

run_asan() {
  echo "== ASan + UBSan: build"
  local src=$out/src-asan lib=$out/lib-asan
  copy_sources "$src"
  rm -rf "$lib"; mkdir -p "$lib"
  local flags="-g -O1 -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize=vptr"
  cat > "$out/Makevars-asan" <<EOF
$ccache_lines
CFLAGS = $flags
CXXFLAGS = $flags
CXX11FLAGS = $flags
CXX14FLAGS = $flags
CXX17FLAGS = $flags
LDFLAGS = -fsanitize=address,undefined
EOF
  local t0=$SECONDS
  if ! R_MAKEVARS_USER="$out/Makevars-asan" R CMD INSTALL --no-multiarch --no-test-load \
      -l "$lib" "$src" > "$out/asan-install.log" 2>&1; then
    tail -n 30 "$out/asan-install.log"; echo "sanitize: build failed"; return 1
  fi
  # the shared library must be instrumented (linked against the ASan runtime)
  local linked
  linked=$(ldd "$lib/noisylabels/libs/noisylabels.so")  # (grep -q in a pipe: SIGPIPE under pipefail)
  echo "$linked" | grep libasan > /dev/null ||
    { echo "sanitize: noisylabels.so is not linked against libasan"; return 1; }
  echo "   built in $((SECONDS - t0)) s"

  local asan_rt
  asan_rt=$($CXX -print-file-name=libasan.so)
  [ -f "$asan_rt" ] || { echo "sanitize: no ASan runtime ($asan_rt)"; return 1; }

  echo "== ASan + UBSan: positive control (a planted heap overflow and integer overflow must be reported)"
  local ctl=$out/control
  rm -rf "$ctl"; mkdir -p "$ctl"
  cat > "$ctl/planted.cpp" <<'EOF'
#include <R.h>
#include <Rinternals.h>
extern "C" SEXP planted_ubsan(SEXP x) {
  int big = Rf_asInteger(x);           // INT_MAX from R
  volatile int r = big + 1;            // signed overflow: UBSan runtime error
  return Rf_ScalarInteger(r);
}
extern "C" SEXP planted_asan(SEXP n) {
  int k = Rf_asInteger(n);
  int* a = new int[k];
  volatile int v = a[k];               // heap-buffer-overflow read
  delete[] a;
  return Rf_ScalarInteger(v);
}
EOF
  if ! ( cd "$ctl" && R_MAKEVARS_USER="$out/Makevars-asan" R CMD SHLIB -o planted.so planted.cpp > build.log 2>&1 ); then
    cat "$ctl/build.log"; echo "sanitize: control build failed"; return 1
  fi
  ( cd "$ctl" && LD_PRELOAD="$asan_rt" ASAN_OPTIONS="detect_leaks=0" UBSAN_OPTIONS="print_stacktrace=0" \
      Rscript --vanilla -e "dyn.load('planted.so'); invisible(.Call('planted_ubsan', .Machine\$integer.max))" \
      > ubsan.log 2>&1
    LD_PRELOAD="$asan_rt" ASAN_OPTIONS="detect_leaks=0" \
      Rscript --vanilla -e "dyn.load('planted.so'); invisible(.Call('planted_asan', 4L))" > asan.log 2>&1 )
  if ! grep -q 'runtime error: signed integer overflow' "$ctl/ubsan.log" ||
     ! grep -q 'ERROR: AddressSanitizer: heap-buffer-overflow' "$ctl/asan.log"; then
    cat "$ctl"/*.log; echo "sanitize: the sanitizers did not catch the planted errors; the run would prove nothing"; return 1
  fi
  echo "   caught: UBSan '$(grep -o 'signed integer overflow' "$ctl/ubsan.log" | head -n 1)', ASan '$(grep -o 'heap-buffer-overflow' "$ctl/asan.log" | head -n 1)'"

  echo "== ASan + UBSan: test suite"
  t0=$SECONDS
  # The suite from the copied sources against the sanitized install; the
  # summary line is the same as tests/testthat.R prints.
  ( cd "$src/tests/testthat" &&
    LD_PRELOAD="$asan_rt" \
    ASAN_OPTIONS="detect_leaks=0:abort_on_error=0:halt_on_error=1:detect_odr_violation=0:log_path=$out/asan" \
    UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=0:log_path=$out/ubsan" \
    R_LIBS="$lib:${R_LIBS:-}" NOT_CRAN=true OMP_NUM_THREADS=1 \
    Rscript --vanilla -e '
      library(testthat); library(noisylabels)
      res <- test_dir(".", package = "noisylabels", load_package = "installed",
                      reporter = "summary", stop_on_failure = FALSE)
      df <- as.data.frame(res)
      cat(sprintf("sanitize-tests: %d passed, %d failed, %d skipped\n", as.integer(sum(df$passed)),
                  as.integer(sum(df$failed) + sum(df$error)), as.integer(sum(df$skipped))))'
  ) > "$out/asan-tests.log" 2>&1
  local status=$?
  echo "   tests ran in $((SECONDS - t0)) s (exit status $status)"
  local summary
  summary=$(grep -h '^sanitize-tests: ' "$out/asan-tests.log" | tail -n 1)
  echo "   ${summary:-no test summary (the R process died?)}"
  local asan_reports ubsan_reports
  asan_reports=$(cat "$out"/asan.* 2>/dev/null | grep -c 'ERROR: AddressSanitizer' || true)
  ubsan_reports=$( (cat "$out"/ubsan.* 2>/dev/null; cat "$out/asan-tests.log") | grep -c 'runtime error:' || true)
  echo "   AddressSanitizer reports: $asan_reports; UBSan runtime errors: $ubsan_reports"
  if [ "$asan_reports" != 0 ] || [ "$ubsan_reports" != 0 ]; then
    cat "$out"/asan.* "$out"/ubsan.* 2>/dev/null | head -n 80
  fi
  local nfail
  nfail=$(echo "$summary" | sed -n 's/.*passed, \([0-9]*\) failed.*/\1/p')
  if [ -z "$summary" ] || [ "${nfail:-1}" != 0 ] || [ "$asan_reports" != 0 ] || [ "$ubsan_reports" != 0 ]; then
    echo "sanitize: ASan/UBSan FAILED (log: $out/asan-tests.log)"; return 1
  fi
  echo "sanitize: ASan/UBSan clean"
}

run_valgrind() {
  echo "== valgrind: build"
  command -v valgrind > /dev/null || { echo "sanitize: valgrind not installed"; return 1; }
  local src=$out/src-plain lib=$out/lib-plain
  copy_sources "$src"
  rm -rf "$lib"; mkdir -p "$lib"
  cat > "$out/Makevars-plain" <<EOF
$ccache_lines
CXXFLAGS = -g -O2
CXX17FLAGS = -g -O2
EOF
  if ! R_MAKEVARS_USER="$out/Makevars-plain" R CMD INSTALL --no-multiarch -l "$lib" "$src" \
      > "$out/valgrind-install.log" 2>&1; then
    tail -n 30 "$out/valgrind-install.log"; echo "sanitize: build failed"; return 1
  fi
  echo "== valgrind: tools/valgrind-smoke.R"
  local t0=$SECONDS
  R_LIBS="$lib:${R_LIBS:-}" OMP_NUM_THREADS=1 \
    R -d "valgrind --error-exitcode=42 --leak-check=no --track-origins=yes --num-callers=30" \
      --vanilla --no-echo -f tools/valgrind-smoke.R > "$out/valgrind.log" 2>&1
  local status=$?
  echo "   ran in $((SECONDS - t0)) s (exit status $status)"
  grep -E '^==[0-9]+== (ERROR SUMMARY|Invalid|Conditional|Use of uninitialised|Syscall param|Mismatched)' \
    "$out/valgrind.log" | sort | uniq -c | sed 's/^/   /'
  grep '^valgrind-smoke:' "$out/valgrind.log" | sed 's/^/   /'
  if [ $status -ne 0 ] || ! grep -q 'ERROR SUMMARY: 0 errors' "$out/valgrind.log" ||
     ! grep -q '^valgrind-smoke: done' "$out/valgrind.log"; then
    echo "sanitize: valgrind FAILED (log: $out/valgrind.log)"; return 1
  fi
  echo "sanitize: valgrind clean"
}

rc=0
case "$what" in
  asan) run_asan || rc=1 ;;
  valgrind) run_valgrind || rc=1 ;;
  all) run_asan || rc=1; run_valgrind || rc=1 ;;
  *) echo "usage: tools/sanitize.sh [all|asan|valgrind]"; exit 2 ;;
esac
exit $rc
