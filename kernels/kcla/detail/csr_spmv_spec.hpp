// Dispatch of the CSR product (kcla::CsrSpmv) to a back end: which execution spaces and
// scalar types the vendor library serves (csr_spmv_tpl_available), and the two
// implementations behind it, the cuSPARSE adapter (kernels/tpls/cusparse/) and the native
// KokkosSparse::spmv. The public header checks arguments and calls CsrSpmvSpec::apply.
#pragma once

#include <kcla/config.hpp>
#include <kcla/csr_device.hpp>

#include <KokkosSparse_CrsMatrix.hpp>
#include <KokkosSparse_spmv.hpp>
#include <Kokkos_Core.hpp>

#include <memory>
#include <type_traits>

#if KCLA_HAVE_CUDA
#include <kcla/detail/cusparse_csr.hpp>
#endif

namespace kcla::detail {

/// Whether cuSPARSE runs y = A x for Scalar on ExecutionSpace.
template <class ExecutionSpace, class Scalar>
struct csr_spmv_tpl_available : std::false_type {};
#if KCLA_HAVE_CUDA
template <>
struct csr_spmv_tpl_available<Kokkos::Cuda, float> : std::true_type {};
template <>
struct csr_spmv_tpl_available<Kokkos::Cuda, double> : std::true_type {};
#endif

/// The vendor state a CsrSpmv keeps between products (empty without a vendor back end).
struct CsrSpmvVendorState {
#if KCLA_HAVE_CUDA
  CusparseSpmvVariant variant{};
  std::shared_ptr<CusparseCsr> cusparse;  // made by the first product
#endif
};

template <class ExecutionSpace, class Scalar, class MemorySpace,
          bool tpl = csr_spmv_tpl_available<ExecutionSpace, Scalar>::value>
struct CsrSpmvSpec {
  /// Native: KokkosSparse::spmv (which, in 3.4, runs on the default instance).
  template <class XView, class YView>
  static void apply(const ExecutionSpace& exec, const CsrDeviceMatrix<Scalar, MemorySpace>& a,
                    const XView& x, const YView& y, CsrSpmvVendorState&) {
    using device_type = Kokkos::Device<ExecutionSpace, MemorySpace>;
    using crs_type = KokkosSparse::CrsMatrix<Scalar, int, device_type, void, int>;
    crs_type crs("kcla::csr_spmv", a.num_rows, a.num_cols, static_cast<int>(a.nnz()), a.values,
                 a.row_offsets, a.column_indices);
    exec.fence();  // order the product after `exec`'s work
    KokkosSparse::spmv("N", Scalar(1), crs, x, Scalar(0), y);
  }
};

#if KCLA_HAVE_CUDA
template <class Scalar, class MemorySpace>
struct CsrSpmvSpec<Kokkos::Cuda, Scalar, MemorySpace, true> {
  /// cuSPARSE on exec's stream; handle, descriptors and workspace made once.
  template <class XView, class YView>
  static void apply(const Kokkos::Cuda& exec, const CsrDeviceMatrix<Scalar, MemorySpace>& a,
                    const XView& x, const YView& y, CsrSpmvVendorState& state) {
    if (!state.cusparse)
      state.cusparse = std::make_shared<CusparseCsr>(
          a.num_rows, a.num_cols, a.nnz(), a.row_offsets.data(), a.column_indices.data(),
          a.values.data(), std::is_same<Scalar, double>::value);
    state.cusparse->spmv(exec.cuda_stream(), x.data(), y.data(), state.variant);
  }
};
#endif

}  // namespace kcla::detail
