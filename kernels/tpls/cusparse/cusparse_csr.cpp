#include <kcla/config.hpp>

#if KCLA_HAVE_CUDA

#include <kcla/detail/cusparse_csr.hpp>
#include <kcla/error.hpp>

#include "../cuda/vendor_status.hpp"

#include <cuda_runtime_api.h>
#include <cusparse.h>

#include <algorithm>
#include <map>
#include <string>
#include <tuple>

namespace kcla::detail {

namespace {

cusparseSpMVAlg_t to_cusparse(CusparseSpmvAlgorithm alg) {
  switch (alg) {
    case CusparseSpmvAlgorithm::csr_alg1:
      return CUSPARSE_SPMV_CSR_ALG1;
    case CusparseSpmvAlgorithm::csr_alg2:
      return CUSPARSE_SPMV_CSR_ALG2;
    default:
      return CUSPARSE_SPMV_ALG_DEFAULT;
  }
}

cusparseSpMMAlg_t to_cusparse(CusparseSpmmAlgorithm alg) {
  switch (alg) {
    case CusparseSpmmAlgorithm::csr_alg1:
      return CUSPARSE_SPMM_CSR_ALG1;
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
  Workspace() = default;
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;
  ~Workspace() {
    if (data) cudaFree(data);
  }
};

// Each variant owns its matrix descriptor: preprocessing stores algorithm-specific data in
// it, so variants measured one after the other cannot disturb each other.
struct SpmvState {
  cusparseSpMatDescr_t matrix = nullptr;
  cusparseDnVecDescr_t x = nullptr, y = nullptr;
  Workspace workspace;
  SpmvState() = default;
  SpmvState(const SpmvState&) = delete;
  SpmvState& operator=(const SpmvState&) = delete;
  ~SpmvState() {
    if (x) cusparseDestroyDnVec(x);
    if (y) cusparseDestroyDnVec(y);
    if (matrix) cusparseDestroySpMat(matrix);
  }
};

struct SpmmState {
  cusparseSpMatDescr_t matrix = nullptr;
  cusparseDnMatDescr_t x = nullptr, y = nullptr;
  int vectors = 0;
  Workspace workspace;
  SpmmState() = default;
  SpmmState(const SpmmState&) = delete;
  SpmmState& operator=(const SpmmState&) = delete;
  void release_vectors() {
    if (x) cusparseDestroyDnMat(x);
    if (y) cusparseDestroyDnMat(y);
    x = y = nullptr;
  }
  ~SpmmState() {
    release_vectors();
    if (matrix) cusparseDestroySpMat(matrix);
  }
};

}  // namespace

const char* to_string(CusparseSpmvAlgorithm alg) {
  switch (alg) {
    case CusparseSpmvAlgorithm::csr_alg1:
      return "CSR_ALG1";
    case CusparseSpmvAlgorithm::csr_alg2:
      return "CSR_ALG2";
    default:
      return "ALG_DEFAULT";
  }
}

const char* to_string(CusparseSpmmAlgorithm alg) {
  switch (alg) {
    case CusparseSpmmAlgorithm::csr_alg1:
      return "CSR_ALG1";
    case CusparseSpmmAlgorithm::csr_alg2:
      return "CSR_ALG2";
    case CusparseSpmmAlgorithm::csr_alg3:
      return "CSR_ALG3";
    default:
      return "ALG_DEFAULT";
  }
}

const char* to_string(DenseOrder order) {
  return order == DenseOrder::row_major ? "row-major" : "column-major";
}

std::string to_string(const CusparseSpmvVariant& v) {
  return std::string(v.transpose ? "op(A)=T " : "") + to_string(v.algorithm) +
         (v.preprocess ? "+preprocess" : "");
}

std::string to_string(const CusparseSpmmVariant& v) {
  return std::string(v.transpose ? "op(A)=T " : "") + to_string(v.algorithm) + "/" +
         to_string(v.order) + (v.preprocess ? "+preprocess" : "");
}

std::vector<CusparseSpmvVariant> all_spmv_variants() {
  using A = CusparseSpmvAlgorithm;
  return {{A::alg_default, false},
          {A::csr_alg1, false},
          {A::csr_alg1, true},
          {A::csr_alg2, false},
          {A::csr_alg2, true}};
}

std::vector<CusparseSpmmVariant> all_spmm_variants() {
  using A = CusparseSpmmAlgorithm;
  std::vector<CusparseSpmmVariant> v;
  for (auto order : {DenseOrder::row_major, DenseOrder::column_major})
    for (auto alg : {A::alg_default, A::csr_alg1, A::csr_alg2, A::csr_alg3}) {
      v.push_back({alg, order, false});
      v.push_back({alg, order, true});
    }
  return v;
}

std::vector<CusparseSpmvVariant> all_transposed_spmv_variants() {
  auto v = all_spmv_variants();
  for (auto& x : v) x.transpose = true;
  return v;
}

std::vector<CusparseSpmmVariant> all_transposed_spmm_variants() {
  auto v = all_spmm_variants();
  for (auto& x : v) x.transpose = true;
  return v;
}

struct CusparseCsr::Impl {
  cusparseHandle_t handle = nullptr;
  cudaDataType value_type = CUDA_R_32F;
  int num_rows = 0, num_cols = 0;
  std::int64_t nnz = 0;
  int* row_offsets = nullptr;
  int* column_indices = nullptr;
  void* values = nullptr;
  std::map<std::tuple<int, int, int>, SpmvState> spmv;
  std::map<std::tuple<int, int, int, int>, SpmmState> spmm;

