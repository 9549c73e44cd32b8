# Fig. 3 / the issue's 40% check under a selection protocol a user can run:
# every hyperparameter is chosen by k-fold cross-validation on the NOISY
# training labels, with the same number of candidate settings for every SGD
# loss, and the test labels (clean) are used only for the reported error.
#
# Usage (from the package root, package installed):
#   Rscript inst/experiments/sgd_robust/noise_cv.R <data> <reps> <noise levels> [folds] [tag]
#   e.g. Rscript inst/experiments/sgd_robust/noise_cv.R a7a 10 0.4 3
#   data: a7a ijcnn1 mnist38 covtype_sim susy_sim
# Writes results/<data><tag>_cv_noise.csv after every repetition (one row per
# method x noise x repetition).
#
# Protocol (why: see README.md, "Diagnosis of the 40% result"):
# * features: [0,1] scaling as in the paper (data.R), then centred on the
#   training-column means (the same shift applied to the test rows). This is a
#   reparametrisation of the same linear model (w'(x - m) + b); it removes the
#   all-positive "common mode" of [0,1] features, along which SGD from w = 0
#   first moves every margin towards the majority class; for the smooth ramp,
#   whose derivative is symmetric about its midpoint, that drives all margins
#   into the flat regions (the constant classifier) on imbalanced data;
# * option B (epoch average) for every SGD loss: with a constant step and 40%
#   flipped labels the last iterate (option A) is dominated by the last few
#   noisy updates (its test error varied by up to 20 points between steps);
# * bias as a constant feature (spec default, = LIBLINEAR -B 1), 15 epochs, w = 0;
# * the same budget for every SGD method: 18 settings = 6 values of lambda in
#   {1e-6, ..., 1e-1} x 3 values of the method's second hyperparameter: the
#   ramp parameter s in {-0.7, -1, -2} (the three published tuples, chosen by
#   CV as in the paper) for the ramp and smooth ramp, with eta = 0.1 (middle of
#   the step grid, fixed a priori); the constant step eta (eta0 for ASGD) in
#   {0.01, 0.1, 1} for the hinge, logistic and Gompertz losses (c = 2 as in the
#   paper). A first run with s fixed at -1 for the ramp family and 5 folds
#   showed the s = -1 smooth ramp still collapsing to the constant classifier on
#   ijcnn1 (see README.md), so s is part of the budget, not fixed;
# * Pegasos (15 shuffled epochs) and LIBLINEAR primal (LiblineaR type 2,
#   bias 1, epsilon 0.01, C = 1/(lambda n)) choose lambda from the same 6 values;
#   LIBLINEAR gets the uncentred [0,1] features, as in the paper: on centred
#   a7a features it predicted 46% positives (test error 29%) for every C and
#   epsilon tried, against 17.5% / 18% uncentred (not investigated further);
# * the same folds for every method; the lowest mean noisy CV error wins, ties
#   to the larger lambda; the winner is refitted on the whole training set;
# * noise: exactly round(p n) training labels flipped (flip_labels), test clean.
#
# SGD_CV_LABELS=clean switches to the other reading of the paper ("lambda by
# 10-fold CV", not said whether on the noisy labels): the settings are chosen
# by CV on the CLEAN training labels of the same rows and folds, as for Table
# 1, and the chosen setting is then fitted on the noisy labels. This is what
# the paper's Fig. 3 may show (tuned once, then corrupted); a user with only
# noisy labels cannot run it. Use a tag, e.g. _cleantuned.
suppressPackageStartupMessages({
  library(noisylabels)
  library(Matrix)
})
args <- commandArgs(TRUE)
dataset <- if (length(args) >= 1) args[1] else "a7a"
reps <- if (length(args) >= 2) as.integer(args[2]) else 10L
noise <- if (length(args) >= 3) as.numeric(strsplit(args[3], ",")[[1]]) else 0.4
folds <- if (length(args) >= 4) as.integer(args[4]) else 3L
tag <- if (length(args) >= 5) args[5] else ""
file_arg <- grep("^--file=", commandArgs(FALSE), value = TRUE)
here <- if (length(file_arg)) dirname(normalizePath(sub("^--file=", "", file_arg))) else "inst/experiments/sgd_robust"
source(file.path(here, "data.R"))
outdir <- file.path(here, "results")
dir.create(outdir, showWarnings = FALSE)

