// How distributed products move device data between ranks, chosen at run time:
//   nccl            NCCL collectives on the product's CUDA stream (libnccl loaded when
//                   first needed; every rank on a GPU of its own),
//   device_buffers  device pointers handed to MPI (a CUDA-aware MPI library, as Open MPI's
//                   MPIX_Query_cuda_support reports),
//   host_staged     copies through host memory and plain MPI (always works).
// A request (MpiTransportRequest, or KCLA_MPI_TRANSPORT=auto|host|mpi-device|nccl in the
// environment) picks one; `automatic` takes the first of the three that every rank can use.
#pragma once

#include <kcla/config.hpp>

#if KCLA_HAVE_MPI
#include <kcla/error.hpp>

#include <mpi.h>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif

#include <cstdlib>
#include <string>

namespace kcla {

enum class MpiTransport { host_staged, device_buffers, nccl };

inline const char* to_string(MpiTransport t) {
  switch (t) {
    case MpiTransport::device_buffers:
      return "device buffers (CUDA-aware MPI)";
    case MpiTransport::nccl:
      return "NCCL";
    default:
      return "host-staged";
  }
}

/// What a caller asks for; `automatic` prefers NCCL, then CUDA-aware MPI, then host staging.
/// A named transport that some rank cannot use is an error on every rank, naming the reason.
enum class MpiTransportRequest { automatic, host_staged, device_buffers, nccl };

inline const char* to_string(MpiTransportRequest r) {
  switch (r) {
    case MpiTransportRequest::host_staged:
      return "host";
    case MpiTransportRequest::device_buffers:
      return "mpi-device";
    case MpiTransportRequest::nccl:
      return "nccl";
    default:
      return "auto";
  }
}

/// "auto", "host", "mpi-device" or "nccl" (the names of KCLA_MPI_TRANSPORT and the CLI).
inline MpiTransportRequest parse_mpi_transport(const std::string& name) {
  if (name == "auto") return MpiTransportRequest::automatic;
  if (name == "host") return MpiTransportRequest::host_staged;
  if (name == "mpi-device") return MpiTransportRequest::device_buffers;
  if (name == "nccl") return MpiTransportRequest::nccl;
  throw InvalidArgument("MPI transport '" + name + "': expected auto, host, mpi-device or nccl");
}

/// The environment's request: KCLA_MPI_TRANSPORT, else `automatic` (host staging when
/// KCLA_MPI_DEVICE_BUFFERS=0, the older switch).
inline MpiTransportRequest requested_mpi_transport() {
  if (const char* env = std::getenv("KCLA_MPI_TRANSPORT"); env && *env)
    return parse_mpi_transport(env);
  const char* off = std::getenv("KCLA_MPI_DEVICE_BUFFERS");
  return off && std::string(off) == "0" ? MpiTransportRequest::host_staged
                                        : MpiTransportRequest::automatic;
}

/// True when the MPI library says it takes device pointers (Open MPI's extension).
inline bool mpi_is_cuda_aware() {
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  return MPIX_Query_cuda_support() == 1;
#else
  return false;
#endif
}

/// Whether device buffers may go to MPI as they are: a CUDA-aware library, and the
/// environment's request allows it (automatic or mpi-device).
inline bool mpi_takes_device_buffers() {
  const auto r = requested_mpi_transport();
  return (r == MpiTransportRequest::automatic || r == MpiTransportRequest::device_buffers) &&
         mpi_is_cuda_aware();
}

}  // namespace kcla
#endif
