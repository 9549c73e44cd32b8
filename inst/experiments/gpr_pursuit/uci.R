# Ament et al. (2024) App. D.6 setting: UCI yacht, energy, concrete (from
# ../shared/data, not shipped) and Boston (MASS) with the uniform / asymmetric
# / focused outliers of Andrade & Takeda (add_outliers(), spec §6.4) in the
# training set; MAE on the clean test set (random 80/20 split, X and y
# standardised with training statistics).
#
# Usage (package root): OMP_NUM_THREADS=1 [UCI_SETS=yacht,boston] [UCI_FIRST_REP=4] Rscript inst/experiments/gpr_pursuit/uci.R [n_max] [reps]
# n_max caps the training size (subsample) to bound the O(n^3) cost; full
# size: n_max = 1000, reps = 5. Writes
# inst/experiments/gpr_pursuit/results/uci-n<n_max>-r<reps>.csv.
args <- commandArgs(trailingOnly = TRUE)
n_max <- if (length(args) >= 1) as.integer(args[1]) else 1000L
reps <- if (length(args) >= 2) as.integer(args[2]) else 5L
here <- "inst/experiments/gpr_pursuit"
source(file.path(here, "methods.R"))
dir.create(file.path(here, "results"), showWarnings = FALSE)
out_file <- Sys.getenv("EXP_OUT", file.path(here, "results", sprintf("uci-n%d-r%d.csv", n_max, reps)))
data_dir <- Sys.getenv("NOISYLABELS_DATA", "../shared/data")

load_sets <- function() {
  sets <- list()
  rd <- function(sub, ycol) {
    f <- file.path(data_dir, sub, "data.txt")
    if (!file.exists(f)) return(NULL)
    d <- as.matrix(utils::read.table(f))
    list(x = d[, -ycol, drop = FALSE], y = d[, ycol])
  }
  sets$yacht <- rd("yacht", 7)
  sets$energy <- rd("energy", 9)
  sets$concrete <- rd("concrete", 9)
  if (requireNamespace("MASS", quietly = TRUE)) {
    b <- MASS::Boston
    sets$boston <- list(x = as.matrix(b[, names(b) != "medv"]), y = b$medv)
  }
  Filter(Negate(is.null), sets)
}

# UCI_SETS (comma-separated, e.g. "yacht,boston") restricts the run to some
# data sets, so the costly ones can run in separate processes.
only <- Sys.getenv("UCI_SETS", "")
# UCI_FIRST_REP (default 1) skips the first replications, so a run can be
# extended later: replication r always uses set.seed(r), whatever process runs it.
first_rep <- as.integer(Sys.getenv("UCI_FIRST_REP", "1"))
if (is.na(first_rep) || first_rep < 1L || first_rep > reps) stop("UCI_FIRST_REP must be in 1..reps")
sets <- load_sets()
if (nzchar(only)) sets <- sets[intersect(names(sets), strsplit(only, ",")[[1]])]
rows <- list()
for (nm in names(sets)) {
  d <- sets[[nm]]
  keep <- !duplicated(cbind(d$x, d$y))
  d$x <- d$x[keep, , drop = FALSE]; d$y <- d$y[keep]
  for (type in c("none", "uniform", "asymmetric", "focused")) for (ratio in c(0.1, 0.2)) {
    if (type == "none" && ratio > 0.1) next
    for (rep in seq(first_rep, reps)) {
      set.seed(rep)
      n <- length(d$y)
      test <- sample.int(n, round(0.2 * n))
      train <- setdiff(seq_len(n), test)
      if (length(train) > n_max) train <- sort(sample(train, n_max))
      mx <- colMeans(d$x[train, ]); sx <- apply(d$x[train, ], 2, sd); sx[sx == 0] <- 1
      my <- mean(d$y[train]); sy <- sd(d$y[train])
      xs <- scale(d$x, mx, sx); ys <- (d$y - my) / sy
      xtr <- xs[train, ]; ytr <- ys[train]
      bad <- logical(length(train))
      if (type != "none") {
        o <- add_outliers(xtr, ytr, type, ratio)
        xtr <- o$x; ytr <- o$y; bad <- o$is_corrupted
      }
      dup <- duplicated(cbind(xtr, ytr))
      res <- fit_all(xtr[!dup, ], ytr[!dup], xs[test, ], ys[test], bad[!dup])
      res$mae_original <- res$mae * sy
      res$data <- nm; res$outliers <- type; res$ratio <- if (type == "none") 0 else ratio
      res$rep <- rep; res$n_train <- sum(!dup)
      rows[[length(rows) + 1]] <- res
      utils::write.csv(do.call(rbind, rows), out_file, row.names = FALSE)
      cat(nm, type, ratio, rep, "\n")
    }
  }
}