dat <- switch(dataset, a7a = load_a7a(), ijcnn1 = load_ijcnn1(), mnist38 = load_mnist38(),
              covtype_sim = load_covtype_sim(), susy_sim = load_susy_sim(),
              stop("unknown data set ", dataset))
# Centre (dense: the data sets here have d <= 784).
x_raw <- as.matrix(dat$x)
x_test_raw <- as.matrix(dat$x_test)
centre <- colMeans(x_raw)
x_cen <- sweep(x_raw, 2, centre)
x_test_cen <- sweep(x_test_raw, 2, centre)

lambdas <- 10^(-6:-1)
etas <- c(0.01, 0.1, 1)
quiet <- function(expr) {
  tryCatch(withCallingHandlers(expr, noisylabels_warning_convergence = function(w) invokeRestart("muffleWarning")),
           noisylabels_error = function(e) NULL)
}
sgd_method <- function(loss, method = "sgd", s_grid = NULL) {
  grid <- if (is.null(s_grid)) expand.grid(lambda = lambdas, eta = etas, s = -1)
          else expand.grid(lambda = lambdas, eta = 0.1, s = s_grid)
  list(grid = grid,
       fit = function(x, y, p, seed) {
         quiet(sgd_robust(x, y, loss = loss, lambda = p$lambda,
                          s = p$s, seed = seed, control = sgd_robust_control(method = method, eta = p$eta, option = "B")))
       },
       predict = function(f, x) predict(f, x))
}
# A bounded loss started from the logistic fit with the same setting (15
# epochs of each; not the paper's w = 0, and twice the cost): the
# "-warm" methods, off unless named in SGD_CV_METHODS.
sgd_warm <- function(loss, s_grid = NULL) {
  m <- sgd_method(loss, s_grid = s_grid)
  m$fit <- function(x, y, p, seed) {
    f0 <- quiet(sgd_robust(x, y, loss = "logistic", lambda = p$lambda,
                           seed = seed, control = sgd_robust_control(eta = p$eta, option = "B")))
    if (is.null(f0)) return(NULL)
    quiet(sgd_robust(x, y, loss = loss, lambda = p$lambda, s = p$s,
                     seed = seed, init = f0, control = sgd_robust_control(eta = p$eta, option = "B")))
  }
  m
}
methods <- list(
  `SGD(Hinge)` = sgd_method("hinge"),
  `SGD(Log)` = sgd_method("logistic"),
  `SGD(Ramp)` = sgd_method("ramp", s_grid = c(-0.7, -1, -2)),
  `SGD(SRamp)` = sgd_method("smooth_ramp", s_grid = c(-0.7, -1, -2)),
  `SGD(RGomp)` = sgd_method("gompertz"),
  `ASGD(Log)` = sgd_method("logistic", method = "asgd"),
  PEGASOS = list(grid = expand.grid(lambda = lambdas, eta = NA, s = NA),
                 fit = function(x, y, p, seed) {
                   quiet(sgd_robust(x, y, loss = "hinge", lambda = p$lambda, seed = seed, control = sgd_robust_control(method = "pegasos")))
                 },
                 predict = function(f, x) predict(f, x)),
  LIBPrimal = list(grid = expand.grid(lambda = lambdas, eta = NA, s = NA),
                   fit = function(x, y, p, seed) {
                     suppressMessages(LiblineaR::LiblineaR(x, y, type = 2, cost = 1 / (p$lambda * nrow(x)),
                                                           bias = 1, epsilon = 0.01))
                   },
                   predict = function(f, x) suppressMessages(predict(f, x)$predictions),
                   centred = FALSE))
