# gpc_ep() on UCI Adult (census income > 50K) with flipped training labels,
# against logistic regression (glm) and sgd_robust() (smooth ramp loss).
#
# Data: ../shared/data/adult_uci (see its SOURCE.md): adult.data (32,561 rows)
# for training, adult.test (16,281) for testing; rows with a missing value
# ("?") are dropped (30,162 / 15,060 left). Levels of a categorical column
# seen in fewer than 0.5% of the complete training rows are pooled into
# "Other" (native_country keeps United-States, Mexico, Philippines, Other;
# the pooling map comes from the training file only).
# Inputs: 6 continuous columns (age, fnlwgt, education_num, capital_gain,
# capital_loss, hours_per_week) and 8 categorical ones, all through the
# formula `income ~ .`: gpc_ep() gets the categorical columns as categorical
# dimensions of its mixed kernel (the default factors = "categorical"),
# glm() and sgd_robust() as dummy columns.
#
# Protocol per flip rate r in {0, 0.1, 0.2}:
# * a training subsample of n_train rows (ADULT_N, default 2000; the same
#   rows for every r and method), then round(r * n_train) of its labels
#   flipped (nested: the first k of one random permutation);
# * test error on the full test set (its rows whose levels all occur in the
#   subsample; the count is recorded);
# * flip detection: AUC of each method's score against the flipped rows:
#   gpc_ep: its noise score P(label flipped | data) (in-sample posterior);
#   glm, sgd_robust: 1 - the 5-fold out-of-fold probability of the given
#   label (glm: its fitted probability; sgd_robust: Platt-scaled margins, as
#   find_label_issues(method = "sgd_robust") computes them).
# gpc_ep gets `approx = "auto"` when it has that argument (the sparse EP of
# the parallel branch); without it the dense EP is used, hence the subsample.
#
# Usage (from the package root, the library with this branch installed):
#   OPENBLAS_NUM_THREADS=1 Rscript inst/experiments/gpc_ep/adult.R [out.csv]
# Environment: ADULT_N (training subsample, default 2000; "all" for the full
# 30,162), ADULT_RATES (default "0,0.1,0.2"), ADULT_SEED (default 1),
# ADULT_TOL_OUTER (gpc_ep_control(tol_outer =), default 1e-3 as in
# thyroid_table1.R),
# NOISYLABELS_SHARED_DATA (folder holding adult_uci; default ../shared/data).
suppressPackageStartupMessages(library(noisylabels))
args <- commandArgs(trailingOnly = TRUE)
out <- if (length(args) >= 1) args[1] else "adult.csv"
n_env <- Sys.getenv("ADULT_N", "2000")
rates <- as.numeric(strsplit(Sys.getenv("ADULT_RATES", "0,0.1,0.2"), ",")[[1]])
seed <- as.integer(Sys.getenv("ADULT_SEED", "1"))
tol_outer <- as.numeric(Sys.getenv("ADULT_TOL_OUTER", "1e-3"))
data_dir <- Sys.getenv("NOISYLABELS_SHARED_DATA", "../shared/data")
dir <- file.path(data_dir, "adult_uci")
if (!file.exists(file.path(dir, "adult.data.xz"))) stop("adult_uci not found under ", data_dir)

cols <- c("age", "workclass", "fnlwgt", "education", "education_num", "marital_status",
          "occupation", "relationship", "race", "sex", "capital_gain", "capital_loss",
          "hours_per_week", "native_country", "income")
read_adult <- function(file, skip = 0) {
  d <- utils::read.csv(xzfile(file.path(dir, file)), header = FALSE, strip.white = TRUE,
                       na.strings = "?", skip = skip, col.names = cols, stringsAsFactors = FALSE)
  d <- d[stats::complete.cases(d), ]
  d$income <- factor(ifelse(sub("\\.$", "", d$income) == ">50K", ">50K", "<=50K"),
                     levels = c("<=50K", ">50K"))
  d
}
train_all <- read_adult("adult.data.xz")
test <- read_adult("adult.test.xz", skip = 1)
categorical <- c("workclass", "education", "marital_status", "occupation", "relationship",
                 "race", "sex", "native_country")
for (v in categorical) {
  freq <- table(train_all[[v]]) / nrow(train_all)
  keep <- names(freq)[freq >= 0.005]
  pool <- function(x) factor(ifelse(x %in% keep, x, "Other"))
  train_all[[v]] <- pool(train_all[[v]])
  test[[v]] <- factor(ifelse(test[[v]] %in% keep, test[[v]], "Other"))
}
n_train <- if (n_env == "all") nrow(train_all) else min(as.integer(n_env), nrow(train_all))
set.seed(seed)
sub <- sort(sample(nrow(train_all), n_train))
train0 <- train_all[sub, ]
for (v in categorical) train0[[v]] <- droplevels(train0[[v]])
ok <- Reduce(`&`, lapply(categorical, function(v) test[[v]] %in% levels(train0[[v]])))
test <- test[ok, ]
for (v in categorical) test[[v]] <- factor(as.character(test[[v]]), levels = levels(train0[[v]]))
perm <- sample(n_train)
folds <- sample(rep_len(1:5, n_train))
cat(sprintf("training subsample %d of %d, test %d (of %d complete rows with known levels)\n",
            n_train, nrow(train_all), nrow(test), length(ok)))

