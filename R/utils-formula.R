# One model frame for every formula interface (gpr_loo, cv_gpr_loo,
# gpr_pursuit, gpc_ep, label_dist_vb, sgd_robust, cv_sgd_robust,
# find_label_issues) and for predict() on their fits. Each problem with the
# formula or the data is a classed error at the entry point that says what to
# do; predict() rebuilds the design from newdata through the same checks, with
# the training terms (and the classes of their variables) and factor levels.

# ---- training ----------------------------------------------------------------

# The model frame of `formula` in `data`: `response` is "required" (a
# two-sided formula) or "none" (a one-sided one, label_dist_vb); `subset` is
# an evaluated row selection or NULL. Missing values are handled here, not by
# model.frame(): na.fail names the first incomplete row, na.omit/na.exclude
# drop rows and record them as model.frame() would (attribute "na.action").
# Unused factor levels are dropped. Returns the frame, its terms (with the
# "dataClasses" attribute), the response (NULL without one), the factor
# levels and the na.action record.
model_frame <- function(formula, data, na.action = stats::na.omit, response = c("required", "none"),
                        subset = NULL, call = parent.frame()) {
  response <- match.arg(response)
  if (!inherits(formula, "formula")) {
    abort_input("The formula interface needs a formula such as {.code y ~ x1 + x2}, not {.cls {class(formula)}}.",
                class = "noisylabels_error_formula", call = call)
  }
  two_sided <- length(formula) == 3L
  if (response == "required" && !two_sided) {
    abort_input(c("The formula has no response on its left-hand side.",
                  "i" = "Write the labels' column on the left, e.g. {.code y ~ x1 + x2}."),
                class = "noisylabels_error_formula", call = call)
  }
  if (response == "none" && two_sided) {
    abort_input(c("The formula must be one-sided, {.code ~ features}.",
                  "i" = "The labels come from {.arg label_dist}, not from a response."),
                class = "noisylabels_error_formula", call = call)
  }
  if (missing(data)) {
    abort_input(c("The formula interface needs {.arg data}, a data frame with the formula's variables.",
                  "i" = "Call e.g. {.code f(y ~ x1 + x2, data = d)}, or the matrix interface {.code f(x, y)}."),
                class = "noisylabels_error_formula", call = call)
  }
  data <- formula_data(data, "data", call = call)
  if (nrow(data) == 0L) {
    abort_input("{.arg data} has no rows.", class = "noisylabels_error_formula", call = call)
  }
  check_formula_variables(formula, data, "data", call = call)
  if (!is.null(subset)) {
    rows <- tryCatch(seq_len(nrow(data))[subset], error = function(e) NULL)
    if (is.null(rows) || anyNA(rows)) {
      abort_input("{.arg subset} must select rows of {.arg data} (logical or row numbers).",
                  class = "noisylabels_error_formula", call = call)
    }
    data <- data[rows, , drop = FALSE]
  }
  mf <- tryCatch(stats::model.frame(formula, data = data, na.action = stats::na.pass,
                                    drop.unused.levels = TRUE),
                 error = function(e) {
                   abort_input(c("Could not build the model frame of the formula in {.arg data}.",
                                 "x" = conditionMessage(e),
                                 "i" = "Every variable of the formula must be a column of {.arg data} with one value per row."),
                               class = "noisylabels_error_formula", call = call)
                 })
  mf <- frame_na_action(mf, na.action, call = call)
  if (nrow(mf) == 0L) {
    abort_input(c("No complete rows are left in {.arg data} after removing missing values.",
                  "i" = "Impute the missing values or drop the columns that are mostly missing."),
                class = "noisylabels_error_formula", call = call)
  }
  tt <- stats::terms(mf)
  y <- if (two_sided) stats::model.response(mf) else NULL
  if (two_sided && (is.list(y) && !is.data.frame(y) || is.data.frame(y) || is.matrix(y) && ncol(y) != 1L)) {
    abort_input("The response must be one column of labels, not a {.cls {class(y)}}.",
                class = "noisylabels_error_formula", call = call)
  }
  list(frame = mf, terms = tt, y = y, xlevels = stats::.getXlevels(tt, mf),
       na.action = attr(mf, "na.action"))
}

