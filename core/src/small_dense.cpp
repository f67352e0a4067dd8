#include <kcla/error.hpp>
#include <kcla/small_dense.hpp>

#include <lapacke.h>

#include <algorithm>
#include <string>

namespace kcla {

void orthonormalize_columns(std::int64_t rows, std::int64_t cols, std::vector<double>& a) {
  if (rows < cols || static_cast<std::int64_t>(a.size()) != rows * cols)
    throw InvalidArgument("orthonormalize_columns: need rows >= cols and rows x cols values");
  if (cols == 0) return;
  std::vector<double> tau(static_cast<std::size_t>(cols));
  const auto m = static_cast<lapack_int>(rows), n = static_cast<lapack_int>(cols);
  lapack_int info = LAPACKE_dgeqrf(LAPACK_ROW_MAJOR, m, n, a.data(), n, tau.data());
  if (info != 0) throw BackendError("LAPACKE_dgeqrf returned " + std::to_string(info));
  info = LAPACKE_dorgqr(LAPACK_ROW_MAJOR, m, n, n, a.data(), n, tau.data());
  if (info != 0) throw BackendError("LAPACKE_dorgqr returned " + std::to_string(info));
}

void symmetric_eigen_descending(std::int64_t n, const std::vector<double>& a,
                                std::vector<double>& values, std::vector<double>& vectors) {
  if (static_cast<std::int64_t>(a.size()) != n * n)
    throw InvalidArgument("symmetric_eigen_descending: need n x n values");
  std::vector<double> w(static_cast<std::size_t>(n)), z = a;
  const auto order = static_cast<lapack_int>(n);
  const lapack_int info =
      LAPACKE_dsyevd(LAPACK_ROW_MAJOR, 'V', 'U', order, z.data(), order, w.data());
  if (info != 0) throw BackendError("LAPACKE_dsyevd returned " + std::to_string(info));
  // LAPACK's order is ascending: reverse the pairs.
  values.assign(w.rbegin(), w.rend());
  vectors.assign(static_cast<std::size_t>(n * n), 0.0);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < n; ++j) vectors[i * n + j] = z[i * n + (n - 1 - j)];
}

}  // namespace kcla
