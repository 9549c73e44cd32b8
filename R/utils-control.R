# Control objects: one per method, made by <method>_control(). A control
# holds every tuning setting of its method, with the defaults written once,
# in the constructor's signature. The constructor checks each setting; the
# same checks validate a control a fitting function receives (check_control()
# rebuilds it through its constructor), so a hand-edited control is held to
# the same rules, and a misspelt or missing setting is an error rather than a
# silent default. The fitting function then sends the glue every key it
# reads (src/rcpp_options.h).

new_control <- function(fields, class) {
  stopifnot(is.list(fields), is.character(class), length(class) == 1L)
  structure(fields, class = c(class, "noisylabels_control"))
}

# `control` as the constructor `maker` (named `maker_name`) would make it:
# the same fields, each valid. Errors: not a list, a field missing or
# unknown (noisylabels_error_control), a field out of range (the
# constructor's own error).
check_control <- function(control, maker, maker_name, arg = "control", call = parent.frame()) {
  if (!is.list(control)) {
    abort_input(c("{.arg {arg}} must be made by {.fn {maker_name}}, not {.obj_type_friendly {control}}.",
                  "i" = "Use e.g. {.code {arg} = {maker_name}()}."),
                class = "noisylabels_error_control", call = call)
  }
  fields <- names(formals(maker))
  given <- names(control) %||% character()
  missing <- setdiff(fields, given)
  unknown <- setdiff(given, fields)
  if (length(missing) || length(unknown)) {
    abort_input(c("{.arg {arg}} is not a {.fn {maker_name}} object.",
                  "x" = if (length(unknown)) "Unknown setting{?s}: {.field {unknown}}.",
                  "x" = if (length(missing)) "Missing setting{?s}: {.field {missing}}.",
                  "i" = "Make it with {.fn {maker_name}}, e.g. {.code {maker_name}({fields[1]} = ...)}."),
                class = "noisylabels_error_control", call = call)
  }
  rebuilt <- tryCatch(do.call(maker, unclass(control)[fields]),
                      noisylabels_error = function(e) {
                        abort_input(c("{.arg {arg}} has an invalid setting.", "x" = conditionMessage(e)),
                                    class = c("noisylabels_error_control", class(e)[1]),
                                    call = call)
                      })
  rebuilt
}

# A control from `control` and tuning settings given the earlier way, as
# arguments of the fitting function `fn` (through its `...`): those win,
# with a deprecation warning. Returns list(control, dots) with the settings
# taken out of `dots`.
control_from_dots <- function(control, dots, maker, maker_name, fn, call = parent.frame()) {
  control <- check_control(control, maker, maker_name, call = call)
  flat <- intersect(names(dots), names(formals(maker)))
  if (length(flat)) {
    cli::cli_warn(c("Tuning settings of {.fn {fn}} as its arguments are deprecated: {.arg {flat}}.",
                    "i" = "Use {.code control = {maker_name}({flat[1]} = ...)}."),
                  class = c("noisylabels_warning_deprecated", "noisylabels_warning"), call = call)
    fields <- unclass(control)
    fields[flat] <- dots[flat]
    control <- do.call(maker, fields)
    dots <- dots[setdiff(names(dots), flat)]
  }
  list(control = control, dots = dots)
}

#' @export
print.noisylabels_control <- function(x, ...) {
  cls <- class(x)[1L]
  cli::cat_line("<", cls, "> settings of ", sub("_control$", "", cls), "()")
  for (nm in names(x)) {
    v <- x[[nm]]
    txt <- if (is.null(v)) "NULL (chosen by the fit)"
           else if (is.character(v)) paste0('"', v, '"', collapse = ", ")
           else paste(format(v), collapse = ", ")
    cli::cat_line(sprintf("  %-20s %s", nm, txt))
  }
  invisible(x)
}
