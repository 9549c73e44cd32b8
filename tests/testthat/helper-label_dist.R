# Small random problems and states for the label_dist_vb core tests.

ld_random_problem <- function(U = 8, N = 6, M = 3, D = 2, max_size = 4, seed = 1) {
  set.seed(seed)
  x <- matrix(rnorm(U * D), U, D)
  groups <- lapply(seq_len(N), function(i) sort(sample.int(U, sample(2:max_size, 1))))
  s <- matrix(runif(N * M), N, M)
  s <- s / rowSums(s) + matrix(rnorm(N * M, sd = 0.05), N, M)
  colnames(s) <- paste0("c", seq_len(M))
  memb <- ld_membership(groups, U, N)
  list(x = x, s = s, groups = groups, group_ptr = memb$group_ptr, pair_unit = memb$pair_unit,
       sizes = memb$sizes, U = U, N = N, M = M, D = D, P = length(memb$pair_unit))
}

ld_rdirichlet <- function(n, M) {
  g <- matrix(rexp(n * M), n, M)
  g / rowSums(g)
}

ld_random_state <- function(pr, structured = FALSE, vb_c = FALSE) {
  M <- pr$M
  st <- list(eta = ld_rdirichlet(pr$P, M), eta_cond = NULL, zeta = ld_rdirichlet(pr$U, M),
             w = matrix(rnorm(M * pr$D), M, pr$D),
             cpar = if (vb_c) matrix(runif(M * M, 0.5, 5), M, M) else ld_rdirichlet(M, M))
  if (structured) {
    st$eta_cond <- ld_rdirichlet(pr$P * M, M)  # rows (k, m) stacked by k then m
    st$eta_cond <- t(matrix(t(st$eta_cond), M * M, pr$P))  # P x (M*M), entry (k, m*M + l)
    # marginals consistent with zeta
    for (k in seq_len(pr$P)) {
      u <- pr$pair_unit[k] + 1L
      cond <- matrix(st$eta_cond[k, ], M, M, byrow = TRUE)
      st$eta[k, ] <- drop(st$zeta[u, ] %*% cond)
    }
  }
  st
}

ld_hyper <- function(alpha_w = 1, alpha_s = 10, alpha_c0 = 1, alpha_c1 = 5) {
  c(alpha_w = alpha_w, alpha_s = alpha_s, alpha_c0 = alpha_c0, alpha_c1 = alpha_c1)
}

ld_elbo_of <- function(pr, hyper, st, structured = FALSE, vb_c = FALSE) {
  hook("ld_elbo", pr$x, pr$s, as.integer(pr$group_ptr), as.integer(pr$pair_unit), hyper, st,
           structured, vb_c, TRUE)
}

ld_step <- function(pr, hyper, st, block, structured = FALSE, vb_c = FALSE) {
  hook("ld_update", pr$x, pr$s, as.integer(pr$group_ptr), as.integer(pr$pair_unit), hyper, st, block,
             structured, vb_c, TRUE)
}
