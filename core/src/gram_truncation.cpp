// Rank choice for randomized compression: dsyevd on the r x r Gram matrix of the sketch.
#include <kcla/detail/gram_truncation.hpp>
#include <kcla/error.hpp>

#include <lapacke.h>

#include <algorithm>
#include <string>
#include <vector>

namespace kcla::detail {

int gram_truncation(int r, double* gram, double budget2, int max_rank) {
  if (r <= 0) return 0;
  std::vector<double> eigenvalues(static_cast<std::size_t>(r));
  const lapack_int info =
      LAPACKE_dsyevd(LAPACK_COL_MAJOR, 'V', 'U', r, gram, r, eigenvalues.data());
  if (info != 0)
    throw BackendError("compress: LAPACK dsyevd failed on a " + std::to_string(r) + " x " +
                       std::to_string(r) + " Gram matrix (info " + std::to_string(info) + ")");
  // dsyevd sorts ascending: reverse the columns so the largest comes first.
  for (int c = 0; c < r / 2; ++c)
    std::swap_ranges(gram + static_cast<std::size_t>(c) * r,
                     gram + static_cast<std::size_t>(c + 1) * r,
                     gram + static_cast<std::size_t>(r - 1 - c) * r);
  std::reverse(eigenvalues.begin(), eigenvalues.end());
  // Drop from the smallest end while the discarded sum stays within the budget.
  int k = r;
  double discarded = 0;
  while (k > 0) {
    const double next = discarded + std::max(0.0, eigenvalues[static_cast<std::size_t>(k - 1)]);
    if (next > budget2) break;
    discarded = next;
    --k;
  }
  if (max_rank > 0) k = std::min(k, max_rank);
  return k;
}

}  // namespace kcla::detail
