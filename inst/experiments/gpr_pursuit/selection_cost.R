# Cost of the default model selection (issue 21): the default fit with
# selection = "bic" against selection = "esd" on the same draws of
# selection.R (problem:cell:replication as in selection_diagnostics.R),
# dense factorizations and elapsed seconds, one process.
#
# Usage (package root): OPENBLAS_NUM_THREADS=1 Rscript inst/experiments/gpr_pursuit/selection_cost.R \
#   friedman10:1:1 friedman10:10:1 hartmann6:1:1 hartmann6:10:1 energy:10:1
suppressPackageStartupMessages(library(noisylabels))
n <- 200L
data_dir <- Sys.getenv("NOISYLABELS_DATA", "../shared/data")
fracs <- c(0.1, 0.2, 0.3, 0.4)
kinds <- c("constant", "uniform", "student_t", "one_sided")
cells <- rbind(data.frame(kind = "none", frac = 0),
               expand.grid(kind = kinds, frac = fracs, stringsAsFactors = FALSE))
# seed index of each problem in the selection.R runs of the README
# (SEL_PROBLEMS=friedman10,hartmann6 and SEL_PROBLEMS=yacht,energy,concrete)
pidx <- c(friedman10 = 1, hartmann6 = 2, yacht = 1, energy = 2, concrete = 3)

# draw() and corrupt() as in selection.R
uci <- function(sub, ycol) {
  f <- file.path(data_dir, sub, "data.txt")
  if (!file.exists(f)) return(NULL)
  d <- unique(as.matrix(utils::read.table(f)))
  list(x = d[, -ycol, drop = FALSE], y = d[, ycol])
}
tables <- list(yacht = uci("yacht", 7), energy = uci("energy", 9), concrete = uci("concrete", 9))
draw <- function(problem) {
  if (problem %in% c("friedman10", "hartmann6")) {
    s <- if (problem == "friedman10") sim_friedman(n + 200, d = 10) else sim_hartmann6(n + 200)
    return(list(x = s$x[1:n, ], y = s$y[1:n], xt = s$x[-(1:n), ], ft = s$f[-(1:n)]))
  }
  tb <- tables[[problem]]
  if (is.null(tb)) stop("data set ", problem, " not found under ", data_dir)
  idx <- sample(nrow(tb$x), min(nrow(tb$x), n + 200))
  tr <- idx[1:n]; te <- idx[-(1:n)]
  list(x = tb$x[tr, ], y = tb$y[tr], xt = tb$x[te, ], ft = tb$y[te])
}
corrupt <- function(y, kind, frac) {
  bad <- which(stats::runif(length(y)) < frac)
  k <- length(bad)
  s <- stats::sd(y)
  y[bad] <- switch(kind,
    none = y[bad],
    constant = max(y) + 3 * s,
    uniform = stats::runif(k, min(y) - s, max(y) + s),
    student_t = y[bad] + s * stats::rt(k, df = 2),
    one_sided = y[bad] + s * (3 + 6 * stats::runif(k)))
  list(y = y, bad = bad)
}
for (a in commandArgs(trailingOnly = TRUE)) {
  sp <- strsplit(a, ":")[[1]]
  p <- sp[1]; i <- as.integer(sp[2]); rep <- as.integer(sp[3])
  set.seed(1000 * pidx[[p]] + 100 * rep + i)
  d <- draw(p)
  cr <- corrupt(d$y, cells$kind[i], cells$frac[i])
  res <- sapply(c("bic", "esd"), function(r) {
    t0 <- proc.time()[["elapsed"]]
    f <- suppressWarnings(gpr_pursuit(d$x, cr$y, selection = r))
    c(f$factorizations, proc.time()[["elapsed"]] - t0)
  })
  cat(sprintf("%-10s cell %2d: factorizations bic %5d esd %5d (x%.2f); seconds bic %.1f esd %.1f (x%.2f)\n",
              p, i, res[1, 1], res[1, 2], res[1, 2] / res[1, 1], res[2, 1], res[2, 2], res[2, 2] / res[2, 1]))
}
