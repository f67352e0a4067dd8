// Private to kernels/src: CUDA, cuBLAS and cuSPARSE return codes turned into BackendError
// naming the call, and the device cache preference vendor kernels expect. Included only by
// CUDA builds.
#pragma once

#include <kcla/error.hpp>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cusparse.h>

#include <string>

namespace kcla::detail {

inline void check(cudaError_t status, const char* call) {
  if (status != cudaSuccess)
    throw BackendError(std::string("CUDA: ") + call + " failed: " + cudaGetErrorString(status));
}

inline void check(cublasStatus_t status, const char* call) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw BackendError(std::string("cuBLAS: ") + call +
                       " failed: " + cublasGetStatusString(status));
}

inline void check(cusparseStatus_t status, const char* call) {
  if (status != CUSPARSE_STATUS_SUCCESS)
    throw BackendError(std::string("cuSPARSE: ") + call +
                       " failed: " + cusparseGetErrorString(status));
}

/// Kokkos 3.4's Cuda::initialize sets cudaDeviceSetCacheConfig(cudaFuncCachePreferShared)
/// for the whole device. Kokkos' own kernels set their preference per function, so the
/// setting reaches only other kernels: cuSPARSE's SpMV then runs with the smallest L1 and
/// loses 25-50 % (docs/baselines.md). Every vendor handle kcla creates restores the CUDA
/// default first; Kokkos kernels are unaffected.
inline void use_default_cache_preference() {
  check(cudaDeviceSetCacheConfig(cudaFuncCachePreferNone), "cudaDeviceSetCacheConfig");
}

}  // namespace kcla::detail
