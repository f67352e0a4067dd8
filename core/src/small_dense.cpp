#include <kcla/error.hpp>
#include <kcla/small_dense.hpp>

#include <lapacke.h>

#include <algorithm>
#include <cmath>
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

std::int64_t OrthonormalBasis::append(const std::vector<double>& block, std::int64_t cols,
                                      std::int64_t limit, double drop) {
  if (static_cast<std::int64_t>(block.size()) != rows_ * cols)
    throw InvalidArgument("OrthonormalBasis::append: the block is not rows x cols");
  std::int64_t added = 0;
  std::vector<double> v(static_cast<std::size_t>(rows_));
  for (std::int64_t c = 0; c < cols && size() < limit; ++c) {
    double original = 0;
    for (std::int64_t i = 0; i < rows_; ++i) {
      v[i] = block[i * cols + c];
      original += v[i] * v[i];
    }
    original = std::sqrt(original);
    if (!(original > 0)) continue;
    for (int pass = 0; pass < 2; ++pass)
      for (const auto& q : columns_) {
        double dot = 0;
        for (std::int64_t i = 0; i < rows_; ++i) dot += q[i] * v[i];
        for (std::int64_t i = 0; i < rows_; ++i) v[i] -= dot * q[i];
      }
    double norm = 0;
    for (double x : v) norm += x * x;
    norm = std::sqrt(norm);
    if (!(norm > drop * original)) continue;
    for (double& x : v) x /= norm;
    columns_.push_back(v);
    ++added;
  }
  return added;
}

}  // namespace kcla
