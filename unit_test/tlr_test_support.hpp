// Helpers for the TLR tests: random rank grids (with rank-0 and full-rank tiles), host
// copies in double, a dense reference product, padded dense operands.
#pragma once

#include <kcla/tlr_gemm.hpp>
#include <kcla/tlr_matrix.hpp>
#include <kcla/tlr_random.hpp>
#include <kcla/tlr_to_dense.hpp>

#include <gtest/gtest.h>
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "test_support.hpp"

namespace kcla::test {

using exec_space = Kokkos::DefaultExecutionSpace;
using memory_space = exec_space::memory_space;
using host_exec = Kokkos::DefaultHostExecutionSpace;

/// Column-major matrix in double on the host.
struct HostMatrix {
  std::int64_t rows = 0, cols = 0;
  std::vector<double> v;
  double& operator()(std::int64_t r, std::int64_t c) { return v[r + c * rows]; }
  double operator()(std::int64_t r, std::int64_t c) const { return v[r + c * rows]; }
};

/// Random ranks for a rows x cols grid of tile_size tiles: uniform in [0, min(h, w)], with
/// tile (0, 0) of rank 0 and the last tile of full rank.
inline std::vector<int> random_ranks(std::mt19937_64& gen, std::int64_t rows, std::int64_t cols,
                                     int tile_size, int max_rank = 1 << 30) {
  const int tr = static_cast<int>((rows + tile_size - 1) / tile_size);
  const int tc = static_cast<int>((cols + tile_size - 1) / tile_size);
  std::vector<int> ranks(static_cast<std::size_t>(tr) * tc);
  for (int i = 0; i < tr; ++i)
    for (int j = 0; j < tc; ++j) {
      const int h = static_cast<int>(std::min<std::int64_t>(tile_size, rows - i * tile_size));
      const int w = static_cast<int>(std::min<std::int64_t>(tile_size, cols - j * tile_size));
      const int full = std::min({h, w, max_rank});
      ranks[i * tc + j] = std::uniform_int_distribution<int>(0, full)(gen);
      if (i == 0 && j == 0) ranks[0] = 0;
      if (i == tr - 1 && j == tc - 1) ranks[i * tc + j] = std::min(h, w);
    }
  return ranks;
}

/// A View (any space) copied to a host matrix in double.
template <class View>
HostMatrix to_host(const View& v) {
  using scalar = typename View::non_const_value_type;
  Kokkos::View<scalar**, Kokkos::LayoutLeft, Kokkos::HostSpace> h("host", v.extent(0), v.extent(1));
  Kokkos::View<scalar**, Kokkos::LayoutLeft, typename View::memory_space> tmp("tmp", v.extent(0),
                                                                              v.extent(1));
  Kokkos::deep_copy(tmp, v);
  Kokkos::deep_copy(h, tmp);
  HostMatrix m{static_cast<std::int64_t>(v.extent(0)), static_cast<std::int64_t>(v.extent(1)), {}};
  m.v.resize(static_cast<std::size_t>(m.rows * m.cols));
  for (std::int64_t c = 0; c < m.cols; ++c)
    for (std::int64_t r = 0; r < m.rows; ++r)
      m(r, c) = static_cast<double>(TlrScalarTraits<scalar>::widen(h(r, c)));
  return m;
}

/// The dense matrix a TLR matrix stands for, summed on the host in double from the
/// factors (independent of to_dense, which is tested against it).
template <class Scalar, class MemorySpace>
HostMatrix decompress(const TlrMatrix<Scalar, MemorySpace>& a) {
  auto u = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a.outer_factors());
  auto v = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a.inner_factors());
  const auto& l = a.layout();
  const std::int64_t ld = l.leading_dim();
  HostMatrix d{a.num_rows(), a.num_cols(),
               std::vector<double>(static_cast<std::size_t>(a.num_rows() * a.num_cols()), 0.0)};
  using traits = TlrScalarTraits<Scalar>;
  for (int i = 0; i < l.tile_rows(); ++i)
    for (int j = 0; j < l.tile_cols(); ++j)
      for (int q = 0; q < l.stored_rank(i, j); ++q)
        for (int c = 0; c < l.tile_width(j); ++c) {
          const double y = traits::widen(v(l.inner_offset(i, j) + q * ld + c));
          for (int r = 0; r < l.tile_height(i); ++r)
            d(static_cast<std::int64_t>(i) * l.tile_size() + r,
              static_cast<std::int64_t>(j) * l.tile_size() + c) +=
                static_cast<double>(traits::widen(u(l.outer_offset(i, j) + q * ld + r))) * y;
        }
  return d;
}

inline HostMatrix transpose_if(const HostMatrix& a, Op op) {
  if (op == Op::N) return a;
  HostMatrix t{a.cols, a.rows, std::vector<double>(a.v.size())};
  for (std::int64_t c = 0; c < a.cols; ++c)
    for (std::int64_t r = 0; r < a.rows; ++r) t(c, r) = a(r, c);
  return t;
}

/// alpha op(A) op(B) + beta C in double.
inline HostMatrix reference_gemm(Op op_a, const HostMatrix& a, Op op_b, const HostMatrix& b,
                                 double alpha, double beta, const HostMatrix& c) {
  const HostMatrix x = transpose_if(a, op_a), y = transpose_if(b, op_b);
  HostMatrix out = c;
  for (std::int64_t j = 0; j < y.cols; ++j)
    for (std::int64_t i = 0; i < x.rows; ++i) {
      double s = 0;
      for (std::int64_t l = 0; l < x.cols; ++l) s += x(i, l) * y(l, j);
      out(i, j) = alpha * s + beta * c(i, j);
    }
  return out;
}

inline double relative_error(const HostMatrix& a, const HostMatrix& b) {
  return kcla::test::relative_error(a.v.data(), b.v.data(), a.v.size());
}

/// A rows x cols column-major View whose leading dimension is rounded up to 8 (what
/// 16-bit products need of dense operands): a subview of a padded allocation.
template <class Scalar, class MemorySpace>
Kokkos::View<Scalar**, Kokkos::LayoutStride, MemorySpace> padded_view(std::int64_t rows,
                                                                      std::int64_t cols) {
  const std::int64_t ld = std::max<std::int64_t>(8, (rows + 7) / 8 * 8);
  Kokkos::View<Scalar**, Kokkos::LayoutLeft, MemorySpace> full("padded", ld, cols);
  return Kokkos::subview(full, std::pair<std::int64_t, std::int64_t>(0, rows), Kokkos::ALL());
}

/// Tolerance of a product's relative Frobenius error for each precision.
template <class Scalar>
double product_tolerance(TlrMath math) {
  if (math == TlrMath::tf32) return 1e-2;
  switch (TlrScalarTraits<Scalar>::kind) {
    case ScalarKind::f64:
      return 1e-12;
    case ScalarKind::f32:
      return 1e-5;
    case ScalarKind::f16:
      return 1e-2;
    default:
      return 3e-2;
  }
}

}  // namespace kcla::test
