#include <kcla/config.hpp>

#if KCLA_HAVE_CUDA

#include <kcla/detail/cusparse_csr.hpp>
#include <kcla/error.hpp>

#include <cuda_runtime_api.h>
#include <cusparse.h>

#include <string>

namespace kcla::detail {

namespace {

void check(cusparseStatus_t status, const char* call) {
  if (status != CUSPARSE_STATUS_SUCCESS)
    throw BackendError(std::string("cuSPARSE: ") + call +
                       " failed: " + cusparseGetErrorString(status));
}

void check(cudaError_t status, const char* call) {
  if (status != cudaSuccess)
    throw BackendError(std::string("CUDA: ") + call + " failed: " + cudaGetErrorString(status));
}

cusparseSpMMAlg_t to_cusparse(CusparseSpmmAlgorithm alg) {
  switch (alg) {
    case CusparseSpmmAlgorithm::csr_alg2:
      return CUSPARSE_SPMM_CSR_ALG2;
    case CusparseSpmmAlgorithm::csr_alg3:
      return CUSPARSE_SPMM_CSR_ALG3;
    default:
      return CUSPARSE_SPMM_ALG_DEFAULT;
  }
}

// A device buffer that only grows.
struct Workspace {
  void* data = nullptr;
  std::size_t bytes = 0;
  void reserve(std::size_t want) {
    if (want <= bytes) return;
    if (data) cudaFree(data);
    data = nullptr;
    bytes = 0;
    check(cudaMalloc(&data, want), "cudaMalloc(workspace)");
    bytes = want;
  }
  ~Workspace() {
    if (data) cudaFree(data);
  }
};

}  // namespace

const char* to_string(CusparseSpmmAlgorithm alg) {
  switch (alg) {
    case CusparseSpmmAlgorithm::csr_alg2:
      return "CSR_ALG2";
    case CusparseSpmmAlgorithm::csr_alg3:
      return "CSR_ALG3";
    default:
      return "ALG_DEFAULT";
  }
}

struct CusparseCsr::Impl {
  cusparseHandle_t handle = nullptr;
  cusparseSpMatDescr_t matrix = nullptr;
  cudaDataType value_type = CUDA_R_32F;
  int num_rows = 0, num_cols = 0;
  Workspace spmv_workspace, spmm_workspace;
  bool spmm_preprocessed[3] = {false, false, false};
  int spmm_preprocessed_vectors[3] = {0, 0, 0};
  const void* spmm_preprocessed_x[3] = {nullptr, nullptr, nullptr};
};

CusparseCsr::CusparseCsr(int num_rows, int num_cols, std::int64_t nnz, const int* row_offsets,
                         const int* column_indices, const void* values, bool is_double)
    : impl_(std::make_unique<Impl>()) {
  impl_->num_rows = num_rows;
  impl_->num_cols = num_cols;
  impl_->value_type = is_double ? CUDA_R_64F : CUDA_R_32F;
  check(cusparseCreate(&impl_->handle), "cusparseCreate");
  check(cusparseCreateCsr(&impl_->matrix, num_rows, num_cols, nnz, const_cast<int*>(row_offsets),
                          const_cast<int*>(column_indices), const_cast<void*>(values),
                          CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO,
                          impl_->value_type),
        "cusparseCreateCsr");
}

CusparseCsr::~CusparseCsr() {
  if (impl_->matrix) cusparseDestroySpMat(impl_->matrix);
  if (impl_->handle) cusparseDestroy(impl_->handle);
}

std::size_t CusparseCsr::workspace_bytes() const {
  return impl_->spmv_workspace.bytes + impl_->spmm_workspace.bytes;
}

void CusparseCsr::spmv(void* stream, const void* x, void* y) {
  auto& s = *impl_;
  check(cusparseSetStream(s.handle, static_cast<cudaStream_t>(stream)), "cusparseSetStream");
  cusparseDnVecDescr_t vx = nullptr, vy = nullptr;
  check(cusparseCreateDnVec(&vx, s.num_cols, const_cast<void*>(x), s.value_type),
        "cusparseCreateDnVec(x)");
  check(cusparseCreateDnVec(&vy, s.num_rows, y, s.value_type), "cusparseCreateDnVec(y)");
  double one_d = 1, zero_d = 0;
  float one_f = 1, zero_f = 0;
  const void* alpha = s.value_type == CUDA_R_64F ? static_cast<const void*>(&one_d) : &one_f;
  const void* beta = s.value_type == CUDA_R_64F ? static_cast<const void*>(&zero_d) : &zero_f;
  std::size_t need = 0;
  check(cusparseSpMV_bufferSize(s.handle, CUSPARSE_OPERATION_NON_TRANSPOSE, alpha, s.matrix, vx,
                                beta, vy, s.value_type, CUSPARSE_SPMV_ALG_DEFAULT, &need),
        "cusparseSpMV_bufferSize");
  s.spmv_workspace.reserve(need);
  check(cusparseSpMV(s.handle, CUSPARSE_OPERATION_NON_TRANSPOSE, alpha, s.matrix, vx, beta, vy,
                     s.value_type, CUSPARSE_SPMV_ALG_DEFAULT, s.spmv_workspace.data),
        "cusparseSpMV");
  cusparseDestroyDnVec(vx);
  cusparseDestroyDnVec(vy);
}

void CusparseCsr::spmm(void* stream, int num_vectors, const void* x, void* y,
                       CusparseSpmmAlgorithm alg) {
  auto& s = *impl_;
  check(cusparseSetStream(s.handle, static_cast<cudaStream_t>(stream)), "cusparseSetStream");
  cusparseDnMatDescr_t mx = nullptr, my = nullptr;
  check(cusparseCreateDnMat(&mx, s.num_cols, num_vectors, num_vectors, const_cast<void*>(x),
                            s.value_type, CUSPARSE_ORDER_ROW),
        "cusparseCreateDnMat(X)");
  check(cusparseCreateDnMat(&my, s.num_rows, num_vectors, num_vectors, y, s.value_type,
                            CUSPARSE_ORDER_ROW),
        "cusparseCreateDnMat(Y)");
  double one_d = 1, zero_d = 0;
  float one_f = 1, zero_f = 0;
  const void* alpha = s.value_type == CUDA_R_64F ? static_cast<const void*>(&one_d) : &one_f;
  const void* beta = s.value_type == CUDA_R_64F ? static_cast<const void*>(&zero_d) : &zero_f;
  const auto cu_alg = to_cusparse(alg);
  std::size_t need = 0;
  check(cusparseSpMM_bufferSize(s.handle, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                CUSPARSE_OPERATION_NON_TRANSPOSE, alpha, s.matrix, mx, beta, my,
                                s.value_type, cu_alg, &need),
        "cusparseSpMM_bufferSize");
  s.spmm_workspace.reserve(need);
  // ALG3 wants a preprocessing step once per (matrix, shape); it is part of the set-up a
  // user pays once, so it stays out of repeated products.
  const int slot = static_cast<int>(alg);
  if (alg == CusparseSpmmAlgorithm::csr_alg3 &&
      (!s.spmm_preprocessed[slot] || s.spmm_preprocessed_vectors[slot] != num_vectors ||
       s.spmm_preprocessed_x[slot] != x)) {
    check(cusparseSpMM_preprocess(s.handle, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                  CUSPARSE_OPERATION_NON_TRANSPOSE, alpha, s.matrix, mx, beta, my,
                                  s.value_type, cu_alg, s.spmm_workspace.data),
          "cusparseSpMM_preprocess");
    s.spmm_preprocessed[slot] = true;
    s.spmm_preprocessed_vectors[slot] = num_vectors;
    s.spmm_preprocessed_x[slot] = x;
  }
  check(cusparseSpMM(s.handle, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE,
                     alpha, s.matrix, mx, beta, my, s.value_type, cu_alg, s.spmm_workspace.data),
        "cusparseSpMM");
  cusparseDestroyDnMat(mx);
  cusparseDestroyDnMat(my);
}

}  // namespace kcla::detail

#endif  // KCLA_HAVE_CUDA
