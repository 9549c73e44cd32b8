# Build the pkgdown site into docs/ from the installed package (make site
# installs it first into check/lib and puts that on R_LIBS). Prints the time
# taken by the reference pages and by the articles (the vignettes are run).
if (!requireNamespace("pkgdown", quietly = TRUE)) {
  stop("make site needs the pkgdown package (Debian: r-cran-pkgdown; tools/install-deps.sh installs it)")
}
timed <- function(label, expr) {
  t0 <- proc.time()[["elapsed"]]
  force(expr)
  cat(sprintf("site: %s took %.1f s\n", label, proc.time()[["elapsed"]] - t0))
}
# Build offline: no CRAN/Bioconductor look-up for the sidebar links.
options(pkgdown.internet = FALSE)
t_all <- proc.time()[["elapsed"]]
pkg <- pkgdown::as_pkgdown(".")
timed("init", pkgdown::init_site(pkg))
timed("home", pkgdown::build_home(pkg, preview = FALSE))
timed("reference", pkgdown::build_reference(pkg, lazy = FALSE, examples = TRUE, devel = FALSE,
                                            preview = FALSE))
timed("articles", pkgdown::build_articles(pkg, lazy = FALSE, preview = FALSE))
timed("news", pkgdown::build_news(pkg, preview = FALSE))
timed("search index", pkgdown::build_search(pkg))
# Debian's pkgdown points MathJax at file:///usr/share/javascript/mathjax,
# which no visitor of a web site has; use upstream pkgdown's CDN address
# (the integrity hash in the page is upstream's, for that file).
pages <- list.files("docs", pattern = "[.]html$", recursive = TRUE, full.names = TRUE)
local_mathjax <- "file:///usr/share/javascript/mathjax/MathJax.js"
fixed <- 0L
for (f in pages) {
  html <- readLines(f, warn = FALSE, encoding = "UTF-8")
  hit <- grepl(local_mathjax, html, fixed = TRUE)
  if (any(hit)) {
    html[hit] <- gsub(local_mathjax, "https://cdnjs.cloudflare.com/ajax/libs/mathjax/2.7.5/MathJax.js",
                      html[hit], fixed = TRUE)
    writeLines(html, f, useBytes = TRUE)
    fixed <- fixed + 1L
  }
}
cat(sprintf("site: MathJax address fixed in %d of %d pages\n", fixed, length(pages)))
cat(sprintf("site: built docs/ in %.1f s\n", proc.time()[["elapsed"]] - t_all))
