# Full-size Table 1 protocol of Tang, Zhu & de Jong (2021) on real data.
# Run from the package root with the shared data beside it:
#   Rscript inst/experiments/gpr_loo/table1.R qm7 500
#   Rscript inst/experiments/gpr_loo/table1.R concrete 500
#   Rscript inst/experiments/gpr_loo/table1.R energy 768 per_cell
# Writes inst/experiments/gpr_loo/results/table1_<data>.csv. With
# TABLE1_TWO_STAGE=1 the cells also score gpr_loo(kernel_fit = "uniform"),
# unpenalised (column mae_full_uniform) and with penalty = "lp",
# lambda = "auto" (column mae_full_auto), and the joint fit with that penalty
# (column mae_full_joint_auto); the file is table1_<data>_twostage.csv.
args <- commandArgs(TRUE)
name <- if (length(args) >= 1) args[1] else "concrete"
n_max <- if (length(args) >= 2) as.integer(args[2]) else 500L
# "per_fold" (refit every CV model's kernel) or "per_cell" (see protocol.R)
refit <- if (length(args) >= 3) args[3] else "per_fold"
two_stage <- nzchar(Sys.getenv("TABLE1_TWO_STAGE"))
here <- "inst/experiments/gpr_loo"
source(file.path(here, "protocol.R"))
set.seed(20210322)
dat <- load_table1_data(name, n_max = n_max)
grid <- expand.grid(level = c(0.1, 0.5, 1, 2), rate = c(0.1, 0.3, 0.5, 0.7, 0.9))
res <- do.call(rbind, lapply(seq_len(nrow(grid)), function(i) {
  t0 <- Sys.time()
  r <- table1_cell(dat$x, dat$y, grid$rate[i], grid$level[i], kernel = dat$kernel, refit_kernel = refit,
                   two_stage = two_stage, auto_penalty = two_stage)
  message(sprintf("%s rate %.0f%% level %.0f%%: AUC %.3f, MAE full %.3g (two-stage %.3g, + auto %.3g, joint + auto %.3g) basic %.3g plain %.3g (%.0f s)",
                  name, 100 * r$rate, 100 * r$level, r$auc, r$mae_full, r$mae_full_uniform, r$mae_full_auto, r$mae_full_joint_auto,
                  r$mae_basic, r$mae_plain,
                  as.numeric(difftime(Sys.time(), t0, units = "secs"))))
  r
}))
res$data <- name; res$n <- length(dat$y); res$refit_kernel <- refit
dir.create(file.path(here, "results"), showWarnings = FALSE)
out <- file.path(here, "results", sprintf("table1_%s%s.csv", name, if (two_stage) "_twostage" else ""))
utils::write.csv(res, out, row.names = FALSE)
message("wrote ", out)
