// Host BLAS versions of the benchmark baselines (fp64 / fp32; 16-bit types are float on
// host Kokkos builds).
#include "tlr_bench_vendor.hpp"

#include <kcla/error.hpp>

#include <cblas.h>

namespace kcla::bench {

void host_gemm(const GemmShape& s, double alpha, const void* a, const void* b, double beta,
               void* c) {
  const auto ta = s.trans_a ? CblasTrans : CblasNoTrans;
  const auto tb = s.trans_b ? CblasTrans : CblasNoTrans;
  if (s.kind == ScalarKind::f64)
    cblas_dgemm(CblasColMajor, ta, tb, s.m, s.n, s.k, alpha, static_cast<const double*>(a), s.lda,
                static_cast<const double*>(b), s.ldb, beta, static_cast<double*>(c), s.ldc);
  else if (s.kind == ScalarKind::f32)
    cblas_sgemm(CblasColMajor, ta, tb, s.m, s.n, s.k, static_cast<float>(alpha),
                static_cast<const float*>(a), s.lda, static_cast<const float*>(b), s.ldb,
                static_cast<float>(beta), static_cast<float*>(c), s.ldc);
  else
    throw InvalidArgument("benchmark baselines: no host BLAS for 16-bit types");
}

}  // namespace kcla::bench
