# Join the CSVs written by bench_pursuit.R (one or several runs) and print,
# per n, the fast pipeline against each reference: CPU-time and elapsed-time
# ratios, factorization counts, support equality and the NMLL relative
# difference, with the issue-3 target check (>= 5x faster, same selected
# support, NMLL within 1e-3 relative).
#
# Usage: Rscript inst/bench/gpr_pursuit/summarise.R results-*.csv
files <- commandArgs(trailingOnly = TRUE)
if (!length(files)) files <- Sys.glob("inst/bench/gpr_pursuit/results*.csv")
res <- do.call(rbind, lapply(seq_along(files), function(j) cbind(utils::read.csv(files[j]), file_order = j)))
# Several measurements of one pipeline at one n (e.g. a re-run after a change
# of the fast pipeline): the file given last wins.
res <- res[order(res$n, res$pipeline, -res$file_order), ]
res <- res[!duplicated(res[c("n", "pipeline")]), ]
sup <- do.call(rbind, lapply(seq_along(files), function(j) {
  f <- sub("results", "supports", files[j])
  if (file.exists(f)) cbind(utils::read.csv(f), file_order = j) else NULL
}))
if (!is.null(sup)) {
  sup <- sup[order(sup$n, sup$pipeline, -sup$file_order), ]
  sup <- sup[!duplicated(sup[c("n", "pipeline")]), ]
}
out <- list()
for (n in sort(unique(res$n))) {
  fast <- res[res$n == n & res$pipeline == "fast", ]
  if (nrow(fast) != 1) next
  for (p in intersect(c("botorch", "botorch_cap"), res$pipeline[res$n == n])) {
    ref <- res[res$n == n & res$pipeline == p, ]
    same <- if (!is.null(sup)) {
      identical(sup$support[sup$n == n & sup$pipeline == "fast"], sup$support[sup$n == n & sup$pipeline == p])
    } else NA
    rel <- abs(fast$nmll - ref$nmll) / abs(ref$nmll)
    cpu_ratio <- ref$cpu_seconds / fast$cpu_seconds
    out[[length(out) + 1]] <- data.frame(
      n = n, reference = p, ref_max_iter = ref$max_iter,
      fast_cpu_s = round(fast$cpu_seconds, 1), ref_cpu_s = round(ref$cpu_seconds, 1),
      cpu_ratio = round(cpu_ratio, 2), elapsed_ratio = round(ref$seconds / fast$seconds, 2),
      fast_fact = fast$factorizations, ref_fact = ref$factorizations,
      fact_ratio = round(ref$factorizations / fast$factorizations, 2),
      size_fast = fast$selected_size, size_ref = ref$selected_size, same_support = same,
      nmll_rel_diff = signif(rel, 2), ref_converged = ref$converged,
      target = if (isTRUE(same) && cpu_ratio >= 5 && rel <= 1e-3) "MET" else "NOT MET")
  }
}
print(do.call(rbind, out), row.names = FALSE)
