// Batched double GEMM on host BLAS.
#include <kcla/detail/batched_dgemm.hpp>
#include <kcla/detail/single_threaded_blas.hpp>

#include <cblas.h>
#include <Kokkos_Core.hpp>

namespace kcla::detail {

void batched_dgemm_host(const DgemmShape& s, const double* const* a, const double* const* b,
                        double* const* c, int count) {
  if (count <= 0 || s.m <= 0 || s.n <= 0) return;
  auto run = [&](int i) {
    cblas_dgemm(CblasColMajor, s.trans_a ? CblasTrans : CblasNoTrans,
                s.trans_b ? CblasTrans : CblasNoTrans, s.m, s.n, s.k, s.alpha, a[i], s.lda, b[i],
                s.ldb, s.beta, c[i], s.ldc);
  };
  if (count == 1) {
    run(0);
    return;
  }
  const SingleThreadedBlas one;
  Kokkos::parallel_for("kcla::batched_dgemm",
                       Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace>(0, count), run);
  Kokkos::DefaultHostExecutionSpace().fence();
}

}  // namespace kcla::detail
