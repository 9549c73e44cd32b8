#!/usr/bin/env bash
# Install everything noisylabels needs on a fresh Debian machine with R:
# system tools, Debian r-cran-* binaries where they exist, CRAN for the rest.
# Idempotent: does nothing (in about a second) when all is present.
set -euo pipefail
# Optional extras, used only by their make targets:
#   --site      Chromium (Debian's chromium) and playwright-core (npm, into
#               tools/site-check/node_modules and tools/review-check/node_modules;
#               no browser download) for `make site-check` and `make review-check`
#   --sanitize  valgrind for `make sanitize` / `make valgrind` (ASan/UBSan come with g++)
#   --bench     Debian's numpy/scikit-learn/pandas/termcolor/tqdm, what cleanlab's
#               source needs on PYTHONPATH for inst/bench/find_label_issues/cleanlab.R
EXTRA_SITE=0; EXTRA_SANITIZE=0; EXTRA_BENCH=0
for arg in "$@"; do
  case "$arg" in
    --site) EXTRA_SITE=1 ;;
    --sanitize) EXTRA_SANITIZE=1 ;;
    --bench) EXTRA_BENCH=1 ;;
    *) echo "install-deps: unknown option $arg (use --site, --sanitize, --bench)"; exit 2 ;;
  esac
done

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

# System tools and libraries (check/bench/vignette tooling, fast BLAS).
DEB_SYS="pandoc qpdf cmake libbenchmark-dev libopenblas0-pthread make g++ bzip2 xz-utils"
# R packages available as Debian binaries (Imports, LinkingTo, Suggests, tooling).
DEB_R="r-cran-rcpp r-cran-rcppeigen r-cran-cli r-cran-generics r-cran-matrix \
r-cran-ggplot2 r-cran-knitr r-cran-rmarkdown r-cran-roxygen2 r-cran-testthat \
r-cran-kernlab r-cran-mclust r-cran-glmnet r-cran-future r-cran-future.apply r-cran-future.batchtools \
r-cran-mass r-cran-mlbench r-cran-bench r-cran-pkgbuild \
r-cran-processx r-cran-ranger r-cran-rann r-cran-progressr r-cran-pkgdown r-cran-fields \
r-cran-dt r-cran-htmlwidgets r-cran-htmltools r-cran-jsonlite r-cran-tibble \
r-cran-caret r-cran-rsample r-cran-withr r-cran-uuid r-cran-palmerpenguins"
# R packages only on CRAN.
CRAN_R="LiblineaR hetGP GpGp"

missing=""
for p in $DEB_SYS $DEB_R; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  echo "install-deps: apt-get install$missing"
  if [ ! -d /var/lib/apt/lists ] || [ -z "$(ls -A /var/lib/apt/lists 2>/dev/null | grep -v lock)" ]; then
    $SUDO apt-get update -qq
  fi
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing \
    || { $SUDO apt-get update -qq && $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing; }
fi

# R packages only on CRAN, with whatever they need. The resolver below also
# upgrades a Debian package from CRAN when a CRAN package needs a newer version
# than bookworm's (the tidymodels and mlr3 releases need e.g. rlang >= 1.1,
# vctrs >= 0.6, dplyr >= 1.1, data.table >= 1.15); the upgrade goes into the
# first writable library (/usr/local/lib/R/site-library as root), ahead of
# Debian's. install.packages() alone would not: it installs missing
# dependencies but keeps too-old ones, and the install then fails.
#   tune parsnip workflows rsample: the tidymodels adapter and its test
#   mlr3 lgr: the mlr3 adapter and its test
# What this adds from none of them installed: 37 packages from CRAN (14 of
# them compiled: rlang, vctrs, cli, dplyr, data.table, nanonext, GauPro, ...)
# and Debian's r-cran-uuid and r-cran-palmerpenguins: 5 min 3 s wall, 409 s
# of CPU (no ccache, into an empty library, machine otherwise idle: load 0.2);
# 13.5 min when the 2 cores were shared with other jobs (load ~5). GauPro's
# C++ (110 s on one core) is the last step before tune.
CRAN_R="$CRAN_R tune parsnip workflows rsample mlr3 lgr"
# Versions that CRAN packages need without declaring them (checked as the
# declared ones): mlr3measures calls checkmate::assert_permutation()
# (checkmate 2.3.0; bookworm has 2.1.0).
CRAN_MIN="checkmate>=2.3.0"

