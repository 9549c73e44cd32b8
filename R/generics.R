#' Per-observation label-noise scores
#'
#' One number per training observation; larger means the label is more likely
#' corrupted. What the number is depends on the model (see each fitting
#' function's documentation, section "Noise scores").
#'
#' @param object A fitted model from this package.
#' @param ... Passed to methods.
#' @return A numeric vector with one score per training observation, in the
#'   original row order.
#' @export
noise_scores <- function(object, ...) UseMethod("noise_scores")

#' @export
noise_scores.default <- function(object, ...) {
  abort_input("{.fn noise_scores} has no method for objects of class {.cls {class(object)}}.")
}

#' Training observations whose labels look corrupted
#'
#' @param object A fitted model from this package.
#' @param ... Method-specific arguments (e.g. the flagging threshold).
#' @return A data frame with one row per training observation, sorted by
#'   decreasing score: `row` (index in the original data), `score`
#'   (= [noise_scores()]), `flagged` (logical, by the method's documented rule),
#'   then method-specific columns. Filter on `flagged` for the issues.
#' @export
label_issues <- function(object, ...) UseMethod("label_issues")

#' @export
label_issues.default <- function(object, ...) {
  abort_input("{.fn label_issues} has no method for objects of class {.cls {class(object)}}.")
}

# Build the label_issues() data frame in the shared format. The formals are
# dot-prefixed so that method-specific columns passed through `...` (say `s`)
# can never partially match them.
new_label_issues <- function(.row, .score, .flagged, ...) {
  extra <- list(...)
  if (length(extra) && (is.null(names(extra)) || any(names(extra) == ""))) {
    stop("new_label_issues(): extra columns must be named")
  }
  if (any(!is.finite(.score))) {
    abort_numeric(c("The fit produced {sum(!is.finite(.score))} non-finite noise score{?s}.",
                    "i" = "This usually means the data's scale is extreme or a column is degenerate; rescale or drop it and refit."),
                  call = NULL)
  }
  out <- data.frame(row = as.integer(.row), score = as.numeric(.score),
                    flagged = as.logical(.flagged), stringsAsFactors = FALSE)
  for (nm in names(extra)) out[[nm]] <- extra[[nm]]
  out <- out[order(-out$score, out$row), , drop = FALSE]
  rownames(out) <- NULL
  class(out) <- c("noisylabels_issues", "data.frame")
  out
}

#' @export
print.noisylabels_issues <- function(x, n = 10, ...) {
  n <- check_count(n, "n", lower = 0)
  nf <- sum(x$flagged)
  cli::cat_line(sprintf("Label issues: %d of %d observations flagged", nf, nrow(x)))
  df <- as.data.frame(unclass(x), stringsAsFactors = FALSE)
  print(utils::head(df, n), row.names = FALSE, digits = 4)
  if (nrow(x) > n) cli::cat_line(sprintf("# ... %d more rows", nrow(x) - n))
  invisible(x)
}
