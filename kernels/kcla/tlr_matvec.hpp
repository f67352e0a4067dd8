// y <- alpha op(A) x + beta y for a TLR matrix A, in two passes that follow the packing:
// first t = V^T x tile by tile (written in the order of the outer panels), then
// y_i = U_i t_i, one product per tile row whose reduction covers all tiles of the row.
#pragma once

#include <kcla/detail/large_range.hpp>
#include <kcla/error.hpp>
#include <kcla/tlr_matrix.hpp>
#include <kcla/tlr_plan.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>
#include <type_traits>

namespace kcla {

namespace detail {

/// Largest p in [0, n) with starts[p] <= value (starts ascending, starts[0] == 0).
template <class View>
KOKKOS_INLINE_FUNCTION int locate(const View& starts, std::int64_t offset, int n,
                                  std::int64_t value) {
  int lo = 0, hi = n - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (static_cast<std::int64_t>(starts(offset + mid)) <= value)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

/// The families of op(A): `out` (outer factors of op(A), one panel per output tile) and
/// `in` (inner factors, one panel per contraction tile).
template <class MemorySpace>
struct TlrOpFamilies {
  Kokkos::View<const std::int64_t*, MemorySpace> out_start, in_start;
  Kokkos::View<const int*, MemorySpace> out_prefix, in_prefix;
  int out_panels = 0, in_panels = 0;  // tiles of op(A) along rows / columns
  std::int64_t in_len = 0;            // length of x

  TlrOpFamilies(const TlrDeviceLayout<MemorySpace>& l, bool transposed) {
    out_start = transposed ? l.inner_start : l.outer_start;
    in_start = transposed ? l.outer_start : l.inner_start;
    out_prefix = transposed ? l.inner_prefix : l.outer_prefix;
    in_prefix = transposed ? l.outer_prefix : l.inner_prefix;
    out_panels = transposed ? l.tile_cols : l.tile_rows;
    in_panels = transposed ? l.tile_rows : l.tile_cols;
    in_len = transposed ? l.num_rows : l.num_cols;
  }
};

template <class Scalar, class MemorySpace, class XView>
struct TlrMatvecCouple {
  using compute = typename TlrScalarTraits<Scalar>::compute_type;
  TlrOpFamilies<MemorySpace> f;
  Kokkos::View<const Scalar*, MemorySpace> in_factors;
  XView x;
  Kokkos::View<compute*, MemorySpace> t;
  std::int64_t ld;
  int tile_size;

  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t c) const {
    using traits = TlrScalarTraits<Scalar>;
    const int p = locate(f.out_start, 0, f.out_panels + 1, c);
    const std::int64_t local = c - f.out_start(p);
    const int k = locate(f.out_prefix, static_cast<std::int64_t>(p) * (f.in_panels + 1),
                         f.in_panels + 1, local);
    const std::int64_t a =
        local - f.out_prefix(static_cast<std::int64_t>(p) * (f.in_panels + 1) + k);
    const std::int64_t col =
        f.in_start(k) + f.in_prefix(static_cast<std::int64_t>(k) * (f.out_panels + 1) + p) + a;
    const std::int64_t x0 = static_cast<std::int64_t>(k) * tile_size;
    const std::int64_t h = (f.in_len - x0) < tile_size ? f.in_len - x0 : tile_size;
    compute sum = 0;
    for (std::int64_t r = 0; r < h; ++r)
      sum +=
          traits::widen(in_factors(col * ld + r)) * static_cast<compute>(traits::widen(x(x0 + r)));
    t(c) = sum;
  }
};

template <class Scalar, class MemorySpace, class YView>
struct TlrMatvecApply {
  using compute = typename TlrScalarTraits<Scalar>::compute_type;
  TlrOpFamilies<MemorySpace> f;
  Kokkos::View<const Scalar*, MemorySpace> out_factors;
  Kokkos::View<const compute*, MemorySpace> t;
  YView y;
  std::int64_t ld;
  int tile_size;
  compute alpha, beta;

  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t row) const {
    using traits = TlrScalarTraits<Scalar>;
    const int p = static_cast<int>(row / tile_size);
    const std::int64_t lr = row - static_cast<std::int64_t>(p) * tile_size;
    const std::int64_t c0 = f.out_start(p), c1 = f.out_start(p + 1);
    compute sum = 0;
    for (std::int64_t c = c0; c < c1; ++c) sum += traits::widen(out_factors(c * ld + lr)) * t(c);
    const compute old = beta == 0 ? compute(0) : beta * static_cast<compute>(traits::widen(y(row)));
    y(row) = traits::narrow(alpha * sum + old);
  }
};

}  // namespace detail

/// y <- alpha op(A) x + beta y (x, y rank-1 Views in spaces `exec` can access; y is not
/// read when beta == 0).
template <class ExecutionSpace, class Scalar, class MemorySpace, class XView, class YView>
void matvec(const ExecutionSpace& exec, Op op, double alpha,
            const TlrMatrix<Scalar, MemorySpace>& a, const XView& x, double beta, const YView& y) {
  static_assert(Kokkos::is_execution_space<ExecutionSpace>::value,
                "first argument: execution space");
  static_assert(Kokkos::is_view<XView>::value && XView::rank == 1 &&
                    Kokkos::is_view<YView>::value && YView::rank == 1,
                "x and y must be rank-1 Views");
  static_assert(std::is_same<typename XView::non_const_value_type, Scalar>::value &&
                    std::is_same<typename YView::non_const_value_type, Scalar>::value,
                "x and y must hold the matrix's scalar type");
  static_assert(
      Kokkos::SpaceAccessibility<ExecutionSpace, MemorySpace>::accessible &&
          Kokkos::SpaceAccessibility<ExecutionSpace, typename XView::memory_space>::accessible &&
          Kokkos::SpaceAccessibility<ExecutionSpace, typename YView::memory_space>::accessible,
      "A, x and y must be accessible from the execution space");
  using compute = typename TlrScalarTraits<Scalar>::compute_type;
  const bool transposed = op == Op::T;
  const std::int64_t out_len = transposed ? a.num_cols() : a.num_rows();
  const std::int64_t in_len = transposed ? a.num_rows() : a.num_cols();
  if (static_cast<std::int64_t>(x.extent(0)) != in_len ||
      static_cast<std::int64_t>(y.extent(0)) != out_len)
    throw InvalidArgument("matvec: x must have " + std::to_string(in_len) + " and y " +
                          std::to_string(out_len) + " entries");
  if (out_len == 0) return;
  const auto& l = a.device_layout();
  detail::TlrOpFamilies<MemorySpace> f(l, transposed);
  const std::int64_t columns = transposed ? a.layout().inner_columns() : a.layout().outer_columns();
  Kokkos::View<compute*, MemorySpace> t(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "kcla::tlr::matvec_t"), columns);
  const auto& out_factors = transposed ? a.inner_factors() : a.outer_factors();
  const auto& in_factors = transposed ? a.outer_factors() : a.inner_factors();
  detail::parallel_for_large("kcla::tlr::matvec_couple", exec, columns,
                             detail::TlrMatvecCouple<Scalar, MemorySpace, XView>{
                                 f, in_factors, x, t, l.leading_dim, l.tile_size});
  detail::parallel_for_large("kcla::tlr::matvec_apply", exec, out_len,
                             detail::TlrMatvecApply<Scalar, MemorySpace, YView>{
                                 f, out_factors, t, y, l.leading_dim, l.tile_size,
                                 static_cast<compute>(alpha), static_cast<compute>(beta)});
}

}  // namespace kcla
