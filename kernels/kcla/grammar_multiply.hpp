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
// matrix owns the workspace its products reuse. With a workspace budget
// (GrammarMatrixOptions::workspace_budget_bytes), B vectors that do not fit run in chunks.
//
// z = A^T y (the left product, z^T = y^T A) for a matrix built with
// GrammarMatrixOptions::products = GrammarProducts::transpose or ::both:
//
//   kcla::GrammarMatrixOptions o;  o.products = kcla::GrammarProducts::both;
//   kcla::GrammarMatrix<float> G(grammar, o);
//   kcla::multiply_transpose(exec, G, y, z);            // y: num_rows, z: num_cols
#pragma once

#include <kcla/detail/grammar_sweep.hpp>
#include <kcla/detail/product_operands.hpp>
#include <kcla/detail/transpose_sweep.hpp>
#include <kcla/detail/vector_chunks.hpp>
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
  const std::int64_t vectors =
      detail::check_multiply_operands<semiring, ExecutionSpace, MemorySpace>(
          x, y, A.num_rows(), A.num_cols(), "matrix");
  if (!A.has_right_product())
    throw InvalidArgument(
        "kcla::multiply: the matrix was built for transposed products only; build it with "
        "GrammarMatrixOptions::products = GrammarProducts::right or ::both");
  if (vectors == 0) return;
  const std::int64_t chunk =
      detail::vectors_per_chunk<ExecutionSpace>(A, vectors, sizeof(value_type));
  if (chunk >= vectors) {
    detail::sweep<semiring>(exec, A, x.data(), y.data(), vectors, launch);
    return;
  }
  auto& plan = A.plan();
  detail::in_vector_chunks<value_type>(
      exec, x.data(), y.data(), A.num_cols(), A.num_rows(), vectors, chunk, plan.chunk_x,
      plan.chunk_y, [&](const value_type* xc, value_type* yc, std::int64_t width) {
        detail::sweep<semiring>(exec, A, xc, yc, width, launch);
      });
}

/// z = A^T y: y holds num_rows values (rank 1) or num_rows x B (rank 2, LayoutRight), z
/// likewise num_cols. z is overwritten. Launches: automatic (a CUDA graph on devices,
/// per-level launches on the host), per_level or graph.
template <class Semiring = void, class ExecutionSpace, class Scalar, class MemorySpace, class YView,
          class ZView>
void multiply_transpose(const ExecutionSpace& exec, const GrammarMatrix<Scalar, MemorySpace>& A,
                        const YView& y, const ZView& z,
                        SweepLaunch launch = SweepLaunch::automatic) {
  using value_type = typename ZView::non_const_value_type;
  using semiring =
      std::conditional_t<std::is_void<Semiring>::value, PlusTimes<value_type>, Semiring>;
  const std::int64_t vectors =
      detail::check_transpose_operands<semiring, ExecutionSpace, MemorySpace>(
          y, z, A.num_rows(), A.num_cols(), "matrix");
  A.transpose_views();  // throws when the matrix has no left-product schedule
  if (vectors == 0) return;
  const std::int64_t chunk = detail::transpose_vectors_per_chunk(A, vectors, sizeof(value_type));
  if (chunk >= vectors) {
    detail::transpose_sweep<semiring>(exec, A, y.data(), z.data(), vectors, launch);
    return;
  }
  auto& t = A.transpose_views();
  detail::in_vector_chunks<value_type>(
      exec, y.data(), z.data(), A.num_rows(), A.num_cols(), vectors, chunk, t.chunk_y, t.chunk_z,
      [&](const value_type* yc, value_type* zc, std::int64_t width) {
        detail::transpose_sweep<semiring>(exec, A, yc, zc, width, launch);
      });
}

}  // namespace kcla
