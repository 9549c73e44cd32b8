# The R side of the audit-mode check: the CSV downloaded from the audit page
# goes through estimate_errors() and apply_review().
#   Rscript tools/review-check/audit-check.R OUTDIR/audit.rds OUTDIR/review-audit-decisions.csv N_WRONG N_DROPPED
suppressMessages(library(noisylabels))
args <- commandArgs(TRUE)
x <- readRDS(args[1])
dec <- utils::read.csv(args[2])
est <- estimate_errors(x$result, dec)
stopifnot(est$n_reviewed == nrow(x$audit), est$n_wrong == as.integer(args[3]))
cleaned <- apply_review(x$data, args[2])
stopifnot(nrow(cleaned) == nrow(x$data) - as.integer(args[4]))
shifted <- tryCatch(apply_review(x$data[-1, ], args[2]), noisylabels_error_review_rows = function(e) "refused")
stopifnot(identical(shifted, "refused"))
cat(sprintf("estimate_errors: %d of %d wrong, count %.1f (%.0f-%.0f); apply_review dropped %d rows; shifted data refused\n",
            as.integer(est$n_wrong), as.integer(est$n_reviewed), est$wrong_count$estimate, est$wrong_count$lower,
            est$wrong_count$upper, nrow(x$data) - nrow(cleaned)))
