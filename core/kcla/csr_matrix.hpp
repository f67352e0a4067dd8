// Host CSR matrix: the interchange format every reader produces and every compressed
// format is checked against.
#pragma once

#include <kcla/error.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace kcla {

/// Compressed sparse rows on the host. Offsets are 64-bit (more than 2^31 nonzeros is
/// fine); column indices are 32-bit (at most 2^31 - 1 columns), which halves the
/// footprint of the largest array.
template <class Scalar>
struct CsrMatrix {
  using value_type = Scalar;
  using offset_type = std::int64_t;
  using index_type = std::int32_t;

  std::int64_t num_rows = 0;
  std::int64_t num_cols = 0;
  std::vector<offset_type> row_offsets{0};  ///< num_rows + 1 entries, row_offsets[0] == 0
  std::vector<index_type> column_indices;   ///< nnz entries
  std::vector<Scalar> values;               ///< nnz entries

  std::int64_t nnz() const { return static_cast<std::int64_t>(column_indices.size()); }

  /// Throws InvalidArgument naming the first inconsistency found.
  void validate(const std::string& what = "CSR matrix") const {
    if (num_rows < 0 || num_cols < 0) throw InvalidArgument(what + ": negative dimension");
    if (num_cols > INT32_MAX)
      throw InvalidArgument(what + ": more than 2^31-1 columns is not supported");
    if (row_offsets.size() != static_cast<std::size_t>(num_rows) + 1)
      throw InvalidArgument(what + ": row_offsets has " + std::to_string(row_offsets.size()) +
                            " entries, expected rows+1 = " + std::to_string(num_rows + 1));
    if (row_offsets.front() != 0) throw InvalidArgument(what + ": row_offsets[0] != 0");
    if (values.size() != column_indices.size())
      throw InvalidArgument(what + ": values and column_indices differ in length");
    for (std::int64_t r = 0; r < num_rows; ++r)
      if (row_offsets[r + 1] < row_offsets[r])
        throw InvalidArgument(what + ": row_offsets decrease at row " + std::to_string(r));
    if (row_offsets.back() != nnz())
      throw InvalidArgument(what + ": row_offsets[rows] != number of nonzeros");
    for (auto c : column_indices)
      if (c < 0 || c >= num_cols)
        throw InvalidArgument(what + ": column index " + std::to_string(c) + " out of range");
  }
};

/// A^T as a CSR matrix (the CSC arrays of A), columns ascending within each row.
template <class Scalar>
CsrMatrix<Scalar> transposed(const CsrMatrix<Scalar>& a) {
  CsrMatrix<Scalar> t;
  t.num_rows = a.num_cols;
  t.num_cols = a.num_rows;
  t.row_offsets.assign(static_cast<std::size_t>(a.num_cols) + 1, 0);
  for (auto c : a.column_indices) ++t.row_offsets[static_cast<std::size_t>(c) + 1];
  for (std::int64_t j = 0; j < a.num_cols; ++j) t.row_offsets[j + 1] += t.row_offsets[j];
  t.column_indices.resize(a.column_indices.size());
  t.values.resize(a.values.size());
  std::vector<std::int64_t> next(t.row_offsets.begin(), t.row_offsets.end() - 1);
  for (std::int64_t r = 0; r < a.num_rows; ++r)
    for (auto k = a.row_offsets[r]; k < a.row_offsets[r + 1]; ++k) {
      const auto at = next[a.column_indices[k]]++;
      t.column_indices[at] = static_cast<std::int32_t>(r);
      t.values[at] = a.values[k];
    }
  return t;
}

/// y = A x in plain loops with a wider accumulator: the obviously-correct reference.
template <class Scalar, class XScalar, class YScalar>
void reference_spmv(const CsrMatrix<Scalar>& a, const XScalar* x, YScalar* y) {
  for (std::int64_t r = 0; r < a.num_rows; ++r) {
    double sum = 0;
    for (auto k = a.row_offsets[r]; k < a.row_offsets[r + 1]; ++k)
      sum += static_cast<double>(a.values[k]) * static_cast<double>(x[a.column_indices[k]]);
    y[r] = static_cast<YScalar>(sum);
  }
}

}  // namespace kcla
