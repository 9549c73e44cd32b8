// Glue for confident learning on probabilities read chunk by chunk
// (R/issues-chunked.R): a chunk as a ProbBlock view (no copy), the three
// passes on one chunk each, which return the chunk's part (R combines the
// chunks in row order and assigns each part into its rows), and the readers
// of probability files (core/io/prob_file.h). Nothing is written into R
// memory the caller passed in. The functions a chunk's future job calls are
// exported with rng = false: they draw no random numbers, and on a fresh
// worker Rcpp's RNG scope would create a seed, which future reports as
// random numbers drawn without a seed.
#include <Rcpp.h>

#include <string>
#include <vector>

#include "io/prob_file.h"
#include "issues/confident_learning.h"
#include "rcpp_monitor.h"

using namespace noisylabels;

namespace {

// The first `rows` rows of a chunk: a numeric matrix (column-major, one
// column per class) or a numeric vector of rows in row-major order with k
// columns (possibly longer).
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

}  // namespace

// Pass 1 on one chunk: P[i, label_i] (clamped) for each row of the chunk,
// whose labels are labels[offset ...]; NULL when the chunk fails the
// probability checks.
// [[Rcpp::export(.cl_pass_given, rng = false)]]
SEXP cl_pass_given_cpp(SEXP chunk, double rows, int k, SEXP labels, double offset, double tol) {
  const ProbBlock b = block_of(chunk, rows, k);
  if (!cl_block_ok(b, tol)) return R_NilValue;
  Rcpp::NumericVector given(b.rows);
  cl_label_probs(b, labels_at(labels, offset, b), given.begin());
  return given;
}

// Pass 1, combined: `sums` plus given[i] added under label_i over a chunk's
// rows (labels labels[offset ...]), in row order (called on the chunks in
// row order). Returns the k new sums.
// [[Rcpp::export(.cl_add_sums)]]
Rcpp::NumericVector cl_add_sums_cpp(Rcpp::NumericVector given, SEXP labels, double offset,
                                    Rcpp::NumericVector sums) {
  const R_xlen_t n = given.size();
  const auto off = static_cast<R_xlen_t>(offset);
  if (TYPEOF(labels) != INTSXP || off < 0 || off + n > Rf_xlength(labels)) {
    Rcpp::stop("labels must be integer codes covering the chunk's rows");
  }
  const int k = static_cast<int>(sums.size());
  const int* lab = INTEGER(labels) + off;
  for (R_xlen_t i = 0; i < n; ++i) {
    if (lab[i] < 1 || lab[i] > k) Rcpp::stop("a label code is out of range");
  }
  Rcpp::NumericVector out = Rcpp::clone(sums);
  cl_add_label_sums(given.begin(), lab, n, out.begin());
  return out;
}

// Where the chunks of a headerless text file start: the byte offset of
// every chunk_rows-th non-empty line (the first is 0), and the number of
// non-empty lines, so that a job can seek to its own rows.
// [[Rcpp::export(.cl_text_chunks)]]
Rcpp::List cl_text_chunks_cpp(std::string path, double chunk_rows) {
  const TextChunks c = text_chunk_starts(path, static_cast<long long>(chunk_rows));
  return Rcpp::List::create(Rcpp::Named("start") = c.start,
                            Rcpp::Named("rows") = static_cast<double>(c.rows));
}

// Pass 2 on one chunk: list(joint = the chunk's confident joint (k x k
// integer counts), confident = the confident class of each of its rows
// (labels labels[offset ...]), NA when no class reaches its threshold), or
// NULL when the chunk fails the probability checks.
// [[Rcpp::export(.cl_pass_joint, rng = false)]]
SEXP cl_pass_joint_cpp(SEXP chunk, double rows, int k, SEXP labels, double offset,
                       Rcpp::NumericVector thresholds, double tol) {
  const ProbBlock b = block_of(chunk, rows, k);
  if (!cl_block_ok(b, tol)) return R_NilValue;
  if (thresholds.size() != k) Rcpp::stop("one threshold per class is needed");
  const int* lab = labels_at(labels, offset, b);
  Rcpp::IntegerMatrix joint(k, k);
  Rcpp::IntegerVector confident(b.rows);
  cl_count_joint(b, lab, thresholds.begin(), joint.begin(), confident.begin(), NA_INTEGER);
  return Rcpp::List::create(Rcpp::Named("joint") = joint, Rcpp::Named("confident") = confident);
}

// Pass 3 on one chunk: the per-label scores of its rows (quality,
// prob_given, best, other, prob_other), or NULL when the chunk fails the
// probability checks. `model`: rank_by, adjust, thresholds, rank_noise.
// [[Rcpp::export(.cl_pass_scores, rng = false)]]
SEXP cl_pass_scores_cpp(SEXP chunk, double rows, int k, SEXP labels, double offset, Rcpp::List model,
                        double tol) {
  const ProbBlock b = block_of(chunk, rows, k);
  if (!cl_block_ok(b, tol)) return R_NilValue;
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
  Rcpp::NumericVector quality(b.rows), prob_given(b.rows), prob_other(b.rows);
  Rcpp::IntegerVector best(b.rows), other(b.rows);
  const ClScoreOut o{quality.begin(), prob_given.begin(), best.begin(), other.begin(), prob_other.begin()};
  RMonitor monitor;
  cl_score_rows(b, labels_at(labels, offset, b), m, o, monitor);
  return Rcpp::List::create(Rcpp::Named("quality") = quality, Rcpp::Named("prob_given") = prob_given,
                            Rcpp::Named("best") = best, Rcpp::Named("other") = other,
                            Rcpp::Named("prob_other") = prob_other);
}

// Rows first_row + 1 ... first_row + rows of a binary file of row-major
// little-endian doubles with k per row, as one vector in that order.
// [[Rcpp::export(.cl_read_rows, rng = false)]]
Rcpp::NumericVector cl_read_rows_cpp(std::string path, double first_row, double rows, int k) {
  Rcpp::NumericVector out(static_cast<R_xlen_t>(rows) * k);
  read_binary_rows(path, static_cast<long long>(first_row), static_cast<long long>(rows), k,
                   out.begin());
  return out;
}
