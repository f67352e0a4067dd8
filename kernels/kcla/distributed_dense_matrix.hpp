// A dense matrix distributed 2D block-cyclically over a ProcessGrid (ScaLAPACK's layout
// with square blocks and no offset): block (i, j) lives on grid rank (i mod P, j mod Q),
// which stores its blocks as one column-major local matrix in global order. The C (and
// dense A or B) of a distributed TLR product.
#pragma once

#include <kcla/config.hpp>

#if KCLA_HAVE_MPI
#include <kcla/block_cyclic.hpp>
#include <kcla/detail/mpi_transfer.hpp>
#include <kcla/error.hpp>
#include <kcla/process_grid.hpp>
#include <kcla/tlr_random.hpp>
#include <kcla/tlr_scalar.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

namespace kcla {

namespace detail {

/// Zeros n values (a device functor cannot be a private member on CUDA).
template <class Scalar>
struct ZeroFill {
  Scalar* p;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t e) const {
    p[e] = TlrScalarTraits<Scalar>::narrow(0.0);
  }
};

}  // namespace detail

template <class Scalar, class MemorySpace = Kokkos::DefaultExecutionSpace::memory_space>
class DistributedDenseMatrix {
 public:
  using value_type = Scalar;
  using memory_space = MemorySpace;
  using local_view = Kokkos::View<Scalar**, Kokkos::LayoutLeft, MemorySpace>;

  DistributedDenseMatrix() = default;
  /// A zero rows x cols matrix in blocks of `block` (collective only in the sense that every
  /// rank must construct it with the same arguments).
  DistributedDenseMatrix(const ProcessGrid& grid, std::int64_t rows, std::int64_t cols, int block)
      : grid_(grid),
        row_map_(rows, block, grid.rows()),
        col_map_(cols, block, grid.cols()),
        local_(Kokkos::view_alloc(Kokkos::WithoutInitializing, "kcla::distributed_dense::local"),
               row_map_.local_extent(grid.row()), col_map_.local_extent(grid.col())) {
    // Zeroed in chunks: one kernel of 2^32+ iterations hangs Kokkos 3.4 on CUDA.
    const std::int64_t n = static_cast<std::int64_t>(local_.span());
    if (n > 0)
      detail::parallel_for_large("kcla::distributed_dense::zero",
                                 typename MemorySpace::execution_space(), n,
                                 detail::ZeroFill<Scalar>{local_.data()});
    typename MemorySpace::execution_space().fence();
  }

  const ProcessGrid& grid() const { return grid_; }
  std::int64_t num_rows() const { return row_map_.extent(); }
  std::int64_t num_cols() const { return col_map_.extent(); }
  int block_size() const { return row_map_.block(); }
  const BlockCyclic& row_map() const { return row_map_; }
  const BlockCyclic& col_map() const { return col_map_; }
  /// This rank's blocks: local_rows x local_cols, column-major.
  const local_view& local() const { return local_; }

  /// Global row of local row `r` of grid row `p` (and the same for columns).
  static std::int64_t global_index(const BlockCyclic& map, int proc, std::int64_t local) {
    const int b = map.block();
    return map.block_start(map.global_block(proc, static_cast<int>(local / b))) + local % b;
  }

 private:
  ProcessGrid grid_;
  BlockCyclic row_map_, col_map_;
  local_view local_;
};

/// Each rank keeps its blocks of a matrix every rank holds (host, column-major, leading
/// dimension lda; converted to Scalar).
template <class Scalar, class MemorySpace = Kokkos::DefaultExecutionSpace::memory_space,
          class Source>
DistributedDenseMatrix<Scalar, MemorySpace> distribute(const ProcessGrid& grid, const Source* a,
                                                       std::int64_t rows, std::int64_t cols,
                                                       std::int64_t lda, int block) {
  if (lda < std::max<std::int64_t>(1, rows))
    throw InvalidArgument("distribute: leading dimension smaller than the row count");
  DistributedDenseMatrix<Scalar, MemorySpace> d(grid, rows, cols, block);
  auto h = Kokkos::create_mirror_view(d.local());
  using M = DistributedDenseMatrix<Scalar, MemorySpace>;
  for (std::int64_t c = 0; c < static_cast<std::int64_t>(h.extent(1)); ++c) {
    const std::int64_t gc = M::global_index(d.col_map(), grid.col(), c);
    for (std::int64_t r = 0; r < static_cast<std::int64_t>(h.extent(0)); ++r)
      h(r, c) = TlrScalarTraits<Scalar>::narrow(
          static_cast<double>(a[M::global_index(d.row_map(), grid.row(), r) + gc * lda]));
  }
  Kokkos::deep_copy(d.local(), h);
  return d;
}

