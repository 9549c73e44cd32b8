# Knit README.Rmd into README.md (`make readme`), or with --check knit it
# into a temporary file and fail when it differs from the committed
# README.md (`make readme-check`). Timings and file sizes are masked in the
# comparison, since they vary from run to run.
args <- commandArgs(TRUE)
check <- "--check" %in% args
if (!requireNamespace("rmarkdown", quietly = TRUE) || !rmarkdown::pandoc_available()) {
  message("readme: needs rmarkdown and pandoc (tools/install-deps.sh installs both)")
  quit(status = if (check) 0 else 1)
}
target <- if (check) file.path(tempdir(), "README.md") else normalizePath("README.md", mustWork = FALSE)
work <- tempfile("readme-")
dir.create(work)
invisible(file.copy("README.Rmd", work))
rmarkdown::render(file.path(work, "README.Rmd"), output_format = rmarkdown::github_document(html_preview = FALSE),
                  output_file = "README.md", output_dir = work, quiet = TRUE, envir = new.env())
invisible(file.copy(file.path(work, "README.md"), target, overwrite = TRUE))
if (!check) quit(status = 0)
mask <- function(x) {
  x <- gsub("[0-9]+(\\.[0-9]+)? s\\b", "<t> s", x)
  gsub("\\([0-9.]+ [KMG]?B,", "(<size>,", x)
}
new <- mask(readLines(target))
old <- mask(readLines("README.md"))
if (!identical(new, old)) {
  m <- min(length(new), length(old))
  d <- c(which(new[seq_len(m)] != old[seq_len(m)]), if (length(new) != length(old)) m + 1)
  message("README.md is not what README.Rmd produces (run `make readme`); first differing lines:")
  for (i in utils::head(d, 5)) {
    message("  line ", i, "\n  committed: ", old[i], "\n  knitted:   ", new[i])
  }
  quit(status = 1)
}
message("readme-check: README.md matches README.Rmd")