# `data` of a formula interface as a data frame: a data frame or a named list
# of columns; a matrix with column names is converted.
formula_data <- function(data, arg, call = parent.frame()) {
  if (is.matrix(data) && !is.null(colnames(data))) data <- as.data.frame(data, stringsAsFactors = FALSE)
  if (is.list(data) && !is.data.frame(data) && !is.null(names(data)) && all(nzchar(names(data)))) {
    data <- tryCatch(as.data.frame(data, stringsAsFactors = FALSE, optional = TRUE),
                     error = function(e) NULL) %||% data
  }
  if (!is.data.frame(data)) {
    abort_input(c("{.arg {arg}} must be a data frame with the formula's variables as columns, not {.obj_type_friendly {data}}.",
                  "i" = "Give a data frame (or call the matrix interface, {.code f(x, y)})."),
                class = "noisylabels_error_formula", call = call)
  }
  data
}

# The variables of `formula` that `data` must provide: present (or visible in
# the formula's environment), once, and as atomic vectors.
check_formula_variables <- function(formula, data, arg, call = parent.frame()) {
  vars <- setdiff(all.vars(formula), ".")
  if ("." %in% all.vars(formula)) vars <- union(vars, names(data))
  dup <- unique(names(data)[duplicated(names(data)) & names(data) %in% vars])
  if (length(dup)) {
    abort_input(c("{.arg {arg}} has more than one column named {.field {dup}}.",
                  "i" = "Rename them (e.g. with {.fn make.unique}) so each variable names one column."),
                class = "noisylabels_error_formula", call = call)
  }
  env <- environment(formula) %||% globalenv()
  lacking <- setdiff(vars, names(data))
  lacking <- lacking[!vapply(lacking, exists, logical(1), envir = env)]
  if (length(lacking)) {
    lhs <- if (length(formula) == 3L) all.vars(formula[[2L]]) else character()
    what <- if (all(lacking %in% lhs)) "the response" else "the variable{?s}"
    abort_input(c(paste0("{.arg {arg}} lacks ", what, " {.field {lacking}} of the formula."),
                  "i" = "Its columns are {.field {utils::head(names(data), 20)}}."),
                class = "noisylabels_error_formula", call = call)
  }
  used <- intersect(vars, names(data))
  listy <- used[vapply(used, function(v) is.list(data[[v]]) || !is.atomic(data[[v]]), logical(1))]
  if (length(listy)) {
    abort_input(c("{cli::qty(length(listy))}Column{?s} {.field {listy}} of {.arg {arg}} {cli::qty(length(listy))}{?is a list column/are list columns}.",
                  "i" = "Give each variable as an atomic vector (numbers, a factor, character or logical values); unnest list columns first."),
                class = "noisylabels_error_formula", call = call)
  }
  mats <- used[vapply(used, function(v) !is.null(dim(data[[v]])) && NCOL(data[[v]]) != 1L, logical(1))]
  if (length(mats)) {
    abort_input(c("{cli::qty(length(mats))}Column{?s} {.field {mats}} of {.arg {arg}} {cli::qty(length(mats))}{?is a matrix/are matrices}.",
                  "i" = "Give each variable as a plain column."),
                class = "noisylabels_error_formula", call = call)
  }
  invisible(data)
}

# Missing values in a model frame built with na.pass, per `na.action`.
frame_na_action <- function(mf, na.action, call = parent.frame()) {
  if (is.character(na.action)) na.action <- get(na.action, mode = "function")
  if (!is.function(na.action)) {
    abort_input("{.arg na.action} must be a function such as {.fn na.omit} or {.fn na.fail}.",
                class = "noisylabels_error_formula", call = call)
  }
  bad <- !stats::complete.cases(mf)
  if (!any(bad)) return(mf)
  if (identical(na.action, stats::na.pass)) return(mf)
  if (identical(na.action, stats::na.omit) || identical(na.action, stats::na.exclude)) {
    dropped <- which(bad)
    names(dropped) <- rownames(mf)[bad]
    class(dropped) <- if (identical(na.action, stats::na.omit)) "omit" else "exclude"
    out <- mf[!bad, , drop = FALSE]
    attr(out, "na.action") <- dropped
    return(out)
  }
  if (identical(na.action, stats::na.fail)) {
    cols <- names(mf)[vapply(mf, anyNA, logical(1))]
    abort_input(c("The data have missing values (first in row {which(bad)[1]}, in {.field {cols}}).",
                  "i" = "Remove or impute them, or use {.code na.action = na.omit} to drop those rows."),
                class = "noisylabels_error_missing", call = call)
  }
  tryCatch(na.action(mf), error = function(e) {
    abort_input(c("{.arg na.action} failed on the model frame.", "x" = conditionMessage(e)),
                class = "noisylabels_error_missing", call = call)
  })
}

