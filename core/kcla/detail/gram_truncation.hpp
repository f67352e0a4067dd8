// The host step of randomized tile compression: a tile's sketch B = Q^T A (r x w) is
// truncated through the eigen-decomposition of its Gram matrix B B^T (r x r, r small).
#pragma once

namespace kcla::detail {

/// `gram` (r x r, column-major, symmetric) is replaced by its eigenvectors, largest
/// eigenvalue first. Returns the smallest k whose discarded eigenvalues (clamped at zero)
/// sum to at most budget2, capped at max_rank when max_rank > 0. BackendError when LAPACK
/// dsyevd fails.
int gram_truncation(int r, double* gram, double budget2, int max_rank);

}  // namespace kcla::detail
