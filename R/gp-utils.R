# Helpers shared by the GP model classes.

# Design matrix for newdata, for fits made by a formula (terms/xlevels stored)
# or by a matrix (same columns).
gp_newdata_matrix <- function(object, newdata, call = parent.frame()) {
  if (is.null(newdata)) return(object$x)
  if (!is.null(object$terms)) {
    if (!is.data.frame(newdata)) newdata <- as.data.frame(newdata)
    tt <- stats::delete.response(object$terms)
    mf <- stats::model.frame(tt, newdata, xlev = object$xlevels, na.action = stats::na.pass)
    xm <- stats::model.matrix(tt, mf)
    xm <- xm[, colnames(xm) != "(Intercept)", drop = FALSE]
  } else {
    xm <- newdata
    if (is.data.frame(xm)) xm <- as.matrix(xm)
    if (is.vector(xm)) xm <- matrix(xm, ncol = ncol(object$x))
  }
  if (!is.numeric(xm) || ncol(xm) != ncol(object$x)) {
    abort_input("{.arg newdata} must have the {ncol(object$x)} input column{?s} the model was fitted on.",
                call = call)
  }
  if (anyNA(xm) || any(!is.finite(xm))) abort_input("{.arg newdata} contains NA or infinite values.", call = call)
  storage.mode(xm) <- "double"
  xm
}

# Kernel hyperparameters as a tidy data frame.
kernel_tidy <- function(kernel) {
  flat <- kernel_flatten(kernel)
  data.frame(term = flat$names, estimate = exp(flat$log_par),
             fixed = !flat$free, stringsAsFactors = FALSE)
}
