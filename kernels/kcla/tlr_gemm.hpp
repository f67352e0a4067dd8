// C <- alpha op(A) op(B) + beta C with a dense C (rank-2 View, column-major) and one or
// both of A, B in TLR form; all four op combinations read the same storage (no copies).
//
//   auto plan = kcla::analyze(kcla::Op::N, A, kcla::Op::T, B, options);  // once
//   kcla::gemm(exec, plan, A, B, alpha, beta, C);                       // many times
//   kcla::gemm(exec, kcla::Op::N, A, kcla::Op::N, B, alpha, beta, C);   // one-off
//
// Backends: cuBLAS for Kokkos::Cuda (grouped GEMM for stages 1-2, one GEMM per tile row or
// column for stage 3, two streams when pipelined), host BLAS for host spaces, and the
// serial reference loops on request (TlrGemmOptions::backend).
#pragma once

#include <kcla/config.hpp>
#include <kcla/detail/tlr_gemm_backend.hpp>
#include <kcla/detail/tlr_gemm_spec.hpp>
#include <kcla/error.hpp>
#include <kcla/tlr_matrix.hpp>
#include <kcla/tlr_plan.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>

namespace kcla {

namespace detail {

/// What gemm needs to know of an operand type: a TlrMatrix or a rank-2 View.
template <class T, class Enable = void>
struct TlrOperandTraits {
  static constexpr bool valid = false;
};

template <class Scalar, class MemorySpace>
struct TlrOperandTraits<TlrMatrix<Scalar, MemorySpace>> {
  static constexpr bool valid = true;
  static constexpr bool is_tlr = true;
  using value_type = Scalar;
  using memory_space = MemorySpace;
};

template <class V>
struct TlrOperandTraits<V, std::enable_if_t<Kokkos::is_view<V>::value>> {
  static constexpr bool valid = V::rank == 2;
  static constexpr bool is_tlr = false;
  using value_type = typename V::non_const_value_type;
  using memory_space = typename V::memory_space;
};

template <class X>
TlrOperandShape operand_shape(const X& x) {
  if constexpr (TlrOperandTraits<X>::is_tlr) {
    if (!x.is_allocated()) throw InvalidArgument("TLR gemm: an operand is an empty TlrMatrix");
    return TlrOperandShape{x.layout_ptr(), x.num_rows(), x.num_cols()};
  } else {
    return TlrOperandShape{nullptr, static_cast<std::int64_t>(x.extent(0)),
                           static_cast<std::int64_t>(x.extent(1))};
  }
}

template <class A, class B>
void check_operand_types() {
  static_assert(TlrOperandTraits<A>::valid && TlrOperandTraits<B>::valid,
                "TLR gemm: operands must be TlrMatrix or rank-2 Views");
  static_assert(TlrOperandTraits<A>::is_tlr || TlrOperandTraits<B>::is_tlr,
                "TLR gemm: at least one operand must be a TlrMatrix");
  static_assert(std::is_same<typename TlrOperandTraits<A>::value_type,
                             typename TlrOperandTraits<B>::value_type>::value,
                "TLR gemm: operands must have the same scalar type");
}

/// Leading dimension of a column-major rank-2 View (throws for other strides).
template <class V>
std::int64_t column_major_ld(const V& v, const char* what) {
  if (v.extent(0) > 1 && v.stride(0) != 1)
    throw InvalidArgument(std::string("TLR gemm: ") + what +
                          " must be column-major (LayoutLeft, stride(0) == 1)");
  return std::max<std::int64_t>(std::max<std::int64_t>(1, static_cast<std::int64_t>(v.extent(0))),
                                static_cast<std::int64_t>(v.stride(1)));
}

/// Base addresses of a TLR or dense operand.
template <class X>
void set_operand(TlrBuffers& buffers, const X& x, bool is_a, ScalarKind kind, TlrMath math) {
  if constexpr (TlrOperandTraits<X>::is_tlr) {
    buffers.set(is_a ? TlrBuffer::a_outer : TlrBuffer::b_outer, x.outer_factors().data());
    buffers.set(is_a ? TlrBuffer::a_inner : TlrBuffer::b_inner, x.inner_factors().data());
  } else {
    const std::int64_t ld = column_major_ld(x, is_a ? "dense A" : "dense B");
    // Grouped GEMM on 16-bit types or tf32 wants 16-byte aligned blocks.
    int align = 1;
    if (kind == ScalarKind::f16 || kind == ScalarKind::bf16) align = 8;
    if (math == TlrMath::tf32) align = 4;
    if (align > 1 && (ld % align != 0 || reinterpret_cast<std::uintptr_t>(x.data()) % 16 != 0))
      throw InvalidArgument(std::string("TLR gemm: dense ") + (is_a ? "A" : "B") +
                            " needs a 16-byte aligned base and a leading dimension that is a "
                            "multiple of " +
                            std::to_string(align) + " for this precision");
    buffers.set(is_a ? TlrBuffer::a_dense : TlrBuffer::b_dense, x.data(), ld);
  }
}

}  // namespace detail

/// Plans C <- alpha op(A) op(B) + beta C for operands of this structure (rank prefixes,
/// schedule of output rectangles, association order per rectangle, grouped descriptors).
/// The plan serves any operands with the same structure (e.g. new factor values).
template <class AOperand, class BOperand>
TlrGemmPlan analyze(Op op_a, const AOperand& a, Op op_b, const BOperand& b,
                    const TlrGemmOptions& options = {}) {
  detail::check_operand_types<AOperand, BOperand>();
  using scalar = typename detail::TlrOperandTraits<AOperand>::value_type;
  return detail::plan_tlr_gemm(op_a, detail::operand_shape(a), op_b, detail::operand_shape(b),
                               TlrScalarTraits<scalar>::kind, options);
}

/// The workspace budget (bytes, all arenas; pass it as TlrGemmOptions::workspace_bytes)
/// that splits C into at most `runs` rectangles.
template <class AOperand, class BOperand>
std::size_t workspace_bytes(Op op_a, const AOperand& a, Op op_b, const BOperand& b, int runs,
                            const TlrGemmOptions& options = {}) {
  detail::check_operand_types<AOperand, BOperand>();
  using scalar = typename detail::TlrOperandTraits<AOperand>::value_type;
  return detail::tlr_workspace_bytes(op_a, detail::operand_shape(a), op_b, detail::operand_shape(b),
                                     TlrScalarTraits<scalar>::kind, runs, options);
}

/// C <- alpha op(A) op(B) + beta C with a plan from analyze() (C is not read when
/// beta == 0). Runs on `exec` (asynchronously on CUDA, like any Kokkos kernel).
template <class ExecutionSpace, class AOperand, class BOperand, class CView>
void gemm(const ExecutionSpace& exec, const TlrGemmPlan& plan, const AOperand& a, const BOperand& b,
          double alpha, double beta, const CView& c) {
  static_assert(Kokkos::is_execution_space<ExecutionSpace>::value,
                "first argument: execution space");
  detail::check_operand_types<AOperand, BOperand>();
  static_assert(Kokkos::is_view<CView>::value && CView::rank == 2, "C must be a rank-2 View");
  static_assert(std::is_same<typename CView::array_layout, Kokkos::LayoutLeft>::value ||
                    std::is_same<typename CView::array_layout, Kokkos::LayoutStride>::value,
                "C must be column-major (LayoutLeft, or LayoutStride with stride(0) == 1)");
  using scalar = typename detail::TlrOperandTraits<AOperand>::value_type;
  static_assert(std::is_same<typename CView::value_type, scalar>::value,
                "C must be a writable View of the operands' scalar type");
  using a_space = typename detail::TlrOperandTraits<AOperand>::memory_space;
  using b_space = typename detail::TlrOperandTraits<BOperand>::memory_space;
  using c_space = typename CView::memory_space;
  static_assert(Kokkos::SpaceAccessibility<ExecutionSpace, a_space>::accessible &&
                    Kokkos::SpaceAccessibility<ExecutionSpace, b_space>::accessible &&
                    Kokkos::SpaceAccessibility<ExecutionSpace, c_space>::accessible,
                "A, B and C must be accessible from the execution space");
  if (!plan.valid()) throw InvalidArgument("TLR gemm: empty plan (use analyze())");
  constexpr ScalarKind kind = TlrScalarTraits<scalar>::kind;
  detail::check_plan_operands(plan, detail::operand_shape(a), detail::operand_shape(b), kind);
  if (static_cast<std::int64_t>(c.extent(0)) != plan.m() ||
      static_cast<std::int64_t>(c.extent(1)) != plan.n())
    throw InvalidArgument("TLR gemm: C is " + std::to_string(c.extent(0)) + " x " +
                          std::to_string(c.extent(1)) + ", expected " + std::to_string(plan.m()) +
                          " x " + std::to_string(plan.n()));
  if (plan.m() == 0 || plan.n() == 0) return;

  detail::TlrBuffers buffers;
  const TlrMath math = plan.options().math;
  detail::set_operand(buffers, a, true, kind, math);
  detail::set_operand(buffers, b, false, kind, math);
  buffers.set(detail::TlrBuffer::c, c.data(), detail::column_major_ld(c, "C"));

  constexpr bool host_data = Kokkos::SpaceAccessibility<Kokkos::HostSpace, a_space>::accessible &&
                             Kokkos::SpaceAccessibility<Kokkos::HostSpace, b_space>::accessible &&
                             Kokkos::SpaceAccessibility<Kokkos::HostSpace, c_space>::accessible;
  detail::tlr_gemm_dispatch<ExecutionSpace, host_data>(exec, plan, buffers, alpha, beta);
}

/// One-off product: analyze, then gemm (repeated products should keep the plan).
template <class ExecutionSpace, class AOperand, class BOperand, class CView>
void gemm(const ExecutionSpace& exec, Op op_a, const AOperand& a, Op op_b, const BOperand& b,
          double alpha, double beta, const CView& c, const TlrGemmOptions& options = {}) {
  const TlrGemmPlan plan = analyze(op_a, a, op_b, b, options);
  gemm(exec, plan, a, b, alpha, beta, c);
}

}  // namespace kcla