namespace detail {

/// Entry (r, c) of a rank's blocks gets the value RandomDense gives global entry (R, C) of
/// the whole matrix: the same matrix on every grid shape, and in one process.
template <class View>
struct RandomBlockCyclic {
  View v;
  std::int64_t rows, global_rows;
  int block, P, Q, p, q;
  std::uint64_t seed;
  double amplitude;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t e) const {
    const std::int64_t c = e / rows, r = e - c * rows;
    const std::int64_t gr = (p + (r / block) * P) * block + r % block;
    const std::int64_t gc = (q + (c / block) * Q) * block + c % block;
    using scalar = typename View::non_const_value_type;
    v(r, c) = TlrScalarTraits<scalar>::narrow(
        amplitude * uniform_pm1(seed, static_cast<std::uint64_t>(gr + gc * global_rows)));
  }
};

}  // namespace detail

/// Uniform random entries in [-amplitude, amplitude): the values fill_random(exec, V, seed)
/// gives a View of the whole matrix, whatever the grid.
template <class ExecutionSpace, class Scalar, class MemorySpace>
void fill_random(const ExecutionSpace& exec, const DistributedDenseMatrix<Scalar, MemorySpace>& d,
                 std::uint64_t seed, double amplitude = 1.0) {
  const auto& v = d.local();
  const std::int64_t rows = static_cast<std::int64_t>(v.extent(0));
  const std::int64_t count = rows * static_cast<std::int64_t>(v.extent(1));
  if (count == 0) return;
  const ProcessGrid& g = d.grid();
  detail::parallel_for_large("kcla::distributed_dense::random", exec, count,
                             detail::RandomBlockCyclic<std::decay_t<decltype(v)>>{
                                 v, rows, d.num_rows(), d.block_size(), g.rows(), g.cols(), g.row(),
                                 g.col(), detail::mix64(seed), amplitude});
}

/// Collective: the whole matrix on every rank, column-major in double (for checks and
/// small results; every rank receives rows x cols values).
template <class Scalar, class MemorySpace>
std::vector<double> allgather(const DistributedDenseMatrix<Scalar, MemorySpace>& d) {
  const ProcessGrid& grid = d.grid();
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), d.local());
  std::vector<std::vector<double>> send(static_cast<std::size_t>(grid.size())),
      recv(static_cast<std::size_t>(grid.size()));
  std::vector<double> mine(h.extent(0) * h.extent(1));
  for (std::size_t c = 0; c < h.extent(1); ++c)
    for (std::size_t r = 0; r < h.extent(0); ++r)
      mine[r + c * h.extent(0)] = static_cast<double>(TlrScalarTraits<Scalar>::widen(h(r, c)));
  for (int r = 0; r < grid.size(); ++r) {
    send[r] = mine;
    const int p = r / grid.cols(), q = r % grid.cols();
    recv[r].resize(
        static_cast<std::size_t>(d.row_map().local_extent(p) * d.col_map().local_extent(q)));
  }
  detail::exchange(grid.comm(), send, recv);
  using M = DistributedDenseMatrix<Scalar, MemorySpace>;
  std::vector<double> whole(static_cast<std::size_t>(d.num_rows() * d.num_cols()));
  for (int r = 0; r < grid.size(); ++r) {
    const int p = r / grid.cols(), q = r % grid.cols();
    const std::int64_t lr = d.row_map().local_extent(p), lc = d.col_map().local_extent(q);
    for (std::int64_t c = 0; c < lc; ++c) {
      const std::int64_t gc = M::global_index(d.col_map(), q, c);
      for (std::int64_t i = 0; i < lr; ++i)
        whole[static_cast<std::size_t>(M::global_index(d.row_map(), p, i) + gc * d.num_rows())] =
            recv[r][static_cast<std::size_t>(i + c * lr)];
    }
  }
  return whole;
}

}  // namespace kcla
#endif
