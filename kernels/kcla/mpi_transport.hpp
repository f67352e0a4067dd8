// How distributed products move device data through MPI: straight from device memory when
// the MPI library says it takes device pointers (Open MPI's MPIX_Query_cuda_support) and
// KCLA_MPI_DEVICE_BUFFERS is not 0, else staged through host memory.
#pragma once

#include <kcla/config.hpp>

#if KCLA_HAVE_MPI
#include <mpi.h>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif

#include <cstdlib>
#include <string>

namespace kcla {

enum class MpiTransport { host_staged, device_buffers };

inline const char* to_string(MpiTransport t) {
  return t == MpiTransport::device_buffers ? "device buffers (CUDA-aware MPI)" : "host-staged";
}

/// True when the MPI library says it takes device pointers (Open MPI's extension).
inline bool mpi_is_cuda_aware() {
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  return MPIX_Query_cuda_support() == 1;
#else
  return false;
#endif
}

/// Whether device buffers may go to MPI as they are (CUDA-aware MPI, not turned off).
inline bool mpi_takes_device_buffers() {
  const char* env = std::getenv("KCLA_MPI_DEVICE_BUFFERS");
  return !(env && std::string(env) == "0") && mpi_is_cuda_aware();
}

}  // namespace kcla
#endif
