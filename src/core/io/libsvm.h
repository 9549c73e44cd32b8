// Parser of LIBSVM text lines ("label index:value index:value ..."), R-free.
// Rules: text after '#' is a comment, blank lines are skipped, the label is a
// finite number, then index:value pairs with a positive integer index, a
// finite value and strictly increasing indices.
#pragma once

#include <string>
#include <vector>

namespace noisylabels {

// The parsed rows as triplets (row numbers and indices 1-based), and the
// first malformed line if there was one.
struct LibsvmTriplets {
  int n = 0;          // data lines parsed
  int max_index = 0;  // largest feature index seen
  std::vector<double> y;
  std::vector<int> row;
  std::vector<int> idx;
  std::vector<double> val;
  // First bad line: its number as given to libsvm_parse_line (0 = none), the
  // kind of error (1 label, 2 pair, 3 order), the offending token and, for
  // kind 3, its index.
  int bad_line = 0;
  int bad_kind = 0;
  std::string bad_token;
  int bad_index = 0;
};

// Parses one NUL-terminated line into `out`. Returns false (and records the
// error in `out`) if the line is malformed; the caller then stops.
bool libsvm_parse_line(const char* line, int line_number, LibsvmTriplets& out);

}  // namespace noisylabels
