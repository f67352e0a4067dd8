// y = A x for a CSR matrix in Views: the baseline product. On CUDA it calls cuSPARSE,
// on host spaces KokkosSparse::spmv.
#pragma once

#include <kcla/config.hpp>
#include <kcla/csr_device.hpp>
#include <kcla/detail/csr_spmv_spec.hpp>
#include <kcla/error.hpp>

#include <Kokkos_Core.hpp>

#include <memory>
#include <string>

namespace kcla {

/// Repeated products y = A x with one CSR matrix. On CUDA the cuSPARSE handle, descriptors
/// and workspace are made by the first product (CSR_ALG2 with one preprocessing step, or
/// what the constructor names) and reused, and every product is asynchronous on the given
/// execution space instance; copies share that state. Holds a reference to A's Views.
template <class Scalar, class MemorySpace>
class CsrSpmv {
 public:
  explicit CsrSpmv(const CsrDeviceMatrix<Scalar, MemorySpace>& a)
      : a_(a), state_(std::make_shared<detail::CsrSpmvVendorState>()) {}
#if KCLA_HAVE_CUDA
  CsrSpmv(const CsrDeviceMatrix<Scalar, MemorySpace>& a, detail::CusparseSpmvVariant variant)
      : CsrSpmv(a) {
    state_->variant = variant;
  }
#endif

  const CsrDeviceMatrix<Scalar, MemorySpace>& matrix() const {
    return a_;
  }

  /// y = A x. `x` and `y` are rank-1 Views in A's memory space; y is overwritten.
  template <class ExecutionSpace, class XView, class YView>
  void operator()(const ExecutionSpace& exec, const XView& x, const YView& y) const {
    static_assert(Kokkos::is_execution_space<ExecutionSpace>::value,
                  "first argument: execution space");
    static_assert(XView::rank == 1 && YView::rank == 1, "x and y must be rank-1 Views");
    static_assert(Kokkos::SpaceAccessibility<ExecutionSpace, MemorySpace>::accessible,
                  "the matrix must be accessible from the execution space");
    if (static_cast<int>(x.extent(0)) != a_.num_cols ||
        static_cast<int>(y.extent(0)) != a_.num_rows)
      throw InvalidArgument("csr_spmv: x has " + std::to_string(x.extent(0)) + " entries and y " +
                            std::to_string(y.extent(0)) + "; the matrix is " +
                            std::to_string(a_.num_rows) + " x " + std::to_string(a_.num_cols));
    detail::CsrSpmvSpec<ExecutionSpace, Scalar, MemorySpace>::apply(exec, a_, x, y, *state_);
  }

 private:
  CsrDeviceMatrix<Scalar, MemorySpace> a_;
  std::shared_ptr<detail::CsrSpmvVendorState> state_;  // shared by copies
};

/// y = A x once. `x` and `y` are rank-1 Views in A's memory space; y is overwritten.
/// Convenient for one product; for repeated products keep a CsrSpmv, which makes the vendor
/// state once (this function makes and releases it on every call, and the release waits
/// for the device).
template <class ExecutionSpace, class Scalar, class MemorySpace, class XView, class YView>
void csr_spmv(const ExecutionSpace& exec, const CsrDeviceMatrix<Scalar, MemorySpace>& a,
              const XView& x, const YView& y) {
#if KCLA_HAVE_CUDA
  // One product: no preprocessing (it costs more than it saves once).
  CsrSpmv<Scalar, MemorySpace> product(a, {detail::CusparseSpmvAlgorithm::alg_default, false});
#else
  CsrSpmv<Scalar, MemorySpace> product(a);
#endif
  product(exec, x, y);
}

}  // namespace kcla
