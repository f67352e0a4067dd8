// Batched double GEMM on cuBLAS.
#include <kcla/config.hpp>

#if KCLA_HAVE_CUDA

#include <kcla/detail/batched_dgemm.hpp>

#include "../cuda/vendor_status.hpp"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstddef>

namespace kcla::detail {

long long cuda_free_bytes() {
  std::size_t free = 0, total = 0;
  check(cudaMemGetInfo(&free, &total), "cudaMemGetInfo");
  return static_cast<long long>(free);
}

CublasBatchedDgemm::CublasBatchedDgemm() {
  cublasHandle_t h = nullptr;
  use_default_cache_preference();
  check(cublasCreate(&h), "cublasCreate");
  handle_ = h;
}

CublasBatchedDgemm::~CublasBatchedDgemm() {
  if (handle_) cublasDestroy(static_cast<cublasHandle_t>(handle_));
}

void CublasBatchedDgemm::run(void* stream, const DgemmShape& s, const double* const* a,
                             const double* const* b, double* const* c, int count) {
  if (count <= 0 || s.m <= 0 || s.n <= 0) return;
  const auto h = static_cast<cublasHandle_t>(handle_);
  check(cublasSetStream(h, static_cast<cudaStream_t>(stream)), "cublasSetStream");
  check(cublasDgemmBatched(h, s.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N,
                           s.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, s.m, s.n, s.k, &s.alpha, a, s.lda,
                           b, s.ldb, &s.beta, c, s.ldc, count),
        "cublasDgemmBatched");
}

}  // namespace kcla::detail

#endif
