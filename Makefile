# noisylabels developer entry points. See README.md.
R       ?= R
RSCRIPT ?= Rscript
PKG     := noisylabels
VERSION := $(shell sed -n 's/^Version: //p' DESCRIPTION)
TARBALL := $(PKG)_$(VERSION).tar.gz
LIB     ?= $(CURDIR)/check/lib

.PHONY: deps document install demo check test bench clean site site-check review-check sanitize valgrind readme readme-check cluster-check

deps:
	tools/install-deps.sh

document: deps
	$(RSCRIPT) -e 'Rcpp::compileAttributes(); roxygen2::roxygenise()'

# Builds the tarball with its vignettes first, so vignette(package =
# "noisylabels") lists them after `make install` / `make demo`.
install: deps
	mkdir -p $(LIB) check/build
	cd check/build && rm -f $(PKG)_*.tar.gz && $(R) CMD build --no-manual ../.. > build.log 2>&1 || { cat build.log; exit 1; }
	$(R) CMD INSTALL --no-multiarch -l $(LIB) check/build/$(TARBALL)

# README.md from README.Rmd (the output shown is the output produced), and
# the check that the committed README.md is what README.Rmd produces.
readme: install
	R_LIBS=$(LIB) $(RSCRIPT) tools/readme.R

readme-check: install
	R_LIBS=$(LIB) $(RSCRIPT) tools/readme.R --check

# (1) set up, install and run the main job on bundled data: find_label_issues()
# on 2,000 rows of the Adult table, its summary, and the review report in
# demo-output/adult-review.html.
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

# The review report (review_report()) in headless Chromium: loads with no
# JavaScript error and nothing from the network, sorts, filters, and marking
# rows then downloading gives the expected decisions CSV; the 10^4-row report
# opens and sorts in under 2 s. Skips (exit 0) without chromium or node;
# `tools/install-deps.sh --site` installs them.
review-check: install
	@if ! command -v node > /dev/null || [ ! -x "$${CHROMIUM:-/usr/bin/chromium}" ]; then \
	  echo "review-check: skipped (needs node and chromium: tools/install-deps.sh --site)"; exit 0; fi; \
	if [ ! -d tools/review-check/node_modules/playwright-core ]; then \
	  ( cd tools/review-check && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --silent ) || { \
	  echo "review-check: skipped (could not install playwright-core)"; exit 0; }; fi; \
	R_LIBS=$(LIB) $(RSCRIPT) tools/review-check/make-reports.R check/review-check && \
	R_LIBS=$(LIB) node tools/review-check/check-review.js check/review-check

# The test suite under AddressSanitizer + UndefinedBehaviorSanitizer, then a
# short script under valgrind (see tools/sanitize.sh).
sanitize:
	tools/install-deps.sh --sanitize
	tools/sanitize.sh

valgrind:
	tools/install-deps.sh --sanitize
	tools/sanitize.sh valgrind

# A real scheduler: install (Debian slurm-wlm + munge) and start a one-node
# Slurm cluster, run find_label_issues() folds and the chunked confident
# learning as Slurm jobs through future.batchtools::batchtools_slurm and
# compare them with the sequential answers (identical()), then stop the
# daemons. Needs root (or sudo). See tools/cluster/.
cluster-check: install
	LIB=$(LIB) tools/cluster/cluster-check.sh

clean:
	rm -rf check $(PKG)_*.tar.gz src/*.o src/core/*/*.o src/*.so demo-output inst/bench/build docs sanitize-out
