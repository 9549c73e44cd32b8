#!/usr/bin/env bash
# R CMD build + R CMD check --as-cran (no manual); then print one line
# "N passed, N failed, N skipped" from the testthat results.
# Exit status is non-zero if check gives an ERROR or WARNING or a test failed.
set -uo pipefail
cd "$(dirname "$0")/.."
out=check
rm -rf "$out"; mkdir -p "$out"
pkg=$(sed -n 's/^Package: //p' DESCRIPTION)

echo "== R CMD build"
( cd "$out" && R CMD build --no-manual .. ) > "$out/build.log" 2>&1
status=$?
tail -n 5 "$out/build.log"
tarball=$(ls "$out"/"$pkg"_*.tar.gz 2>/dev/null | head -n 1)
if [ $status -ne 0 ] || [ -z "$tarball" ]; then
  cat "$out/build.log"; echo "0 passed, 1 failed"; exit 1
fi

echo "== R CMD check --as-cran"
# No network time/URL checks in CI; a fresh tarball is always a 'new submission'.
export _R_CHECK_CRAN_INCOMING_REMOTE_=false
export _R_CHECK_CRAN_INCOMING_=false
export _R_CHECK_FUTURE_FILE_TIMESTAMPS_=false
export _R_CHECK_SYSTEM_CLOCK_=0
export NOT_CRAN=${NOT_CRAN:-true}
# Packages loaded by the checks ask timedatectl for the time zone when TZ is
# unset, which fails (and prints into the check) on machines without systemd.
export TZ=${TZ:-UTC}
# Suggested packages are optional for R CMD check (their tests skip when
# absent), but tools/install-deps.sh installs the adapters' ones (caret,
# tidymodels tune/parsnip/workflows/rsample, mlr3, from CRAN where Debian has
# none): here their tests must run, and a missing one fails
# (tests/testthat/test-issues-adapters.R).
export _R_CHECK_FORCE_SUGGESTS_=${_R_CHECK_FORCE_SUGGESTS_:-false}
export NOISYLABELS_REQUIRE_ADAPTERS=${NOISYLABELS_REQUIRE_ADAPTERS:-true}
# --as-cran looks up missing suggested packages in CRAN's web database
# (web/packages/packages.rds) to see whether they are orphaned. The package
# registry here does not serve that file, so a local stand-in lists the
# suggested packages as maintained (only this orphan check reads it).
web="$PWD/$out/cran-web"
mkdir -p "$web/web/packages"
Rscript --vanilla -e '
s <- read.dcf("DESCRIPTION", fields = "Suggests")[1, 1]
pk <- trimws(sub("[ (].*", "", trimws(strsplit(s, ",")[[1]])))
db <- data.frame(Package = pk, Maintainer = "(not looked up: no CRAN web database here)")
saveRDS(db, file.path(commandArgs(TRUE)[1], "web/packages/packages.rds"))' "$web"
export R_CRAN_WEB="file://$web"
( cd "$out" && R CMD check --as-cran --no-manual "$(basename "$tarball")" ) > "$out/check.log" 2>&1
cat "$out/check.log"

rdir="$out/$pkg.Rcheck"
summary=$(grep -h '^noisylabels-tests: ' "$rdir"/tests/testthat.Rout* 2>/dev/null | tail -n 1 | sed 's/^noisylabels-tests: //')
if grep -q 'Status:.*ERROR' "$out/check.log" || grep -q 'Status:.*WARNING' "$out/check.log"; then
  failed_check=1
else
  failed_check=0
fi
if [ -z "$summary" ]; then
  echo "(no testthat summary found: tests did not run)"
  echo "0 passed, 1 failed"
  exit 1
fi
# The committed README.md is what README.Rmd produces with this package.
echo "== README.md against README.Rmd"
readme_fail=0
R_LIBS="$PWD/$rdir${R_LIBS:+:$R_LIBS}" Rscript tools/readme.R --check || readme_fail=1
echo "$summary"
nfail=$(echo "$summary" | sed -n 's/.*passed, \([0-9]*\) failed.*/\1/p')
if [ "${nfail:-1}" != 0 ] || [ $failed_check = 1 ] || [ $readme_fail = 1 ]; then exit 1; fi
exit 0
