# Classes: find_label_issues(labels, pred_probs) against cleanlab 2.9's own
# default cleanlab.filter.find_label_issues(labels, pred_probs) on the same
# probabilities, in the same run.
#   PYTHONPATH=/path/to/cleanlab Rscript inst/bench/find_label_issues/cleanlab.R [seeds] [n]
# cleanlab (a benchmark-only peer, not a dependency) needs numpy, scikit-learn,
# pandas, termcolor and tqdm (Debian: python3-sklearn python3-pandas
# python3-termcolor python3-tqdm; tools/install-deps.sh --bench). Without
# python3 or cleanlab the script says so and stops.
#
# Data: x ~ N(mu_y, I) in 8 dimensions, class centres mu ~ N(0, 1.1^2); labels
# flipped at rate 0, 10, 20 or 40%, to a uniformly drawn other class
# ("uniform") or to the next class ("next"); K = 3, 5, 10; n = 5,000.
# Probabilities: out-of-fold (5 folds) multinomial logistic regression
# (nnet::multinom) fitted on the noisy labels, as a user's model would give.
suppressPackageStartupMessages(library(noisylabels))
args <- commandArgs(TRUE)
seeds <- if (length(args) >= 1) seq_len(as.integer(args[1])) else 1:3
n <- if (length(args) >= 2) as.integer(args[2]) else 5000L
py <- Sys.which("python3")
if (file.exists("/usr/bin/python3")) py <- "/usr/bin/python3"
ok <- nzchar(py) && system2(py, c("-c", shQuote("import cleanlab.filter")), stdout = FALSE, stderr = FALSE) == 0
if (!ok) {
  message("cleanlab.R: python3 with cleanlab (and numpy, scikit-learn, pandas, termcolor, tqdm) not found; ",
          "set PYTHONPATH to a cleanlab checkout. Skipping.")
  quit(save = "no", status = 0)
}
if (!requireNamespace("nnet", quietly = TRUE)) { message("cleanlab.R: needs nnet. Skipping."); quit(save = "no") }

sim_case <- function(n, k, rate, noise, seed, d = 8, sep = 1.1) {
  set.seed(seed)
  mu <- matrix(rnorm(k * d, sd = sep), k, d)
  true <- sample.int(k, n, TRUE)
  x <- mu[true, ] + matrix(rnorm(n * d), n, d)
  given <- true
  u <- runif(n) < rate
  if (noise == "uniform") given[u] <- (true[u] + sample.int(k - 1L, sum(u), TRUE) - 1L) %% k + 1L
  else given[u] <- true[u] %% k + 1L
  folds <- sample(rep_len(1:5, n))
  p <- matrix(0, n, k)
  df <- data.frame(x)
  for (f in 1:5) {
    tr <- folds != f
    fit <- nnet::multinom(factor(given[tr], levels = 1:k) ~ ., data = df[tr, ], trace = FALSE, maxit = 300)
    p[!tr, ] <- predict(fit, df[!tr, ], type = "probs")
  }
  list(p = p / rowSums(p), given = given, wrong = given != true)
}

io <- tempfile("cl-bench")
dir.create(io)
cases <- list()
for (k in c(3, 5, 10)) for (rate in c(0, 0.1, 0.2, 0.4)) {
  for (noise in if (rate == 0) "none" else c("uniform", "next")) for (seed in seeds) {
    i <- length(cases) + 1
    s <- sim_case(n, k, rate, noise, seed * 100 + k)
    cases[[i]] <- c(s, k = k, rate = rate, noise = noise, seed = seed)
    writeBin(as.double(t(s$p)), sprintf("%s/p%03d.bin", io, i))
    writeBin(as.integer(s$given - 1L), sprintf("%s/l%03d.bin", io, i), size = 4)
    writeLines(as.character(k), sprintf("%s/k%03d.txt", io, i))
  }
}
script <- file.path(io, "run.py")
writeLines(c(
  "import sys, glob, numpy as np",
  "from cleanlab.filter import find_label_issues",
  "from cleanlab.rank import get_label_quality_scores",
  "d = sys.argv[1]",
  "for f in sorted(glob.glob(d + '/p*.bin')):",
  "    i = f[-7:-4]",
  "    k = int(open(f'{d}/k{i}.txt').read())",
  "    p = np.fromfile(f, dtype=np.float64).reshape(-1, k)",
  "    l = np.fromfile(f'{d}/l{i}.bin', dtype=np.int32)",
  "    find_label_issues(l, p).astype(np.int32).tofile(f'{d}/f{i}.bin')",
  "    get_label_quality_scores(l, p).astype(np.float64).tofile(f'{d}/q{i}.bin')"), script)
