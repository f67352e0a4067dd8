// Private to kernels/src: CUDA, cuBLAS and cuSPARSE return codes turned into BackendError
// naming the call. Included only by CUDA builds.
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

}  // namespace kcla::detail
