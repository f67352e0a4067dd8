// Where data waits on the host for a device memory space: pinned host memory for CUDA
// (copies run at the link's speed and asynchronously), plain host memory otherwise.
#pragma once

#include <Kokkos_Core.hpp>
#include <kcla/config.hpp>

namespace kcla::detail {

template <class MemorySpace>
struct StagingSpace {
  using type = Kokkos::HostSpace;
};
#if KCLA_HAVE_CUDA
template <>
struct StagingSpace<Kokkos::CudaSpace> {
  using type = Kokkos::CudaHostPinnedSpace;
};
#endif

}  // namespace kcla::detail
