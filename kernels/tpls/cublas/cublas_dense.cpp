#include <kcla/config.hpp>

#if KCLA_HAVE_CUDA

#include <kcla/detail/cublas_dense.hpp>
#include <kcla/error.hpp>

#include "../cuda/vendor_status.hpp"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <climits>
#include <string>

namespace kcla::detail {

const char* to_string(DenseMath math) {
  return math == DenseMath::tf32 ? "TF32" : "FP32";
}

struct CublasDense::Impl {
  cublasHandle_t handle = nullptr;
  int num_rows = 0, num_cols = 0;
  const float* values = nullptr;
  bool column_major = false;
};

CublasDense::CublasDense(std::int64_t num_rows, std::int64_t num_cols, const float* values,
                         bool column_major)
    : impl_(std::make_unique<Impl>()) {
  impl_->column_major = column_major;
  if (num_rows > INT_MAX || num_cols > INT_MAX)
    throw InvalidArgument("CublasDense: more than 2^31-1 rows or columns");
  impl_->num_rows = static_cast<int>(num_rows);
  impl_->num_cols = static_cast<int>(num_cols);
  impl_->values = values;
  use_default_cache_preference();
  check(cublasCreate(&impl_->handle), "cublasCreate");
}

CublasDense::~CublasDense() {
  if (impl_->handle) cublasDestroy(impl_->handle);
}

// Row-major A (rows x cols) is column-major Aᵀ (cols x rows, leading dimension cols).
void CublasDense::gemv(void* stream, const float* x, float* y) {
  auto& s = *impl_;
  check(cublasSetStream(s.handle, static_cast<cudaStream_t>(stream)), "cublasSetStream");
  const float one = 1, zero = 0;
  if (s.column_major)
    check(cublasSgemv(s.handle, CUBLAS_OP_N, s.num_rows, s.num_cols, &one, s.values, s.num_rows, x,
                      1, &zero, y, 1),
          "cublasSgemv");
  else
    check(cublasSgemv(s.handle, CUBLAS_OP_T, s.num_cols, s.num_rows, &one, s.values, s.num_cols, x,
                      1, &zero, y, 1),
          "cublasSgemv");
}

// Row-major X (cols x B) and Y (rows x B) are column-major Xᵀ (B x cols) and Yᵀ (B x rows):
// Yᵀ = Xᵀ Aᵀ, a column-major GEMM with no transposes.
void CublasDense::gemm(void* stream, int num_vectors, const float* x, float* y, DenseMath math) {
  auto& s = *impl_;
  check(cublasSetStream(s.handle, static_cast<cudaStream_t>(stream)), "cublasSetStream");
  const float one = 1, zero = 0;
  const auto compute = math == DenseMath::tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  if (s.column_major) {  // Y (rows x B) = A X, everything column-major
    check(cublasGemmEx(s.handle, CUBLAS_OP_N, CUBLAS_OP_N, s.num_rows, num_vectors, s.num_cols,
                       &one, s.values, CUDA_R_32F, s.num_rows, x, CUDA_R_32F, s.num_cols, &zero, y,
                       CUDA_R_32F, s.num_rows, compute, CUBLAS_GEMM_DEFAULT),
          "cublasGemmEx");
    return;
  }
  check(cublasGemmEx(s.handle, CUBLAS_OP_N, CUBLAS_OP_N, num_vectors, s.num_rows, s.num_cols, &one,
                     x, CUDA_R_32F, num_vectors, s.values, CUDA_R_32F, s.num_cols, &zero, y,
                     CUDA_R_32F, num_vectors, compute, CUBLAS_GEMM_DEFAULT),
        "cublasGemmEx");
}

// Y (column-major, rows x B) = A X: A is op T of the column-major Aᵀ, X op T of the
// column-major Xᵀ (B x cols).
void CublasDense::gemm_column_major_y(void* stream, int num_vectors, const float* x, float* y,
                                      DenseMath math) {
  auto& s = *impl_;
  if (s.column_major) throw InvalidArgument("CublasDense: gemm_column_major_y needs a row-major A");
  check(cublasSetStream(s.handle, static_cast<cudaStream_t>(stream)), "cublasSetStream");
  const float one = 1, zero = 0;
  const auto compute = math == DenseMath::tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  check(cublasGemmEx(s.handle, CUBLAS_OP_T, CUBLAS_OP_T, s.num_rows, num_vectors, s.num_cols, &one,
                     s.values, CUDA_R_32F, s.num_cols, x, CUDA_R_32F, num_vectors, &zero, y,
                     CUDA_R_32F, s.num_rows, compute, CUBLAS_GEMM_DEFAULT),
        "cublasGemmEx");
}

}  // namespace kcla::detail

#endif  // KCLA_HAVE_CUDA