ver <- system2(py, c("-c", shQuote("import cleanlab; print(cleanlab.__version__)")), stdout = TRUE)
stopifnot(system2(py, c(script, io)) == 0)

auroc <- function(s, w) {
  if (!any(w) || all(w)) return(NA_real_)
  r <- rank(s)
  (sum(r[w]) - sum(w) * (sum(w) + 1) / 2) / (sum(w) * sum(!w))
}
metrics <- function(f, w) {
  tp <- sum(f & w)
  c(f1 = if (sum(f) + sum(w) > 0) 2 * tp / (sum(f) + sum(w)) else 1,
    precision = if (sum(f)) tp / sum(f) else NA, recall = if (sum(w)) tp / sum(w) else NA,
    flagged = sum(f))
}
in_order <- function(res, col) res$label_issues[[col]][order(res$label_issues$row)]
rows <- list()
for (i in seq_along(cases)) {
  s <- cases[[i]]
  f_cl <- readBin(sprintf("%s/f%03d.bin", io, i), "integer", n, size = 4) == 1L
  q_cl <- readBin(sprintf("%s/q%03d.bin", io, i), "double", n)
  info <- data.frame(k = s$k, rate = s$rate, noise = s$noise, seed = s$seed, wrong = sum(s$wrong))
  res <- find_label_issues(labels = s$given, pred_probs = s$p)  # default: flag_by = "fdr"
  auc_score <- auroc(in_order(res, "score"), s$wrong)
  auc_pw <- auroc(in_order(res, "p_wrong"), s$wrong)
  add <- function(rule, f, auc, est = NA) {
    rows[[length(rows) + 1]] <<- cbind(info, rule = rule, t(metrics(f, s$wrong)), auroc = auc,
                                       estimated = est)
  }
  add("cleanlab default", f_cl, auroc(1 - q_cl, s$wrong))
  add("ours fdr = 0.1 (default)", in_order(res, "flagged"), auc_pw, res$wrong_count$estimate)
  for (rule in c("consensus", "expected_f1")) {
    r <- find_label_issues(labels = s$given, pred_probs = s$p, flag_by = rule)
    add(paste("ours", rule), in_order(r, "flagged"), if (rule == "consensus") auc_score else auc_pw,
        r$wrong_count$estimate)
  }
}
tab <- do.call(rbind, rows)
unlink(io, recursive = TRUE)
cat(sprintf("cleanlab %s, n = %d, seeds %s\n", ver, n, paste(seeds, collapse = ",")))
agg <- aggregate(cbind(f1, precision, recall, auroc, flagged, wrong, estimated) ~ rule + noise + rate + k,
                 data = transform(tab, precision = ifelse(is.na(precision), 0, precision),
                                  recall = ifelse(is.na(recall), 0, recall),
                                  auroc = ifelse(is.na(auroc), 0, auroc),
                                  estimated = ifelse(is.na(estimated), -1, estimated)),
                 FUN = mean)
options(width = 160)
print(agg[order(agg$k, agg$rate, agg$noise, agg$rule), ], digits = 3, row.names = FALSE)
cat("\nMean over the noisy cases (rate > 0):\n")
print(aggregate(cbind(f1, precision, recall, auroc) ~ rule, data = tab[tab$rate > 0, ], FUN = mean),
      digits = 3, row.names = FALSE)
cat("\nAt 0% noise, share of labels flagged:\n")
print(aggregate(flagged ~ rule, data = tab[tab$rate == 0, ], FUN = function(x) mean(x) / n), digits = 3,
      row.names = FALSE)
