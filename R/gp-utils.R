# Helpers shared by the GP model classes.

# Design matrix for new data, shared by every model's predict(): fits made by
# a formula store `terms` (response deleted or not) and `xlevels`; fits made
# by a matrix get the same checks. `n_col` is the number of input columns the
# model was fitted on; `drop_intercept` follows what the fit's formula method
# did with the model matrix.
newdata_design <- function(object, newdata, n_col, drop_intercept = TRUE, call = parent.frame()) {
  if (!is.null(object$terms)) {
    mf <- newdata_frame(object, newdata, call = call)
    xm <- stats::model.matrix(stats::delete.response(object$terms), mf)
    if (drop_intercept) xm <- xm[, colnames(xm) != "(Intercept)", drop = FALSE]
    attr(xm, "assign") <- NULL
    attr(xm, "contrasts") <- NULL
  } else {
    xm <- newdata
    if (is.vector(xm) && is.numeric(xm) && n_col > 1) xm <- matrix(xm, ncol = n_col)
  }
  xm <- check_x_matrix(xm, "newdata", call = call)
  if (ncol(xm) != n_col) {
    abort_input("{.arg newdata} has {ncol(xm)} column{?s} but the model was fitted on {n_col}.", call = call)
  }
  xm
}

# The model frame of new data for a formula fit (`terms`, `xlevels`), with
# classed errors that name what is wrong: variables the formula needs that
# newdata lacks, and factor levels not seen in training (`levels`: the
# levels of every factor-like variable, `xlevels` by default).
newdata_frame <- function(object, newdata, levels = object$xlevels, call = parent.frame()) {
  if (!is.data.frame(newdata)) newdata <- as.data.frame(newdata)
  tt <- stats::delete.response(object$terms)
  # Variables the formula needs that newdata lacks (and that are not
  # visible from the formula's environment, where model.frame() would find
  # them): name them instead of model.frame()'s "object 'x' not found".
  lacking <- setdiff(all.vars(tt), names(newdata))
  env <- environment(tt) %||% globalenv()
  lacking <- lacking[!vapply(lacking, exists, logical(1), envir = env)]
  if (length(lacking)) {
    abort_input(c("{.arg newdata} lacks the variable{?s} {.field {lacking}} that the model uses.",
                  "i" = "It needs {.field {all.vars(tt)}}."),
                class = "noisylabels_error_newdata", call = call)
  }
  frame <- function(xlev) {
    tryCatch(stats::model.frame(tt, newdata, xlev = xlev, na.action = stats::na.pass),
             error = function(e) {
               abort_input(c("{.arg newdata} does not fit the model's terms.", "x" = conditionMessage(e)),
                           class = "noisylabels_error_newdata", call = call)
             })
  }
  # Levels first, on the frame without the training levels imposed (with
  # them model.frame() stops at the first new level of the first factor).
  if (length(levels)) check_new_levels(frame(NULL), levels, call = call)
  frame(object$xlevels)
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
    msgs <- gsub("}", "}}", gsub("{", "{{", msgs, fixed = TRUE), fixed = TRUE)  # already formatted
    abort_input(c("{.arg newdata} does not fit the model's terms: new factor levels.",
                  stats::setNames(msgs, rep("x", length(msgs))),
                  "i" = "Recode them to a level seen in training or drop those rows."),
                class = "noisylabels_error_newdata", call = call)
  }
  invisible(mf)
}

gp_newdata_matrix <- function(object, newdata, call = parent.frame()) {
  if (is.null(newdata)) return(object$x)
  newdata_design(object, newdata, ncol(object$x), call = call)
}

# Kernel hyperparameters as a tidy data frame.
kernel_tidy <- function(kernel) {
  flat <- kernel_flatten(kernel)
  data.frame(term = flat$names, estimate = exp(flat$log_par),
             fixed = !flat$free, stringsAsFactors = FALSE)
}
