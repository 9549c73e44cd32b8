# The cost of running find_label_issues' Vecchia leave-one-out pass and its
# chunked confident learning as future jobs, against the in-process path,
# in the same run.
#   OPENBLAS_NUM_THREADS=1 nice -n 19 Rscript inst/bench/find_label_issues/future_jobs.R [n_gp] [n_cl] [pieces]
# Vecchia (n_gp rows, default 20000, d = 3, 40 neighbours, kernel fitted on
# 1,000 rows): the pass in process on 2 OpenMP threads, then in `pieces`
# pieces (default 4) under plan(sequential) and plan(cluster) with 2 local
# workers. Confident learning (n_cl x 10 probabilities, default 10^6, in a
# binary file, chunks of n_cl / 4 rows): plan(sequential) against the
# 2-worker cluster. CPU time = this process + the workers (read on the
# workers before and after), elapsed = wall time of the call; the answers
# are compared (identical() across plans; the pieces against the OpenMP
# pass by their largest relative difference).
args <- commandArgs(TRUE)
n_gp <- if (length(args) >= 1) as.numeric(args[1]) else 2e4
n_cl <- if (length(args) >= 2) as.numeric(args[2]) else 1e6
pieces <- if (length(args) >= 3) as.integer(args[3]) else 4L
suppressPackageStartupMessages(library(noisylabels))
ns <- asNamespace("noisylabels")
cl <- parallel::makeCluster(2)
on.exit(parallel::stopCluster(cl))
invisible(parallel::clusterEvalQ(cl, suppressPackageStartupMessages(library(noisylabels))))
cpu <- function(t) t[["user.self"]] + t[["sys.self"]]
workers_cpu <- function() sum(unlist(parallel::clusterEvalQ(cl, {
  t <- proc.time(); t[["user.self"]] + t[["sys.self"]]
})))
measure <- function(label, plan, expr) {
  future::plan(plan)
  w0 <- workers_cpu()
  t <- system.time(value <- force(expr))
  w <- workers_cpu() - w0
  cat(sprintf("%-44s elapsed %6.2f s | CPU %6.2f s (here %.2f, workers %.2f)\n", label,
              t[["elapsed"]], cpu(t) + w, cpu(t), w))
  value
}
cluster_plan <- future::tweak(future::cluster, workers = cl)

# Vecchia leave-one-out pass.
set.seed(1)
x <- matrix(runif(n_gp * 3), n_gp, 3)
y <- sin(2 * pi * x[, 1]) + 0.5 * cos(3 * pi * x[, 2]) + rnorm(n_gp, sd = 0.1)
sub <- sample.int(n_gp, 1000)
base <- gpr_baseline(x[sub, ], y[sub], "standard")$fit
xs <- ns$scale_inputs(x, base$x_center, base$x_scale)
ys <- (y - base$mean) / base$y_scale
kernel <- ns$kernel_resolve(base$kernel, xs)
nn <- ns$vecchia_setup(xs, kernel, 40L)$neighbors
noise <- base$sigma2 / base$y_scale^2 + 1e-8
cat(sprintf("Vecchia leave-one-out pass, n = %d, 40 neighbours, %d pieces\n", n_gp, pieces))
omp <- measure("in process, OpenMP 2 threads", future::sequential,
               ns$gp_loo(xs, ys, kernel, noise, nn, threads = 2L))
options(noisylabels.vecchia_pieces = pieces)
seq_p <- measure("pieces, plan(sequential)", future::sequential, ns$gp_loo(xs, ys, kernel, noise, nn))
par_p <- measure("pieces, plan(cluster), 2 local workers", cluster_plan,
                 ns$gp_loo(xs, ys, kernel, noise, nn))
options(noisylabels.vecchia_pieces = NULL)
cat(sprintf("identical across plans: %s; largest relative difference to OpenMP: %.1e\n",
            identical(seq_p, par_p),
            max(abs(unlist(seq_p[1:2]) - unlist(omp[1:2])) / pmax(abs(unlist(omp[1:2])), 1e-300))))

# Chunked confident learning from a binary file.
k <- 10L
true <- sample.int(k, n_cl, TRUE)
l <- matrix(rnorm(n_cl * k), n_cl, k)
l[cbind(seq_len(n_cl), true)] <- l[cbind(seq_len(n_cl), true)] + 2.5
p <- exp(l) / rowSums(exp(l))
given <- ifelse(runif(n_cl) < 0.15, sample.int(k, n_cl, TRUE), true)
path <- tempfile(fileext = ".bin")
writeBin(as.double(t(p)), path)
rm(l, p)
options(noisylabels.chunk_rows = ceiling(n_cl / 4))
cat(sprintf("Confident learning, %g x %d probabilities from a file, 4 chunks\n", n_cl, k))
a <- measure("chunks, plan(sequential) (in process)", future::sequential,
             find_label_issues(labels = given, pred_probs = path, flag_by = "fdr"))
b <- measure("chunks, plan(cluster), 2 local workers", cluster_plan,
             find_label_issues(labels = given, pred_probs = path, flag_by = "fdr"))
cat("identical across plans:", identical(a$label_issues, b$label_issues), "\n")
future::plan(future::sequential)
unlink(path)
