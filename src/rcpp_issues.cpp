// Glue for confident learning on probabilities read chunk by chunk
// (R/issues-chunked.R): a chunk as a ProbBlock view (no copy), the three
// passes on one chunk each (R combines the chunks in row order), q-values
// and the sorted result. The per-label output vectors are allocated by the
// caller, which owns them alone, and are written in place: at 10^7 labels a
// copy of each would cost more memory than a chunk. The functions a chunk's
// future job calls are exported with rng = false: they draw no random
// numbers, and on a fresh worker Rcpp's RNG scope would create a seed, which
// future reports as random numbers drawn without a seed.
#include <Rcpp.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "issues/confident_learning.h"
#include "rcpp_monitor.h"

using namespace noisylabels;

namespace {

// The first `rows` rows of a chunk: a numeric matrix (column-major, one
// column per class) or a numeric vector of rows in row-major order with k
// columns (a reused buffer, possibly longer).
ProbBlock block_of(SEXP chunk, double rows, int k) {
  if (TYPEOF(chunk) != REALSXP) Rcpp::stop("a chunk of probabilities must be double");
  ProbBlock b;
  b.data = REAL(chunk);
  b.k = k;
  b.rows = static_cast<std::ptrdiff_t>(rows);
  SEXP dim = Rf_getAttrib(chunk, R_DimSymbol);
  if (!Rf_isNull(dim)) {
    if (INTEGER(dim)[1] != k || INTEGER(dim)[0] < b.rows) Rcpp::stop("a chunk of probabilities has the wrong shape");
    b.row_stride = 1;
    b.col_stride = INTEGER(dim)[0];
  } else {
    if (Rf_xlength(chunk) < b.rows * k) Rcpp::stop("a chunk of probabilities is too short");
    b.row_stride = k;
    b.col_stride = 1;
  }
  return b;
}

// The labels (integer codes 1..k) of the chunk's rows: labels[offset ...].
const int* labels_at(SEXP labels, double offset, const ProbBlock& b) {
  if (TYPEOF(labels) != INTSXP) Rcpp::stop("labels must be integer codes");
  const auto off = static_cast<R_xlen_t>(offset);
  if (off < 0 || off + b.rows > Rf_xlength(labels)) Rcpp::stop("chunk rows beyond the labels");
  return INTEGER(labels) + off;
}

template <typename T>
T* column(SEXP x, int type, R_xlen_t n, const char* what) {
  if (TYPEOF(x) != type || Rf_xlength(x) != n) Rcpp::stop(std::string("bad output column ") + what);
  if (type == REALSXP) return reinterpret_cast<T*>(REAL(x));
  return reinterpret_cast<T*>(type == LGLSXP ? LOGICAL(x) : INTEGER(x));
}

}  // namespace

// Pass 1 on one chunk: given[i] = P[i, label_i] (clamped; `given` has one
// value per row of the chunk, whose labels are labels[offset ...]), in
// place. FALSE (nothing written) when the chunk fails the probability checks.
// [[Rcpp::export(.cl_pass_given, rng = false)]]
bool cl_pass_given_cpp(SEXP chunk, double rows, int k, SEXP labels, double offset, SEXP given, double tol) {
  const ProbBlock b = block_of(chunk, rows, k);
  if (!cl_block_ok(b, tol)) return false;
  double* g = column<double>(given, REALSXP, b.rows, "given");
  cl_label_probs(b, labels_at(labels, offset, b), g);
  return true;
}

// Pass 1, combined: sums[label_i] += given[i] over a chunk's rows (labels
// labels[offset ...]), in row order, in place (called on the chunks in row
// order).
// [[Rcpp::export(.cl_add_sums)]]
void cl_add_sums_cpp(SEXP given, SEXP labels, double offset, SEXP sums) {
  const R_xlen_t n = Rf_xlength(given);
  const auto off = static_cast<R_xlen_t>(offset);
  if (TYPEOF(labels) != INTSXP || off < 0 || off + n > Rf_xlength(labels)) {
    Rcpp::stop("labels must be integer codes covering the chunk's rows");
  }
  const int k = static_cast<int>(Rf_xlength(sums));
  const int* lab = INTEGER(labels) + off;
  for (R_xlen_t i = 0; i < n; ++i) {
    if (lab[i] < 1 || lab[i] > k) Rcpp::stop("a label code is out of range");
  }
  cl_add_label_sums(column<double>(given, REALSXP, n, "given"), lab, n, column<double>(sums, REALSXP, k, "sums"));
}

// dest[offset + i] = from[i] for every i, in place: a chunk's per-label
// output into the whole vector without copying the whole vector.
// [[Rcpp::export(.cl_put_rows)]]
void cl_put_rows_cpp(SEXP dest, double offset, SEXP from) {
  const R_xlen_t m = Rf_xlength(from);
  const auto off = static_cast<R_xlen_t>(offset);
  if (TYPEOF(dest) != TYPEOF(from) || off < 0 || off + m > Rf_xlength(dest)) {
    Rcpp::stop("a chunk's output does not fit its place");
  }
  if (TYPEOF(from) == REALSXP) {
    std::copy(REAL(from), REAL(from) + m, REAL(dest) + off);
  } else if (TYPEOF(from) == INTSXP || TYPEOF(from) == LGLSXP) {
    const int* f = TYPEOF(from) == INTSXP ? INTEGER(from) : LOGICAL(from);
    std::copy(f, f + m, (TYPEOF(dest) == INTSXP ? INTEGER(dest) : LOGICAL(dest)) + off);
  } else {
    Rcpp::stop("a chunk's output must be double, integer or logical");
  }
}

