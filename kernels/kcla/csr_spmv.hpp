// y = A x for a CSR matrix in Views: the baseline product. On CUDA it calls cuSPARSE,
// on host spaces KokkosSparse::spmv.
#pragma once

#include <kcla/config.hpp>
#include <kcla/csr_device.hpp>
#include <kcla/error.hpp>

#include <KokkosSparse_CrsMatrix.hpp>
#include <KokkosSparse_spmv.hpp>
#include <Kokkos_Core.hpp>

#include <type_traits>

#if KCLA_HAVE_CUDA
#include <kcla/detail/cusparse_csr.hpp>
#endif

namespace kcla {

/// y = A x. `x` and `y` are rank-1 Views in A's memory space; y is overwritten.
template <class ExecutionSpace, class Scalar, class MemorySpace, class XView, class YView>
void csr_spmv(const ExecutionSpace& exec, const CsrDeviceMatrix<Scalar, MemorySpace>& a,
              const XView& x, const YView& y) {
  static_assert(Kokkos::is_execution_space<ExecutionSpace>::value,
                "first argument: execution space");
  static_assert(XView::rank == 1 && YView::rank == 1, "x and y must be rank-1 Views");
  static_assert(Kokkos::SpaceAccessibility<ExecutionSpace, MemorySpace>::accessible,
                "the matrix must be accessible from the execution space");
  if (static_cast<int>(x.extent(0)) != a.num_cols || static_cast<int>(y.extent(0)) != a.num_rows)
    throw InvalidArgument("csr_spmv: x must have num_cols entries and y num_rows entries");
#if KCLA_HAVE_CUDA
  if constexpr (std::is_same<ExecutionSpace, Kokkos::Cuda>::value &&
                (std::is_same<Scalar, float>::value || std::is_same<Scalar, double>::value)) {
    detail::CusparseCsr vendor(a.num_rows, a.num_cols, a.nnz(), a.row_offsets.data(),
                               a.column_indices.data(), a.values.data(),
                               std::is_same<Scalar, double>::value);
    vendor.spmv(exec.cuda_stream(), x.data(), y.data(),
                {detail::CusparseSpmvAlgorithm::alg_default, false});
    return;
  }
#endif
  using device_type = Kokkos::Device<ExecutionSpace, MemorySpace>;
  using crs_type = KokkosSparse::CrsMatrix<Scalar, int, device_type, void, int>;
  crs_type crs("kcla::csr_spmv", a.num_rows, a.num_cols, static_cast<int>(a.nnz()), a.values,
               a.row_offsets, a.column_indices);
  exec.fence();  // KokkosSparse 3.4 runs on the default instance: order it after `exec`
  KokkosSparse::spmv("N", Scalar(1), crs, x, Scalar(0), y);
}

}  // namespace kcla
