# noisylabels developer entry points. See README.md.
R       ?= R
RSCRIPT ?= Rscript
PKG     := noisylabels
VERSION := $(shell sed -n 's/^Version: //p' DESCRIPTION)
TARBALL := $(PKG)_$(VERSION).tar.gz
LIB     ?= $(CURDIR)/check/lib

.PHONY: deps document install demo check test bench clean site site-check sanitize valgrind

deps:
	tools/install-deps.sh

document: deps
	$(RSCRIPT) -e 'Rcpp::compileAttributes(); roxygen2::roxygenise()'

install: deps
	mkdir -p $(LIB)
	$(R) CMD INSTALL --preclean --no-multiarch -l $(LIB) .

# (1) set up, install and run the main job on bundled data.
demo: install
	R_LIBS=$(LIB) $(RSCRIPT) tools/demo.R

# (2) the full test suite: R CMD build + R CMD check --as-cran, then the summary line.
check: deps
	tools/run-check.sh

# quick test loop for developers (no build/check)
test: install
	R_LIBS=$(LIB) $(RSCRIPT) -e 'testthat::test_local(".", reporter = "summary")'

# Build the Google Benchmark programs (CMake, inst/bench/CMakeLists.txt) and
# run each briefly; BENCH_R=1 also installs the package and runs the R
# benchmark scripts (peer comparisons, hours).
BENCH_R ?= 0
bench:
	@if [ "$(BENCH_R)" = 1 ]; then $(MAKE) install; fi
	BENCH_R=$(BENCH_R) R_LIBS=$(LIB) inst/bench/run-all.sh

# pkgdown site in docs/ (reference with examples, the vignettes as articles).
site: install
	R_LIBS=$(LIB) $(RSCRIPT) tools/build-site.R

# Open every page of docs/ in headless Chromium; fail on JavaScript errors,
# missing images or broken internal links. Needs chromium + node (optional
# step of install-deps.sh). Run `make site` first.
site-check:
	tools/install-deps.sh --site
	node tools/site-check/check-site.js docs

# The test suite under AddressSanitizer + UndefinedBehaviorSanitizer, then a
# short script under valgrind (see tools/sanitize.sh).
sanitize:
	tools/install-deps.sh --sanitize
	tools/sanitize.sh

valgrind:
	tools/install-deps.sh --sanitize
	tools/sanitize.sh valgrind

clean:
	rm -rf check $(PKG)_*.tar.gz src/*.o src/core/*/*.o src/*.so demo-output inst/bench/build docs sanitize-out
