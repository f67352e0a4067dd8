// Decompression: the dense matrix a TLR matrix stands for, A_ij = U_ij V_ij^T per tile, on
// any execution space.
#pragma once

#include <kcla/detail/large_range.hpp>
#include <kcla/error.hpp>
#include <kcla/tlr_matrix.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <type_traits>

namespace kcla {

namespace detail {

template <class Scalar, class MemorySpace, class DenseView>
struct TlrToDense {
  TlrDeviceLayout<MemorySpace> l;
  Kokkos::View<const Scalar*, MemorySpace> u, v;
  DenseView out;

  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t e) const {
    using traits = TlrScalarTraits<Scalar>;
    const std::int64_t rows = l.num_rows;
    const std::int64_t row = e % rows, col = e / rows;
    const int i = static_cast<int>(row / l.tile_size), j = static_cast<int>(col / l.tile_size);
    const std::int64_t lr = row - static_cast<std::int64_t>(i) * l.tile_size;
    const std::int64_t lc = col - static_cast<std::int64_t>(j) * l.tile_size;
    const std::int64_t ld = l.leading_dim;
    const int r = l.stored_ranks(static_cast<std::int64_t>(i) * l.tile_cols + j);
    const std::int64_t uo =
        ld *
        (l.outer_start(i) + l.outer_prefix(static_cast<std::int64_t>(i) * (l.tile_cols + 1) + j));
    const std::int64_t vo =
        ld *
        (l.inner_start(j) + l.inner_prefix(static_cast<std::int64_t>(j) * (l.tile_rows + 1) + i));
    typename traits::compute_type sum = 0;
    for (int a = 0; a < r; ++a)
      sum += traits::widen(u(uo + a * ld + lr)) * traits::widen(v(vo + a * ld + lc));
    out(row, col) = traits::narrow(sum);
  }
};

}  // namespace detail

/// Writes A into `out` (num_rows x num_cols, in a memory space `exec` can access).
template <class ExecutionSpace, class Scalar, class MemorySpace, class DenseView>
void to_dense(const ExecutionSpace& exec, const TlrMatrix<Scalar, MemorySpace>& a,
              const DenseView& out) {
  static_assert(Kokkos::is_execution_space<ExecutionSpace>::value,
                "first argument: execution space");
  static_assert(Kokkos::is_view<DenseView>::value && DenseView::rank == 2,
                "out must be a rank-2 View");
  static_assert(std::is_same<typename DenseView::non_const_value_type, Scalar>::value,
                "out must hold the matrix's scalar type");
  static_assert(
      Kokkos::SpaceAccessibility<ExecutionSpace, MemorySpace>::accessible &&
          Kokkos::SpaceAccessibility<ExecutionSpace, typename DenseView::memory_space>::accessible,
      "matrix and output must be accessible from the execution space");
  if (static_cast<std::int64_t>(out.extent(0)) != a.num_rows() ||
      static_cast<std::int64_t>(out.extent(1)) != a.num_cols())
    throw InvalidArgument("to_dense: output must be num_rows x num_cols");
  const std::int64_t count = a.num_rows() * a.num_cols();
  if (count == 0) return;
  detail::parallel_for_large("kcla::tlr::to_dense", exec, count,
                             detail::TlrToDense<Scalar, MemorySpace, DenseView>{
                                 a.device_layout(), a.outer_factors(), a.inner_factors(), out});
}

/// A new LayoutLeft View in the matrix's memory space holding A.
template <class ExecutionSpace, class Scalar, class MemorySpace>
Kokkos::View<Scalar**, Kokkos::LayoutLeft, MemorySpace> to_dense(
    const ExecutionSpace& exec, const TlrMatrix<Scalar, MemorySpace>& a) {
  Kokkos::View<Scalar**, Kokkos::LayoutLeft, MemorySpace> out(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "kcla::tlr::dense"), a.num_rows(),
      a.num_cols());
  to_dense(exec, a, out);
  return out;
}

}  // namespace kcla
