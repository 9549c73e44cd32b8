# The formula interface's design: which columns of the model frame are
# categorical, their training levels, and the numeric matrix given to
# gpc_ep.default().

# ---- formula design --------------------------------------------------------
# With factors = "categorical", every main-effect term whose variable is a
# factor, character or logical becomes one column of level codes (1, 2, ...
# in the order of the training levels), named by the term; the other terms
# give model.matrix() columns. Columns follow the order of the terms.

gpc_ep_factor_like <- function(v) is.factor(v) || is.character(v) || is.logical(v)

gpc_ep_levels <- function(v) {
  if (is.factor(v)) levels(droplevels(v)) else as.character(sort(unique(v[!is.na(v)])))
}

gpc_ep_design <- function(terms, mf, factors, call = parent.frame()) {
  labels <- attr(terms, "term.labels")
  cat_terms <- character()
  if (factors == "categorical") {
    cat_terms <- labels[vapply(labels, function(l) l %in% names(mf) && gpc_ep_factor_like(mf[[l]]),
                               logical(1))]
  }
  lv <- lapply(stats::setNames(cat_terms, cat_terms), function(l) gpc_ep_levels(mf[[l]]))
  single <- cat_terms[lengths(lv) < 2L]
  if (length(single)) {
    abort_input(c("{cli::qty(length(single))}Factor{?s} {.field {single}} {cli::qty(length(single))}ha{?s/ve} a single level in the data used.",
                  "i" = "Drop {cli::qty(length(single))}{?it/them} from the formula: a constant input carries no information."),
                call = call)
  }
  list(factors = factors, categorical = cat_terms, levels = lv)
}

gpc_ep_design_matrix <- function(terms, mf, design, call = parent.frame()) {
  labels <- attr(terms, "term.labels")
  cat_terms <- design$categorical
  other <- setdiff(labels, cat_terms)
  mm <- NULL
  if (length(other) || !length(labels)) {
    t2 <- if (length(cat_terms)) {
      stats::drop.terms(terms, match(cat_terms, labels), keep.response = FALSE)
    } else terms
    mm <- frame_matrix(t2, mf, assign = TRUE, call = call)
    asg <- attr(mm, "assign")
    labels2 <- attr(t2, "term.labels")
  }
  cols <- lapply(labels, function(l) {
    if (l %in% cat_terms) {
      codes <- match(as.character(mf[[l]]), design$levels[[l]])
      matrix(as.numeric(codes), ncol = 1L, dimnames = list(NULL, l))
    } else {
      mm[, asg == match(l, labels2), drop = FALSE]
    }
  })
  xm <- do.call(cbind, cols)
  if (is.null(xm)) abort_input("The formula has no predictors on its right-hand side.", call = call)
  rownames(xm) <- rownames(mf)
  xm
}

# The kernel of a formula fit: the given one (default: the paper's mixed
# kernel) with the factor columns marked categorical.
gpc_ep_formula_kernel <- function(kernel, categorical, likelihood, call = parent.frame()) {
  if (!length(categorical)) return(kernel)
  kernel <- kernel %||% gpc_ep_default_kernel(match_arg(likelihood, c("step", "probit"), call = call))
  if (!inherits(kernel, "gp_kernel")) return(kernel)  # gpc_ep.default says what is wrong
  if (kernel$type != "mixed") {
    abort_input(c("{cli::qty(length(categorical))}Categorical input{?s} {.field {categorical}} {cli::qty(length(categorical))}need{?s/} the {.val mixed} kernel, not {.val {kernel$type}}.",
                  "i" = "Use {.code gp_kernel(\"mixed\", ...)} or {.code factors = \"dummies\"}."),
                call = call)
  }
  given <- kernel$categorical
  if (!is.null(given) && !is.character(given)) {
    abort_input(c("With factors in the formula, name the kernel's {.arg categorical} columns instead of giving indices.",
                  "i" = "Factor columns are categorical automatically."), call = call)
  }
  kernel$categorical <- union(given, categorical)
  kernel
}
