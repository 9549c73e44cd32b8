# Reproduction of Han, Tsang & Chen (2016) Table 1 (clean data) and Fig. 3
# (test error vs fraction of flipped training labels), plus the per-epoch test
# error of Fig. 2, for the methods of the paper's section 5.1.
#
# Usage (from the package root, package installed):
#   Rscript inst/experiments/sgd_robust/noise_curves.R a7a 10 0,0.2,0.4,0.6 [tag]
#   datasets: a7a ijcnn1 mnist38 covtype_sim susy_sim
# Writes inst/experiments/sgd_robust/results/<dataset><tag>_noise.csv (one row
# per method x noise x repetition) and <dataset><tag>_epochs.csv (test error
# per epoch). Repetition r uses the seed 1000 r + 100 p for every process.
#
# Protocol (deviations from the paper, which does not state all of these):
# * hyperparameters per method, noise level and repetition are chosen on a
#   random 20% hold-out of the (noisy) training set, not by 10-fold CV (time);
#   grids: lambda in {1e-6, ..., 1e-2}, constant eta in {1e-3, 1e-2, 1e-1},
#   s in {-0.7, -1, -2} (ramp, smooth ramp), c = 2 (Gompertz);
#   the chosen setting is refitted on the whole training set;
# * 15 epochs, w = 0, bias as a constant feature, option A;
# * ASGD(Log): eta0 from the same eta grid; Pegasos: 15 shuffled epochs;
# * LIBLINEAR primal (LiblineaR type 2, bias 1, epsilon 0.01), C = 1/(lambda n);
# * noise: exactly round(p n) training labels flipped (flip_labels), test clean.
suppressPackageStartupMessages({
  library(noisylabels)
  library(Matrix)
})
args <- commandArgs(TRUE)
dataset <- if (length(args) >= 1) args[1] else "a7a"
reps <- if (length(args) >= 2) as.integer(args[2]) else 10L
noise <- if (length(args) >= 3) as.numeric(strsplit(args[3], ",")[[1]]) else c(0, 0.2, 0.4, 0.6)
tag <- if (length(args) >= 4) args[4] else ""  # output file suffix, for runs split over processes
file_arg <- grep("^--file=", commandArgs(FALSE), value = TRUE)
here <- if (length(file_arg)) dirname(normalizePath(sub("^--file=", "", file_arg))) else "inst/experiments/sgd_robust"
source(file.path(here, "data.R"))
outdir <- file.path(here, "results")
dir.create(outdir, showWarnings = FALSE)

dat <- switch(dataset, a7a = load_a7a(), ijcnn1 = load_ijcnn1(), mnist38 = load_mnist38(),
              covtype_sim = load_covtype_sim(), susy_sim = load_susy_sim(),
              stop("unknown data set ", dataset))

