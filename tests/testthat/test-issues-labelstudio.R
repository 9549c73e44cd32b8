ls_fixture <- function() {
  p <- rbind(c(0.9, 0.1), c(0.8, 0.2), c(0.1, 0.9), c(0.2, 0.8), c(0.95, 0.05), c(0.7, 0.3),
             c(0.05, 0.95), c(0.85, 0.15))
  colnames(p) <- c("a", "b")
  d <- data.frame(x = 1:8, y = c("a", "a", "b", "b", "b", "a", "a", "a"))
  list(d = d, res = find_label_issues(labels = d$y, pred_probs = p))
}

# Label Studio's export: each task with one annotation, as a reviewer would.
annotate <- function(tasks, answers) {
  for (i in seq_along(tasks)) {
    a <- answers[[as.character(tasks[[i]]$data$row)]]
    if (is.null(a)) next
    value <- if (is.numeric(a)) list(number = a) else list(choices = list(a))
    tasks[[i]]$annotations <- list(list(id = i, was_cancelled = FALSE, result = list(list(
      from_name = if (identical(a, "(drop this row)")) "action" else "label", to_name = "record",
      type = if (is.numeric(a)) "number" else "choices", value = value))))
  }
  tasks
}

test_that("Label Studio export carries the suggestion with score = label quality", {
  f <- ls_fixture()
  file <- withr::local_tempfile(fileext = ".json")
  expect_message(label_studio_export(f$res, f$d, file, rows = "all", response = "y"), "Wrote 8 tasks")
  tasks <- jsonlite::read_json(file)
  expect_length(tasks, 8)
  li <- f$res$label_issues
  t1 <- tasks[[1]]
  r <- t1$data$row
  expect_equal(t1$predictions[[1]]$score, li$label_quality[li$row == r])
  expect_identical(t1$predictions[[1]]$result[[1]]$value$choices[[1]],
                   as.character(li$suggested_label[li$row == r]))
  expect_identical(t1$data$record$x, f$d$x[r])
  expect_null(t1$data$record$y)
  # the most doubtful label first
  q <- vapply(tasks, function(t) t$predictions[[1]]$score, 0)
  expect_false(is.unsorted(q))
  cfg <- readLines(sub("\\.json$", "-config.xml", file))
  expect_true(any(grepl('<Choice value="a" />', cfg, fixed = TRUE)))
  expect_true(any(grepl("(drop this row)", cfg, fixed = TRUE)))
})

test_that("Label Studio round trip: export, annotate, import, apply", {
  f <- ls_fixture()
  file <- withr::local_tempfile(fileext = ".json")
  suppressMessages(label_studio_export(f$res, f$d, file, rows = "all", response = "y"))
  tasks <- jsonlite::read_json(file)
  answers <- list("7" = "b", "5" = "(drop this row)", "1" = "a")
  exported <- withr::local_tempfile(fileext = ".json")
  jsonlite::write_json(annotate(tasks, answers), exported, auto_unbox = TRUE, digits = NA)
  dec <- label_studio_import(exported, label_column = "y")
  expect_identical(dec$row, c(1L, 5L, 7L))
  expect_identical(dec$decision, c("keep", "drop", "relabel"))
  expect_identical(dec$new_label, c("", "", "b"))
  out <- apply_review(f$d, dec)
  expect_identical(out$x, c(1:4, 6:8))
  expect_identical(out$y[out$x == 7], "b")
})

test_that("numeric labels export as numbers and come back as relabels", {
  set.seed(2)
  x <- runif(30)
  y <- x + rnorm(30, sd = 0.01)
  y[4] <- 3
  res <- find_label_issues(labels = y, predictions = x, n_issues = 2)
  file <- withr::local_tempfile(fileext = ".json")
  suppressMessages(label_studio_export(res, data.frame(x = x, y = y), file, response = "y"))
  tasks <- jsonlite::read_json(file)
  expect_length(tasks, 2)
  expect_identical(tasks[[1]]$predictions[[1]]$result[[1]]$type, "number")
  exported <- withr::local_tempfile(fileext = ".json")
  jsonlite::write_json(annotate(tasks, list("4" = 0.5)), exported, auto_unbox = TRUE, digits = NA)
  dec <- label_studio_import(exported)
  expect_identical(dec$decision, "relabel")
  out <- apply_review(y, dec)
  expect_identical(out[4], 0.5)
  expect_true(any(grepl("<Number", readLines(sub("\\.json$", "-config.xml", file)))))
})

test_that("an audit sample goes to Label Studio as blind tasks and its verdicts come back", {
  set.seed(5)
  n <- 60
  p <- matrix(runif(2 * n), n, 2, dimnames = list(NULL, c("a", "b")))
  p <- p / rowSums(p)
  d <- data.frame(x = seq_len(n), y = colnames(p)[max.col(p)])
  res <- find_label_issues(labels = d$y, pred_probs = p)
  a <- audit_sample(res, 10, seed = 2)
  f <- withr::local_tempfile(fileext = ".json")
  suppressMessages(label_studio_export(res, d, f, rows = a, response = "y"))
  tasks <- jsonlite::read_json(f)
  expect_identical(vapply(tasks, function(t) as.integer(t$data$row), 1L), a$row)
  expect_true(all(vapply(tasks, function(t) is.null(t$predictions), TRUE)))
  # Annotate: the first three relabelled, the rest kept.
  for (i in seq_along(tasks)) {
    given <- tasks[[i]]$data$given_label
    answer <- if (i <= 3) setdiff(c("a", "b"), given) else given
    tasks[[i]]$annotations <- list(list(result = list(list(from_name = "label", to_name = "record",
                                                         type = "choices", value = list(choices = list(answer))))))
  }
  g <- withr::local_tempfile(fileext = ".json")
  jsonlite::write_json(tasks, g, auto_unbox = TRUE)
  back <- label_studio_import(g, audit = a)
  expect_identical(back$wrong, seq_len(10) <= 3)
  expect_identical(estimate_errors(res, back)$n_wrong, 3)
})
