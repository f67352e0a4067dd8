// Small dense steps of randomized eigensolvers, on the host with LAPACK: orthonormalizing
// a tall block of vectors, growing an orthonormal basis, and the eigenpairs of a small
// symmetric matrix.
#pragma once

#include <cstdint>
#include <vector>

namespace kcla {

/// Replaces the columns of `a` (rows x cols, row-major, rows >= cols) by an orthonormal
/// basis of their span (Householder QR, LAPACK dgeqrf + dorgqr). Throws BackendError when
/// LAPACK reports an error.
void orthonormalize_columns(std::int64_t rows, std::int64_t cols, std::vector<double>& a);

/// Eigenpairs of the symmetric n x n matrix `a` (row-major; only its values are read), in
/// descending order of eigenvalue: values[j] and column j of `vectors` (row-major n x n).
void symmetric_eigen_descending(std::int64_t n, const std::vector<double>& a,
                                std::vector<double>& values, std::vector<double>& vectors);

/// An orthonormal basis grown block by block, as block Krylov solvers grow theirs: each
/// column kept separately (`rows` values), full reorthogonalization on every append.
class OrthonormalBasis {
 public:
  explicit OrthonormalBasis(std::int64_t rows) : rows_(rows) {}
  /// Appends the part of each column of `block` (rows x cols, row-major) orthogonal to
  /// the basis (modified Gram-Schmidt, two passes), normalized, at most `limit` columns
  /// in all; a column whose remainder is below `drop` times its own norm adds nothing (the
  /// space is exhausted in that direction). Returns how many columns were added.
  std::int64_t append(const std::vector<double>& block, std::int64_t cols, std::int64_t limit,
                      double drop = 1e-10);
  std::int64_t rows() const { return rows_; }
  std::int64_t size() const { return static_cast<std::int64_t>(columns_.size()); }
  const std::vector<double>& column(std::int64_t c) const { return columns_[c]; }

 private:
  std::int64_t rows_;
  std::vector<std::vector<double>> columns_;
};

}  // namespace kcla
