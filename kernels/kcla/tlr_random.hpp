// Random operands on any execution space, generated where they live (no SVD, no host
// round trip): TLR matrices with given ranks, and dense matrices. A counter-based hash
// makes the values a function of (seed, position) only, identical on every backend.
#pragma once

#include <kcla/detail/large_range.hpp>
#include <kcla/error.hpp>
#include <kcla/tlr_matrix.hpp>
#include <kcla/tlr_matvec.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace kcla {

namespace detail {

KOKKOS_INLINE_FUNCTION std::uint64_t mix64(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/// Uniform in [-1, 1).
KOKKOS_INLINE_FUNCTION double uniform_pm1(std::uint64_t seed, std::uint64_t index) {
  const std::uint64_t h = mix64(seed ^ mix64(index));
  return static_cast<double>(h >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

/// Fills one factor family: uniform entries with variance r^(-1/2) in the logical columns
/// of a rank-r tile (so that U V^T has entries of variance about 1), zeros in padding
/// columns and in rows past a short tile's height.
template <class Scalar, class MemorySpace>
struct TlrRandomFamily {
  Kokkos::View<Scalar*, MemorySpace> factors;
  Kokkos::View<const std::int64_t*, MemorySpace> start;
  Kokkos::View<const int*, MemorySpace> prefix;
  Kokkos::View<const int*, MemorySpace> ranks;
  int panels, per_panel, tile_cols, tile_size;
  bool outer;
  std::int64_t ld, extent;
  std::uint64_t seed;

  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t e) const {
    const std::int64_t col = e / ld, row = e - col * ld;
    const int p = locate(start, 0, panels + 1, col);
    const std::int64_t local = col - start(p);
    const std::int64_t base = static_cast<std::int64_t>(p) * (per_panel + 1);
    const int t = locate(prefix, base, per_panel + 1, local);
    const std::int64_t a = local - prefix(base + t);
    const int i = outer ? p : t, j = outer ? t : p;
    const int r = ranks(static_cast<std::int64_t>(i) * tile_cols + j);
    const std::int64_t p0 = static_cast<std::int64_t>(p) * tile_size;
    const std::int64_t height = extent - p0 < tile_size ? extent - p0 : tile_size;
    double value = 0;
    if (a < r && row < height)
      value = uniform_pm1(seed, static_cast<std::uint64_t>(e)) * ::sqrt(3.0 / ::sqrt(double(r)));
    factors(e) = TlrScalarTraits<Scalar>::narrow(value);
  }
};

template <class Scalar, class DenseView>
struct RandomDense {
  DenseView v;
  std::int64_t rows;
  std::uint64_t seed;
  double amplitude;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t e) const {
    const std::int64_t c = e / rows, r = e - c * rows;
    v(r, c) = TlrScalarTraits<Scalar>::narrow(amplitude *
                                              uniform_pm1(seed, static_cast<std::uint64_t>(e)));
  }
};

}  // namespace detail

/// New random values for A's factors (same structure), a function of `seed` only.
template <class ExecutionSpace, class Scalar, class MemorySpace>
void fill_random_factors(const ExecutionSpace& exec, const TlrMatrix<Scalar, MemorySpace>& a,
                         std::uint64_t seed) {
  static_assert(Kokkos::SpaceAccessibility<ExecutionSpace, MemorySpace>::accessible,
                "the matrix must be accessible from the execution space");
  const auto& l = a.device_layout();
  const std::int64_t ld = l.leading_dim;
  if (a.outer_factors().extent(0) > 0)
    detail::parallel_for_large(
        "kcla::tlr::random_outer", exec, static_cast<std::int64_t>(a.outer_factors().extent(0)),
        detail::TlrRandomFamily<Scalar, MemorySpace>{
            a.outer_factors(), l.outer_start, l.outer_prefix, l.ranks, l.tile_rows, l.tile_cols,
            l.tile_cols, l.tile_size, true, ld, l.num_rows, detail::mix64(seed)});
  if (a.inner_factors().extent(0) > 0)
    detail::parallel_for_large(
        "kcla::tlr::random_inner", exec, static_cast<std::int64_t>(a.inner_factors().extent(0)),
        detail::TlrRandomFamily<Scalar, MemorySpace>{
            a.inner_factors(), l.inner_start, l.inner_prefix, l.ranks, l.tile_cols, l.tile_rows,
            l.tile_cols, l.tile_size, false, ld, l.num_cols, detail::mix64(seed ^ 0x5bd1e995ULL)});
}

/// A random TLR matrix with the given logical ranks (row-major per tile), stored with
/// `rank_multiple` (0: the Scalar's default). For benchmarks and tests: O(1) entries.
template <class Scalar, class MemorySpace = Kokkos::DefaultExecutionSpace::memory_space,
          class ExecutionSpace>
TlrMatrix<Scalar, MemorySpace> random_tlr(const ExecutionSpace& exec, std::int64_t rows,
                                          std::int64_t cols, int tile_size, std::vector<int> ranks,
                                          std::uint64_t seed, int rank_multiple = 0) {
  TlrMatrix<Scalar, MemorySpace> a(
      make_tlr_layout<Scalar>(rows, cols, tile_size, std::move(ranks), rank_multiple));
  fill_random_factors(exec, a, seed);
  return a;
}

/// Uniform random entries in [-amplitude, amplitude) for a rank-2 View.
template <class ExecutionSpace, class DenseView>
void fill_random(const ExecutionSpace& exec, const DenseView& v, std::uint64_t seed,
                 double amplitude = 1.0) {
  static_assert(Kokkos::is_view<DenseView>::value && DenseView::rank == 2,
                "fill_random: a rank-2 View");
  using scalar = typename DenseView::non_const_value_type;
  const std::int64_t rows = static_cast<std::int64_t>(v.extent(0));
  const std::int64_t count = rows * static_cast<std::int64_t>(v.extent(1));
  if (count == 0) return;
  detail::parallel_for_large(
      "kcla::tlr::random_dense", exec, count,
      detail::RandomDense<scalar, DenseView>{v, rows, detail::mix64(seed), amplitude});
}

}  // namespace kcla
