// Dispatch of the TLR product (kcla::gemm) to a back end: which vendor library serves an
// execution space (tlr_gemm_tpl), and the call into it. Back ends: cuBLAS for Kokkos::Cuda
// (kernels/tpls/cublas/), host BLAS for host-accessible data (kernels/tpls/blas/), and the
// serial reference loops on request (TlrGemmOptions::backend; kernels/src/).
#pragma once

#include <kcla/config.hpp>
#include <kcla/detail/tlr_gemm_backend.hpp>
#include <kcla/error.hpp>
#include <kcla/tlr_plan.hpp>

#include <Kokkos_Core.hpp>

#include <string>
#include <type_traits>

namespace kcla::detail {

enum class TlrGemmTpl { none, cublas, blas };

/// The vendor library that runs the TLR product on ExecutionSpace when the operands are
/// host-accessible (`host_data`) or not.
template <class ExecutionSpace, bool host_data>
struct tlr_gemm_tpl {
  static constexpr TlrGemmTpl value =
#if KCLA_HAVE_CUDA
      std::is_same<ExecutionSpace, Kokkos::Cuda>::value ? TlrGemmTpl::cublas :
#endif
      host_data ? TlrGemmTpl::blas
                : TlrGemmTpl::none;
};

template <class ExecutionSpace, bool host_data>
void tlr_gemm_dispatch(const ExecutionSpace& exec, const TlrGemmPlan& plan,
                       const TlrBuffers& buffers, double alpha, double beta) {
  if (plan.options().backend == TlrBackend::reference) {
    if constexpr (host_data) {
      exec.fence();
      tlr_execute_reference(plan, buffers, alpha, beta);
      return;
    } else {
      throw InvalidArgument("TLR gemm: the reference backend needs host-accessible data");
    }
  }
  constexpr TlrGemmTpl tpl = tlr_gemm_tpl<ExecutionSpace, host_data>::value;
#if KCLA_HAVE_CUDA
  if constexpr (tpl == TlrGemmTpl::cublas) {
    tlr_execute_cublas(plan, buffers, alpha, beta, exec.cuda_stream());
    return;
  }
#endif
  if constexpr (tpl == TlrGemmTpl::blas) {
    exec.fence();
    tlr_execute_blas(plan, buffers, alpha, beta, exec.concurrency() > 1);
  } else if constexpr (tpl == TlrGemmTpl::none) {
    throw InvalidArgument(std::string("TLR gemm: no backend for execution space ") +
                          ExecutionSpace::name());
  }
}

}  // namespace kcla::detail