// Where the chunks of a headerless text file start: the byte offset of
// every chunk_rows-th non-empty line (the first is 0), and the number of
// non-empty lines, so that a job can seek to its own rows.
// [[Rcpp::export(.cl_text_chunks)]]
Rcpp::List cl_text_chunks_cpp(std::string path, double chunk_rows) {
  std::ifstream f(path, std::ios::binary);
  if (!f) Rcpp::stop("cannot open " + path);
  const auto per = static_cast<long long>(chunk_rows);
  std::vector<double> starts;
  std::vector<char> buf(1 << 16);
  long long rows = 0, pos = 0, line_start = 0;
  bool filled = false;  // the current line has a character other than '\r'
  auto end_line = [&]() {
    if (filled) {
      if (rows % per == 0) starts.push_back(static_cast<double>(line_start));
      ++rows;
    }
    filled = false;
  };
  while (f) {
    f.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    const std::streamsize got = f.gcount();
    for (std::streamsize i = 0; i < got; ++i, ++pos) {
      const char c = buf[i];
      if (c == '\n') {
        end_line();
        line_start = pos + 1;
      } else if (c != '\r') {
        filled = true;
      }
    }
  }
  end_line();
  return Rcpp::List::create(Rcpp::Named("start") = starts, Rcpp::Named("rows") = static_cast<double>(rows));
}

// Pass 2 on one chunk: the confident joint (k x k integer matrix) and the
// confident class of each of the chunk's rows (labels labels[offset ...]),
// both in place.
// [[Rcpp::export(.cl_pass_joint, rng = false)]]
bool cl_pass_joint_cpp(SEXP chunk, double rows, int k, SEXP labels, double offset, SEXP thresholds,
                       SEXP joint, SEXP confident, double tol) {
  const ProbBlock b = block_of(chunk, rows, k);
  if (!cl_block_ok(b, tol)) return false;
  const int* lab = labels_at(labels, offset, b);
  int* conf = column<int>(confident, INTSXP, b.rows, "confident");
  cl_count_joint(b, lab, column<double>(thresholds, REALSXP, k, "thresholds"),
                 column<int>(joint, INTSXP, static_cast<R_xlen_t>(k) * k, "joint"), conf,
                 NA_INTEGER);
  return true;
}

// Pass 3 on one chunk: per-label scores into the seven vectors of `out`
// (quality, prob_given, p_wrong, best, prob_best, other, prob_other) at
// offset, in place. `model`: rank_by, adjust, thresholds, rank_noise, temper,
// noise, unmix_noise, unmix (the last two empty without an unmixed model).
// [[Rcpp::export(.cl_pass_scores, rng = false)]]
bool cl_pass_scores_cpp(SEXP chunk, double rows, int k, SEXP labels, double offset, Rcpp::List model,
                        Rcpp::List out, double tol) {
  const ProbBlock b = block_of(chunk, rows, k);
  if (!cl_block_ok(b, tol)) return false;
  ClScoreModel m;
  m.k = k;
  const std::string rank_by = Rcpp::as<std::string>(model["rank_by"]);
  m.rank_by = rank_by == "self_confidence" ? ClRankBy::SelfConfidence
              : rank_by == "normalized_margin" ? ClRankBy::NormalizedMargin
                                               : ClRankBy::Posterior;
  m.adjust = Rcpp::as<bool>(model["adjust"]);
  m.thresholds = Rcpp::as<std::vector<double>>(model["thresholds"]);
  m.rank_noise = Rcpp::as<std::vector<double>>(model["rank_noise"]);
  if (static_cast<int>(m.thresholds.size()) != k || static_cast<int>(m.rank_noise.size()) != k * k) {
    Rcpp::stop("the score model does not match the number of classes");
  }
  const R_xlen_t n = Rf_xlength(labels);
  const auto off = static_cast<R_xlen_t>(offset);
  ClScoreOut o{column<double>(out["quality"], REALSXP, n, "quality") + off,
               column<double>(out["prob_given"], REALSXP, n, "prob_given") + off,
               column<int>(out["best"], INTSXP, n, "best") + off,
               column<int>(out["other"], INTSXP, n, "other") + off,
               column<double>(out["prob_other"], REALSXP, n, "prob_other") + off};
  RMonitor monitor;
  cl_score_rows(b, labels_at(labels, offset, b), m, o, monitor);
  return true;
}

// Rows first_row + 1 ... first_row + rows of a binary file of row-major
// little-endian doubles with k per row, into the front of `buffer` (in
// place; byte-swapped on a big-endian host).
// [[Rcpp::export(.cl_read_rows, rng = false)]]
void cl_read_rows_cpp(std::string path, double first_row, double rows, int k, SEXP buffer) {
  const auto count = static_cast<std::size_t>(rows) * static_cast<std::size_t>(k);
  if (TYPEOF(buffer) != REALSXP || static_cast<std::size_t>(Rf_xlength(buffer)) < count) {
    Rcpp::stop("the read buffer is too small");
  }
  std::ifstream f(path, std::ios::binary);
  if (!f) Rcpp::stop("cannot open " + path);
  f.seekg(static_cast<std::streamoff>(first_row) * k * static_cast<std::streamoff>(sizeof(double)));
  char* to = reinterpret_cast<char*>(REAL(buffer));
  f.read(to, static_cast<std::streamsize>(count * sizeof(double)));
  const bool ok = static_cast<std::size_t>(f.gcount()) == count * sizeof(double);
  const std::uint16_t probe = 1;
  if (ok && *reinterpret_cast<const unsigned char*>(&probe) == 0) {  // big-endian host
    for (std::size_t i = 0; i < count; ++i) std::reverse(to + 8 * i, to + 8 * i + 8);
  }
  if (!ok) Rcpp::stop("could not read rows of " + path);
}



