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
      }
    }
  }
  for (rule in c("expected_f1", "rank", "confident_joint")) {
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

test_that("C++ q-values equal fdr_qvalues(), ties included", {
  withr::local_seed(3)
  p <- c(round(stats::runif(2000), 2), 0, 0, 1, 1, -0)
  expect_identical(noisylabels:::.cl_qvalues(p), noisylabels:::fdr_qvalues(p))
  p <- stats::rbeta(5000, 0.3, 3)
  expect_identical(noisylabels:::.cl_qvalues(p), noisylabels:::fdr_qvalues(p))
})

test_that("the in-place sort orders by decreasing score, ties by row, and carries every column", {
  withr::local_seed(4)
  n <- 10000
  # Ties, zeros of both signs, tiny and spread-out values: every radix level.
  score <- c(round(stats::runif(n / 2), 3), stats::rexp(n / 2) * 10^stats::runif(n / 2, -300, 2))
  score[1:10] <- c(0, -0, 0, 1, 1, 5e-324, 5e-324, 1e300, 0, 1)
  score <- sample(score)
  ref <- order(-score, seq_len(n))
  a <- score + 0  # fresh copies: the sort writes into them
  b <- as.numeric(seq_len(n))
  i <- seq_len(n) * 2L
  f <- seq_len(n) %% 3L == 0L
  row <- noisylabels:::.cl_sort_columns(a, list(a, b, i, f))
  expect_identical(row, ref)
  expect_identical(a, score[ref])
  expect_identical(b, as.numeric(ref))
  expect_identical(i, ref * 2L)
  expect_identical(f, ref %% 3L == 0L)
  expect_error(noisylabels:::.cl_sort_columns(a, list(a, a)), "twice")
})

test_that("the radix sort and the block-wise permutation hold on 3 x 10^5 rows", {
  withr::local_seed(5)
  # Runs of equal keys longer than the pair sorts (ties by row), keys that
  # share their leading bytes, both signs, and a wide spread of exponents.
  score <- c(rep(1, 5e4), rep(0.25, 2e4), 0.5 + stats::runif(1e5) * 1e-9,
             round(stats::runif(5e4), 2), stats::rexp(6e4) * 10^stats::runif(6e4, -300, 2),
             -stats::rexp(1e4), rep(c(0, -0), 5e3))
  score <- sample(score)
  n <- length(score)
  ref <- order(-score, seq_len(n))
  a <- score + 0
  b <- as.numeric(seq_len(n))
  i <- seq_len(n) * 2L
  row <- noisylabels:::.cl_sort_columns(a, list(a, b, i))
  expect_identical(row, ref)
  expect_identical(a, score[ref])
  expect_identical(b, as.numeric(ref))
  expect_identical(i, ref * 2L)
  # Ordered by 1 - quality, never stored: the order of the stored score.
  quality <- 1 - stats::runif(n)^4
  quality[1:2e4] <- 1
  q <- quality + 0
  row <- noisylabels:::.cl_sort_columns(q, list(q), complement = TRUE)
  expect_identical(row, order(-(1 - quality), seq_len(n)))
  expect_identical(q, quality[row])
  p <- c(rep(1, 2e4), rep(0, 2e4), stats::rbeta(n - 4e4, 0.3, 3))
  expect_identical(noisylabels:::.cl_qvalues(p), noisylabels:::fdr_qvalues(p))
})
