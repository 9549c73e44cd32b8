# Resources a caller asks for are bounded before any work starts: thread
# counts by the cores the machine has, sizes by the memory it has.

# The number of cores R can use here (at least 1).
available_cores <- function() {
  n <- suppressWarnings(parallel::detectCores(logical = TRUE))
  if (is.na(n) || n < 1L) 1L else as.integer(n)
}

# A thread count: a whole number >= 1, capped at the available cores with a
# message (asking for more threads than cores only slows a fit down, and a
# huge count makes OpenMP or ranger abort the R session).
check_threads <- function(threads, arg = "threads", call = parent.frame()) {
  threads <- check_count(threads, arg, call = call)
  # one thread never exceeds the cores; asking the system (detectCores()
  # runs a command on Linux, about 4 ms) is left to counts above one
  cores <- if (threads > 1L) available_cores() else 1L
  if (threads > cores) {
    cli::cli_inform(c("i" = "{.arg {arg}} = {format(threads, big.mark = ',')} is more than the {cores} core{?s} available; using {cores}."),
                    class = "noisylabels_message_threads")
    threads <- cores
  }
  as.integer(threads)
}

# Memory this machine has, in bytes (NA when it cannot be read).
available_memory <- function() {
  lim <- getOption("noisylabels.max_bytes")
  if (!is.null(lim)) return(as.numeric(lim))
  info <- tryCatch(readLines("/proc/meminfo", n = 3L, warn = FALSE), error = function(e) character())
  line <- grep("^MemAvailable:", info, value = TRUE)
  if (!length(line)) return(NA_real_)
  as.numeric(gsub("[^0-9]", "", line)) * 1024
}

# Refuse an allocation of `bytes` (what `what` needs) before it is attempted
# when it exceeds half the memory available (the work that follows needs
# copies and workspace of the same order) or the limit of the option
# `noisylabels.max_gb` (default 8 GB) that the dense fits obey.
check_allocation <- function(bytes, what, call = parent.frame()) {
  limit_gb <- getOption("noisylabels.max_gb", 8)
  if (is.numeric(limit_gb) && length(limit_gb) == 1L && !is.na(limit_gb) && bytes > limit_gb * 2^30) {
    abort_input(c("{what} needs about {format_bytes(bytes)}, more than the limit of {limit_gb} GB.",
                  "i" = "Use a smaller size, or raise the option {.code noisylabels.max_gb} if the machine has the memory."),
                class = "noisylabels_error_memory", call = call)
  }
  avail <- available_memory()
  if (is.finite(avail) && bytes > avail / 2) {
    abort_input(c("{what} needs about {format_bytes(bytes)}, more than half of the {format_bytes(avail)} of memory available.",
                  "i" = "Use a smaller size."),
                class = "noisylabels_error_memory", call = call)
  }
  invisible(bytes)
}

format_bytes <- function(b) {
  units <- c("B", "KB", "MB", "GB", "TB")
  k <- max(1L, min(length(units), floor(log(max(b, 1), 1024)) + 1L))
  sprintf("%.1f %s", b / 1024^(k - 1L), units[k])
}

