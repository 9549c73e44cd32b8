# The chunked path of find_label_issues() (R/issues-chunked.R and its C++
# kernel): the in-memory answer exactly, at chunk boundaries and with an
# uneven last chunk, for every ranking rule; q-values and the in-place sort
# against their R definitions.

sim_probs <- function(n, k, seed) {
  withr::local_seed(seed)
  true <- sample.int(k, n, TRUE)
  l <- matrix(stats::rnorm(n * k), n, k)
  l[cbind(seq_len(n), true)] <- l[cbind(seq_len(n), true)] + 2
  p <- exp(l) / rowSums(exp(l))
  # Rounded rows (ties within and across rows) and values just outside
  # [0, 1] that the checks clamp.
  p[1:40, ] <- round(p[1:40, ], 2)
  p[1:40, ] <- p[1:40, ] / rowSums(p[1:40, ])
  p[41, ] <- c(1.0004, -0.0004, rep(0, k - 2))
  given <- true
  u <- stats::runif(n) < 0.2
  given[u] <- sample.int(k, sum(u), TRUE)
  list(p = p, given = given - 1L)  # cleanlab's 0-based coding
}

test_that("chunks of 300 rows (an uneven last chunk of 101) give the in-memory answer for every rule", {
  s <- sim_probs(1001, 4, 1)
  withr::local_options(noisylabels.chunk_rows = 300)
  bin <- withr::local_tempfile(fileext = ".bin")
  writeBin(as.double(t(s$p)), bin)
  # The chunk function yields data frames of other sizes (1, 499, 500, 1),
  # whose column names name the classes as the matrix's do.
  named <- s$p
  colnames(named) <- c("a", "b", "c", "d")
  cuts <- c(0, 1, 500, 1000, 1001)
  chunks <- function(i) if (i < length(cuts)) as.data.frame(named[(cuts[i] + 1):cuts[i + 1], , drop = FALSE])
  lab_named <- c("a", "b", "c", "d")[s$given + 1L]
  for (rank_by in c("posterior", "self_confidence", "normalized_margin")) {
    for (adjust in c(FALSE, TRUE)) {
      mem <- find_label_issues(labels = s$given, pred_probs = s$p, rank_by = rank_by,
                               adjust = adjust, flag_by = "fdr")
      mem_named <- find_label_issues(labels = lab_named, pred_probs = named, rank_by = rank_by,
                                     adjust = adjust, flag_by = "fdr")
      for (case in list(list(bin, s$given, mem), list(chunks, lab_named, mem_named))) {
        mem <- case[[3]]
        ch <- find_label_issues(labels = case[[2]], pred_probs = case[[1]], rank_by = rank_by,
                                adjust = adjust, flag_by = "fdr")
        expect_identical(ch$label_issues, mem$label_issues)
        expect_identical(ch$confident_learning, mem$confident_learning)
        expect_identical(ch$noise_model, mem$noise_model)
        expect_identical(ch$wrong_count, mem$wrong_count)
        expect_identical(ch$fdr_supported, mem$fdr_supported)
      }
    }
  }
  for (rule in c("posterior", "expected_f1", "rank", "confident_joint")) {
    expect_identical(find_label_issues(labels = s$given, pred_probs = bin, flag_by = rule, n_issues = 50)$label_issues,
                     find_label_issues(labels = s$given, pred_probs = s$p, flag_by = rule, n_issues = 50)$label_issues)
  }
})

test_that("a bad value in a later chunk is reported at its row in the whole", {
  s <- sim_probs(700, 3, 2)
  withr::local_options(noisylabels.chunk_rows = 200)
  p <- s$p
  p[457, 2] <- NaN
  bin <- withr::local_tempfile(fileext = ".bin")
  writeBin(as.double(t(p)), bin)
  expect_error(find_label_issues(labels = s$given, pred_probs = bin, flag_by = "fdr"),
               class = "noisylabels_error_na", regexp = "row 457")
  p <- s$p
  p[603, ] <- p[603, ] / 1.05
  writeBin(as.double(t(p)), bin)
  expect_error(find_label_issues(labels = s$given, pred_probs = bin, flag_by = "fdr"),
               class = "noisylabels_error_pred_probs", regexp = "row 603")
  # A later chunk with a column missing.
  chunks <- function(i) if (i == 1) s$p[1:350, ] else if (i == 2) s$p[351:700, 1:2]
  expect_error(find_label_issues(labels = s$given, pred_probs = chunks, flag_by = "fdr"),
               class = "noisylabels_error_pred_probs", regexp = "3 columns")
})
