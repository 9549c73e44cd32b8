// Reading an options list sent by R. The R side builds every options list
// in one place from a method's control object and its arguments and sends
// every key, so the glue reads each key as required: a missing key is an
// error naming it, never a silent C++ default. A key whose absence means
// something (no warm start, no prior) is sent as NULL and read with
// nullable().
#pragma once

#include <Rcpp.h>

#include <stdexcept>
#include <string>

namespace noisylabels {

// The element `key` of `o`; an error naming the key if `o` has none, or has
// it twice (c(list, key = value) appends a second one, which a first-match
// read would silently ignore).
inline SEXP option_value(const Rcpp::List& o, const char* key) {
  SEXP names = Rf_getAttrib(o, R_NamesSymbol);
  R_xlen_t found = -1;
  if (!Rf_isNull(names)) {
    for (R_xlen_t i = 0; i < Rf_xlength(names); ++i) {
      if (std::string(CHAR(STRING_ELT(names, i))) != key) continue;
      if (found >= 0) {
        throw std::invalid_argument(std::string("option '") + key + "' appears twice in the list R sent");
      }
      found = i;
    }
  }
  if (found < 0) {
    throw std::invalid_argument(std::string("option '") + key + "' is missing from the list R sent");
  }
  return VECTOR_ELT(o, found);
}

template <class T>
T required(const Rcpp::List& o, const char* key) {
  return Rcpp::as<T>(option_value(o, key));
}

// The element `key` (which must be present), or R_NilValue when it is NULL.
inline SEXP nullable(const Rcpp::List& o, const char* key) { return option_value(o, key); }

}  // namespace noisylabels
