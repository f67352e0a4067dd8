// The TLR product's backends behind kcla::gemm: what they receive (a plan and the base
// addresses of its buffers) and their entry points. No vendor header leaks from here.
#pragma once

#include <kcla/config.hpp>
#include <kcla/tlr_plan.hpp>

#include <cstddef>
#include <cstdint>

namespace kcla::detail {

/// Base address and leading dimension (dense operands and C; 0 for factor arrays) of every
/// buffer a plan names. The workspace entry is filled in by the backend.
struct TlrBuffers {
  const void* base[static_cast<int>(TlrBuffer::count)] = {};
  std::int64_t ld[static_cast<int>(TlrBuffer::count)] = {};

  void set(TlrBuffer b, const void* p, std::int64_t leading_dim = 0) {
    base[static_cast<int>(b)] = p;
    ld[static_cast<int>(b)] = leading_dim;
  }
  /// Address of element off + col * ld of buffer b (element size es).
  void* at(TlrBuffer b, std::int64_t off, std::int64_t col, std::size_t es) const {
    const int i = static_cast<int>(b);
    return const_cast<char*>(static_cast<const char*>(base[i])) +
           static_cast<std::size_t>(off + col * ld[i]) * es;
  }
  /// A group's leading dimension: its own, or the buffer's when negative.
  int leading_dim(TlrBuffer b, int group_ld) const {
    return group_ld >= 0 ? group_ld : static_cast<int>(ld[static_cast<int>(b)]);
  }
};

/// Plain serial loops: every stage of the plan, one multiply-add at a time, in the compute
/// precision, rounding the workspace to the storage type as the fast paths do.
void tlr_execute_reference(const TlrGemmPlan& plan, const TlrBuffers& buffers, double alpha,
                           double beta);

/// Host BLAS (OpenBLAS): stages 1 and 3 as BLAS GEMMs, stage 2 as a loop over tasks
/// (parallel over tasks when `parallel`); 16-bit types convert blocks to float.
void tlr_execute_blas(const TlrGemmPlan& plan, const TlrBuffers& buffers, double alpha, double beta,
                      bool parallel);

#if KCLA_HAVE_CUDA
/// cuBLAS on `stream` (a cudaStream_t): each stage as grouped, (strided) batched or single
/// GEMM calls (TlrGemmTuning::coupling_launch, final_launch); with a pipelined plan, stages
/// 1-2 run on a second stream and arena, overlapping stage 3 of the previous rectangle.
/// Data in device memory.
void tlr_execute_cublas(const TlrGemmPlan& plan, const TlrBuffers& buffers, double alpha,
                        double beta, void* stream);
#endif

}  // namespace kcla::detail
