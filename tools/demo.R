# The main job on bundled data: corrupt 15% of the labels of a 2-D regression
# problem (plus Tang et al.'s 1-D example), find them with gpr_loo(), and
# write a plot. Run through `make demo`.
library(noisylabels)
out <- Sys.getenv("NOISYLABELS_DEMO_DIR", "demo-output")
dir.create(out, showWarnings = FALSE, recursive = TRUE)

set.seed(2026)
d <- sim_tang1d()
fit1 <- gpr_loo(y ~ x, data = d$data)
print(fit1)
m1 <- detection_metrics(noise_scores(fit1), d$corrupted)

f2 <- function(x) sin(2 * x[, 1]) * cos(2 * x[, 2]) + 0.5 * x[, 1]
X <- matrix(runif(600, -2, 2), ncol = 2, dimnames = list(NULL, c("x1", "x2")))
cl <- corrupt_labels(f2(X) + rnorm(300, 0, 0.05), rate = 0.15, level = 1)
fit2 <- gpr_loo(X, cl$y, restarts = 2)
print(fit2)
m2 <- detection_metrics(noise_scores(fit2), cl$corrupted)
li <- label_issues(fit2)
cat(sprintf("\n1-D example (24 labels, 10 corrupted): AUC %.3f\n", m1$auc))
cat(sprintf("2-D example (300 labels, 45 corrupted): AUC %.3f, %d flagged, %d of them corrupted\n",
            m2$auc, sum(li$flagged), sum(cl$is_corrupted[li$row[li$flagged]])))
utils::write.csv(as.data.frame(unclass(li)), file.path(out, "label_issues_2d.csv"), row.names = FALSE)

png(file.path(out, "gpr_loo_demo.png"), width = 1200, height = 550, res = 110)
op <- par(mfrow = c(1, 2))
plot(fit1, which = "fit")
points(d$data$x[d$corrupted], d$data$y[d$corrupted], pch = 1, cex = 1.8, col = "orange")
legend("bottomright", "truly corrupted", pch = 1, col = "orange", bty = "n")
sc <- noise_scores(fit2)
plot(X, pch = 16, cex = 0.4 + 2.5 * sqrt(sc / max(sc)), col = ifelse(li$flagged[order(li$row)], "firebrick", "grey50"),
     main = "2-D: point size = fitted noise variance", xlab = "x1", ylab = "x2")
points(X[cl$corrupted, ], pch = 1, cex = 1.6, col = "orange")
par(op)
invisible(dev.off())
cat("Wrote", file.path(out, "gpr_loo_demo.png"), "and", file.path(out, "label_issues_2d.csv"), "\n")
