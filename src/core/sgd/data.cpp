// Checks of the training data's shapes, labels, weights and CSR indices.
#include <cmath>
#include <stdexcept>

#include "sgd/sgd.h"

namespace noisylabels {

void SgdData::validate() const {
  if (n < 1 || d < 1) throw std::invalid_argument("the data have no rows or no columns");
  if (multiclass()) {
    if (n_classes < 2) throw std::invalid_argument("a multiclass fit needs at least two classes");
    for (int i = 0; i < n; ++i) {
      if (label[i] < 0 || label[i] >= n_classes) throw std::invalid_argument("class index out of range");
    }
  } else {
    if (y == nullptr) throw std::invalid_argument("labels are missing");
    for (int i = 0; i < n; ++i) {
      if (y[i] != 1.0 && y[i] != -1.0) throw std::invalid_argument("labels must be -1 or +1");
    }
  }
  if (weight != nullptr) {
    for (int i = 0; i < n; ++i) {
      if (!(weight[i] >= 0.0) || !std::isfinite(weight[i]))
        throw std::invalid_argument("weights must be finite and >= 0");
    }
  }
  if (sparse()) {
    if (row_ptr == nullptr || col_idx == nullptr || values == nullptr)
      throw std::invalid_argument("incomplete CSR arrays");
    if (row_ptr[0] != 0) throw std::invalid_argument("CSR row pointers must start at 0");
    for (int i = 0; i < n; ++i) {
      if (row_ptr[i + 1] < row_ptr[i]) throw std::invalid_argument("CSR row pointers decrease");
    }
    const int nnz = row_ptr[n];
    for (int k = 0; k < nnz; ++k) {
      if (col_idx[k] < 0 || col_idx[k] >= d) throw std::invalid_argument("CSR column index out of range");
    }
  }
}

}  // namespace noisylabels
