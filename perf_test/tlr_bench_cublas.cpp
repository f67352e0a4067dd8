// cuBLAS (CUDA builds) or host BLAS versions of the benchmark baselines.
#include "tlr_bench_vendor.hpp"

#include <kcla/error.hpp>

#include <string>

#if KCLA_HAVE_CUDA
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#endif

namespace kcla::bench {

void host_gemm(const GemmShape& s, double alpha, const void* a, const void* b, double beta,
               void* c);

#if KCLA_HAVE_CUDA
namespace {

void check(cublasStatus_t status, const char* call) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw BackendError(std::string("cuBLAS: ") + call +
                       " failed: " + cublasGetStatusString(status));
}

void check(cudaError_t status, const char* call) {
  if (status != cudaSuccess)
    throw BackendError(std::string("CUDA: ") + call + " failed: " + cudaGetErrorString(status));
}

// One handle for the whole benchmark process (deliberately never destroyed: it would
// outlive the CUDA context at exit).
cublasHandle_t handle() {
  static cublasHandle_t h = [] {
    cublasHandle_t x = nullptr;
    // The CUDA default cache preference, not Kokkos 3.4's device-wide PreferShared (what
    // kcla's own vendor handles do too: kernels/src/vendor_status.hpp).
    check(cudaDeviceSetCacheConfig(cudaFuncCachePreferNone), "cudaDeviceSetCacheConfig");
    check(cublasCreate(&x), "cublasCreate");
    return x;
  }();
  return h;
}

struct Types {
  cudaDataType_t data;
  cublasComputeType_t compute;
  bool double_scale;
};

Types types(const GemmShape& s) {
  switch (s.kind) {
    case ScalarKind::f64:
      return {CUDA_R_64F, CUBLAS_COMPUTE_64F, true};
    case ScalarKind::f32:
      return {CUDA_R_32F,
              s.math == TlrMath::tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F, false};
    case ScalarKind::f16:
      return {CUDA_R_16F, CUBLAS_COMPUTE_32F, false};
    default:
      return {CUDA_R_16BF, CUBLAS_COMPUTE_32F, false};
  }
}

}  // namespace
#endif

void vendor_gemm(const Where& where, const GemmShape& s, double alpha, const void* a, const void* b,
                 double beta, void* c) {
  if (!where.device) return host_gemm(s, alpha, a, b, beta, c);
#if KCLA_HAVE_CUDA
  const Types t = types(s);
  const float af = static_cast<float>(alpha), bf = static_cast<float>(beta);
  check(cublasSetStream(handle(), static_cast<cudaStream_t>(where.stream)), "cublasSetStream");
  check(cublasGemmEx(handle(), s.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N,
                     s.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, s.m, s.n, s.k,
                     t.double_scale ? static_cast<const void*>(&alpha) : &af, a, t.data, s.lda, b,
                     t.data, s.ldb, t.double_scale ? static_cast<const void*>(&beta) : &bf, c,
                     t.data, s.ldc, t.compute, CUBLAS_GEMM_DEFAULT),
        "cublasGemmEx");
#else
  throw InvalidArgument("benchmark baselines: not a CUDA build");
#endif
}

void vendor_batched_gemm(const Where& where, const GemmShape& s, double alpha, const void* const* a,
                         const void* const* b, double beta, void* const* c, int batch) {
  if (!where.device) {
    for (int i = 0; i < batch; ++i) host_gemm(s, alpha, a[i], b[i], beta, c[i]);
    return;
  }
#if KCLA_HAVE_CUDA
  const Types t = types(s);
  const float af = static_cast<float>(alpha), bf = static_cast<float>(beta);
  check(cublasSetStream(handle(), static_cast<cudaStream_t>(where.stream)), "cublasSetStream");
  check(cublasGemmBatchedEx(
            handle(), s.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, s.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N,
            s.m, s.n, s.k, t.double_scale ? static_cast<const void*>(&alpha) : &af, a, t.data,
            s.lda, b, t.data, s.ldb, t.double_scale ? static_cast<const void*>(&beta) : &bf, c,
            t.data, s.ldc, batch, t.compute, CUBLAS_GEMM_DEFAULT),
        "cublasGemmBatchedEx");
#else
  throw InvalidArgument("benchmark baselines: not a CUDA build");
#endif
}

}  // namespace kcla::bench
