# Column standardisation of inputs, the one rule for every method that
# standardises (gpr_pursuit(standardize = TRUE), gpc_ep(scale = TRUE), the
# Vecchia conditioning metric of a kernel without length-scales):
#   * each column is centred at its training mean (colMeans) and divided by
#     its training sd;
#   * columns flagged in `skip` (categorical inputs) are left as they are
#     (centre 0, scale 1);
#   * a constant column (sd 0, or not finite as with one row) is centred but
#     not scaled (scale 1): it becomes 0, which a stationary kernel ignores.
#     Its index is returned in `constant`, so that a method that rejects
#     constant inputs (gpc_ep) can say so.
# `center = FALSE` divides by the sds without centring. Returns the
# standardised matrix `x` with the `center` and `scale` vectors to apply to
# new data (scale_inputs()).
standardize_columns <- function(x, skip = rep(FALSE, ncol(x)), center = TRUE) {
  d <- ncol(x)
  ctr <- rep(0, d)
  sc <- rep(1, d)
  cols <- which(!skip)
  if (!length(cols)) return(list(x = x, center = ctr, scale = sc, constant = integer(0)))
  if (center) ctr[cols] <- colMeans(x[, cols, drop = FALSE])
  sds <- apply(x[, cols, drop = FALSE], 2, stats::sd)
  constant <- cols[!is.finite(sds) | sds == 0]
  sds[!is.finite(sds) | sds == 0] <- 1
  sc[cols] <- sds
  xs <- if (center) scale_inputs(x, ctr, sc) else sweep(x, 2, sc, "/")
  list(x = xs, center = ctr, scale = sc, constant = constant)
}

# Inputs on the scale of a standardisation (new data for a fitted model).
scale_inputs <- function(x, center, scale) {
  sweep(sweep(x, 2, center, "-"), 2, scale, "/")
}