  cusparseSpMatDescr_t make_matrix() const {
    cusparseSpMatDescr_t m = nullptr;
    check(cusparseCreateCsr(&m, num_rows, num_cols, nnz, row_offsets, column_indices, values,
                            CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO,
                            value_type),
          "cusparseCreateCsr");
    return m;
  }
  const void* one() const {
    static const double one_d = 1;
    static const float one_f = 1;
    return value_type == CUDA_R_64F ? static_cast<const void*>(&one_d) : &one_f;
  }
  const void* zero() const {
    static const double zero_d = 0;
    static const float zero_f = 0;
    return value_type == CUDA_R_64F ? static_cast<const void*>(&zero_d) : &zero_f;
  }
};

CusparseCsr::CusparseCsr(int num_rows, int num_cols, std::int64_t nnz, const int* row_offsets,
                         const int* column_indices, const void* values, bool is_double)
    : impl_(std::make_unique<Impl>()) {
  impl_->num_rows = num_rows;
  impl_->num_cols = num_cols;
  impl_->nnz = nnz;
  impl_->row_offsets = const_cast<int*>(row_offsets);
  impl_->column_indices = const_cast<int*>(column_indices);
  impl_->values = const_cast<void*>(values);
  impl_->value_type = is_double ? CUDA_R_64F : CUDA_R_32F;
  use_default_cache_preference();
  check(cusparseCreate(&impl_->handle), "cusparseCreate");
}

CusparseCsr::~CusparseCsr() {
  impl_->spmv.clear();
  impl_->spmm.clear();
  if (impl_->handle) cusparseDestroy(impl_->handle);
}

std::size_t CusparseCsr::max_variant_workspace_bytes() const {
  std::size_t b = 0;
  for (const auto& [key, s] : impl_->spmv) b = std::max(b, s.workspace.bytes);
  for (const auto& [key, s] : impl_->spmm) b = std::max(b, s.workspace.bytes);
  return b;
}

void CusparseCsr::spmv(void* stream, const void* x, void* y, const CusparseSpmvVariant& variant) {
  auto& s = *impl_;
  check(cusparseSetStream(s.handle, static_cast<cudaStream_t>(stream)), "cusparseSetStream");
  const auto alg = to_cusparse(variant.algorithm);
  const auto op =
      variant.transpose ? CUSPARSE_OPERATION_TRANSPOSE : CUSPARSE_OPERATION_NON_TRANSPOSE;
  const std::int64_t in = variant.transpose ? s.num_rows : s.num_cols;
  const std::int64_t out = variant.transpose ? s.num_cols : s.num_rows;
  auto key = std::make_tuple(static_cast<int>(variant.algorithm), variant.preprocess ? 1 : 0,
                             variant.transpose ? 1 : 0);
  auto it = s.spmv.find(key);
  if (it == s.spmv.end()) {
    auto& st = s.spmv[key];
    try {
      st.matrix = s.make_matrix();
      check(cusparseCreateDnVec(&st.x, in, const_cast<void*>(x), s.value_type),
            "cusparseCreateDnVec(x)");
      check(cusparseCreateDnVec(&st.y, out, y, s.value_type), "cusparseCreateDnVec(y)");
      std::size_t need = 0;
      check(cusparseSpMV_bufferSize(s.handle, op, s.one(), st.matrix, st.x, s.zero(), st.y,
                                    s.value_type, alg, &need),
            "cusparseSpMV_bufferSize");
      st.workspace.reserve(need > 0 ? need : 1);
      if (variant.preprocess)
        check(cusparseSpMV_preprocess(s.handle, op, s.one(), st.matrix, st.x, s.zero(), st.y,
                                      s.value_type, alg, st.workspace.data),
              "cusparseSpMV_preprocess");
    } catch (...) {
      s.spmv.erase(key);
      throw;
    }
    it = s.spmv.find(key);
  }
  auto& st = it->second;
  check(cusparseDnVecSetValues(st.x, const_cast<void*>(x)), "cusparseDnVecSetValues(x)");
  check(cusparseDnVecSetValues(st.y, y), "cusparseDnVecSetValues(y)");
  check(cusparseSpMV(s.handle, op, s.one(), st.matrix, st.x, s.zero(), st.y, s.value_type, alg,
                     st.workspace.data),
        "cusparseSpMV");
}

void CusparseCsr::spmm(void* stream, int num_vectors, const void* x, void* y,
                       const CusparseSpmmVariant& variant) {
  auto& s = *impl_;
  check(cusparseSetStream(s.handle, static_cast<cudaStream_t>(stream)), "cusparseSetStream");
  const auto alg = to_cusparse(variant.algorithm);
  const bool row_major = variant.order == DenseOrder::row_major;
  const auto order = row_major ? CUSPARSE_ORDER_ROW : CUSPARSE_ORDER_COL;
  const auto op =
      variant.transpose ? CUSPARSE_OPERATION_TRANSPOSE : CUSPARSE_OPERATION_NON_TRANSPOSE;
  const std::int64_t in = variant.transpose ? s.num_rows : s.num_cols;
  const std::int64_t out = variant.transpose ? s.num_cols : s.num_rows;
  auto key = std::make_tuple(static_cast<int>(variant.algorithm), row_major ? 1 : 0,
                             variant.preprocess ? 1 : 0, variant.transpose ? 1 : 0);
  auto it = s.spmm.find(key);
  if (it != s.spmm.end() && it->second.vectors != num_vectors) {
    s.spmm.erase(it);  // a new shape: new descriptors, workspace and preprocessing
    it = s.spmm.end();
  }
  if (it == s.spmm.end()) {
    auto& st = s.spmm[key];
    try {
      st.matrix = s.make_matrix();
      st.vectors = num_vectors;
      const std::int64_t ldx = row_major ? num_vectors : in;
      const std::int64_t ldy = row_major ? num_vectors : out;
      check(cusparseCreateDnMat(&st.x, in, num_vectors, ldx, const_cast<void*>(x), s.value_type,
                                order),
            "cusparseCreateDnMat(X)");
      check(cusparseCreateDnMat(&st.y, out, num_vectors, ldy, y, s.value_type, order),
            "cusparseCreateDnMat(Y)");
      std::size_t need = 0;
      check(cusparseSpMM_bufferSize(s.handle, op, CUSPARSE_OPERATION_NON_TRANSPOSE, s.one(),
                                    st.matrix, st.x, s.zero(), st.y, s.value_type, alg, &need),
            "cusparseSpMM_bufferSize");
      st.workspace.reserve(need > 0 ? need : 1);
      if (variant.preprocess)
        check(cusparseSpMM_preprocess(s.handle, op, CUSPARSE_OPERATION_NON_TRANSPOSE, s.one(),
                                      st.matrix, st.x, s.zero(), st.y, s.value_type, alg,
                                      st.workspace.data),
              "cusparseSpMM_preprocess");
    } catch (...) {
      s.spmm.erase(key);
      throw;
    }
    it = s.spmm.find(key);
  }
  auto& st = it->second;
  check(cusparseDnMatSetValues(st.x, const_cast<void*>(x)), "cusparseDnMatSetValues(X)");
  check(cusparseDnMatSetValues(st.y, y), "cusparseDnMatSetValues(Y)");
  check(cusparseSpMM(s.handle, op, CUSPARSE_OPERATION_NON_TRANSPOSE, s.one(), st.matrix, st.x,
                     s.zero(), st.y, s.value_type, alg, st.workspace.data),
        "cusparseSpMM");
}

}  // namespace kcla::detail

#endif  // KCLA_HAVE_CUDA
