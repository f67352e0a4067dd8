// Turning entries read in file order into kcla's canonical CSR: columns ascending within
// each row, duplicates summed, zeros (explicit, or from cancelling duplicates) dropped.
#pragma once

#include <kcla/csr_matrix.hpp>

#include <cstdint>
#include <vector>

namespace kcla::detail {

/// Entries as read (coordinate triples, any order). The vectors are released as soon as
/// the CSR arrays hold their content, so the peak is about COO + CSR.
struct CooEntries {
  std::vector<std::int64_t> rows;
  std::vector<std::int32_t> columns;
  std::vector<double> values;

  void reserve(std::size_t n) {
    rows.reserve(n);
    columns.reserve(n);
    values.reserve(n);
  }
  void push_back(std::int64_t row, std::int32_t column, double value) {
    rows.push_back(row);
    columns.push_back(column);
    values.push_back(value);
  }
};

/// Builds the canonical CSR of `entries` (indices 0-based and in range); consumes them.
CsrMatrix<double> csr_from_coo(std::int64_t num_rows, std::int64_t num_cols, CooEntries&& entries);

/// Makes every row of `a` canonical in place (sorted columns, duplicates summed, zeros
/// dropped); the arrays shrink when entries merge or vanish.
void canonicalize_rows(CsrMatrix<double>& a);

}  // namespace kcla::detail
