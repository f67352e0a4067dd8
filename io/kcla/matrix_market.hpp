// Matrix Market (https://math.nist.gov/MatrixMarket/formats.html) coordinate files.
#pragma once

#include <kcla/csr_matrix.hpp>

#include <string>

namespace kcla {

/// Reads a coordinate Matrix Market file: field real, integer or pattern (every entry
/// 1), symmetry general, symmetric or skew-symmetric (the other triangle is mirrored).
/// The result is canonical: columns ascending within rows, duplicates summed (pattern
/// entries too: a value counts the occurrences), zeros dropped.
///
/// Streams the file: memory is about the result plus one coordinate triple per entry.
/// Throws FormatError naming the file and line for a bad banner, an unsupported kind
/// (array, complex, hermitian), a malformed line, an index out of range, more or fewer
/// entries than declared, or a declared size no file or machine could hold.
CsrMatrix<double> read_matrix_market(const std::string& path);

/// Writes `a` as "coordinate real general" with 1-based indices and values printed so
/// that they read back bit for bit. Atomic: a temporary file in the same directory is
/// renamed over `path` once complete. Throws InvalidArgument for an invalid `a` and
/// FormatError when the file cannot be written.
void write_matrix_market(const std::string& path, const CsrMatrix<double>& a);

}  // namespace kcla
