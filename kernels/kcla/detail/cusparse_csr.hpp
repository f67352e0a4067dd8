// cuSPARSE adapter: the vendor baseline for CSR products on CUDA. Compiled only when
// kcla is built against a CUDA Kokkos; no CUDA header leaks into this interface.
#pragma once

#include <kcla/config.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>

namespace kcla::detail {

enum class CusparseSpmmAlgorithm { alg_default, csr_alg2, csr_alg3 };

const char* to_string(CusparseSpmmAlgorithm alg);

/// A CSR matrix already resident on the device, described once to cuSPARSE and reused:
/// descriptor creation and workspace sizing stay out of timed products.
class CusparseCsr {
 public:
  /// Pointers are device pointers; values are float (is_double = false) or double.
  CusparseCsr(int num_rows, int num_cols, std::int64_t nnz, const int* row_offsets,
              const int* column_indices, const void* values, bool is_double);
  ~CusparseCsr();
  CusparseCsr(const CusparseCsr&) = delete;
  CusparseCsr& operator=(const CusparseCsr&) = delete;

  /// y = A x on `stream` (a cudaStream_t).
  void spmv(void* stream, const void* x, void* y);
  /// Y = A X for `num_vectors` vectors, X (cols x B) and Y (rows x B) row-major
  /// (the B values of one row are contiguous).
  void spmm(void* stream, int num_vectors, const void* x, void* y, CusparseSpmmAlgorithm alg);
  /// Device bytes of the workspaces cuSPARSE asked for so far.
  std::size_t workspace_bytes() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kcla::detail
