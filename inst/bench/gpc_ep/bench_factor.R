# gpc_ep(y ~ ., data) with 3 numeric inputs and a 4-level factor (issue 30):
# the formula marks the factor categorical (mixed kernel, one precision per
# input), approx = "auto" chooses FITC at this size. Simulated data: x1..x3
# standard normal, g uniform on 4 levels with its own offset of the boundary
# sin(1.5 x1) + 0.5 x2^2 - 0.5 - x3 + offset(g) = 0, 10% of the labels
# flipped at random. Records CPU and elapsed time, peak resident memory
# (VmHWM), the load average, the AUC of P(label wrong) against the flips,
# EP runs and the fitted epsilon. Run each n in its own process. The third
# argument is gpc_ep()'s `threads` (the BLAS threads inside the fit; default
# 1); the fourth and fifth set gpc_ep_control()'s tol_logz and tol_site
# (defaults 1e-6, 1e-4).
# Usage: Rscript inst/bench/gpc_ep/bench_factor.R [n] [seed] [threads] [tol_logz] [tol_site]
args <- commandArgs(TRUE)
n <- if (length(args)) as.numeric(args[1]) else 2e4
seed <- if (length(args) > 1) as.integer(args[2]) else 20261127L
threads <- if (length(args) > 2) as.integer(args[3]) else 1L
suppressPackageStartupMessages(library(noisylabels))
control <- gpc_ep_control(tol_logz = if (length(args) > 3) as.numeric(args[4]) else 1e-6,
                          tol_site = if (length(args) > 4) as.numeric(args[5]) else 1e-4)
`%||%` <- function(a, b) if (is.null(a)) b else a
set.seed(seed)
x <- matrix(stats::rnorm(3 * n), n, 3, dimnames = list(NULL, paste0("x", 1:3)))
g <- factor(sample(c("a", "b", "c", "d"), n, TRUE))
offset <- c(a = -1, b = -0.3, c = 0.4, d = 1.2)[as.character(g)]
f <- sin(1.5 * x[, 1]) + 0.5 * x[, 2]^2 - 0.5 - x[, 3] + offset
y <- ifelse(f > 0, "pos", "neg")
flipped <- sample.int(n, round(0.1 * n))
y[flipped] <- ifelse(y[flipped] == "pos", "neg", "pos")
data <- data.frame(y = factor(y, levels = c("neg", "pos")), x, g = g)
load0 <- readLines("/proc/loadavg")
tm <- system.time(fit <- gpc_ep(y ~ ., data = data, control = control, threads = threads))
kb <- as.numeric(gsub("[^0-9]", "", grep("VmHWM", readLines("/proc/self/status"), value = TRUE)))
auc <- detection_metrics(noise_scores(fit), flipped)$auc
cat(sprintf("n = %d, threads %d, tol_logz %g, tol_site %g: approx %s (m = %s), %.1f s elapsed, %.1f s CPU, peak %.2f GB, AUC P(wrong) %.4f, epsilon %.4f, converged %s\n",
            as.integer(n), threads, control$tol_logz,
            control$tol_site, fit$approx, format(fit$n_inducing %||% NA), tm[["elapsed"]],
            tm[["user.self"]] + tm[["sys.self"]], kb / 2^20, auc, fit$epsilon %||% NA,
            format(fit$converged %||% NA)))
cat("load average before / after:", load0, "/", readLines("/proc/loadavg"), "\n")