# The response and design matrix of a formula interface. `intercept`:
# "drop" removes the intercept column of model.matrix() (every model carries
# its own constant: a GP mean or a bias), "none" builds the matrix without one
# (factors then get a column per level), "keep" keeps it. `terms`, `xlevels`
# and `na.action` go onto the fit (attach_formula()) so that predict() builds
# the same design from new data (newdata_design()).
formula_design <- function(formula, data, na.action, intercept = c("drop", "none", "keep"),
                           response = "required", subset = NULL, call = parent.frame()) {
  intercept <- match.arg(intercept)
  mf <- model_frame(formula, data, na.action, response = response, subset = subset, call = call)
  tt <- mf$terms
  if (intercept == "none") attr(tt, "intercept") <- 0L
  x <- frame_matrix(tt, mf$frame, call = call)
  if (intercept == "drop") x <- x[, colnames(x) != "(Intercept)", drop = FALSE]
  if (ncol(x) == 0L || all(colnames(x) == "(Intercept)")) {
    abort_input(c("The formula has no predictors on its right-hand side.",
                  "i" = "Name the input columns, e.g. {.code y ~ x1 + x2} or {.code y ~ .}."),
                class = "noisylabels_error_formula", call = call)
  }
  list(x = x, y = mf$y, terms = tt, xlevels = mf$xlevels, na.action = mf$na.action,
       frame = mf$frame)
}

# model.matrix() of a frame, with its failures (a factor with one level left)
# classed and its bookkeeping attributes removed (kept with `assign = TRUE`).
frame_matrix <- function(terms, mf, assign = FALSE, call = parent.frame()) {
  x <- tryCatch(stats::model.matrix(terms, mf), error = function(e) {
    single <- names(mf)[vapply(mf, function(v) (is.factor(v) || is.character(v) || is.logical(v)) &&
                                 length(unique(v[!is.na(v)])) < 2L, logical(1))]
    abort_input(c("Could not build the design matrix.", "x" = conditionMessage(e),
                  "i" = if (length(single)) "Drop {.field {single}} from the formula: a variable with one value carries no information."),
                class = "noisylabels_error_formula", call = call)
  })
  if (!assign) {
    attr(x, "assign") <- NULL
    attr(x, "contrasts") <- NULL
  }
  x
}

attach_formula <- function(fit, design, call) {
  fit$terms <- design$terms
  fit$xlevels <- design$xlevels
  fit$na.action <- design$na.action
  fit$call <- call
  fit
}

# ---- new data ------------------------------------------------------------------

# Design matrix for new data, shared by every model's predict(): fits made by
# a formula store `terms` (response deleted or not) and `xlevels`; fits made
# by a matrix get the same checks. `n_col` is the number of input columns the
# model was fitted on; `drop_intercept` follows what the fit's formula method
# did with the model matrix.
newdata_design <- function(object, newdata, n_col, drop_intercept = TRUE, call = parent.frame()) {
  if (!is.null(object$terms)) {
    mf <- newdata_frame(object, newdata, call = call)
    xm <- frame_matrix(stats::delete.response(object$terms), mf, call = call)
    if (drop_intercept) xm <- xm[, colnames(xm) != "(Intercept)", drop = FALSE]
  } else {
    xm <- newdata
    if (is.vector(xm) && is.numeric(xm) && n_col > 1) xm <- matrix(xm, ncol = n_col)
  }
  xm <- check_x_matrix(xm, "newdata", call = call)
  if (ncol(xm) != n_col) {
    abort_input("{.arg newdata} has {ncol(xm)} column{?s} but the model was fitted on {n_col}.",
                class = "noisylabels_error_newdata", call = call)
  }
  xm
}