lambdas <- 10^(-6:-2)
etas <- c(1e-3, 1e-2, 1e-1)
svals <- c(-0.7, -1, -2)
quiet <- function(expr) {
  tryCatch(withCallingHandlers(expr, noisylabels_warning_convergence = function(w) invokeRestart("muffleWarning")),
           noisylabels_error = function(e) NULL)
}
sgd_method <- function(loss, method = "sgd", s_grid = -1) {
  list(grid = expand.grid(lambda = lambdas, eta = etas, s = s_grid),
       fit = function(x, y, p, seed, xv = NULL, yv = NULL) {
         quiet(sgd_robust(x, y, loss = loss, lambda = p$lambda,
                          s = p$s, seed = seed, x_valid = xv, y_valid = yv, control = sgd_robust_control(method = method, eta = p$eta, option = "A")))
       },
       predict = function(f, x) predict(f, x))
}
methods <- list(
  `SGD(Hinge)` = sgd_method("hinge"),
  `SGD(Log)` = sgd_method("logistic"),
  `SGD(Ramp)` = sgd_method("ramp", s_grid = svals),
  `SGD(SRamp)` = sgd_method("smooth_ramp", s_grid = svals),
  `SGD(RGomp)` = sgd_method("gompertz"),
  `ASGD(Log)` = sgd_method("logistic", method = "asgd"),
  PEGASOS = list(grid = expand.grid(lambda = lambdas, eta = NA, s = -1),
                 fit = function(x, y, p, seed, xv = NULL, yv = NULL) {
                   quiet(sgd_robust(x, y, loss = "hinge", lambda = p$lambda,
                                    seed = seed, x_valid = xv, y_valid = yv, control = sgd_robust_control(method = "pegasos")))
                 },
                 predict = function(f, x) predict(f, x)),
  LIBPrimal = list(grid = expand.grid(lambda = lambdas, eta = NA, s = NA),
                   fit = function(x, y, p, seed, xv = NULL, yv = NULL) {
                     suppressMessages(LiblineaR::LiblineaR(x, y, type = 2, cost = 1 / (p$lambda * nrow(x)),
                                                           bias = 1, epsilon = 0.01))
                   },
                   predict = function(f, x) suppressMessages(predict(f, x)$predictions)))
if (!requireNamespace("LiblineaR", quietly = TRUE)) methods$LIBPrimal <- NULL

err_of <- function(m, f, x, y) if (is.null(f)) NA_real_ else mean(as.numeric(as.character(m$predict(f, x))) != y)

rows <- list(); epochs <- list()
t_start <- Sys.time()
for (p_noise in noise) for (r in seq_len(reps)) {
  set.seed(1000 * r + round(100 * p_noise))
  fl <- flip_labels(dat$y, p_noise)
  hold <- sample(length(fl$y), round(length(fl$y) / 5))
  seed <- sample.int(.Machine$integer.max, 1)
  for (mname in names(methods)) {
    m <- methods[[mname]]
    val <- vapply(seq_len(nrow(m$grid)), function(g) {
      f <- m$fit(dat$x[-hold, , drop = FALSE], fl$y[-hold], m$grid[g, ], seed)
      err_of(m, f, dat$x[hold, , drop = FALSE], fl$y[hold])
    }, numeric(1))
    best <- m$grid[which.min(val), ]
    trace_it <- r == 1 && grepl("SGD|PEGASOS", mname)
    t0 <- Sys.time()
    f <- m$fit(dat$x, fl$y, best, seed, if (trace_it) dat$x_test, if (trace_it) dat$y_test)
    secs <- as.numeric(Sys.time() - t0, units = "secs")
    te <- err_of(m, f, dat$x_test, dat$y_test)
    rows[[length(rows) + 1]] <- data.frame(dataset = dat$name, method = mname, noise = p_noise, rep = r,
                                           test_error = te, lambda = best$lambda, eta = best$eta,
                                           s = best$s, holdout_error = min(val), seconds = secs)
    if (trace_it && !is.null(f)) {
      epochs[[length(epochs) + 1]] <- data.frame(dataset = dat$name, method = mname, noise = p_noise,
                                                 epoch = f$trace$epoch, test_error = f$trace$valid_error,
                                                 objective = f$trace$objective)
    }
  }
  cat(sprintf("[%s] noise %.1f rep %d done (%.0f s)\n", dat$name, p_noise, r,
              as.numeric(Sys.time() - t_start, units = "secs")))
  utils::write.csv(do.call(rbind, rows), file.path(outdir, paste0(dataset, tag, "_noise.csv")), row.names = FALSE)
  if (length(epochs)) utils::write.csv(do.call(rbind, epochs), file.path(outdir, paste0(dataset, tag, "_epochs.csv")),
                                       row.names = FALSE)
}
res <- do.call(rbind, rows)
print(stats::aggregate(test_error ~ method + noise, res, function(e) sprintf("%.2f +- %.2f", 100 * mean(e), 100 * sd(e))))
