# Argument checks shared by all fitting functions. Every failure is a classed
# cli error (classes listed in ARCHITECTURE.md, Conventions) so callers and tests can catch it by class.

abort_input <- function(message, ..., class = NULL, call = .envir, .envir = parent.frame()) {
  cli::cli_abort(message, ..., class = c(class, "noisylabels_error_input", "noisylabels_error"),
                 call = call, .envir = .envir)
}

abort_numeric <- function(message, ..., class = NULL, call = .envir, .envir = parent.frame()) {
  cli::cli_abort(message, ..., class = c(class, "noisylabels_error_numeric", "noisylabels_error"),
                 call = call, .envir = .envir)
}

warn_convergence <- function(message, ..., .envir = parent.frame()) {
  cli::cli_warn(message, ..., class = c("noisylabels_warning_convergence", "noisylabels_warning"),
                .envir = .envir)
}

# match.arg() with a classed error: same matching (exact, then partial; the
# untouched default vector gives its first element), but a wrong value says
# which argument, what was given and what is allowed. `choices` defaults to
# the formal argument's default in the calling function, as in match.arg().
match_arg <- function(arg, choices, call = parent.frame()) {
  name <- deparse(substitute(arg))
  if (missing(choices)) {
    caller <- sys.function(sys.parent())
    choices <- eval(formals(caller)[[name]], envir = call)
  }
  if (is.null(arg) || identical(arg, choices)) return(choices[[1L]])
  if (is.character(arg) && length(arg) == 1L && !is.na(arg) && nzchar(arg)) {
    i <- pmatch(arg, choices, nomatch = 0L, duplicates.ok = TRUE)
    if (i > 0L) return(choices[[i]])
  }
  given <- if (is.character(arg) && length(arg) == 1L) cli::format_inline("{.val {arg}}")
           else paste0("a ", class(arg)[1L], if (is.atomic(arg)) " vector", " of length ", length(arg))
  abort_input(c("{.arg {name}} must be one of {.or {.val {choices}}}, not {given}."),
              class = "noisylabels_error_choice", call = call)
}

# A fitting function's `...` only exists for S3 dispatch (and for its formula
# method to pass arguments on): anything that arrives there is misspelt or
# meant for another function. Say so, with the closest argument name, instead
# of ignoring it.
check_dots_empty <- function(fn, ..., call = parent.frame()) {
  n <- ...length()
  if (n == 0L) return(invisible())
  nms <- ...names()
  if (is.null(nms)) nms <- rep("", n)
  named <- nms[nzchar(nms)]
  formal <- setdiff(names(formals(sys.function(sys.parent()))), "...")
  hints <- character()
  for (nm in named) {
    d <- utils::adist(nm, formal, ignore.case = TRUE)[1L, ]
    cand <- which(startsWith(formal, nm) | d <= max(1, ceiling(nchar(nm) / 3)))
    if (length(cand)) {
      best <- formal[[cand[which.min(d[cand])]]]
      hints <- c(hints, "i" = cli::format_inline("Did you mean {.arg {best}} instead of {.arg {nm}}?"))
    }
  }
  msg <- if (length(named)) {
    cli::format_inline("Unknown {cli::qty(length(named))}argument{?s} {.arg {named}} to {.fn {fn}}.")
  } else {
    character()
  }
  if (any(!nzchar(nms))) {
    k <- sum(!nzchar(nms))
    msg <- c(msg, cli::format_inline("{k} unnamed argument{?s} to {.fn {fn}} that it does not use."))
  }
  msg <- gsub("([{}])", "\\1\\1", msg)
  hints <- gsub("([{}])", "\\1\\1", hints)
  names(msg) <- c("", rep("x", length(msg) - 1L))
  abort_input(c(msg, hints), class = "noisylabels_error_unknown_argument", call = call)
}

