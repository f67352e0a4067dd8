// cuSPARSE adapter: the vendor baseline for CSR products on CUDA. Compiled only when
// kcla is built against a CUDA Kokkos; no CUDA header leaks into this interface.
//
// Every algorithm cuSPARSE offers for the product is reachable, with or without its
// preprocessing step, so a benchmark can give the baseline its best shot: descriptors,
// workspaces and preprocessing are made once per variant and reused by every product.
#pragma once

#include <kcla/config.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kcla::detail {

enum class CusparseSpmvAlgorithm { alg_default, csr_alg1, csr_alg2 };
enum class CusparseSpmmAlgorithm { alg_default, csr_alg1, csr_alg2, csr_alg3 };
/// Layout of the dense X and Y of a multi-vector product.
enum class DenseOrder { row_major, column_major };

struct CusparseSpmvVariant {
  CusparseSpmvAlgorithm algorithm = CusparseSpmvAlgorithm::csr_alg2;
  bool preprocess = true;  // one untimed cusparseSpMV_preprocess before the products
  bool transpose = false;  // y = A^T x (CUSPARSE_OPERATION_TRANSPOSE): x rows, y cols
};

struct CusparseSpmmVariant {
  CusparseSpmmAlgorithm algorithm = CusparseSpmmAlgorithm::csr_alg3;
  /// row_major: X is cols x B and Y rows x B with the B values of a row contiguous (kcla's
  /// own layout); column_major: each vector contiguous.
  DenseOrder order = DenseOrder::row_major;
  bool preprocess = true;  // one untimed cusparseSpMM_preprocess before the products
  bool transpose = false;  // Y = A^T X (CUSPARSE_OPERATION_TRANSPOSE)
};

const char* to_string(CusparseSpmvAlgorithm alg);
const char* to_string(CusparseSpmmAlgorithm alg);
const char* to_string(DenseOrder order);
std::string to_string(const CusparseSpmvVariant& v);  // e.g. "CSR_ALG2+preprocess"
std::string to_string(const CusparseSpmmVariant& v);  // e.g. "CSR_ALG3/row-major+preprocess"
// Transposed variants read "op(A)=T CSR_ALG1+preprocess".

/// Every SpMV variant worth measuring: ALG_DEFAULT, CSR_ALG1 and CSR_ALG2, the last two
/// with and without preprocessing.
std::vector<CusparseSpmvVariant> all_spmv_variants();
/// Every SpMM variant worth measuring: ALG_DEFAULT and CSR_ALG1/2/3, row- and column-major,
/// with preprocessing where cuSPARSE offers it.
std::vector<CusparseSpmmVariant> all_spmm_variants();
/// The same lists with CUSPARSE_OPERATION_TRANSPOSE (A^T x without a transposed copy);
/// cuSPARSE refuses some of them (reported, not hidden).
std::vector<CusparseSpmvVariant> all_transposed_spmv_variants();
std::vector<CusparseSpmmVariant> all_transposed_spmm_variants();

/// A CSR matrix already resident on the device, described once to cuSPARSE and reused.
class CusparseCsr {
 public:
  /// Pointers are device pointers; values are float (is_double = false) or double.
  CusparseCsr(int num_rows, int num_cols, std::int64_t nnz, const int* row_offsets,
              const int* column_indices, const void* values, bool is_double);
  ~CusparseCsr();
  CusparseCsr(const CusparseCsr&) = delete;
  CusparseCsr& operator=(const CusparseCsr&) = delete;

  /// y = A x on `stream` (a cudaStream_t). The first product of a variant creates its
  /// descriptors and workspace (and preprocesses); later ones only set the vector pointers.
  /// Throws BackendError (e.g. CUSPARSE_STATUS_NOT_SUPPORTED) when cuSPARSE refuses.
  void spmv(void* stream, const void* x, void* y, const CusparseSpmvVariant& variant = {});
  /// Y = A X for `num_vectors` vectors in the variant's layout.
  void spmm(void* stream, int num_vectors, const void* x, void* y,
            const CusparseSpmmVariant& variant = {});
  /// Device bytes of the largest workspace of one variant (what one user would hold).
  std::size_t max_variant_workspace_bytes() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kcla::detail