has_approx <- "approx" %in% names(formals(noisylabels:::gpc_ep.default))
auc <- function(score, truth) if (any(truth)) detection_metrics(score, truth)$auc else NA_real_
given_prob <- function(p_pos, y) ifelse(y == levels(y)[2], p_pos, 1 - p_pos)

# glm: logistic regression on the dummy design (a level absent from a
# fold's training rows gets coefficient 0); out-of-fold P(given label) from 5
# folds, test error from the fit on all training rows.
glm_prob <- function(x, y, xnew) {
  fit <- suppressWarnings(stats::glm.fit(cbind(1, x), as.numeric(y == levels(y)[2]),
                                         family = stats::binomial()))
  b <- fit$coefficients
  b[is.na(b)] <- 0
  stats::plogis(drop(cbind(1, xnew) %*% b))
}
run_glm <- function(train) {
  dtr <- design(train, NULL)
  dte <- design(test, dtr$ref)
  oof <- numeric(nrow(train))
  for (f in 1:5) {
    oof[folds == f] <- glm_prob(dtr$x[folds != f, ], train$income[folds != f], dtr$x[folds == f, ])
  }
  p <- glm_prob(dtr$x, train$income, dte$x)
  list(score = 1 - given_prob(oof, train$income),
       error = mean((p > 0.5) != (test$income == ">50K")))
}

# sgd_robust: standardised dummy design (training statistics), smooth ramp.
design <- function(d, ref) {
  mm <- stats::model.matrix(income ~ ., data = d)[, -1, drop = FALSE]
  if (is.null(ref)) ref <- list(center = colMeans(mm), scale = pmax(apply(mm, 2, stats::sd), 1e-12))
  list(x = sweep(sweep(mm, 2, ref$center), 2, ref$scale, "/"), ref = ref)
}
run_sgd <- function(train) {
  dtr <- design(train, NULL)
  dte <- design(test, dtr$ref)
  fl <- find_label_issues(dtr$x, train$income, method = "sgd_robust", folds = 5, verbose = FALSE)
  p_oof <- fl$pred_probs[, 2]
  fit <- suppressWarnings(sgd_robust(dtr$x, train$income, seed = seed))
  pred <- predict(fit, dte$x)
  list(score = 1 - given_prob(p_oof, train$income), error = mean(pred != test$income))
}

run_gpc <- function(train) {
  args <- list(income ~ ., data = train, control = gpc_ep_control(tol_outer = tol_outer))
  if (has_approx) args$approx <- "auto"
  warn <- character()
  fit <- withCallingHandlers(do.call(gpc_ep, args), warning = function(w) {
    warn <<- c(warn, conditionMessage(w)); invokeRestart("muffleWarning")
  })
  pred <- predict(fit, test)
  list(score = noise_scores(fit), error = mean(pred != test$income), fit = fit,
       warning = paste(gsub("\n", " ", warn), collapse = " | "))
}

rows <- list()
for (r in rates) {
  train <- train0
  k <- round(r * n_train)
  flipped <- perm[seq_len(k)]
  train$income[flipped] <- ifelse(train$income[flipped] == ">50K", "<=50K", ">50K")
  truth <- seq_len(n_train) %in% flipped
  for (m in c("glm", "sgd_robust", "gpc_ep")) {
    set.seed(seed * 100 + round(100 * r))
    tm <- system.time(res <- switch(m, glm = run_glm(train), sgd_robust = run_sgd(train),
                                    gpc_ep = run_gpc(train)))[["elapsed"]]
    f <- res$fit
    rows[[length(rows) + 1]] <- data.frame(
      flip_rate = r, flips = k, method = m, n_train = n_train, n_test = nrow(test),
      test_error = res$error, auc = auc(res$score, truth),
      epsilon = if (is.null(f)) NA else f$epsilon,
      log_z = if (is.null(f)) NA else f$log_z,
      converged = if (is.null(f)) NA else f$converged,
      outer_iterations = if (is.null(f)) NA else f$outer_iterations,
      approx = if (is.null(f)) NA else if (is.null(f$approx)) "dense" else as.character(f$approx),
      tol_outer = if (is.null(f)) NA else tol_outer, seconds = tm, load = sprintf("%.2f", utils::tail(as.numeric(
        strsplit(sub(".*load average: ", "", system("uptime", intern = TRUE)), ", ")[[1]]), 3)[1]),
      warning = if (is.null(res$warning)) "" else res$warning)
    print(rows[[length(rows)]][, 1:13], digits = 4, row.names = FALSE)
    utils::write.csv(do.call(rbind, rows), out, row.names = FALSE)
  }
}
