// Matrix Market (https://math.nist.gov/MatrixMarket/formats.html) coordinate files.
#pragma once

#include <kcla/column_block_source.hpp>
#include <kcla/csr_matrix.hpp>

#include <cstdint>
#include <memory>
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

/// The file as a ColumnBlockSource for block compression (kcla::compress_blocks): each
/// block is a pass over the whole file keeping the entries of its columns, so memory is one
/// block whatever the file's size and order, at the price of reading the file once per
/// block (a coordinate file need not be sorted). The banner and size line are checked when
/// opened, the entries by every pass, as read_matrix_market checks them; the blocks put
/// together are read_matrix_market's matrix. Needs a regular file. `declared_entries`,
/// when given, receives the size line's entry count (to choose between this and reading
/// the file whole).
std::unique_ptr<ColumnBlockSource> open_matrix_market_blocks(
    const std::string& path, std::int64_t* declared_entries = nullptr);

/// Writes `a` as "coordinate real general" with 1-based indices and values printed so
/// that they read back bit for bit. Atomic: a temporary file in the same directory is
/// renamed over `path` once complete. Throws InvalidArgument for an invalid `a` and
/// FormatError when the file cannot be written.
void write_matrix_market(const std::string& path, const CsrMatrix<double>& a);

}  // namespace kcla