if (!requireNamespace("LiblineaR", quietly = TRUE)) methods$LIBPrimal <- NULL
warm <- list(`SGD(SRamp-warm)` = sgd_warm("smooth_ramp", s_grid = c(-0.7, -1, -2)),
             `SGD(RGomp-warm)` = sgd_warm("gompertz"))
only <- Sys.getenv("SGD_CV_METHODS")  # comma-separated subset, e.g. for re-runs of one method
if (nzchar(only)) {
  methods <- c(methods, warm)
  methods <- methods[intersect(names(methods), strsplit(only, ",")[[1]])]
}

tune_clean <- identical(Sys.getenv("SGD_CV_LABELS"), "clean")
# SGD_CV_FIRST_REP skips the first repetitions: repetition r always uses
# set.seed(1000 r + 100 p), so a run can be extended by further repetitions
# (in another process, with another tag) without repeating the first ones.
first_rep <- as.integer(Sys.getenv("SGD_CV_FIRST_REP", "1"))
if (is.na(first_rep) || first_rep < 1L || first_rep > reps) stop("SGD_CV_FIRST_REP must be in 1..reps")
err_of <- function(m, f, x, y) if (is.null(f)) NA_real_ else mean(as.numeric(as.character(m$predict(f, x))) != y)

rows <- list()
t_start <- Sys.time()
out_file <- file.path(outdir, paste0(dataset, tag, "_cv_noise.csv"))
for (p_noise in noise) for (r in seq(first_rep, reps)) {
  set.seed(1000 * r + round(100 * p_noise))
  fl <- flip_labels(dat$y, p_noise)
  cv_y <- if (tune_clean) dat$y else fl$y
  fold_id <- sample(rep_len(seq_len(folds), length(fl$y)))
  seed <- sample.int(.Machine$integer.max, 1)
  split_folds <- function(x) list(tr = lapply(seq_len(folds), function(k) x[fold_id != k, , drop = FALSE]),
                                  te = lapply(seq_len(folds), function(k) x[fold_id == k, , drop = FALSE]))
  fold_cen <- split_folds(x_cen)
  fold_raw <- NULL
  for (mname in names(methods)) {
    m <- methods[[mname]]
    centred <- !isFALSE(m$centred)
    if (!centred && is.null(fold_raw)) fold_raw <- split_folds(x_raw)
    fx <- if (centred) fold_cen else fold_raw
    tr_x <- fx$tr
    te_x <- fx$te
    x <- if (centred) x_cen else x_raw
    x_test <- if (centred) x_test_cen else x_test_raw
    t0 <- Sys.time()
    cv <- vapply(seq_len(nrow(m$grid)), function(g) {
      mean(vapply(seq_len(folds), function(k) {
        f <- m$fit(tr_x[[k]], cv_y[fold_id != k], m$grid[g, ], seed + k)
        err_of(m, f, te_x[[k]], cv_y[fold_id == k])
      }, numeric(1)))
    }, numeric(1))
    ok <- which(is.finite(cv))
    ord <- ok[order(cv[ok], -m$grid$lambda[ok])]
    best <- m$grid[ord[1], ]
    f <- m$fit(x, fl$y, best, seed)
    secs <- as.numeric(Sys.time() - t0, units = "secs")
    rows[[length(rows) + 1]] <- data.frame(dataset = dat$name, method = mname, noise = p_noise, rep = r,
                                           test_error = err_of(m, f, x_test, dat$y_test),
                                           lambda = best$lambda, eta = best$eta, s = best$s,
                                           cv_error = cv[ord[1]], tuned_on = if (tune_clean) "clean" else "noisy",
                                           settings = nrow(m$grid), folds = folds,
                                           seconds = secs)
  }
  cat(sprintf("[%s] noise %.1f rep %d done (%.0f s)\n", dat$name, p_noise, r,
              as.numeric(Sys.time() - t_start, units = "secs")))
  utils::write.csv(do.call(rbind, rows), out_file, row.names = FALSE)
}
res <- do.call(rbind, rows)
print(stats::aggregate(test_error ~ method + noise, res,
                       function(e) sprintf("%.2f +- %.2f", 100 * mean(e), 100 * sd(e))))
