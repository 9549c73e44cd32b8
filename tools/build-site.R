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
# Two fixes of the generated pages (found by make site-check):
# * Debian's pkgdown points MathJax at file:///usr/share/javascript/mathjax,
#   which no visitor of a web site has; use upstream pkgdown's CDN address
#   (the integrity hash in the page is upstream's, for that file).
# * pkgdown 2.0.7's BS5 templates write <img src="" class="logo"> on every
#   page of a package without a logo (an image that cannot load); drop it.
#   (A logo would make init_site() fetch favicons from a web service.)
pages <- list.files("docs", pattern = "[.]html$", recursive = TRUE, full.names = TRUE)
local_mathjax <- "file:///usr/share/javascript/mathjax/MathJax.js"
empty_logo <- '<img src="" class="logo" alt="">'
fixed <- c(mathjax = 0L, logo = 0L)
for (f in pages) {
  html <- readLines(f, warn = FALSE, encoding = "UTF-8")
  hit_m <- grepl(local_mathjax, html, fixed = TRUE)
  hit_l <- grepl(empty_logo, html, fixed = TRUE)
  if (any(hit_m) || any(hit_l)) {
    html <- gsub(local_mathjax, "https://cdnjs.cloudflare.com/ajax/libs/mathjax/2.7.5/MathJax.js",
                 html, fixed = TRUE)
    html <- gsub(empty_logo, "", html, fixed = TRUE)
    writeLines(html, f, useBytes = TRUE)
    fixed <- fixed + c(any(hit_m), any(hit_l))
  }
}
cat(sprintf("site: of %d pages, MathJax address fixed in %d, empty logo <img> removed from %d\n",
            length(pages), fixed[["mathjax"]], fixed[["logo"]]))
cat(sprintf("site: built docs/ in %.1f s\n", proc.time()[["elapsed"]] - t_all))
