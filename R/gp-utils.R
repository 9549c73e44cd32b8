# Helpers shared by the GP model classes.

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
