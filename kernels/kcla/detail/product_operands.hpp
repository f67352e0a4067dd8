// The operand checks every kcla::multiply shares: x and y are Views the execution space
// can reach, rank 1 (one vector) or rank 2 LayoutRight (B vectors, vectors innermost),
// contiguous, with extents that match the matrix.
#pragma once

#include <kcla/error.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>
#include <type_traits>

namespace kcla::detail {

/// Compile-time checks of multiply(exec, A, x, y) for a matrix in MemorySpace.
template <class ExecutionSpace, class MemorySpace, class XView, class YView>
constexpr void check_product_types() {
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
  static_assert(
      int(XView::rank) == int(YView::rank) && (int(XView::rank) == 1 || int(XView::rank) == 2),
      "kcla::multiply: x and y must both be rank 1 or both rank 2");
  static_assert(int(XView::rank) == 1 ||
                    (std::is_same<typename XView::array_layout, Kokkos::LayoutRight>::value &&
                     std::is_same<typename YView::array_layout, Kokkos::LayoutRight>::value),
                "kcla::multiply: rank-2 X and Y must be LayoutRight (vectors innermost)");
}

/// Run-time checks: x has `cols` rows and y `rows` (`what_cols` / `what_rows` name them in
/// the message), the same number of vectors, both contiguous. Returns the number of vectors.
/// `function`, `in` and `out` name the call and its operands in the messages.
template <class XView, class YView>
std::int64_t check_product_extents(const XView& x, const YView& y, std::int64_t rows,
                                   std::int64_t cols, const std::string& what_rows,
                                   const std::string& what_cols,
                                   const std::string& function = "kcla::multiply",
                                   const std::string& in = "x", const std::string& out = "y") {
  const std::int64_t vectors = int(XView::rank) == 2 ? static_cast<std::int64_t>(x.extent(1)) : 1;
  if (static_cast<std::int64_t>(x.extent(0)) != cols)
    throw InvalidArgument(function + ": " + in + " has " + std::to_string(x.extent(0)) +
                          " rows, the " + what_cols);
  if (static_cast<std::int64_t>(y.extent(0)) != rows)
    throw InvalidArgument(function + ": " + out + " has " + std::to_string(y.extent(0)) +
                          " rows, the " + what_rows);
  if (int(XView::rank) == 2 && static_cast<std::int64_t>(y.extent(1)) != vectors)
    throw InvalidArgument(function + ": " + in + " and " + out +
                          " differ in their number of vectors");
  if (!x.span_is_contiguous() || !y.span_is_contiguous())
    throw InvalidArgument(function + ": " + in + " and " + out + " must be contiguous");
  return vectors;
}

/// Every check of y = A x (kcla::multiply) for a rows x cols matrix in MemorySpace that
/// `what` names ("matrix", "block matrix"), in the semiring of the product: the number of
/// vectors.
template <class Semiring, class ExecutionSpace, class MemorySpace, class XView, class YView>
std::int64_t check_multiply_operands(const XView& x, const YView& y, std::int64_t rows,
                                     std::int64_t cols, const std::string& what) {
  using value_type = typename YView::non_const_value_type;
  check_product_types<ExecutionSpace, MemorySpace, XView, YView>();
  static_assert(std::is_same<typename XView::non_const_value_type, value_type>::value,
                "kcla::multiply: x and y must hold the same value type");
  static_assert(std::is_same<typename Semiring::value_type, value_type>::value,
                "kcla::multiply: x and y must hold the semiring's value_type");
  return check_product_extents(x, y, rows, cols, what + " " + std::to_string(rows),
                               what + " " + std::to_string(cols) + " columns");
}

/// Every check of z = A^T y (kcla::multiply_transpose), as check_multiply_operands.
template <class Semiring, class ExecutionSpace, class MemorySpace, class YView, class ZView>
std::int64_t check_transpose_operands(const YView& y, const ZView& z, std::int64_t rows,
                                      std::int64_t cols, const std::string& what) {
  using value_type = typename ZView::non_const_value_type;
  check_product_types<ExecutionSpace, MemorySpace, YView, ZView>();
  static_assert(std::is_same<typename YView::non_const_value_type, value_type>::value,
                "kcla::multiply_transpose: y and z must hold the same value type");
  static_assert(std::is_same<typename Semiring::value_type, value_type>::value,
                "kcla::multiply_transpose: y and z must hold the semiring's value_type");
  return check_product_extents(y, z, cols, rows, what + " " + std::to_string(cols) + " columns",
                               what + " " + std::to_string(rows) + " rows",
                               "kcla::multiply_transpose", "y", "z");
}

}  // namespace kcla::detail
