# Data loaders for the Han, Tsang & Chen (2016) reproduction. The real data
# sets are read from ../shared/data (not shipped: see each SOURCE.md); the
# synthetic ones have the (n, d, density) of covtype and SUSY.

shared_data_dir <- function() {
  cand <- c(Sys.getenv("NOISYLABELS_SHARED_DATA"), "../shared/data", "../../shared/data",
            "../../../shared/data", "../../../../shared/data", "/work/shared/data")
  cand <- cand[nzchar(cand)]
  hit <- cand[dir.exists(cand)]
  if (!length(hit)) stop("shared data directory not found; set NOISYLABELS_SHARED_DATA")
  normalizePath(hit[1])
}

# Min-max scaling to [0, 1] fitted on the training part (spec section 5 item 1).
scale01 <- function(xtr, xte) {
  mn <- apply(xtr, 2, min); mx <- apply(xtr, 2, max)
  rg <- ifelse(mx > mn, mx - mn, 1)
  list(train = sweep(sweep(xtr, 2, mn), 2, rg, "/"),
       test = pmin(pmax(sweep(sweep(xte, 2, mn), 2, rg, "/"), 0), 1))
}

load_a7a <- function() {
  dir <- file.path(shared_data_dir(), "a7a")
  tr <- noisylabels::read_libsvm(file.path(dir, "a7a.xz"), n_features = 123)
  te <- noisylabels::read_libsvm(file.path(dir, "a7a.t.xz"), n_features = 123)
  list(name = "a7a", x = tr$x, y = tr$y, x_test = te$x, y_test = te$y)  # binary, already [0,1]
}

# ijcnn1: the 49,990-row LIBSVM file split 4:1 at random (seed 2016), [0,1] scaling.
load_ijcnn1 <- function(seed = 2016) {
  d <- noisylabels::read_libsvm(file.path(shared_data_dir(), "ijcnn1", "ijcnn1.trn.bz2"), n_features = 22)
  x <- as.matrix(d$x)
  set.seed(seed)
  te <- sort(sample(nrow(x), round(nrow(x) / 5)))
  sc <- scale01(x[-te, ], x[te, ])
  list(name = "ijcnn1", x = sc$train, y = d$y[-te], x_test = sc$test, y_test = d$y[te])
}

read_idx_gz <- function(path, what = c("images", "labels")) {
  what <- match.arg(what)
  con <- gzfile(path, "rb"); on.exit(close(con))
  magic <- readBin(con, "integer", 1, size = 4, endian = "big")
  n <- readBin(con, "integer", 1, size = 4, endian = "big")
  if (what == "labels") return(readBin(con, "integer", n, size = 1, signed = FALSE))
  nr <- readBin(con, "integer", 1, size = 4, endian = "big")
  nc <- readBin(con, "integer", 1, size = 4, endian = "big")
  px <- readBin(con, "integer", n * nr * nc, size = 1, signed = FALSE)
  matrix(px, n, nr * nc, byrow = TRUE)
}

# MNIST 3 vs 8 from the 10,000 test images (the only images in ../shared/data):
# 1,984 digits, split 4:1 (seed 2016), pixels / 255. Reduced stand-in for MNIST38.
load_mnist38 <- function(seed = 2016) {
  dir <- file.path(shared_data_dir(), "mnist")
  img <- read_idx_gz(file.path(dir, "t10k-images-idx3-ubyte.gz"))
  lab <- read_idx_gz(file.path(dir, "t10k-labels-idx1-ubyte.gz"), "labels")
  keep <- lab %in% c(3, 8)
  x <- img[keep, ] / 255
  y <- ifelse(lab[keep] == 8, 1, -1)
  set.seed(seed)
  te <- sort(sample(nrow(x), round(nrow(x) / 5)))
  list(name = "mnist38", x = methods::as(x[-te, ], "CsparseMatrix"), y = y[-te],
       x_test = methods::as(x[te, ], "CsparseMatrix"), y_test = y[te])
}

# Synthetic stand-ins: a linear concept with 8% inherent label noise on data of
# covtype's shape (d = 54, ~22% non-zero, 10 dense + 44 binary columns) and
# SUSY's (d = 18 dense). n is reduced for the time budget (argument).
sim_linear <- function(n, d, density, seed, name, dense_cols = d) {
  set.seed(seed)
  x <- matrix(runif(n * d), n, d)
  if (dense_cols < d) {
    sp <- (dense_cols + 1):d
    x[, sp] <- (matrix(runif(n * length(sp)), n) < (density * d - dense_cols) / length(sp)) * 1
  }
  beta <- rnorm(d)
  f <- drop(x %*% beta); f <- f - stats::median(f)
  y <- ifelse(f + stats::rlogis(n, scale = 0.15 * stats::sd(f)) > 0, 1, -1)
  te <- sort(sample(n, round(n / 5)))
  list(name = name, x = x[-te, ], y = y[-te], x_test = x[te, ], y_test = y[te])
}
load_covtype_sim <- function(n = 25000) sim_linear(n, 54, 0.221, 54, "covtype-shaped", dense_cols = 10)
load_susy_sim <- function(n = 25000) sim_linear(n, 18, 1, 18, "SUSY-shaped")
