// A block grammar matrix spread over the ranks of an MPI communicator: each rank holds
// the blocks rank_blocks() gives it (on its own device, or sharing one), computes its
// partial y over them, and the ranks combine the partials with one allreduce of
// num_rows x B values in the semiring's sum (MPI_SUM, MPI_LOR, MPI_MIN). Every rank
// passes the whole x and receives the whole y.
//
//   kcla::DistributedGrammarMatrix<float> A(MPI_COMM_WORLD, "panel.h5");
//   kcla::multiply(exec, A, x, y);   // collective: every rank calls it
//
// Partials travel through host memory unless the MPI library reports CUDA-aware
// support (MPIX_Query_cuda_support) and KCLA_MPI_DEVICE_BUFFERS is not 0; which one ran
// is reported by last_transport().
#pragma once

#include <kcla/config.hpp>

#if KCLA_HAVE_MPI
#include <kcla/block_grammar_multiply.hpp>
#include <kcla/detail/mpi_reduction.hpp>
#include <kcla/hdf5_block_grammar_mpi.hpp>
#include <kcla/mpi_transport.hpp>

#include <mpi.h>

#include <exception>
#include <string>

namespace kcla {

template <class Scalar, class MemorySpace = Kokkos::DefaultExecutionSpace::memory_space>
class DistributedGrammarMatrix {
 public:
  /// Collective: each rank reads its own blocks of a block grammar file.
  /// `block_options` applies to each rank's blocks (a device budget is per rank). Every
  /// rank throws when any rank cannot hold its blocks.
  DistributedGrammarMatrix(MPI_Comm comm, const std::string& path,
                           const GrammarMatrixOptions& options = {},
                           const BlockMatrixOptions& block_options = {})
      : DistributedGrammarMatrix(comm, read_block_grammar_hdf5(comm, path), options,
                                 block_options) {}
  /// From this rank's share (the same layout on every rank).
  DistributedGrammarMatrix(MPI_Comm comm, const BlockGrammar& share,
                           const GrammarMatrixOptions& options = {},
                           const BlockMatrixOptions& block_options = {})
      : comm_(comm), local_(local_share(comm, share, options, block_options)) {
    MPI_Comm_rank(comm, &rank_);
    MPI_Comm_size(comm, &ranks_);
  }

  MPI_Comm comm() const { return comm_; }
  int rank() const { return rank_; }
  int ranks() const { return ranks_; }
  std::int64_t num_rows() const { return local_.num_rows(); }
  std::int64_t num_cols() const { return local_.num_cols(); }
  /// This rank's blocks.
  const BlockGrammarMatrix<Scalar, MemorySpace>& local() const { return local_; }
  MpiTransport last_transport() const { return transport_; }
  void set_last_transport(MpiTransport t) const { transport_ = t; }

 private:
  // A rank that cannot hold its blocks (a device budget they do not fit) makes every rank
  // throw: the others would otherwise wait for it in the first product's allreduce.
  static BlockGrammarMatrix<Scalar, MemorySpace> local_share(
      MPI_Comm comm, const BlockGrammar& share, const GrammarMatrixOptions& options,
      const BlockMatrixOptions& block_options) {
    BlockGrammarMatrix<Scalar, MemorySpace> local;
    std::exception_ptr error;
    try {
      local = BlockGrammarMatrix<Scalar, MemorySpace>(share, options, block_options);
    } catch (...) {
      error = std::current_exception();
    }
    const int failed = error ? 1 : 0;
    int any = 0;
    MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, comm);
    if (error) std::rethrow_exception(error);
    if (any)
      throw InvalidArgument(
          "DistributedGrammarMatrix: another rank could not hold its blocks (its error says why)");
    return local;
  }

  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0, ranks_ = 1;
  BlockGrammarMatrix<Scalar, MemorySpace> local_;
  mutable MpiTransport transport_ = MpiTransport::host_staged;
};

/// Collective over A.comm(): y = A x with every rank's blocks. Synchronous (the allreduce
/// needs the partial): returns with y complete on every rank.
template <class Semiring = void, class ExecutionSpace, class Scalar, class MemorySpace, class XView,
          class YView>
void multiply(const ExecutionSpace& exec, const DistributedGrammarMatrix<Scalar, MemorySpace>& A,
              const XView& x, const YView& y, SweepLaunch launch = SweepLaunch::automatic) {
  using value_type = typename YView::non_const_value_type;
  using semiring =
      std::conditional_t<std::is_void<Semiring>::value, PlusTimes<value_type>, Semiring>;
  multiply<semiring>(exec, A.local(), x, y, launch);
  exec.fence();
  const int count = static_cast<int>(y.span());
  if (static_cast<std::size_t>(count) != y.span())
    throw InvalidArgument("kcla::multiply (distributed): y has 2^31 or more values");
  const MPI_Datatype type = detail::mpi_datatype<value_type>();
  const MPI_Op op = detail::MpiReduction<semiring>::op();
  constexpr bool host_memory =
      Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename YView::memory_space>::accessible;
  const bool device_ok = mpi_takes_device_buffers();
  if (host_memory || device_ok) {
    MPI_Allreduce(MPI_IN_PLACE, y.data(), count, type, op, A.comm());
    A.set_last_transport(host_memory ? MpiTransport::host_staged : MpiTransport::device_buffers);
  } else {
    auto staged = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y);
    MPI_Allreduce(MPI_IN_PLACE, staged.data(), count, type, op, A.comm());
    Kokkos::deep_copy(y, staged);
    A.set_last_transport(MpiTransport::host_staged);
  }
}

}  // namespace kcla
#endif