# Run a C++ entry point and turn its std::exception into a classed R error
# that names the routine and keeps the core's message. A stop by Ctrl-C (the
# core's Interrupted) becomes R's own interrupt; an R error its poll of R
# caught (the time limit of setTimeLimit()) comes back as that error.
# Threads: the BLAS runs with `threads` threads (the cores the caller may
# use; 1 unless a fit passes its own `threads`) for the duration of the
# call, unless the option `noisylabels.blas_threads` is set, which wins (see
# src/rcpp_blas.cpp for why), and gets its own setting back afterwards.
# Every call of an Rcpp export from R/ goes through here, except this
# function's own machinery (.blas_threads_set(), .poll_condition_take()).
call_core <- function(expr, call = parent.frame(), threads = 1L) {
  ex <- substitute(expr)
  fn <- ex[[1L]]
  if (is.call(fn)) fn <- fn[[3L]]  # noisylabels:::.routine(...)
  routine <- sub("^\\.", "", as.character(fn)[1L])
  # a test hook, hook("name", ...) or .hook("name", list(...)): name it
  if (routine == "hook" && length(ex) > 1L && is.character(ex[[2L]])) routine <- ex[[2L]]
  old_blas <- .blas_threads_set(blas_threads(call, default = threads %||% 1L))
  if (!is.na(old_blas)) on.exit(.blas_threads_set(old_blas), add = TRUE)
  interrupted <- FALSE
  .poll_condition_take()  # nothing left over from an earlier call
  out <- tryCatch(expr, error = function(e) {
    if (inherits(e, "noisylabels_error") || is_time_limit_error(e)) stop(e)
    if (identical(conditionMessage(e), "interrupted by the user")) {
      interrupted <<- TRUE
      return(NULL)
    }
    abort_core(e, routine, call = call)
  })
  if (interrupted) signal_interrupt()
  out
}

# R's time limit (setTimeLimit(), as R.utils::withTimeout() and callr use it)
# fired in R code the core called back (a progress display): R's error, not a
# failure of the core, so it goes on as itself.
is_time_limit_error <- function(e) {
  if (inherits(e, "C++Error")) return(FALSE)
  msgs <- c("reached elapsed time limit", "reached CPU time limit",
            "reached session elapsed time limit", "reached session CPU time limit")
  conditionMessage(e) %in% c(msgs, vapply(msgs, gettext, "", domain = "R"))
}

# Threads of the BLAS inside the package's C++ calls: the option
# `noisylabels.blas_threads`, `default` unless set (see ?noisylabels).
blas_threads <- function(call = parent.frame(), default = 1L) {
  check_count(getOption("noisylabels.blas_threads", default), "noisylabels.blas_threads", call = call)
}

# The kind of a C++ failure, from the exception's type (Rcpp gives the R
# condition the C++ class name) and, for plain runtime errors, its message:
# "resource" (memory), "input" (the core refused its arguments),
# "numeric" (a factorization, a divergence, a non-finite value) or
# "internal" (an R error inside the wrapped expression).
core_error_kind <- function(e) {
  cls <- class(e)
  msg <- conditionMessage(e)
  # an R error raised inside the expression (not a C++ exception): a bug
  if (!inherits(e, "C++Error") && !any(grepl("^(std|Rcpp|noisylabels)::", cls))) return("internal")
  if (any(cls %in% c("std::bad_alloc", "std::bad_array_new_length", "std::length_error")) ||
      grepl("bad_alloc|cannot allocate|out of memory", msg, ignore.case = TRUE)) {
    return("resource")
  }
  if (any(cls %in% c("std::invalid_argument", "std::out_of_range", "std::domain_error",
                     "std::logic_error", "Rcpp::index_out_of_bounds", "Rcpp::not_compatible",
                     "Rcpp::not_a_matrix"))) {
    return("input")
  }
  "numeric"
}

abort_core <- function(e, routine, call = parent.frame()) {
  msg <- gsub("([{}])", "\\1\\1", conditionMessage(e))
  kind <- core_error_kind(e)
  head <- switch(kind,
                 resource = "The C++ routine {.fn {routine}} ran out of memory.",
                 input = "The C++ routine {.fn {routine}} refused its input.",
                 numeric = "The C++ routine {.fn {routine}} failed numerically.",
                 internal = "{.fn {routine}} stopped with an R error.")
  hint <- switch(kind,
                 resource = "Use a smaller problem (fewer rows, neighbours or restarts) or free memory.",
                 input = "This is a check the R layer should have made first; please report it with the call.",
                 numeric = "Rescale the inputs, raise the noise or jitter floor, or lower the step size.",
                 internal = "This is a bug in noisylabels; please report it with the call.")
  cls <- switch(kind,
                resource = c("noisylabels_error_memory", "noisylabels_error_resource"),
                input = c("noisylabels_error_core", "noisylabels_error_input"),
                numeric = c("noisylabels_error_core", "noisylabels_error_numeric"),
                internal = c("noisylabels_error_internal", "noisylabels_error_numeric"))
  # core_message: the core's own words, for a caller that rewords the failure
  cli::cli_abort(c(head, "x" = msg, "i" = hint), class = c(cls, "noisylabels_error"),
                 call = call, core_message = conditionMessage(e))
}

