# Plain-R reference implementations for the robust-loss SGD tests: the losses
# written from the paper's formulas (no stabilisation) and a step-by-step
# replay of the SGD update w <- w - eta (lambda w + r'(z) y x) on dense data.

# The SGD tests replay Algorithm 1 and compare fits on the columns as given
# (memory against files, shards against their parts), so they call
# sgd_robust() with standardize = FALSE unless the call sets `standardize`
# (or its old name `center`). The default, standardize = TRUE, is tested
# through noisylabels::sgd_robust() in test-sgd_robust.R.
sgd_robust <- function(x, ...) {
  if (any(c("standardize", "center") %in% ...names())) return(noisylabels::sgd_robust(x, ...))
  noisylabels::sgd_robust(x, ..., standardize = FALSE)
}

ref_sgd_loss <- function(name, z, s = -1, alpha = 2, beta = -0.03, c = 2) {
  switch(name,
         hinge = pmax(0, 1 - z),
         logistic = log(1 + exp(-z)),
         ramp = pmin(1 - s, pmax(0, 1 - z)),
         smooth_ramp = (1 - s) / (1 + exp(alpha * (z + beta))),
         gompertz = exp(-exp(c * z)))
}

# Replays the visited rows of a fit with the plain update and returns the
# iterates (one column per step) in the layout of fit$iterates.
ref_sgd_replay <- function(x, y, fit, deriv, w0 = NULL, b0 = 0) {
  d <- ncol(x)
  feature <- fit$bias_mode == "feature"
  xa <- if (feature) cbind(x, 1) else x
  w <- if (is.null(w0)) numeric(ncol(xa)) else w0
  b <- b0
  steps <- length(fit$visit_order)
  n <- nrow(x)
  out <- matrix(0, ncol(xa) + 1, steps)
  avg_sum <- numeric(ncol(xa)); avg_b <- 0; avg_n <- 0
  for (t in seq_len(steps)) {
    i <- fit$visit_order[t]
    eta <- switch(fit$method, sgd = fit$eta,
                  asgd = fit$eta / (1 + fit$lambda * fit$eta * t)^0.75,
                  pegasos = 1 / (fit$lambda * t))
    z <- y[i] * (sum(w * xa[i, ]) + b)
    g <- deriv(z)
    w <- (1 - eta * fit$lambda) * w - eta * g * y[i] * xa[i, ]
    if (fit$bias_mode == "separate") b <- b - fit$bias_step * eta * g * y[i]
    if (fit$method == "pegasos") {
      nw <- sqrt(sum(w^2))
      if (nw > 1 / sqrt(fit$lambda)) w <- w / (nw * sqrt(fit$lambda))
    }
    if (fit$method == "sgd" && fit$option == "B") {
      avg_sum <- avg_sum + w; avg_b <- avg_b + b; avg_n <- avg_n + 1
      out[, t] <- c(w, b)
      if (t %% n == 0) { w <- avg_sum / avg_n; b <- avg_b / avg_n; avg_sum[] <- 0; avg_b <- 0; avg_n <- 0 }
      next
    }
    out[, t] <- c(w, b)
  }
  out
}

sgd_toy <- function(n = 40, d = 3, seed = 1, flip = 0) {
  set.seed(seed)
  x <- matrix(rnorm(n * d), n, d)
  y <- ifelse(drop(x %*% seq_len(d)) + 0.3 > 0, 1, -1)
  if (flip > 0) y <- flip_labels(y, flip)$y
  list(x = x, y = y)
}

# Three Gaussian classes a, b, c in two dimensions (seeded), optionally with
# a fraction of labels moved to the next class.
sgd_toy3 <- function(n = 300, flip = 0) {
  set.seed(42)
  centres <- rbind(c(0, 3), c(3, -2), c(-3, -2))
  cls <- sample(3, n, replace = TRUE)
  x <- centres[cls, ] + matrix(rnorm(2 * n), n, 2)
  y <- factor(c("a", "b", "c")[cls])
  flipped <- rep(FALSE, n)
  if (flip > 0) {
    k <- sample(n, round(flip * n))
    y[k] <- factor(c("a", "b", "c")[(cls[k] %% 3) + 1], levels = c("a", "b", "c"))
    flipped[k] <- TRUE
  }
  list(x = x, y = y, truth = factor(c("a", "b", "c")[cls]), flipped = flipped)
}

# Writes x and y as a LIBSVM file (gzip with compress = TRUE); returns the path.
write_libsvm_test <- function(x, y, path, compress = FALSE) {
  lines <- vapply(seq_len(nrow(x)), function(i) {
    nz <- which(x[i, ] != 0)
    paste(c(as.character(y[i]), if (length(nz)) paste0(nz, ":", sprintf("%.17g", x[i, nz]))),
          collapse = " ")
  }, "")
  con <- if (compress) gzfile(path, "w") else file(path, "w")
  writeLines(lines, con)
  close(con)
  path
}
