# Input checks and conversion for label_dist_vb(): the label distributions,
# the membership (list, pair table or incidence matrix) and the core's pair
# format (group offsets group_ptr and 0-based members pair_unit).

# Validate and convert the inputs into the core's pair format.
ld_prepare <- function(x, groups, label_dist, raw_dist, classes, call = parent.frame()) {
  U <- nrow(x)
  raw_dist <- ld_raw_dist(label_dist, raw_dist, call = call)
  s <- label_dist
  if (is.data.frame(s)) s <- as.matrix(s)
  if (!is.matrix(s) || !is.numeric(s)) {
    abort_input("{.arg label_dist} must be a numeric matrix (groups x classes).", call = call)
  }
  M <- ncol(s)
  if (M < 2) abort_input("{.arg label_dist} has {M} column{?s}; at least 2 classes are needed.", call = call)
  cn <- colnames(s) %||% paste0("c", seq_len(M))
  if (anyDuplicated(cn) || any(cn == "")) {
    abort_input("The column (class) names of {.arg label_dist} must be unique and non-empty.", call = call)
  }
  colnames(s) <- cn
  if (!is.null(classes)) {
    if (!(is.character(classes) || is.factor(classes)) || anyNA(classes)) {
      abort_input("{.arg classes} must be NULL or the class names (a character vector), not {.obj_type_friendly {classes}}.",
                  class = "noisylabels_error_classes", call = call)
    }
    classes <- as.character(classes)
    if (length(classes) != M || !setequal(classes, cn)) {
      abort_input(c("The classes of {.arg label_dist} do not match {.arg classes}.",
                    "x" = "{.arg label_dist} has {M} column{?s}: {.val {cn}}.",
                    "i" = "{.arg classes} has {length(classes)}: {.val {classes}}."),
                  class = "noisylabels_error_classes", call = call)
    }
    s <- s[, classes, drop = FALSE]
    cn <- classes
  }
  if (anyNA(s)) abort_input("{.arg label_dist} contains NA/NaN values.", call = call)
  if (any(!is.finite(s))) abort_input("{.arg label_dist} contains infinite values.", call = call)
  if (!raw_dist) {
    if (any(s < 0)) {
      abort_input(c("{.arg label_dist} has negative entries.",
                    "i" = "If these are raw noisy observations of proportions (as the model allows), use {.code raw_dist = TRUE}."),
                  call = call)
    }
    off <- abs(rowSums(s) - 1)
    if (any(off > 0.01)) {
      cli::cli_warn(c("{sum(off > 0.01)} row{?s} of {.arg label_dist} do{?es/} not sum to 1 (largest deviation {format(max(off), digits = 3)}).",
                      "i" = "They are used as they are: the model allows Gaussian noise on the distributions."),
                    class = c("noisylabels_warning_input", "noisylabels_warning"))
    }
  }
  storage.mode(s) <- "double"
  N <- nrow(s)
  if (N < 1) abort_input("{.arg label_dist} has no rows (groups).", call = call)
  memb <- ld_membership(groups, U, N, call = call)
  list(x = x, s = s, classes = cn, U = U, N = N, M = M, D = ncol(x),
       group_ptr = memb$group_ptr, pair_unit = memb$pair_unit, sizes = memb$sizes)
}

# `raw_dist = NULL`: believe what the data say about themselves (the attribute
# that sim_label_dist() sets), else treat them as proportions.
ld_raw_dist <- function(label_dist, raw_dist, call = parent.frame()) {
  if (is.null(raw_dist)) return(isTRUE(attr(label_dist, "raw_dist", exact = TRUE)))
  check_flag(raw_dist, "raw_dist", call = call)
}

# Membership as CSR over groups (0-based, members sorted within each group).
ld_membership <- function(groups, U, N, call = parent.frame()) {
  if (inherits(groups, "Matrix") || (is.matrix(groups) && !(ncol(groups) == 2L && nrow(groups) != U))) {
    if (nrow(groups) != U || ncol(groups) != N) {
      abort_input("The incidence matrix {.arg groups} is {nrow(groups)} x {ncol(groups)}; it must be U x N = {U} x {N} (instances x groups).",
                  call = call)
    }
    tm <- methods::as(methods::as(groups, "CsparseMatrix"), "generalMatrix")
    tm <- Matrix::summary(tm)
    tm <- tm[tm$x != 0, , drop = FALSE]
    inst <- tm$i
    grp <- tm$j
  } else if (is.data.frame(groups) || is.matrix(groups)) {
    if (ncol(groups) != 2L) {
      abort_input("A membership table {.arg groups} must have two columns (instance, group).", call = call)
    }
    if (is.matrix(groups)) {
      inst <- groups[, 1]
      grp <- groups[, 2]
    } else {
      inst <- groups[[1]]
      grp <- groups[[2]]
    }
    if (!is.numeric(inst) || !is.numeric(grp) || anyNA(inst) || anyNA(grp) ||
        any(inst != round(inst)) || any(grp != round(grp))) {
      abort_input("The membership table {.arg groups} must hold whole-number indices (instance, group) without NA.",
                  call = call)
    }
  } else if (is.list(groups)) {
    if (length(groups) != N) {
      abort_input("{.arg groups} lists {length(groups)} group{?s} but {.arg label_dist} has {N} row{?s}.",
                  call = call)
    }
    ok <- vapply(groups, function(g) is.numeric(g) && !anyNA(g) && all(g == round(g)), logical(1))
    if (!all(ok)) {
      abort_input("Group {which(!ok)[1]} of {.arg groups} is not a vector of whole-number row indices.",
                  call = call)
    }
    inst <- unlist(groups, use.names = FALSE)
    grp <- rep.int(seq_len(N), lengths(groups))
  } else {
    abort_input("{.arg groups} must be a list of index vectors, a two-column (instance, group) table, or a U x N incidence matrix, not {.cls {class(groups)}}.",
                call = call)
  }
  inst <- as.integer(inst)
  grp <- as.integer(grp)
  bad <- which(inst < 1L | inst > U)
  if (length(bad)) {
    abort_input("Instance index {inst[bad[1]]} in {.arg groups} is out of range (there are {U} instances).",
                class = "noisylabels_error_membership", call = call)
  }
  bad <- which(grp < 1L | grp > N)
  if (length(bad)) {
    abort_input("Group index {grp[bad[1]]} in {.arg groups} is out of range (there are {N} groups).",
                class = "noisylabels_error_membership", call = call)
  }
  sizes <- tabulate(grp, N)
  if (any(sizes == 0L)) {
    abort_input(c("{sum(sizes == 0L)} group{?s} {?is/are} empty (first: group {which(sizes == 0L)[1]}).",
                  "i" = "Drop empty groups and their rows of {.arg label_dist} first."),
                class = "noisylabels_error_membership", call = call)
  }
  ord <- order(grp, inst)
  inst <- inst[ord]
  grp <- grp[ord]
  dup <- which(duplicated(cbind(grp, inst)))
  if (length(dup)) {
    abort_input("Instance {inst[dup[1]]} is listed twice in group {grp[dup[1]]}.",
                class = "noisylabels_error_membership", call = call)
  }
  list(group_ptr = c(0L, cumsum(sizes)), pair_unit = inst - 1L, sizes = sizes)
}