check_number <- function(x, arg, lower = -Inf, upper = Inf, open_lower = FALSE,
                         open_upper = FALSE, call = parent.frame()) {
  ok <- is.numeric(x) && length(x) == 1L && !is.na(x) && is.finite(x)
  if (ok) ok <- if (open_lower) x > lower else x >= lower
  if (ok) ok <- if (open_upper) x < upper else x <= upper
  if (!ok) {
    lo <- if (open_lower) "(" else "["
    hi <- if (open_upper) ")" else "]"
    abort_input("{.arg {arg}} must be a single finite number in {lo}{lower}, {upper}{hi}, not {.val {format(x)}}.",
                call = call)
  }
  invisible(x)
}

# The path of a file to write: one non-empty string.
check_output_file <- function(file, arg = "file", call = parent.frame()) {
  if (!is.character(file) || length(file) != 1L || is.na(file) || !nzchar(file)) {
    abort_input("{.arg {arg}} must be the path of the file to write, one string.",
                class = "noisylabels_error_file", call = call)
  }
  invisible(file)
}

# A whole number in [lower, upper] (upper at most the largest integer).
check_count <- function(x, arg, lower = 1, upper = .Machine$integer.max, call = parent.frame()) {
  if (!is.numeric(x) || length(x) != 1L || is.na(x) || !is.finite(x) || x != round(x) ||
      x < lower || x > upper) {
    range <- if (upper < .Machine$integer.max) {
      paste0("between ", lower, " and ", format(upper, big.mark = ","))
    } else {
      paste0(">= ", lower)
    }
    abort_input("{.arg {arg}} must be a whole number {range}.", call = call)
  }
  invisible(as.integer(x))
}

check_flag <- function(x, arg, call = parent.frame()) {
  if (!is.logical(x) || length(x) != 1L || is.na(x)) {
    abort_input("{.arg {arg}} must be TRUE or FALSE.", call = call)
  }
  invisible(x)
}

# Numeric design matrix: no NA/NaN/Inf, at least `min_rows` rows.
# `max_abs`: the largest magnitude accepted (see check_magnitude()); SGD,
# which reports its own divergence, passes Inf.
check_x_matrix <- function(x, arg = "x", min_rows = 1L, max_abs = 1e150, call = parent.frame()) {
  if (is.data.frame(x)) {
    bad <- names(x)[!vapply(x, is.numeric, logical(1))]
    if (length(bad)) {
      abort_input(c("{.arg {arg}} has non-numeric column{?s} {.val {bad}}.",
                    "i" = "Use the formula interface to expand factors, or convert them first."),
                  call = call)
    }
    x <- as.matrix(x)
  }
  if (is.vector(x) && is.numeric(x)) x <- matrix(x, ncol = 1L)
  if (!is.matrix(x) || !is.numeric(x)) {
    abort_input("{.arg {arg}} must be a numeric matrix or data frame, not {.cls {class(x)}}.",
                call = call)
  }
  if (nrow(x) < min_rows) {
    abort_input("{.arg {arg}} has {nrow(x)} row{?s}; at least {min_rows} are needed.", call = call)
  }
  if (ncol(x) < 1L) abort_input("{.arg {arg}} has no columns.", call = call)
  if (anyNA(x)) {
    where <- which(is.na(x), arr.ind = TRUE)[1, ]
    abort_input(c("{.arg {arg}} contains NA/NaN values (first at row {where[1]}, column {where[2]}).",
                  "i" = "Remove or impute them first."), call = call)
  }
  if (any(!is.finite(x))) {
    abort_input("{.arg {arg}} contains infinite values.", call = call)
  }
  if (is.finite(max_abs)) check_magnitude(x, arg, max_abs = max_abs, call = call)
  storage.mode(x) <- "double"
  x
}

