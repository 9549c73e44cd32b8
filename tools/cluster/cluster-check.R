# The cluster path on a real scheduler: find_label_issues()'s cross-validation
# folds and the chunked confident learning over a file of probabilities, run
# as Slurm jobs through future.batchtools::batchtools_slurm(), must give
# exactly (identical()) the sequential answer. Run by `make cluster-check`
# (tools/cluster/cluster-check.sh starts and stops the one-node cluster);
# needs a running Slurm and the package installed where R_LIBS points.
#
#   Rscript tools/cluster/cluster-check.R [template]
suppressPackageStartupMessages({
  library(noisylabels)
  library(future)
})
args <- commandArgs(trailingOnly = TRUE)
template <- normalizePath(if (length(args)) args[1] else "tools/cluster/slurm.tmpl", mustWork = TRUE)
for (p in c("future.batchtools", "future.apply", "ranger")) {
  if (!requireNamespace(p, quietly = TRUE)) stop("cluster-check needs the ", p, " package")
}
# batchtools lists a user's running jobs with `squeue --user=$USER`: with
# USER unset (e.g. a root shell from a container or CI) squeue lists none,
# and every job still running looks expired.
if (!nzchar(Sys.getenv("USER"))) Sys.setenv(USER = system2("id", "-un", stdout = TRUE))
if (!nzchar(Sys.which("sbatch"))) stop("cluster-check: no sbatch on the PATH (start Slurm first)")

# batchtools keeps its registries (job files, results, logs) under the
# working directory: a fresh one, on the same (here: local) file system as
# the node.
work <- tempfile("cluster-check-")
dir.create(work)
old_wd <- setwd(work)

slurm <- function() {
  plan(future.batchtools::batchtools_slurm, template = template,
       resources = list(ncpus = 1L, memory = 1024L))
}
timed <- function(expr) {
  t0 <- proc.time()[["elapsed"]]
  value <- force(expr)
  list(value = value, seconds = proc.time()[["elapsed"]] - t0)
}
results <- list()
check <- function(name, call) {
  plan(sequential)
  seq_run <- timed(call())
  slurm()
  on.exit(plan(sequential))
  slurm_run <- timed(call())
  same <- identical(slurm_run$value, seq_run$value)
  cat(sprintf("%-52s sequential %6.1f s, Slurm %6.1f s: %s\n", name, seq_run$seconds,
              slurm_run$seconds, if (same) "identical" else "DIFFERENT"))
  if (!same) print(all.equal(slurm_run$value, seq_run$value))
  results[[name]] <<- same
}

t_all <- proc.time()[["elapsed"]]

# 0. The jobs really run under Slurm: a future sees a Slurm job id.
slurm()
ids <- future.apply::future_sapply(1:2, function(i) Sys.getenv("SLURM_JOB_ID"))
plan(sequential)
cat("Slurm job ids of two futures:", paste(ids, collapse = ", "), "\n")
results[["futures run as Slurm jobs"]] <- all(nzchar(ids)) && !anyDuplicated(ids)

# 1. Cross-validation folds (numbers: random forest, 3 folds = 3 jobs).
check("folds: numbers, forest, 3 folds", function() {
  set.seed(5)
  n <- 120
  x <- matrix(stats::runif(n * 3), n, 3)
  y <- sin(4 * x[, 1]) + x[, 2] + stats::rnorm(n, sd = 0.1)
  y[1:6] <- y[1:6] + 3
  find_label_issues(x = x, y = y, method = "forest", folds = 3, threads = 1, verbose = FALSE)$label_issues
})

# 2. Cross-validation folds (classes: iris with 6 flipped labels, 5 folds).
check("folds: classes, iris, 5 folds", function() {
  set.seed(6)
  d <- iris
  flip <- c(3, 40, 55, 90, 120, 145)
  d$Species[flip] <- factor(c("versicolor", "virginica", "setosa", "virginica", "setosa", "versicolor"),
                            levels = levels(d$Species))
  res <- find_label_issues(Species ~ ., d, method = "forest", folds = 5, threads = 1, verbose = FALSE)
  res[c("label_issues", "confident_learning", "noise_model")]
})

# 3. Chunked confident learning: probabilities in a binary and a text file,
#    2 chunks of rows; every pass over a chunk is one job reading its rows.
set.seed(7)
n <- 700
k <- 3
true <- sample.int(k, n, TRUE)
l <- matrix(stats::rnorm(n * k), n, k)
l[cbind(seq_len(n), true)] <- l[cbind(seq_len(n), true)] + 2
p <- exp(l) / rowSums(exp(l))
given <- ifelse(stats::runif(n) < 0.2, sample.int(k, n, TRUE), true)
bin <- file.path(work, "probs.bin")
writeBin(as.double(t(p)), bin)
csv <- file.path(work, "probs.csv")
utils::write.table(format(p, digits = 17), csv, sep = ",", quote = FALSE, row.names = FALSE,
                   col.names = FALSE)
options(noisylabels.chunk_rows = 400)
mem <- find_label_issues(labels = given, pred_probs = p, flag_by = "fdr")
for (path in c(bin, csv)) {
  check(sprintf("chunked confident learning: %s file, 2 chunks", tools::file_ext(path)), function() {
    res <- find_label_issues(labels = given, pred_probs = path, flag_by = "fdr")
    res[c("label_issues", "confident_learning", "noise_model")]
  })
  results[[sprintf("chunked %s = in memory", tools::file_ext(path))]] <-
    identical(find_label_issues(labels = given, pred_probs = path, flag_by = "fdr")[c("label_issues", "confident_learning", "noise_model")],
              mem[c("label_issues", "confident_learning", "noise_model")])
}

# How many Slurm jobs all this was: the job ids count up from the first check.
slurm()
last <- future::value(future::future(Sys.getenv("SLURM_JOB_ID")))
plan(sequential)
cat(sprintf("Slurm jobs submitted: %d (ids %s to %s)\n", as.integer(last) - as.integer(ids[1]) + 1L, ids[1], last))

setwd(old_wd)
unlink(work, recursive = TRUE)
ok <- vapply(results, isTRUE, logical(1))
cat(sprintf("cluster-check: %d passed, %d failed (%.0f s)\n", sum(ok), sum(!ok),
            proc.time()[["elapsed"]] - t_all))
if (!all(ok)) {
  cat("failed:", paste(names(results)[!ok], collapse = "; "), "\n")
  quit(status = 1)
}
