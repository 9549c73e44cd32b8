# The first run: which rows of a real table have wrong labels? Runs
# find_label_issues() on 2,000 people of the UCI Adult census table (bundled,
# CC BY 4.0; see inst/extdata/SOURCE), prints the summary and the top rows,
# and writes the review report (one HTML file that opens offline) where a
# person marks rows keep / relabel / drop and downloads the decisions.
# Run through `make demo`; the README's first example is this call.
library(noisylabels)
out <- Sys.getenv("NOISYLABELS_DEMO_DIR", "demo-output")
dir.create(out, showWarnings = FALSE, recursive = TRUE)
start <- proc.time()[["elapsed"]]

adult <- read.csv(system.file("extdata", "adult_sample.csv.gz", package = "noisylabels"),
                  stringsAsFactors = TRUE)
set.seed(1)
res <- find_label_issues(income ~ ., data = adult)
summary(res)
head(as.data.frame(res, data = adult)[c("row", "score", "given_label", "suggested_label",
                                        "age", "education", "occupation", "hours_per_week")])
review_report(res, adult, file.path(out, "adult-review.html"))

cat(sprintf("\nDemo done in %.0f s. Open %s in a browser; after review: apply_review(adult, \"decisions.csv\")\n",
            proc.time()[["elapsed"]] - start, file.path(out, "adult-review.html")))
