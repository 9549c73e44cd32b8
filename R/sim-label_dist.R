#' Simulate groups with noisy label distributions (Yoshikawa 2017)
#'
#' The generative model of Yoshikawa (2017, section 2) with the choices the
#' paper leaves open fixed as follows:
#' features \eqn{x_u \sim N(0, I_D)}, class weights
#' \eqn{w_m \sim N(0, \alpha_w^{-1} I_D)}, confusion rows
#' \eqn{c_m \sim \mathrm{Dir}(\beta_m)} with \eqn{\beta_{mm} = \alpha_{c1}} and
#' \eqn{\beta_{ml} = \alpha_{c0}} otherwise, true labels
#' \eqn{y_u \sim \mathrm{softmax}(W x_u)}; each group is `group_size` distinct
#' instances drawn without replacement; every (group, member) pair draws its own
#' noisy label \eqn{t_{iu} \sim \mathrm{Cat}(c_{y_u})}, and the observed
#' distribution is the group's label proportions plus Gaussian noise,
#' \eqn{s_i = t_i + N(0, \alpha_s^{-1} I_M)}, exactly as the model says (no
#' clipping: entries can be negative and rows need not sum to one). The returned
#' `label_dist` carries the attribute `raw_dist = TRUE`, so [label_dist_vb()]
#' and [label_dist_baseline()] take it as raw observations without being told.
#'
#' @param M Number of classes (>= 2).
#' @param U Number of training instances.
#' @param N Number of groups.
#' @param group_size Members per group (<= `U`).
#' @param D Number of features.
#' @param alpha_w,alpha_c0,alpha_c1,alpha_s Hyperparameters of the model (see
#'   [label_dist_vb()]).
#' @param n_test Number of extra test instances drawn from the same model
#'   (features and true labels only).
#' @return A list with `x` (U x D), `groups` (list of N integer vectors of member
#'   rows), `label_dist` (N x M, columns `c1`, ..., `cM`, attribute
#'   `raw_dist = TRUE`), `y` (factor of true
#'   labels), `w` (true M x D weights), `C` (true M x M confusion matrix, rows =
#'   true class, columns = noisy label), `t` (N x M noiseless label proportions),
#'   `x_test`, `y_test`, and `settings` (the arguments).
#' @references Yoshikawa, Y. (2017). Learning from noisy label distributions.
#'   ICANN 2017, LNCS 10614, 69-77.
#' @examples
#' set.seed(1)
#' sim <- sim_label_dist(U = 50, N = 200, group_size = 10, alpha_c1 = 100)
#' dim(sim$label_dist)
#' round(sim$C, 2)
#' @export
sim_label_dist <- function(M = 4, U = 100, N = 1000, group_size = 30, D = 10, alpha_w = 1,
                           alpha_c0 = 1, alpha_c1 = 10, alpha_s = 10, n_test = 1000) {
  M <- check_count(M, "M", 2)
  U <- check_count(U, "U", 1)
  N <- check_count(N, "N", 1)
  group_size <- check_count(group_size, "group_size", 1)
  D <- check_count(D, "D", 1)
  n_test <- check_count(n_test, "n_test", 0)
  check_allocation(8 * 4 * (as.double(N) + n_test) * (D + M) + 8 * 4 * as.double(U) * M +
                     8 * 3 * as.double(M)^2,  # the M x M noise transition and its prior
                   "The simulated data")
  for (nm in c("alpha_w", "alpha_c0", "alpha_c1", "alpha_s")) {
    check_number(get(nm), nm, 0, open_lower = TRUE)
  }
  if (group_size > U) abort_input("{.arg group_size} ({group_size}) cannot exceed {.arg U} ({U}).")
  classes <- paste0("c", seq_len(M))
  x <- matrix(stats::rnorm(U * D), U, D, dimnames = list(NULL, paste0("x", seq_len(D))))
  w <- matrix(stats::rnorm(M * D, sd = 1 / sqrt(alpha_w)), M, D)
  beta <- matrix(alpha_c0, M, M)
  diag(beta) <- alpha_c1
  C <- matrix(stats::rgamma(M * M, shape = beta), M, M)
  C <- C / rowSums(C)
  dimnames(C) <- list(true = classes, noisy = classes)
  draw_y <- function(xx) {
    logit <- xx %*% t(w)
    p <- exp(logit - apply(logit, 1, max))
    p <- p / rowSums(p)
    apply(p, 1, function(pr) sample.int(M, 1, prob = pr))
  }
  y <- draw_y(x)
  groups <- lapply(seq_len(N), function(i) sample.int(U, group_size))
  t_prop <- matrix(0, N, M)
  for (i in seq_len(N)) {
    members <- groups[[i]]
    noisy <- vapply(y[members], function(m) sample.int(M, 1, prob = C[m, ]), integer(1))
    t_prop[i, ] <- tabulate(noisy, M) / group_size
  }
  s <- t_prop + matrix(stats::rnorm(N * M, sd = 1 / sqrt(alpha_s)), N, M)
  colnames(s) <- colnames(t_prop) <- classes
  attr(s, "raw_dist") <- TRUE  # raw Gaussian-noise observations, not proportions
  x_test <- matrix(stats::rnorm(n_test * D), n_test, D, dimnames = list(NULL, colnames(x)))
  y_test <- if (n_test > 0) draw_y(x_test) else integer(0)
  list(x = x, groups = groups, label_dist = s, y = factor(classes[y], levels = classes),
       w = w, C = C, t = t_prop, x_test = x_test,
       y_test = factor(classes[y_test], levels = classes),
       settings = list(M = M, U = U, N = N, group_size = group_size, D = D, alpha_w = alpha_w,
                       alpha_c0 = alpha_c0, alpha_c1 = alpha_c1, alpha_s = alpha_s))
}