# Values whose squares or pairwise differences overflow or underflow double
# precision (beyond about 1e150, or spread below 1e-150) make the GP and SGD
# arithmetic return Inf or NaN. They are refused with a classed error that
# says to rescale, since every method standardises its inputs and labels
# anyway and a user's rescaling loses nothing.
check_magnitude <- function(v, arg, max_abs = 1e150, call = parent.frame()) {
  big <- max(abs(v))
  if (big > max_abs) {
    abort_input(c("{.arg {arg}} has values as large as {format(big, digits = 3)}; arithmetic on them overflows.",
                  "i" = "Divide {.arg {arg}} by a constant (e.g. {format(10^floor(log10(big)), digits = 3)}) first."),
                class = "noisylabels_error_range", call = call)
  }
  if (big > 0 && big < 1e-150) {
    abort_input(c("{.arg {arg}} has values no larger than {format(big, digits = 3)}; arithmetic on them underflows.",
                  "i" = "Multiply {.arg {arg}} by a constant first."),
                class = "noisylabels_error_range", call = call)
  }
  invisible(v)
}

check_y_numeric <- function(y, n, arg = "y", call = parent.frame()) {
  if (!is.numeric(y) || !is.null(dim(y)) && ncol(as.matrix(y)) != 1L) {
    abort_input("{.arg {arg}} must be a numeric vector.", call = call)
  }
  y <- as.numeric(y)
  if (length(y) != n) {
    abort_input("{.arg {arg}} has length {length(y)} but {.arg x} has {n} row{?s}.", call = call)
  }
  if (anyNA(y)) abort_input("{.arg {arg}} contains NA/NaN values.", call = call)
  if (any(!is.finite(y))) abort_input("{.arg {arg}} contains infinite values.", call = call)
  check_magnitude(y, arg, call = call)
  # A single label is left to the caller's minimum-size check (its sd is NA).
  if (n >= 2 && stats::sd(y) == 0) {
    abort_input("{.arg {arg}} is constant; there is nothing to model.", call = call)
  }
  y
}

# Refuse n x n problems that cannot fit in memory, before allocating anything.
# `copies` is how many n x n double matrices the solver holds at once.
check_dense_memory <- function(n, copies = 3, limit_gb = getOption("noisylabels.max_gb", 8),
                               call = parent.frame(), vecchia = FALSE) {
  need <- copies * 8 * as.double(n)^2 / 2^30
  if (need > limit_gb) {
    way_out <- if (vecchia) {
      "Use {.code approx = \"vecchia\"} (O(n m) memory), subsample, or raise the option if the machine has the memory."
    } else {
      "Subsample the data or raise the option if the machine has the memory."
    }
    abort_input(c("n = {n} needs about {format(need, digits = 3)} GB for its {copies} dense {n} x {n} matrices.",
                  "i" = "The limit is {limit_gb} GB (option {.code noisylabels.max_gb}).",
                  "i" = way_out),
                class = "noisylabels_error_memory", call = call)
  }
  invisible(need)
}

# Draw a seed for C++ from R's RNG so set.seed() reproduces a fit.
draw_seed <- function() as.integer(stats::runif(1, 0, .Machine$integer.max))

`%||%` <- function(a, b) if (is.null(a)) b else a

# An argument that was renamed: when the caller used the old name (found in
# `dots`, the function's `...` as a list), warn once per call and return its
# value; otherwise return `value` (the new argument). The old name must not be
# given together with the new one.
renamed_arg <- function(dots, old, new, value, new_missing, call = parent.frame()) {
  if (!old %in% names(dots)) return(value)
  if (!new_missing) {
    abort_input("Give {.arg {new}} only; {.arg {old}} is its deprecated old name.", call = call)
  }
  cli::cli_warn(c("{.arg {old}} is deprecated; use {.arg {new}} instead.",
                  i = "The old name will be removed in a later version."),
                class = "noisylabels_warning_deprecated", call = call)
  dots[[old]]
}

# R's own interrupt: the condition Ctrl-C signals (so tryCatch(interrupt = )
# and withCallingHandlers see it), then back to the top level as base R does.
# Used when the C++ core stopped because its poll of R said stop. That poll
# may also have caught an R error (setTimeLimit()'s "reached elapsed time
# limit" comes out of R_CheckUserInterrupt); the monitor kept it and it is
# raised here again as the error it is, so tryCatch(error = ) sees it.
signal_interrupt <- function() {
  caught <- .poll_condition_take()
  if (inherits(caught, "error")) stop(caught)
  cond <- structure(class = c("interrupt", "condition"), list(message = "", call = NULL))
  signalCondition(cond)
  invokeRestart("abort")
}
