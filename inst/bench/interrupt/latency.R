# Interrupt latency of long fits: each fit runs in a child R process, which
# gets SIGINT (what Ctrl-C sends) `delay` seconds after it starts fitting; the
# script reports the seconds until the child has left the fit and whether the
# fit ended with R's interrupt condition (tryCatch(interrupt = ) fired) and
# the session went on. Needs processx. Run from the package root:
#   Rscript inst/bench/interrupt/latency.R
stopifnot(requireNamespace("processx", quietly = TRUE))

interrupt_latency <- function(setup, fit, delay = 3, limit = 120) {
  code <- c(
    "suppressPackageStartupMessages(library(noisylabels))",
    setup,
    "cat('start\\n')",
    "r <- tryCatch({", fit, "; 'finished'}, interrupt = function(i) 'interrupted',",
    "  error = function(e) paste('error:', conditionMessage(e)))",
    "cat('result:', r, '\\n'); cat('alive\\n')")
  file <- tempfile(fileext = ".R")
  writeLines(code, file)
  p <- processx::process$new(file.path(R.home("bin"), "Rscript"), file, stdout = "|", stderr = "|")
  out <- ""
  repeat {
    p$poll_io(200)
    out <- paste0(out, p$read_output())
    if (grepl("start", out) || !p$is_alive()) break
  }
  Sys.sleep(delay)
  t0 <- Sys.time()
  p$interrupt()
  while (p$is_alive() && !grepl("result:", out) && difftime(Sys.time(), t0, units = "secs") < limit) {
    p$poll_io(20)
    out <- paste0(out, p$read_output())
  }
  latency <- as.numeric(difftime(Sys.time(), t0, units = "secs"))
  p$wait(5000)
  out <- paste0(out, p$read_output())
  if (p$is_alive()) p$kill()
  data.frame(latency_s = round(latency, 2),
             result = trimws(sub(".*result: *([^\n]*).*", "\\1", out)),
             alive = grepl("alive", out))
}

data_setup <- function(n, d = 3) {
  sprintf("set.seed(1); n <- %d; x <- matrix(runif(n * %d), n); y <- sin(3 * x[, 1]) + rnorm(n, sd = 0.1); y[1:20] <- y[1:20] + 3; cls <- factor(ifelse(x[, 1] + rnorm(n, sd = 0.3) > 0.5, 'a', 'b'))", n, d)
}

cases <- list(
  "gpr_loo dense n = 4000" = list(data_setup(4000), "gpr_loo(x, y, approx = 'dense')"),
  "gpr_loo vecchia n = 20000" = list(data_setup(20000), "gpr_loo(x, y, approx = 'vecchia')"),
  "gpr_pursuit n = 2000" = list(data_setup(2000), "gpr_pursuit(x, y)"),
  "gpc_ep n = 3000" = list(data_setup(3000), "gpc_ep(x, cls, approx = 'dense')"),
  "gpc_ep sparse n = 20000" = list(data_setup(20000), "gpc_ep(x, cls, approx = 'sparse')"),
  "sgd_robust 2e5 x 50" = list("set.seed(1); x <- matrix(rnorm(2e5 * 50), 2e5); y <- factor(x[, 1] > 0)",
                               "sgd_robust(x, y, epochs = 500, tol = 0)"),
  "label_dist_vb" = list("set.seed(1); s <- sim_label_dist(M = 5, U = 2000, N = 40000, D = 20, n_test = 10)",
                         "label_dist_vb(s$x, s$groups, s$label_dist, control = label_dist_vb_control(max_iter = 5000, tol = 0, restarts = 20))"),
  "find_label_issues gp n = 8000" = list(data_setup(8000), "find_label_issues(x = x, y = y, method = 'gp')")
)
# CASES="gpr_loo,gpc_ep" runs only the cases whose names contain one of those words.
only <- strsplit(Sys.getenv("CASES"), ",")[[1]]
if (length(only)) cases <- cases[vapply(names(cases), function(nm) any(vapply(only, grepl, logical(1), nm, fixed = TRUE)), logical(1))]
# DELAYS="2,6,12": SIGINT that many seconds into the fit, one run per delay
# (a fit passes through several phases: set-up, factorizations, gradients).
delays <- as.numeric(strsplit(Sys.getenv("DELAYS", "3"), ",")[[1]])
res <- do.call(rbind, lapply(names(cases), function(nm) {
  do.call(rbind, lapply(delays, function(delay) {
    cbind(case = nm, delay_s = delay, interrupt_latency(cases[[nm]][[1]], cases[[nm]][[2]], delay))
  }))
}))
print(res, row.names = FALSE)
cat(sprintf("\nlargest latency: %.2f s (%s); every fit interrupted with the session alive: %s\n",
            max(res$latency_s), res$case[which.max(res$latency_s)],
            all(res$result == "interrupted" & res$alive)))
