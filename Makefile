# noisylabels developer entry points. See README.md.
R       ?= R
RSCRIPT ?= Rscript
PKG     := noisylabels
VERSION := $(shell sed -n 's/^Version: //p' DESCRIPTION)
TARBALL := $(PKG)_$(VERSION).tar.gz
LIB     ?= $(CURDIR)/check/lib

.PHONY: deps document install demo check test bench clean

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

bench: install
	R_LIBS=$(LIB) inst/bench/run-all.sh

clean:
	rm -rf check $(PKG)_*.tar.gz src/*.o src/*.so demo-output inst/bench/build
