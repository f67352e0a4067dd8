// Dense matrices in Matrix Market files: the "array" format (column-major values), as the
// kcla TLR tools read and write them. Coordinate files are accepted on read and expanded.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kcla {

/// A dense rows x cols matrix in double, column-major: entry (r, c) at values[r + c * rows].
struct DenseMatrix {
  std::int64_t rows = 0, cols = 0;
  std::vector<double> values;

  double& operator()(std::int64_t r, std::int64_t c) { return values[r + c * rows]; }
  double operator()(std::int64_t r, std::int64_t c) const { return values[r + c * rows]; }
};

/// Reads a Matrix Market file into a dense matrix: "array" format (field real or integer;
/// symmetry general, symmetric or skew-symmetric, whose files hold the lower triangle
/// column by column), or "coordinate" format (anything read_matrix_market reads; absent
/// entries are zero). Throws FormatError naming the file and line for a malformed file, a
/// wrong number of values, or a declared size the file or this machine cannot hold.
DenseMatrix read_dense_matrix_market(const std::string& path);

/// Writes `a` as "array real general", values printed so that they read back bit for bit.
/// Atomic (temporary file renamed over `path`). Throws InvalidArgument when values.size()
/// is not rows x cols, FormatError when the file cannot be written.
void write_dense_matrix_market(const std::string& path, const DenseMatrix& a);

}  // namespace kcla
