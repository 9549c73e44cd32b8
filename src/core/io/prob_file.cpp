// Readers of probability files (prob_file.h).
#include "io/prob_file.h"

#include <algorithm>
#include <cstddef>
#include <fstream>
#include <stdexcept>

namespace noisylabels {

TextChunks text_chunk_starts(const std::string& path, long long chunk_rows) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::invalid_argument("cannot open " + path);
  if (chunk_rows < 1) throw std::invalid_argument("chunk_rows must be positive");
  TextChunks out;
  std::vector<char> buf(1 << 16);
  long long pos = 0, line_start = 0;
  bool filled = false;  // the current line has a character other than '\r'
  auto end_line = [&]() {
    if (filled) {
      if (out.rows % chunk_rows == 0) out.start.push_back(static_cast<double>(line_start));
      ++out.rows;
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
  return out;
}

void read_binary_rows(const std::string& path, long long first_row, long long rows, int k,
                      double* out) {
  const auto count = static_cast<std::size_t>(rows) * static_cast<std::size_t>(k);
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::invalid_argument("cannot open " + path);
  f.seekg(static_cast<std::streamoff>(first_row) * k * static_cast<std::streamoff>(sizeof(double)));
  char* to = reinterpret_cast<char*>(out);
  f.read(to, static_cast<std::streamsize>(count * sizeof(double)));
  if (static_cast<std::size_t>(f.gcount()) != count * sizeof(double)) {
    throw std::invalid_argument("could not read rows of " + path);
  }
  const std::uint16_t probe = 1;
  if (*reinterpret_cast<const unsigned char*>(&probe) == 0) {  // big-endian host
    for (std::size_t i = 0; i < count; ++i) std::reverse(to + 8 * i, to + 8 * i + 8);
  }
}

}  // namespace noisylabels
