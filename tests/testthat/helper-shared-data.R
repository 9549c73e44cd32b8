# Locate the project's shared data folder (`shared/data`, a sibling of the
# source checkout) when it exists. Tests run from the source tree
# (tests/testthat) and from R CMD check's copy (check/<pkg>.Rcheck/tests/testthat),
# so walk up from the working directory instead of assuming a depth.
# NOISYLABELS_SHARED_DATA overrides the search. Returns NULL when absent: the
# package's tests never need it, they skip.
shared_data_path <- function(...) {
  env <- Sys.getenv("NOISYLABELS_SHARED_DATA")
  roots <- if (nzchar(env)) env else character()
  dir <- normalizePath(getwd(), mustWork = FALSE)
  repeat {
    roots <- c(roots, file.path(dir, "shared", "data"))
    parent <- dirname(dir)
    if (identical(parent, dir)) break
    dir <- parent
  }
  for (r in roots) {
    p <- file.path(r, ...)
    if (file.exists(p)) return(p)
  }
  NULL
}