# The model frame of new data for a formula fit (`terms`, `xlevels`), with
# classed errors that name what is wrong: not a data frame, variables the
# formula needs that newdata lacks, list or duplicated columns, a variable of
# another type than in training (text in a numeric column), and factor levels
# not seen in training (`levels`: the levels of every factor-like variable,
# `xlevels` by default).
newdata_frame <- function(object, newdata, levels = object$xlevels, call = parent.frame()) {
  tt <- stats::delete.response(object$terms)
  newdata <- tryCatch(formula_data(newdata, "newdata", call = call), noisylabels_error = function(e) {
    abort_input(c("{.arg newdata} must be a data frame with the columns {.field {all.vars(tt)}} for a fit from the formula interface, not {.obj_type_friendly {newdata}}."),
                class = "noisylabels_error_newdata", call = call)
  })
  tryCatch(check_formula_variables(tt, newdata, "newdata", call = call),
           noisylabels_error = function(e) {
             cnd <- e
             class(cnd) <- c("noisylabels_error_newdata", class(cnd))
             stop(cnd)
           })
  frame <- function(xlev) {
    tryCatch(stats::model.frame(tt, newdata, xlev = xlev, na.action = stats::na.pass),
             error = function(e) {
               abort_input(c("{.arg newdata} does not fit the model's terms.", "x" = conditionMessage(e)),
                           class = "noisylabels_error_newdata", call = call)
             })
  }
  mf0 <- frame(NULL)
  check_newdata_classes(tt, mf0, call = call)
  # Levels first, on the frame without the training levels imposed (with
  # them model.frame() stops at the first new level of the first factor).
  if (length(levels)) check_new_levels(mf0, levels, call = call)
  frame(object$xlevels)
}

# Each variable of new data must be of the kind it was in training (numbers
# where there were numbers, categories where there were categories).
check_newdata_classes <- function(terms, mf, call = parent.frame()) {
  trained <- attr(terms, "dataClasses")
  if (is.null(trained)) return(invisible())
  given <- vapply(mf, stats::.MFclass, character(1))
  kind <- function(cl) ifelse(cl %in% c("numeric", "nmatrix.1"), "numeric", ifelse(cl == "other", "other", "categorical"))
  common <- intersect(names(given), names(trained))
  bad <- common[kind(given[common]) != kind(trained[common])]
  if (length(bad)) {
    msgs <- vapply(bad, function(v) cli::format_inline(
      "{.field {v}} was {.cls {trained[[v]]}} in training but is {.cls {given[[v]]}} in {.arg newdata}."), character(1))
    msgs <- gsub("([{}])", "\\1\\1", msgs)
    abort_input(c("{.arg newdata} does not fit the model's terms: variables of another type.",
                  stats::setNames(msgs, rep("x", length(msgs))),
                  "i" = "Convert them (e.g. {.fn as.numeric} for numbers read as text)."),
                class = "noisylabels_error_newdata", call = call)
  }
  invisible()
}

# Factor levels in a model frame of new data that training did not have: one
# error naming every such variable with its new levels and the known ones.
check_new_levels <- function(mf, levels, call = parent.frame()) {
  msgs <- character()
  for (v in intersect(names(levels), names(mf))) {
    val <- mf[[v]]
    val <- as.character(if (is.factor(val)) val[!is.na(val), drop = TRUE] else val[!is.na(val)])
    new <- setdiff(unique(val), levels[[v]])
    if (length(new)) {
      msgs <- c(msgs, cli::format_inline(
        "{.field {v}}: {cli::qty(length(new))}level{?s} {.val {new}} not seen in training (known: {.val {levels[[v]]}})."))
    }
  }
  if (length(msgs)) {
    msgs <- gsub("([{}])", "\\1\\1", msgs)  # already formatted
    abort_input(c("{.arg newdata} does not fit the model's terms: new factor levels.",
                  stats::setNames(msgs, rep("x", length(msgs))),
                  "i" = "Recode them to a level seen in training or drop those rows."),
                class = "noisylabels_error_newdata", call = call)
  }
  invisible(mf)
}
