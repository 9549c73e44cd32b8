# Validation of fitted objects at the top of their methods: a method given an
# object of another kind (a list with the class set by hand, a fit of another
# method) or a fit whose parts were removed or altered gets a classed error
# naming what is wrong, not a base-R error from deep inside the method.

# Per class: the function that makes it, and the parts methods read as
# "name:kind" or "name:kind:row" (one value per training row; `n_of` gives
# the row count). Kinds: num (numbers), fin (finite numbers), one (a single
# finite number), list, df (data frame), chr (text), lvl (labels or levels:
# any atomic vector or factor), lvls (at least two of them), tab (a table:
# data frame or matrix), flag (TRUE or FALSE), any (present). The parent
# class noisylabels_fit (every fit, made by new_noisylabels_fit()) holds what
# the issues layer reads; check_fit(x, "noisylabels_fit") checks it and then
# the fit's own class.
fit_spec <- function(maker, parts, n_of = function(o) NA) {
  p <- strsplit(strsplit(trimws(parts), "[[:space:]]+")[[1L]], ":")
  list(maker = maker, parts = vapply(p, `[`, "", 1L), kinds = vapply(p, `[`, "", 2L),
       per_row = vapply(p, function(z) length(z) == 3L, TRUE), n_of = n_of)
}
fit_specs <- list(
  noisylabels_fit = fit_spec("one of its fitting functions", "task:chr has_p_wrong:flag"),
  gpr_loo = fit_spec("gpr_loo", "noise_var:fin:row loo_residual:num:row loo_sd:num:row fitted.values:num:row
                     residuals:num:row kernel:list x:num y:num:row y_center:one y_scale:one",
                     function(o) NROW(o$x)),
  gpr_pursuit = fit_spec("gpr_pursuit", "rho:fin:row rho_star:num sigma2:one mean:num x:num y:num:row
                         x_center:num x_scale:num y_center:one y_scale:one kernel:list kernel_std:list
                         steps:list selected:one", function(o) NROW(o$x)),
  gpc_ep = fit_spec("gpc_ep", "x:num x_center:num x_scale:num y_factor:lvl:row levels:lvls n:one kernel:list
                    flip_prob:fin:row latent_mean:num:row latent_var:num:row epsilon:one sigma:one
                    site_tau:num site_nu:num", function(o) o$n),
  gpc_ep_ovr = fit_spec("gpc_ep", "fits:list levels:lvls y:lvl:row n:one", function(o) o$n),
  sgd_robust = fit_spec("sgd_robust", "loss:list method:chr weights:fin bias:fin levels:lvls n:one d:one
                        margins:num label_kind:chr lambda:one eta:num trace:tab"),
  label_dist_vb = fit_spec("label_dist_vb", "zeta:fin W:fin C:num x:num classes:lvls"),
  gpr_baseline = fit_spec("gpr_baseline", "fit:list method:chr n:one"),
  label_dist_baseline = fit_spec("label_dist_baseline", "coefficients:fin intercept:fin method:chr classes:lvl"),
  find_label_issues = fit_spec("find_label_issues", "label_issues:df task:chr method:chr estimated_issues:num"),
  noisylabels_cv = fit_spec("cv_gpr_loo or cv_sgd_robust", "results:df best:any fit:list folds:num")
)
fit_specs$cv_gpr_loo <- fit_specs$noisylabels_cv
fit_specs$cv_sgd_robust <- fit_spec("cv_sgd_robust", "results:df best:list fit:list folds:num loss:chr")

fit_part_ok <- function(v, kind) {
  switch(kind,
         num = is.numeric(v),
         fin = is.numeric(v) && all(is.finite(v)),
         one = is.numeric(v) && length(v) == 1L && is.finite(v),
         list = is.list(v),
         df = is.data.frame(v),
         chr = is.character(v) && length(v) >= 1L,
         lvl = is.atomic(v) || is.factor(v),
         lvls = (is.atomic(v) || is.factor(v)) && length(v) >= 2L,
         tab = !is.null(dim(v)),
         flag = is.logical(v) && length(v) == 1L && !is.na(v),
         any = TRUE)
}

# `object` as a method for `class` needs it; returns it invisibly.
check_fit <- function(object, class, arg = deparse(substitute(object)), call = parent.frame()) {
  spec <- fit_specs[[class]]
  if (!inherits(object, class) || !is.list(object)) {
    maker <- if (class == "noisylabels_fit") "a fitting function of this package"
             else cli::format_inline("{.fn {spec$maker}}")
    abort_input(c("{.arg {arg}} must be a {.cls {class}} object made by {maker}, not {.obj_type_friendly {object}}.",
                  "i" = "Refit with {maker} instead of building or editing the object by hand."),
                class = "noisylabels_error_object", call = call)
  }
  parts <- unclass(object)
  present <- spec$parts %in% names(parts) & !vapply(spec$parts, function(p) is.null(parts[[p]]), TRUE)
  lacking <- spec$parts[!present]
  if (length(lacking)) {
    abort_input(c("{.arg {arg}} is a modified {.cls {class}} object: {cli::qty(length(lacking))}part{?s} {.field {lacking}} {cli::qty(length(lacking))}{?is/are} missing.",
                  "i" = "Refit with {.fn {spec$maker}}; methods read these parts."),
                class = "noisylabels_error_object", call = call)
  }
  n <- spec$n_of(parts)
  ok <- vapply(seq_along(spec$parts), function(i) {
    v <- parts[[spec$parts[i]]]
    fit_part_ok(v, spec$kinds[i]) && (!spec$per_row[i] || !is.numeric(n) || NROW(v) == n)
  }, TRUE)
  wrong <- spec$parts[!ok]
  if (length(wrong)) {
    abort_input(c("{.arg {arg}} is a modified {.cls {class}} object: {cli::qty(length(wrong))}part{?s} {.field {wrong}} {cli::qty(length(wrong))}{?is/are} not what {.fn {spec$maker}} made (type, length or finite values).",
                  "i" = "Refit with {.fn {spec$maker}} instead of editing the fit."),
                class = "noisylabels_error_object", call = call)
  }
  if (class == "label_dist_vb" && length(parts$classes) != NCOL(parts$zeta)) {
    abort_input("{.arg {arg}} is a modified {.cls label_dist_vb} object: {length(parts$classes)} class names for {NCOL(parts$zeta)} classes.",
                class = "noisylabels_error_object", call = call)
  }
  if (class == "gpc_ep_ovr") {
    if (length(parts$levels) != length(parts$fits)) {
      abort_input("{.arg {arg}} is a modified {.cls gpc_ep_ovr} object: {length(parts$fits)} fits for {length(parts$levels)} classes.",
                  class = "noisylabels_error_object", call = call)
    }
    for (f in parts$fits) check_fit(f, "gpc_ep", arg = arg, call = call)
  }
  if (class == "noisylabels_fit") {
    if (!parts$task %in% c("regression", "classification")) {
      abort_input("{.arg {arg}} is a modified fit: its {.field task} is {.val {parts$task}}, not {.val regression} or {.val classification}.",
                  class = "noisylabels_error_object", call = call)
    }
    own <- intersect(setdiff(base::class(object), "noisylabels_fit"), names(fit_specs))
    if (length(own)) check_fit(object, own[1L], arg = arg, call = call)
  }
  if (class %in% c("noisylabels_cv", "cv_gpr_loo", "cv_sgd_robust")) {
    # cv_<method> refits <method> on all rows: its fit is a <method> fit.
    cv <- grep("^cv_", base::class(object), value = TRUE)
    if (length(cv)) check_fit(parts$fit, sub("^cv_", "", cv[1L]), arg = paste0(arg, "$fit"), call = call)
  }
  invisible(object)
}
