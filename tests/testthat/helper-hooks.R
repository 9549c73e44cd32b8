# The package's test and benchmark hooks (src/rcpp_hooks.h): internal C++
# quantities reached through the one Rcpp export .hook(name, args), e.g.
# hook("chol_loo", A, r, "lapack", 0). Arguments are positional and all
# required (the C++ side checks their number); names are refused so that an
# argument cannot silently land in the wrong place.
hook <- function(name, ...) {
  args <- list(...)
  if (any(nzchar(names(args) %||% ""))) {
    stop("hook(\"", name, "\"): pass the arguments by position, not by name", call. = FALSE)
  }
  noisylabels:::.hook(name, args)
}
