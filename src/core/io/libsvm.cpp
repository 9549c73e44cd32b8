// LIBSVM line parser (libsvm.h). About 30x faster than splitting the strings
// in R (which cost ~1 us per token).
#include "io/libsvm.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>

namespace noisylabels {

namespace {
bool fail(LibsvmTriplets& out, int line_number, int kind, const std::string& token) {
  out.bad_line = line_number;
  out.bad_kind = kind;
  out.bad_token = token;
  return false;
}
}  // namespace

bool libsvm_parse_line(const char* s, int line_number, LibsvmTriplets& out) {
  const char* end = std::strchr(s, '#');
  if (end == nullptr) end = s + std::strlen(s);
  const char* p = s;
  auto skip_space = [&]() { while (p < end && std::isspace(static_cast<unsigned char>(*p))) ++p; };
  auto token_end = [&](const char* q) { while (q < end && !std::isspace(static_cast<unsigned char>(*q))) ++q; return q; };
  skip_space();
  if (p == end) return true;
  const char* te = token_end(p);
  std::string tok(p, te);
  char* conv = nullptr;
  const double label = std::strtod(tok.c_str(), &conv);
  if (conv != tok.c_str() + tok.size() || tok.empty() || !std::isfinite(label))
    return fail(out, line_number, 1, tok);
  ++out.n;
  out.y.push_back(label);
  p = te;
  int last = 0;
  for (;;) {
    skip_space();
    if (p == end) break;
    te = token_end(p);
    tok.assign(p, te);
    p = te;
    const std::size_t colon = tok.find(':');
    bool ok = colon != std::string::npos && colon > 0 && tok.find(':', colon + 1) == std::string::npos &&
              colon + 1 < tok.size();
    long index = 0;
    double value = 0.0;
    if (ok) {
      for (std::size_t q = 0; q < colon; ++q) ok = ok && std::isdigit(static_cast<unsigned char>(tok[q]));
    }
    if (ok) {
      errno = 0;
      index = std::strtol(tok.c_str(), nullptr, 10);
      ok = errno == 0 && index >= 1 && index <= 2147483647L;
    }
    if (ok) {
      const char* vs = tok.c_str() + colon + 1;
      value = std::strtod(vs, &conv);
      ok = conv == tok.c_str() + tok.size() && std::isfinite(value);
    }
    if (!ok) return fail(out, line_number, 2, tok);
    if (index <= last) {
      out.bad_index = static_cast<int>(index);
      return fail(out, line_number, 3, tok);
    }
    last = static_cast<int>(index);
    out.max_index = std::max(out.max_index, last);
    out.row.push_back(out.n);
    out.idx.push_back(last);
    out.val.push_back(value);
  }
  return true;
}

}  // namespace noisylabels
