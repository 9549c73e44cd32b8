# One self-contained HTML file from htmltools tags, without pandoc: every
# HTML dependency (htmlwidgets, DT, jQuery, ...) is inlined as <script> and
# <style> elements, and the files a stylesheet refers to by url() become data
# URIs. (htmlwidgets::saveWidget(selfcontained = TRUE) goes through pandoc,
# which fails on Debian's DT because its stylesheets refer to images through
# symbolic links that are not copied.)

write_self_contained <- function(tags, file, title, scripts = character()) {
  rendered <- htmltools::renderTags(tags)
  deps <- htmltools::resolveDependencies(rendered$dependencies)
  inlined <- vapply(deps, inline_dependency, "")
  html <- c(
    "<!DOCTYPE html>",
    "<html lang=\"en\">",
    "<head>",
    "<meta charset=\"utf-8\">",
    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">",
    sprintf("<title>%s</title>", htmltools::htmlEscape(title)),
    inlined,
    sprintf("<script>%s</script>", escape_script(scripts)),
    rendered$head,
    "</head>",
    "<body>",
    rendered$html,
    "</body>",
    "</html>")
  dir.create(dirname(file), showWarnings = FALSE, recursive = TRUE)
  con <- file(file, open = "w", encoding = "UTF-8")
  on.exit(close(con))
  writeLines(enc2utf8(as.character(html)), con, useBytes = TRUE)
  invisible(file)
}

# The stylesheets and scripts of one htmlDependency, inlined.
inline_dependency <- function(dep) {
  dir <- dep$src$file
  if (is.null(dir)) return("")
  if (!is.null(dep$package)) dir <- system.file(dir, package = dep$package)
  read <- function(rel) paste(readLines(file.path(dir, rel), warn = FALSE, encoding = "UTF-8"),
                              collapse = "\n")
  css <- vapply(unlist(dep$stylesheet), function(rel) {
    sprintf("<style>%s</style>", inline_css_urls(read(rel), dirname(file.path(dir, rel))))
  }, "")
  scripts <- dep$script
  if (is.list(scripts)) scripts <- vapply(scripts, function(s) if (is.list(s)) s$src else s, "")
  js <- vapply(unlist(scripts), function(rel) sprintf("<script>%s</script>", escape_script(read(rel))), "")
  head <- if (is.null(dep$head)) character() else dep$head
  paste(c(css, js, head), collapse = "\n")
}

# url(relative/path) in a stylesheet -> data URI of that file (or none when
# it does not exist, so a missing icon costs an icon and not the page).
inline_css_urls <- function(css, base) {
  m <- gregexpr("url\\(\\s*['\"]?([^'\")]+)['\"]?\\s*\\)", css, perl = TRUE)
  hits <- regmatches(css, m)[[1]]
  for (h in unique(hits)) {
    rel <- sub("url\\(\\s*['\"]?([^'\")]+)['\"]?\\s*\\)", "\\1", h, perl = TRUE)
    if (grepl("^(data:|https?:|#)", rel)) next
    path <- file.path(base, sub("[?#].*$", "", rel))
    repl <- if (file.exists(path)) {
      sprintf("url(\"data:%s;base64,%s\")", mime_of(path),
              jsonlite::base64_enc(readBin(path, "raw", file.size(path))))
    } else "none"
    css <- gsub(h, repl, css, fixed = TRUE)
  }
  css
}

mime_of <- function(path) {
  ext <- tolower(tools::file_ext(path))
  switch(ext, png = "image/png", gif = "image/gif", svg = "image/svg+xml", jpg = ,
         jpeg = "image/jpeg", woff = "font/woff", woff2 = "font/woff2", ttf = "font/ttf",
         eot = "application/vnd.ms-fontobject", "application/octet-stream")
}

# "</script" inside inlined JavaScript would end the element early.
escape_script <- function(js) gsub("</(script)", "<\\\\/\\1", js, ignore.case = TRUE)

read_review_asset <- function(name) {
  path <- system.file("review", name, package = "noisylabels")
  if (!nzchar(path)) abort_input("The review asset {.file {name}} is missing from the installation.")
  paste(readLines(path, warn = FALSE, encoding = "UTF-8"), collapse = "\n")
}
