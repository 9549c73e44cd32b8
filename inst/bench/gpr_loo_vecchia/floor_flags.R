# Flagged set of the default gpr_loo() Vecchia fit with and without the
# variance floor (vecchia_floor = 0.01 against 0): 5,000 labels in 3 inputs,
# 10% shifted by N(0, 1). Usage: Rscript floor_flags.R <vecchia_floor>
suppressPackageStartupMessages(library(noisylabels))
f <- as.numeric(commandArgs(TRUE)[1])
set.seed(1); n <- 5000; x <- matrix(runif(3*n), n)
y <- sin(2*pi*x[,1]) + cos(pi*x[,2]) + rnorm(n, sd = 0.1)
bad <- sample(n, n/10); sh <- rnorm(length(bad)); y[bad] <- y[bad] + sh
big <- bad[abs(sh) >= 0.3]
set.seed(2); fit <- suppressWarnings(gpr_loo(x, y, approx = "vecchia", control = gpr_loo_control(vecchia_floor = f)))
li <- label_issues(fit); fl <- li$row[li$flagged]
tp <- sum(fl %in% bad); p <- tp/length(fl); r <- tp/length(bad); rb <- sum(fl %in% big)/length(big)
cat(sprintf("floor=%g conv=%s flagged=%d true=%d precision=%.3f recall=%.3f F1=%.3f recall(|shift|>=3sd)=%.3f\n", f, fit$converged, length(fl), length(bad), p, r, 2*p*r/(p+r), rb))
