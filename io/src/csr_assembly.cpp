#include "csr_assembly.hpp"

#include <algorithm>
#include <numeric>
#include <utility>

namespace kcla::detail {

CsrMatrix<double> csr_from_coo(std::int64_t num_rows, std::int64_t num_cols, CooEntries&& entries) {
  CsrMatrix<double> a;
  a.num_rows = num_rows;
  a.num_cols = num_cols;
  a.row_offsets.assign(static_cast<std::size_t>(num_rows) + 1, 0);
  const std::size_t nnz = entries.rows.size();
  for (std::int64_t r : entries.rows) ++a.row_offsets[r + 1];
  std::partial_sum(a.row_offsets.begin(), a.row_offsets.end(), a.row_offsets.begin());
  // Scatter (a counting sort by row), then release the triples before sorting rows.
  a.column_indices.resize(nnz);
  a.values.resize(nnz);
  {
    std::vector<std::int64_t> next(a.row_offsets.begin(), a.row_offsets.end() - 1);
    for (std::size_t k = 0; k < nnz; ++k) {
      const auto at = next[entries.rows[k]]++;
      a.column_indices[at] = entries.columns[k];
      a.values[at] = entries.values[k];
    }
  }
  entries = CooEntries();
  canonicalize_rows(a);
  return a;
}

void canonicalize_rows(CsrMatrix<double>& a) {
  std::vector<std::pair<std::int32_t, double>> row;
  std::int64_t out = 0;
  for (std::int64_t r = 0; r < a.num_rows; ++r) {
    const auto begin = a.row_offsets[r], end = a.row_offsets[r + 1];
    a.row_offsets[r] = out;
    const bool sorted =
        std::is_sorted(a.column_indices.begin() + begin, a.column_indices.begin() + end);
    if (!sorted) {
      row.clear();
      for (auto k = begin; k < end; ++k) row.emplace_back(a.column_indices[k], a.values[k]);
      // Stable, so duplicates are summed in file order (the same rounding every run).
      std::stable_sort(row.begin(), row.end(),
                       [](const auto& x, const auto& y) { return x.first < y.first; });
      for (auto k = begin; k < end; ++k) {
        a.column_indices[k] = row[k - begin].first;
        a.values[k] = row[k - begin].second;
      }
    }
    // Merge runs of one column; `out` never passes `k`, so this compacts in place.
    for (auto k = begin; k < end;) {
      const auto column = a.column_indices[k];
      double sum = a.values[k];
      for (++k; k < end && a.column_indices[k] == column; ++k) sum += a.values[k];
      if (sum != 0) {
        a.column_indices[out] = column;
        a.values[out] = sum;
        ++out;
      }
    }
  }
  a.row_offsets[a.num_rows] = out;
  a.column_indices.resize(static_cast<std::size_t>(out));
  a.values.resize(static_cast<std::size_t>(out));
  a.column_indices.shrink_to_fit();
  a.values.shrink_to_fit();
}

}  // namespace kcla::detail
