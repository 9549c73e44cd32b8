# Which R file's functions call which: the package's call graph at file
# level, and its cycles (strongly connected components of two or more files).
#   Rscript tools/call-graph.R [R-dir] [--edges]
# A call is a symbol used as a function (or passed by name, e.g. to
# lapply()) inside a top-level function of one file that is defined at the
# top level of another file. Exit status 1 when a cycle spans three or more
# files or two families (the part of the file name before the first "-").
args <- commandArgs(TRUE)
dir <- if (length(args) && !startsWith(args[1], "--")) args[1] else "R"
show_edges <- "--edges" %in% args
files <- sort(list.files(dir, pattern = "\\.R$", full.names = TRUE))
files <- files[basename(files) != "RcppExports.R"]
defs <- list()
bodies <- list()
for (f in files) {
  ex <- parse(f, keep.source = FALSE)
  for (e in ex) {
    if (is.call(e) && (identical(e[[1]], as.name("<-")) || identical(e[[1]], as.name("="))) &&
        is.name(e[[2]]) && is.call(e[[3]]) && identical(e[[3]][[1]], as.name("function"))) {
      nm <- as.character(e[[2]])
      defs[[nm]] <- basename(f)
      bodies[[length(bodies) + 1]] <- list(file = basename(f), body = e[[3]])
    }
  }
}
edges <- unique(do.call(rbind, lapply(bodies, function(b) {
  used <- intersect(all.names(b$body), names(defs))
  to <- unique(unlist(defs[used]))
  to <- setdiff(to, b$file)
  if (length(to)) data.frame(from = b$file, to = to)
})))
if (show_edges) for (i in seq_len(nrow(edges))) cat(edges$from[i], "->", edges$to[i], "\n")
# Strongly connected components (Tarjan).
nodes <- sort(unique(c(edges$from, edges$to)))
adj <- split(edges$to, factor(edges$from, levels = nodes))
index <- integer(); low <- integer(); on <- character(); stack <- character(); comps <- list(); counter <- 0L
strong <- function(v) {
  counter <<- counter + 1L
  index[v] <<- counter; low[v] <<- counter
  stack <<- c(stack, v); on <<- c(on, v)
  for (w in adj[[v]]) {
    if (is.na(index[w])) { strong(w); low[v] <<- min(low[v], low[w]) }
    else if (w %in% on) low[v] <<- min(low[v], index[w])
  }
  if (low[v] == index[v]) {
    comp <- character()
    repeat { w <- stack[length(stack)]; stack <<- stack[-length(stack)]; on <<- setdiff(on, w); comp <- c(comp, w); if (w == v) break }
    comps[[length(comps) + 1]] <<- comp
  }
}
for (v in nodes) if (is.na(index[v])) strong(v)
cycles <- Filter(function(c) length(c) > 1, comps)
family <- function(f) sub("[-.].*$", "", f)
cat(sprintf("%d files, %d file-to-file edges, %d cycle(s)\n", length(files), nrow(edges), length(cycles)))
bad <- FALSE
for (c in cycles) {
  fams <- unique(family(c))
  flag <- length(c) >= 3 || length(fams) > 1
  bad <- bad || flag
  cat(sprintf("%s cycle of %d: %s\n", if (flag) "BAD" else "ok ", length(c), paste(sort(c), collapse = ", ")))
}
if (bad) quit(status = 1)
