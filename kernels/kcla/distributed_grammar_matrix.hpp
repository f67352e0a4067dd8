// A block grammar matrix spread over the ranks of an MPI communicator: each rank holds
// the blocks rank_blocks() gives it (on its own device, or sharing one), computes its
// partial y over them, and the ranks combine the partials with one allreduce of
// num_rows x B values in the semiring's sum (MPI_SUM, MPI_LOR, MPI_MIN). Every rank
// passes the whole x and receives the whole y.
//
//   kcla::DistributedGrammarMatrix<float> A(MPI_COMM_WORLD, "panel.h5");
//   kcla::multiply(exec, A, x, y);   // collective: every rank calls it
//
// Device partials travel by NCCL, by a CUDA-aware MPI or through host memory, chosen at
// the first product (mpi_transport.hpp; request_transport() or KCLA_MPI_TRANSPORT);
// last_transport() says which ran and transport_note() why a preferred one was not.
#pragma once

#include <kcla/config.hpp>

#if KCLA_HAVE_MPI
#include <kcla/block_grammar_multiply.hpp>
#include <kcla/detail/mpi_reduction.hpp>
#include <kcla/detail/mpi_transfer.hpp>
#include <kcla/detail/nccl_communicator.hpp>
#include <kcla/hdf5_block_grammar_mpi.hpp>
#include <kcla/mpi_transport.hpp>

#include <mpi.h>

#include <exception>
#include <memory>
#include <string>
#include <type_traits>

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
  /// The transport of the last product (host_staged before the first).
  MpiTransport last_transport() const { return transport_; }
  /// Why the automatic choice passed over a faster transport ("" when it did not).
  const std::string& transport_note() const { return note_; }
  /// Asks for a transport from the next product on (default: requested_mpi_transport()).
  /// Every rank must ask for the same one.
  void request_transport(MpiTransportRequest r) {
    request_ = r;
    chosen_ = false;
  }

  /// Collective (the first time): the transport device partials take, chosen once.
  MpiTransport device_transport() const {
    if (chosen_) return transport_;
    note_.clear();
    const bool any = request_ == MpiTransportRequest::automatic;
    transport_ = MpiTransport::host_staged;
#if KCLA_HAVE_CUDA
    if (any || request_ == MpiTransportRequest::nccl) {
      std::string why;
      nccl_ = detail::NcclCommunicator::create(comm_, why);
      if (nccl_) {
        transport_ = MpiTransport::nccl;
      } else if (!any) {
        throw InvalidArgument("DistributedGrammarMatrix: NCCL was asked for but " + why);
      } else {
        note_ = "NCCL not used: " + why;
      }
    }
#endif
    if (transport_ == MpiTransport::host_staged &&
        (any || request_ == MpiTransportRequest::device_buffers)) {
      const int mine = mpi_is_cuda_aware() ? 1 : 0;
      int all = 0;
      detail::check_mpi(MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, comm_), "MPI_Allreduce");
      if (all) {
        transport_ = MpiTransport::device_buffers;
      } else if (!any) {
        throw InvalidArgument(
            "DistributedGrammarMatrix: device buffers for MPI were asked for but the MPI "
            "library is not CUDA-aware on every rank");
      } else {
        note_ += std::string(note_.empty() ? "" : "; ") + "MPI is not CUDA-aware";
      }
    }
    chosen_ = true;
    return transport_;
  }
#if KCLA_HAVE_CUDA
  const detail::NcclCommunicator* nccl() const {
    return nccl_.get();
  }
#endif
  void set_last_transport(MpiTransport t) const {
    transport_ = t;
  }

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
  MpiTransportRequest request_ = requested_mpi_transport();
  mutable bool chosen_ = false;
  mutable MpiTransport transport_ = MpiTransport::host_staged;
  mutable std::string note_;
#if KCLA_HAVE_CUDA
  mutable std::shared_ptr<detail::NcclCommunicator> nccl_;
#endif
};

#if KCLA_HAVE_CUDA
namespace detail {

template <class T>
NcclValue nccl_value() {
  return std::is_same<T, double>::value  ? NcclValue::f64
         : std::is_same<T, float>::value ? NcclValue::f32
                                         : NcclValue::u8;
}
template <class Semiring>
NcclSum nccl_sum() {
  const MPI_Op op = MpiReduction<Semiring>::op();
  return op == MPI_SUM ? NcclSum::sum : op == MPI_MIN ? NcclSum::min : NcclSum::max;
}

}  // namespace detail
#endif

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
  const MpiTransport transport = host_memory ? MpiTransport::host_staged : A.device_transport();
#if KCLA_HAVE_CUDA
  if constexpr (std::is_same<ExecutionSpace, Kokkos::Cuda>::value) {
    if (transport == MpiTransport::nccl) {
      static_assert(sizeof(value_type) == 1 || std::is_floating_point<value_type>::value,
                    "NCCL reductions take float, double or one-byte booleans");
      A.nccl()->allreduce(y.data(), y.span(), detail::nccl_value<value_type>(),
                          detail::nccl_sum<semiring>(), exec.cuda_stream());
      exec.fence();
      A.set_last_transport(MpiTransport::nccl);
      return;
    }
  }
#endif
  if (host_memory || transport == MpiTransport::device_buffers) {
    detail::check_mpi(MPI_Allreduce(MPI_IN_PLACE, y.data(), count, type, op, A.comm()),
                      "MPI_Allreduce");
    A.set_last_transport(host_memory ? MpiTransport::host_staged : MpiTransport::device_buffers);
  } else {
    auto staged = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y);
    detail::check_mpi(MPI_Allreduce(MPI_IN_PLACE, staged.data(), count, type, op, A.comm()),
                      "MPI_Allreduce");
    Kokkos::deep_copy(y, staged);
    A.set_last_transport(MpiTransport::host_staged);
  }
}

}  // namespace kcla
#endif
