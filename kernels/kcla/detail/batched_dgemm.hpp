// Many equally shaped double-precision GEMMs in one call: the building block of randomized
// tile compression. Host BLAS or cuBLAS behind one shape description; no vendor header
// leaks from here.
#pragma once

#include <kcla/config.hpp>

namespace kcla::detail {

/// C_i = alpha op(A_i) op(B_i) + beta C_i for every i in the batch; column-major, op(X) =
/// X^T when trans_x; op(A_i) is m x k, op(B_i) k x n.
struct DgemmShape {
  bool trans_a = false, trans_b = false;
  int m = 0, n = 0, k = 0;
  int lda = 1, ldb = 1, ldc = 1;
  double alpha = 1, beta = 0;
};

/// Host BLAS; pointer arrays and data in host memory. The products run one per host thread
/// (BLAS single-threaded meanwhile); a batch of one gets BLAS's own threads.
void batched_dgemm_host(const DgemmShape& shape, const double* const* a, const double* const* b,
                        double* const* c, int count);

#if KCLA_HAVE_CUDA
/// Free memory on the current CUDA device, in bytes (cudaMemGetInfo).
long long cuda_free_bytes();

/// cuBLAS (cublasDgemmBatched) on `stream` (a cudaStream_t); pointer arrays and data in
/// device memory. One handle for the object's lifetime.
class CublasBatchedDgemm {
 public:
  CublasBatchedDgemm();
  ~CublasBatchedDgemm();
  CublasBatchedDgemm(const CublasBatchedDgemm&) = delete;
  CublasBatchedDgemm& operator=(const CublasBatchedDgemm&) = delete;

  void run(void* stream, const DgemmShape& shape, const double* const* a, const double* const* b,
           double* const* c, int count);

 private:
  void* handle_ = nullptr;
};
#endif

}  // namespace kcla::detail
