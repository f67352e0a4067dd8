// Small dense steps of randomized eigensolvers, on the host with LAPACK: orthonormalizing
// a tall block of vectors and the eigenpairs of a small symmetric matrix.
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

}  // namespace kcla
