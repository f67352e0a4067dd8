// NCCL for the reductions of distributed products (kernels/tpls/nccl/): a communicator
// over the ranks of an MPI communicator, each rank on its current CUDA device. libnccl is
// loaded at run time (KCLA_NCCL_LIBRARY names the file, else the loader finds
// libnccl.so.2), so a build with NCCL's header runs where NCCL is absent: creation then
// reports why and the product falls back to MPI.
#pragma once

#include <kcla/config.hpp>

#if KCLA_HAVE_MPI && KCLA_HAVE_CUDA
#include <mpi.h>

#include <cstddef>
#include <memory>
#include <string>

namespace kcla::detail {

enum class NcclValue { f32, f64, u8 };
enum class NcclSum { sum, max, min };

class NcclCommunicator {
 public:
  /// Collective over `comm`: a communicator on every rank, or null on every rank with
  /// `why` saying what stopped it (the library missing on some rank, two ranks on one GPU,
  /// NCCL's own error, a build without NCCL's header).
  static std::unique_ptr<NcclCommunicator> create(MPI_Comm comm, std::string& why);
  ~NcclCommunicator();
  NcclCommunicator(const NcclCommunicator&) = delete;
  NcclCommunicator& operator=(const NcclCommunicator&) = delete;

  /// In-place all-reduce of `count` values at device address `data`, queued on
  /// `cuda_stream` (a cudaStream_t). Throws on an NCCL error.
  void allreduce(void* data, std::size_t count, NcclValue type, NcclSum op,
                 void* cuda_stream) const;
  /// "NCCL 2.x.y" of the loaded library.
  std::string version() const;

  struct State;

 private:
  explicit NcclCommunicator(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace kcla::detail
#endif
