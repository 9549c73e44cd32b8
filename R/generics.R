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
  abort_no_method("noise_scores", object)
}

#' Training observations whose labels look corrupted
#'
#' @param object A fitted model from this package.
#' @param ... Method-specific arguments (e.g. the flagging threshold).
#' @return A data frame with one row per training observation, flagged rows
#'   first and each part by decreasing score, with the same leading columns
#'   for every method and path: `row` (index in the original data), `score`
#'   (= [noise_scores()]), `flagged` (logical, by the method's documented
#'   rule), `given_label` (the label or value as given), `suggested_label`
#'   (the model's class or value for it), `p_wrong` (the probability that
#'   the label is wrong, `NA` for methods without one: `sgd_robust()`,
#'   `label_dist_vb()`) and `q_value` (`NA` likewise); then the
#'   method-specific columns, including the older names of the given and
#'   suggested columns (`label`, `y`, `predicted`, `fitted`,
#'   `suggested_value`). Filter on `flagged` for the issues.
#' @export
label_issues <- function(object, ...) UseMethod("label_issues")

#' @export
label_issues.default <- function(object, ...) {
  abort_no_method("label_issues", object)
}

# The error of a generic given an object it has no method for. A fit of this
# package without label_issues() or noise_scores() is a baseline for
# prediction (label_dist_baseline()), which the hint of those two says.
abort_no_method <- function(fn, object, call = parent.frame()) {
  cls <- class(object)
  hint <- if (fn %in% c("label_issues", "noise_scores", "find_label_issues") &&
              inherits(object, "noisylabels_fit")) {
    c("i" = "A {.cls {cls[1]}} fit is a baseline for prediction: it has no model of wrong labels.")
  }
  abort_input(c("{.fn {fn}} has no method for objects of class {.cls {cls}}.", hint),
              class = "noisylabels_error_no_method", call = call)
}

# A shared column that a method fills, or NULL where it is NA throughout.
non_na <- function(x) if (is.null(x) || all(is.na(x))) NULL else x

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
  # The shared columns: the given and suggested label or value under one pair
  # of names whatever the method calls them, then p_wrong and q_value.
  pick <- function(names) {
    hit <- intersect(names, names(extra))
    if (length(hit)) extra[[hit[1]]]
  }
  out$given_label <- pick(c("given_label", "label", "y")) %||% rep(NA, nrow(out))
  out$suggested_label <- pick(c("suggested_label", "suggested_value", "predicted", "fitted",
                                "best_other")) %||%
    rep(NA, nrow(out))
  out$p_wrong <- as.numeric(pick("p_wrong") %||% rep(NA_real_, nrow(out)))
  out$q_value <- as.numeric(pick("q_value") %||% rep(NA_real_, nrow(out)))
  extra <- extra[setdiff(names(extra), c("given_label", "suggested_label", "p_wrong", "q_value"))]
  for (nm in names(extra)) out[[nm]] <- extra[[nm]]
  # Flagged rows first (where a rule's flags are not a top cut of the
  # score), each group by decreasing score.
  o <- order(!out$flagged, out$score, -out$row, decreasing = c(FALSE, TRUE, TRUE),
             method = "radix")
  structure(lapply(out, function(col) col[o]), names = names(out),
            row.names = c(NA_integer_, -length(o)), class = c("noisylabels_issues", "data.frame"))
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

# Every fitted model of the package is made here: `fields` (a named list)
# becomes an object of class c(class, "noisylabels_fit"). The parent class
# records what the issues layer needs to know of any fit: its `task`
# ("regression" for numeric labels, "classification" for classes) and
# whether its label_issues() give each label a probability of being wrong
# (`has_p_wrong`), which decides how find_label_issues() counts and flags.
new_noisylabels_fit <- function(fields, class, task = c("regression", "classification"),
                                p_wrong = FALSE) {
  stopifnot(is.list(fields), is.character(class), length(class) >= 1L,
            is.logical(p_wrong), length(p_wrong) == 1L, !is.na(p_wrong))
  task <- match.arg(task)
  fields$task <- task
  fields$has_p_wrong <- p_wrong
  structure(fields, class = c(class, "noisylabels_fit"))
}

#' Mean predictive log-density of test labels
#'
#' `mean(log p(y_i | x_i, data))` under a fit's predictive distribution of a
#' new observation. Methods: [gpr_pursuit()] fits (Gaussian: latent variance
#' plus `sigma2`; no outlier variance) and [gpr_baseline()] fits (the same
#' for their underlying GP; for a Yeo-Johnson baseline the density is
#' transformed back to the label scale, with the Jacobian). Other objects
#' are an error of class `noisylabels_error_no_method`.
#'
#' @param object A [gpr_pursuit()] or [gpr_baseline()] fit.
#' @param newdata Test inputs.
#' @param y Test labels.
#' @param ... Unused.
#' @return A single number.
#' @examples
#' set.seed(1)
#' s <- sim_friedman(60); t <- sim_friedman(30)
#' predictive_loglik(gpr_baseline(s$x, s$y), t$x, t$y)
#' @export
predictive_loglik <- function(object, newdata, y, ...) UseMethod("predictive_loglik")

#' @export
predictive_loglik.default <- function(object, newdata, y, ...) {
  abort_no_method("predictive_loglik", object)
}
