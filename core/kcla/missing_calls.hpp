// Where a genotype matrix has no call: a sparse 0/1 pattern kept beside the matrix (which
// stores a missing call as 0), so standardized products can impute or skip those entries
// without densifying anything.
#pragma once

#include <kcla/error.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace kcla {

struct MissingCalls {
  std::int64_t num_rows = 0;
  std::int64_t num_cols = 0;
  /// Row r's missing columns are columns[row_offsets[r] .. row_offsets[r+1]), ascending.
  std::vector<std::int64_t> row_offsets{0};
  std::vector<std::int32_t> columns;

  /// No missing call in a num_rows x num_cols matrix.
  static MissingCalls none(std::int64_t rows, std::int64_t cols) {
    MissingCalls m;
    m.num_rows = rows;
    m.num_cols = cols;
    m.row_offsets.assign(static_cast<std::size_t>(rows) + 1, 0);
    return m;
  }
  std::int64_t count() const { return static_cast<std::int64_t>(columns.size()); }
  /// Missing calls per column.
  std::vector<std::int64_t> per_column() const {
    std::vector<std::int64_t> n(static_cast<std::size_t>(num_cols), 0);
    for (auto c : columns) ++n[static_cast<std::size_t>(c)];
    return n;
  }
  /// Throws InvalidArgument (prefixed with `what`) on the first inconsistency.
  void validate(const std::string& what = "missing calls") const {
    if (num_rows < 0 || num_cols < 0) throw InvalidArgument(what + ": negative dimension");
    if (row_offsets.size() != static_cast<std::size_t>(num_rows) + 1 || row_offsets.front() != 0 ||
        row_offsets.back() != count())
      throw InvalidArgument(what + ": row_offsets do not cover the columns");
    for (std::int64_t r = 0; r < num_rows; ++r) {
      if (row_offsets[r + 1] < row_offsets[r])
        throw InvalidArgument(what + ": row_offsets decrease at row " + std::to_string(r));
      for (auto k = row_offsets[r]; k < row_offsets[r + 1]; ++k)
        if (columns[k] < 0 || columns[k] >= num_cols ||
            (k > row_offsets[r] && columns[k] <= columns[k - 1]))
          throw InvalidArgument(what + ": row " + std::to_string(r) +
                                " has a column out of range or out of order");
    }
  }
};

}  // namespace kcla