Rscript --vanilla -e '
pk <- strsplit(commandArgs(TRUE)[1], " ")[[1]]
min_ver <- strsplit(strsplit(commandArgs(TRUE)[2], " ")[[1]], ">=", fixed = TRUE)
min_ver <- stats::setNames(vapply(min_ver, `[`, "", 2), vapply(min_ver, `[`, "", 1))
repos <- "https://cloud.r-project.org"
ip <- installed.packages()
ip <- ip[!duplicated(ip[, "Package"]), , drop = FALSE]   # the one that loads
rownames(ip) <- ip[, "Package"]
have_ok <- function(p, v) {
  if (!p %in% rownames(ip)) return(FALSE)
  v <- c(if (!is.na(v)) v, if (p %in% names(min_ver)) min_ver[[p]])
  all(package_version(ip[p, "Version"]) >= package_version(v))
}
need <- pk[!vapply(pk, function(p) have_ok(p, NA), logical(1))]
need <- c(need, names(min_ver)[!vapply(names(min_ver), function(p) have_ok(p, NA), logical(1))])
if (length(need)) {
  ap <- available.packages(repos = repos)
  deps_of <- function(p) {
    s <- ap[p, c("Depends", "Imports", "LinkingTo")]
    x <- trimws(unlist(strsplit(gsub("\n", " ", s[!is.na(s)]), ",")))
    x <- x[nzchar(x)]
    data.frame(pkg = sub("[ (].*", "", x),
               ver = ifelse(grepl("\\(", x), trimws(sub(".*\\(\\s*>=?\\s*([^)]*)\\).*", "\\1", x)), NA))
  }
  base <- rownames(ip)[ip[, "Priority"] %in% "base"]
  todo <- need; need <- character()
  while (length(todo)) {
    p <- todo[1]; todo <- todo[-1]
    if (p %in% need) next
    if (!p %in% rownames(ap)) stop("install-deps: ", p, " is not on CRAN")
    need <- c(need, p)
    d <- deps_of(p)
    for (i in seq_len(nrow(d))) {
      q <- d$pkg[i]
      if (q == "R" || q %in% base || q %in% need) next
      if (!have_ok(q, d$ver[i])) todo <- c(todo, q)
    }
  }
  message("install-deps: from CRAN (", length(need), "): ", paste(need, collapse = " "))
  lib <- .libPaths()[1]
  if (file.access(lib, 2) != 0) lib <- Sys.getenv("R_LIBS_USER")
  dir.create(lib, recursive = TRUE, showWarnings = FALSE)
  install.packages(need, lib = lib, repos = repos, Ncpus = 2, available = ap, dependencies = NA)
  ok <- vapply(need, function(p) {
    v <- tryCatch(packageVersion(p, lib.loc = lib), error = function(e) NULL)
    !is.null(v) && v == package_version(ap[p, "Version"])
  }, logical(1))
  if (!all(ok)) stop("install-deps: could not install: ", paste(need[!ok], collapse = " "))
}' "$CRAN_R" "$CRAN_MIN"

apt_optional() {
  local need=""
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need="$need $p"
  done
  if [ -n "$need" ]; then
    echo "install-deps: apt-get install$need"
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $need \
      || { $SUDO apt-get update -qq && $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $need; }
  fi
}
if [ $EXTRA_SITE = 1 ]; then
  apt_optional chromium
  # Node (>= 18) with npm: keep one that is there (e.g. nodesource's nodejs
  # bundles npm; Debian's npm package would conflict with it).
  if ! command -v node > /dev/null || ! command -v npm > /dev/null; then apt_optional nodejs npm; fi
  here="$(cd "$(dirname "$0")" && pwd)"
  # playwright-core and the CDN libraries the check serves locally (package-lock.json)
  if [ ! -d "$here/site-check/node_modules/playwright-core" ] || [ ! -d "$here/site-check/node_modules/mathjax" ]; then
    echo "install-deps: npm ci (tools/site-check: playwright-core + pkgdown's CDN libraries)"
    ( cd "$here/site-check" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --silent )
  fi
  if [ ! -d "$here/review-check/node_modules/playwright-core" ]; then
    echo "install-deps: npm ci (tools/review-check: playwright-core)"
    ( cd "$here/review-check" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --silent )
  fi
fi
if [ $EXTRA_SANITIZE = 1 ]; then
  apt_optional valgrind
fi
if [ $EXTRA_BENCH = 1 ]; then
  apt_optional python3-sklearn python3-pandas python3-termcolor python3-tqdm
fi
# Optional bench step (SGD_BENCH=1): Debian's scikit-learn for the
# SGDClassifier comparison of inst/bench/sgd/bench_multiclass.R.
if [ "${SGD_BENCH:-0}" = 1 ] && \
   ! dpkg-query -W -f='${Status}' python3-sklearn 2>/dev/null | grep -q "install ok installed"; then
  echo "install-deps: apt-get install python3-sklearn (SGD_BENCH=1)"
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-sklearn \
    || { $SUDO apt-get update -qq && $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-sklearn; }
fi
echo "install-deps: all dependencies present"
