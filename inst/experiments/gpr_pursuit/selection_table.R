# Tables of the selection measurement (selection.R): kind x fraction x rule
# with mean precision, recall, RMSE ratio against the oracle and number
# selected over problems and replications; and the two targets of issue 21
# per problem (0 % outliers: number selected; 30 % constant: precision,
# recall, ratio).
#
# Usage (package root): Rscript inst/experiments/gpr_pursuit/selection_table.R [csv ...]
# (default: every results/selection-*.csv; rows repeated across files, the
# rules without refinement, are counted once).
selection_results <- function(files) {
  r <- do.call(rbind, lapply(files, utils::read.csv))
  r[!duplicated(r[c("problem", "kind", "frac", "rep", "rule")]), ]
}

selection_table <- function(r) {
  r$ratio_le_1.1 <- r$ratio <= 1.1
  agg <- stats::aggregate(
    cbind(precision, recall, ratio, ratio_le_1.1, n_selected, n_true) ~ kind + frac + rule,
    data = transform(r, precision = ifelse(is.na(precision), 1, precision),
                     recall = ifelse(is.na(recall), 1, recall)),
    FUN = mean, na.action = stats::na.pass)
  agg <- agg[order(agg$frac, agg$kind, match(agg$rule, rule_order)), ]
  names(agg)[names(agg) == "ratio_le_1.1"] <- "share_ratio_le_1.1"
  agg
}

targets_table <- function(r) {
  zero <- r[r$kind == "none", ]
  a <- stats::aggregate(cbind(n_selected, ratio) ~ problem + rule, zero, mean)
  names(a)[3:4] <- c("sel_at_0", "ratio_at_0")
  c30 <- r[r$kind == "constant" & r$frac == 0.3, ]
  c30$precision[is.na(c30$precision)] <- 0
  b <- stats::aggregate(cbind(precision, recall, ratio) ~ problem + rule, c30, mean)
  b$hits <- stats::aggregate(ok ~ problem + rule,
                             transform(c30, ok = precision >= 0.9 & recall >= 0.9 & ratio <= 1.1),
                             function(v) paste0(sum(v), "/", length(v)))$ok
  names(b)[3:6] <- c("prec_c30", "rec_c30", "ratio_c30", "targets_met_c30")
  out <- merge(a, b, by = c("problem", "rule"))
  out[order(out$problem, match(out$rule, rule_order)), ]
}

rule_order <- c("botorch", "paper", "bic", "ebic", "bic_refine", "ebic_refine", "esd")

if (sys.nframe() == 0L) {
  args <- commandArgs(trailingOnly = TRUE)
  files <- if (length(args)) args else
    Sys.glob("inst/experiments/gpr_pursuit/results/selection-*.csv")
  r <- selection_results(files)
  options(width = 120)
  cat("Targets per problem (mean over replications; targets_met = precision and recall >= 0.9 and ratio <= 1.1):\n")
  print(targets_table(r), digits = 3, row.names = FALSE)
  cat("\nkind x fraction x rule (mean over problems and replications; precision/recall of an empty selection/truth count as 1):\n")
  print(selection_table(r), digits = 3, row.names = FALSE)
}
