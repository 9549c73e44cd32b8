# Issue 23 benchmark 1: per-epoch time of one-vs-rest smooth-ramp SGD on
# covtype-shaped 7-class dense data (464,810 x 54: 10 continuous columns in
# [0, 1] and 44 binary ones, as covtype after [0,1] scaling), against
# scikit-learn's SGDClassifier(loss = "hinge") one-vs-rest on the same data in
# the same run (Debian python3-sklearn; skipped when absent).
#
#   MAKEFLAGS=-j1 R CMD INSTALL --preclean --no-multiarch -l <lib> .
#   OPENBLAS_NUM_THREADS=1 R_LIBS=<lib> Rscript inst/bench/sgd/bench_multiclass.R [epochs]
#
# Ours: the core's wall time of the epoch loops (`fit$seconds`) per epoch,
# one shared pass over the rows per epoch updating the 7 models; also the
# whole sgd_robust() call per epoch (step search, per-epoch objective, margins).
# scikit-learn: fit() wall time with max_iter = epochs, tol = None (exactly
# that many epochs), n_jobs = 1 (the 7 binary problems one after the other,
# each with its own pass), per epoch. One process at a time: R first, then
# Python on the same binary file. Debian's python3-sklearn is an optional
# step of tools/install-deps.sh (SGD_BENCH=1).
suppressPackageStartupMessages(library(noisylabels))
args <- commandArgs(trailingOnly = TRUE)
epochs <- if (length(args)) as.integer(args[1]) else 5L
n <- 464810L; d <- 54L; K <- 7L
set.seed(2016)
x <- cbind(matrix(runif(n * 10), n, 10),
           matrix(as.double(runif(n * 44) < 0.08), n, 44))
B <- matrix(rnorm(d * K), d, K)
y <- max.col(x %*% B + matrix(rnorm(n * K, sd = 0.5), n, K), ties.method = "first")
cat(sprintf("data: %d x %d dense, %d classes (sizes %s)\n", n, d, K,
            paste(tabulate(y, K), collapse = " ")))
bin <- tempfile(fileext = ".f64")
con <- file(bin, "wb"); writeBin(as.vector(t(x)), con); writeBin(as.double(y), con); close(con)

t0 <- proc.time()[["elapsed"]]
fit <- suppressMessages(suppressWarnings(
  sgd_robust(x, factor(y), loss = "smooth_ramp", lambda = 1e-6, epochs = epochs, seed = 1)))
call_s <- proc.time()[["elapsed"]] - t0
ours <- fit$seconds / fit$iterations
ours_cpu <- fit$cpu_seconds / fit$iterations
cat(sprintf("ours OvR smooth ramp: %.3f s/epoch (epoch loop, wall), %.3f s/epoch CPU; whole call %.3f s/epoch; eta %g; training error %.4f; shrinks %d\n",
            ours, fit$cpu_seconds / fit$iterations, call_s / epochs, fit$eta,
            mean(predict(fit, x) != y), nrow(fit$step_shrinks)))
# option A (last iterate, no averaging: the same work per step as
# scikit-learn's plain SGD), reported next to the default
fit_a <- suppressMessages(suppressWarnings(
  sgd_robust(x, factor(y), loss = "smooth_ramp", lambda = 1e-6, epochs = epochs, seed = 1, control = sgd_robust_control(option = "A"))))
ours_a <- fit_a$seconds / fit_a$iterations
ours_a_cpu <- fit_a$cpu_seconds / fit_a$iterations
cat(sprintf("ours OvR smooth ramp, option A: %.3f s/epoch (epoch loop, wall), %.3f s/epoch CPU; training error %.4f\n",
            ours_a, ours_a_cpu, mean(predict(fit_a, x) != y)))
rm(x, fit, fit_a); invisible(gc())

py <- sprintf('
import time, sys, warnings
import numpy as np
warnings.filterwarnings("ignore")
try:
    from sklearn.linear_model import SGDClassifier
except ImportError:
    print("sklearn: not installed (skipped)"); sys.exit(0)
import sklearn
raw = np.fromfile("%s", dtype=np.float64)
n, d, epochs = %d, %d, %d
X = raw[: n * d].reshape(n, d)
y = raw[n * d:].astype(int)
clf = SGDClassifier(loss="hinge", alpha=1e-6, max_iter=epochs, tol=None, shuffle=True,
                    random_state=1, n_jobs=1)
t0 = time.perf_counter(); c0 = time.process_time(); clf.fit(X, y)
s = time.perf_counter() - t0; c = time.process_time() - c0
print("sklearn %%s SGDClassifier(hinge) OvR: %%.3f s/epoch (fit wall), %%.3f s/epoch CPU; training error %%.4f" %%
      (sklearn.__version__, s / epochs, c / epochs, np.mean(clf.predict(X) != y)))
print("SKLEARN_SECONDS_PER_EPOCH %%.6f %%.6f" %% (s / epochs, c / epochs))
', bin, n, d, epochs)
# Debian's interpreter (python3-sklearn); SGD_BENCH_PYTHON overrides it.
python <- Sys.getenv("SGD_BENCH_PYTHON", if (file.exists("/usr/bin/python3")) "/usr/bin/python3" else "python3")
out <- tryCatch(system2(python, c("-c", shQuote(py)), stdout = TRUE, stderr = TRUE),
                error = function(e) "python3 not found (skipped)")
cat(out[!grepl("^SKLEARN_SECONDS", out)], sep = "\n")
sk <- as.numeric(strsplit(sub("SKLEARN_SECONDS_PER_EPOCH ", "", grep("^SKLEARN_SECONDS", out, value = TRUE)), " ")[[1]])
if (length(sk)) {
  cat(sprintf("ratio ours / sklearn per epoch: wall %.3f, CPU %.3f (target <= %.3f); option A: wall %.3f, CPU %.3f\n",
              ours / sk[1], ours_cpu / sk[2], 1 / 1.5, ours_a / sk[1], ours_a_cpu / sk[2]))
}
unlink(bin)
