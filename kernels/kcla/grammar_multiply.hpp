// y = A x and Y = A X for a grammar-compressed matrix, in any semiring.
//
//   kcla::GrammarMatrix<float> A(kcla::compress(csr));
//   kcla::multiply(exec, A, x, y);                     // plus-times
//   kcla::multiply<kcla::Boolean>(exec, A, xb, yb);    // reachability
//   kcla::multiply<kcla::MinPlus<float>>(exec, A, d, e);
//
// x: rank-1 View of num_cols values, or rank-2 (num_cols x B, LayoutRight: the B values of
// one column contiguous); y likewise with num_rows. y is overwritten. The product runs on
// `exec` (asynchronous like any Kokkos kernel). One product at a time per matrix: the
// matrix owns the workspace its products reuse.
#pragma once

#include <kcla/detail/grammar_sweep.hpp>
#include <kcla/error.hpp>
#include <kcla/grammar_matrix.hpp>
#include <kcla/semiring.hpp>

#include <Kokkos_Core.hpp>

#include <string>
#include <type_traits>

namespace kcla {

template <class Semiring = void, class ExecutionSpace, class Scalar, class MemorySpace, class XView,
          class YView>
void multiply(const ExecutionSpace& exec, const GrammarMatrix<Scalar, MemorySpace>& A,
              const XView& x, const YView& y, SweepLaunch launch = SweepLaunch::automatic) {
  using value_type = typename YView::non_const_value_type;
  using semiring =
      std::conditional_t<std::is_void<Semiring>::value, PlusTimes<value_type>, Semiring>;
  static_assert(Kokkos::is_execution_space<ExecutionSpace>::value,
                "kcla::multiply: the first argument must be an execution space instance");
  static_assert(Kokkos::is_view<XView>::value && Kokkos::is_view<YView>::value,
                "kcla::multiply: x and y must be Kokkos Views");
  static_assert(Kokkos::SpaceAccessibility<ExecutionSpace, MemorySpace>::accessible,
                "kcla::multiply: the matrix is not accessible from this execution space");
  static_assert(
      Kokkos::SpaceAccessibility<ExecutionSpace, typename XView::memory_space>::accessible &&
          Kokkos::SpaceAccessibility<ExecutionSpace, typename YView::memory_space>::accessible,
      "kcla::multiply: x or y is not accessible from this execution space");
  static_assert(std::is_same<typename XView::non_const_value_type, value_type>::value,
                "kcla::multiply: x and y must hold the same value type");
  static_assert(std::is_same<typename semiring::value_type, value_type>::value,
                "kcla::multiply: x and y must hold the semiring's value_type");
  static_assert(
      int(XView::rank) == int(YView::rank) && (int(XView::rank) == 1 || int(XView::rank) == 2),
      "kcla::multiply: x and y must both be rank 1 or both rank 2");
  static_assert(int(XView::rank) == 1 ||
                    (std::is_same<typename XView::array_layout, Kokkos::LayoutRight>::value &&
                     std::is_same<typename YView::array_layout, Kokkos::LayoutRight>::value),
                "kcla::multiply: rank-2 X and Y must be LayoutRight (vectors innermost)");
  const std::int64_t vectors = int(XView::rank) == 2 ? static_cast<std::int64_t>(x.extent(1)) : 1;
  if (static_cast<std::int64_t>(x.extent(0)) != A.num_cols())
    throw InvalidArgument("kcla::multiply: x has " + std::to_string(x.extent(0)) +
                          " rows, the matrix " + std::to_string(A.num_cols()) + " columns");
  if (static_cast<std::int64_t>(y.extent(0)) != A.num_rows())
    throw InvalidArgument("kcla::multiply: y has " + std::to_string(y.extent(0)) +
                          " rows, the matrix " + std::to_string(A.num_rows()));
  if (int(XView::rank) == 2 && static_cast<std::int64_t>(y.extent(1)) != vectors)
    throw InvalidArgument("kcla::multiply: X and Y differ in their number of vectors");
  if (!x.span_is_contiguous() || !y.span_is_contiguous())
    throw InvalidArgument("kcla::multiply: x and y must be contiguous");
  if (vectors == 0) return;
  detail::sweep<semiring>(exec, A, x.data(), y.data(), vectors, launch);
}

}  // namespace kcla
