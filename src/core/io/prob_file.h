// Readers of a file of class probabilities, one row per label, for the
// chunked confident-learning path (R/issues-chunked-jobs.R): where the
// chunks of a headerless text file start, so that each chunk's job can seek
// to its own rows, and the rows of a binary file of row-major little-endian
// doubles. R-free; they throw std::invalid_argument when a file cannot be read.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace noisylabels {

// The byte offset of every chunk_rows-th non-empty line of a text file (the
// first is 0) and the number of non-empty lines. A line holding only '\r'
// is empty.
struct TextChunks {
  std::vector<double> start;  // doubles: the offsets go to R, where files exceed 2^31 bytes
  long long rows = 0;
};
TextChunks text_chunk_starts(const std::string& path, long long chunk_rows);

// Rows first_row + 1 ... first_row + rows of a binary file of row-major
// little-endian doubles with k per row, into out[0 .. rows * k) (byte-swapped
// on a big-endian host).
void read_binary_rows(const std::string& path, long long first_row, long long rows, int k,
                      double* out);

}  // namespace noisylabels
