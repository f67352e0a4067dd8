// cuBLAS adapter for the dense baseline: what a user would run on a genotype panel that
// fits in device memory as a dense fp32 matrix (panels are 15-40 % nonzero, so at many
// vectors a dense GEMM can beat every sparse product). No CUDA header leaks from here.
#pragma once

#include <kcla/config.hpp>

#include <cstdint>
#include <memory>

namespace kcla::detail {

/// Arithmetic of the dense product: plain fp32, or fp32 storage with TF32 tensor-core
/// arithmetic (faster, ~1e-3 relative error: always labelled separately).
enum class DenseMath { fp32, tf32 };

const char* to_string(DenseMath math);

/// A dense fp32 matrix on the device, row-major (rows x cols, each row contiguous) or
/// column-major, with a cuBLAS handle made once. cuBLAS picks different kernels for the two
/// storage orders, so a fair baseline measures both.
class CublasDense {
 public:
  /// `values`: device pointer to rows * cols floats in the given order; not owned.
  CublasDense(std::int64_t num_rows, std::int64_t num_cols, const float* values,
              bool column_major = false);
  ~CublasDense();
  CublasDense(const CublasDense&) = delete;
  CublasDense& operator=(const CublasDense&) = delete;

  /// y = A x on `stream` (a cudaStream_t).
  void gemv(void* stream, const float* x, float* y);
  /// Y = A X for B vectors, X (cols x B) and Y (rows x B) in the matrix's storage order:
  /// row-major (kcla's layout) for a row-major A, column-major for a column-major A.
  void gemm(void* stream, int num_vectors, const float* x, float* y, DenseMath math);
  /// Row-major A only: the same product as one GEMM with A as cuBLAS' first operand, X
  /// row-major, Y column-major (rows x B, each vector contiguous).
  void gemm_column_major_y(void* stream, int num_vectors, const float* x, float* y, DenseMath math);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kcla::detail
