// Baselines' vendor calls for the TLR benchmarks: one dense GEMM and one batched GEMM
// (pointer arrays), on cuBLAS (CUDA builds, data on the device) or host BLAS. No vendor
// header leaks from here.
#pragma once

#include <kcla/config.hpp>
#include <kcla/tlr_plan.hpp>
#include <kcla/tlr_scalar.hpp>

namespace kcla::bench {

/// Where a baseline runs: on the device, on `stream` (a cudaStream_t; nullptr is the
/// legacy default stream, which Kokkos 3.4's default Cuda instance uses), or on the host.
struct Where {
  bool device = false;
  void* stream = nullptr;
};

struct GemmShape {
  ScalarKind kind = ScalarKind::f32;
  TlrMath math = TlrMath::standard;
  bool trans_a = false, trans_b = false;
  int m = 0, n = 0, k = 0;
  int lda = 0, ldb = 0, ldc = 0;
};

/// C = alpha op(A) op(B) + beta C (column-major).
void vendor_gemm(const Where& where, const GemmShape& s, double alpha, const void* a, const void* b,
                 double beta, void* c);

/// `batch` GEMMs of one shape; the pointer arrays live where the data lives (device
/// memory on CUDA, host memory on the host).
void vendor_batched_gemm(const Where& where, const GemmShape& s, double alpha, const void* const* a,
                         const void* const* b, double beta, void* const* c, int batch);

}  // namespace kcla::bench
