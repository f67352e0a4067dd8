// A TLR matrix distributed 2D block-cyclically over a ProcessGrid: tile (i, j) lives on grid
// rank (i mod P, j mod Q), which holds its tiles as one local TlrMatrix (its tile rows and
// columns in global order, kcla's packed layout, on its device). Every rank also keeps the
// global structure (the rank of every tile: a few bytes per tile), which is what lets a
// SUMMA product size every broadcast without asking.
//
//   kcla::ProcessGrid grid(MPI_COMM_WORLD);
//   auto A = kcla::compress_kernel<double>(grid, points, points, matern, 256, options);
//   kcla::DistributedDenseMatrix<double> B(grid, n, k, 256), C(grid, n, k, 256);
//   kcla::gemm(exec, kcla::Op::N, A, kcla::Op::N, B, 1.0, 0.0, C);   // collective
#pragma once

#include <kcla/config.hpp>

#if KCLA_HAVE_MPI
#include <kcla/block_cyclic.hpp>
#include <kcla/detail/mpi_transfer.hpp>
#include <kcla/error.hpp>
#include <kcla/hdf5_tlr.hpp>
#include <kcla/hdf5_tlr_mpi.hpp>
#include <kcla/process_grid.hpp>
#include <kcla/tlr_block_cyclic.hpp>
#include <kcla/tlr_compress.hpp>
#include <kcla/tlr_compress_randomized.hpp>
#include <kcla/tlr_matrix.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

namespace kcla {

template <class Scalar, class MemorySpace = Kokkos::DefaultExecutionSpace::memory_space>
class DistributedTlrMatrix {
 public:
  using value_type = Scalar;
  using memory_space = MemorySpace;
  using local_matrix = TlrMatrix<Scalar, MemorySpace>;

  DistributedTlrMatrix() = default;
  /// From the global structure (the same on every rank) and this rank's tiles, whose layout
  /// must be local_tlr_layout(*structure, ...) for this rank.
  DistributedTlrMatrix(const ProcessGrid& grid, std::shared_ptr<const TlrLayout> structure,
                       local_matrix local)
      : grid_(grid), structure_(std::move(structure)), local_(std::move(local)) {
    if (!structure_) throw InvalidArgument("DistributedTlrMatrix: null structure");
    const auto expected =
        local_tlr_layout(*structure_, grid.row(), grid.rows(), grid.col(), grid.cols());
    if (!local_.is_allocated() || !local_.layout().same_structure(*expected))
      throw InvalidArgument("DistributedTlrMatrix: rank " + std::to_string(grid.rank()) +
                            "'s tiles do not match its share of the global structure");
  }

  const ProcessGrid& grid() const { return grid_; }
  /// The whole matrix's tiling and ranks (no values).
  const TlrLayout& structure() const { return *structure_; }
  const std::shared_ptr<const TlrLayout>& structure_ptr() const { return structure_; }
  /// This rank's tiles.
  const local_matrix& local() const { return local_; }
  std::int64_t num_rows() const { return structure_->num_rows(); }
  std::int64_t num_cols() const { return structure_->num_cols(); }
  int tile_size() const { return structure_->tile_size(); }
  BlockCyclic row_map() const { return {num_rows(), tile_size(), grid_.rows()}; }
  BlockCyclic col_map() const { return {num_cols(), tile_size(), grid_.cols()}; }
  /// Bytes of this rank's factors, and of all ranks' together.
  std::size_t local_bytes() const { return local_.bytes(); }
  std::size_t global_bytes() const {
    return static_cast<std::size_t>(structure_->outer_size() + structure_->inner_size()) *
           sizeof(Scalar);
  }

 private:
  ProcessGrid grid_;
  std::shared_ptr<const TlrLayout> structure_;
  local_matrix local_;
};

namespace detail {

/// Collective: the global structure from every rank's local ranks.
inline std::shared_ptr<const TlrLayout> gather_tlr_structure(const ProcessGrid& grid,
                                                             const TlrLayout& local,
                                                             std::int64_t rows, std::int64_t cols,
                                                             int tile_size) {
  const BlockCyclic rmap(rows, tile_size, grid.rows()), cmap(cols, tile_size, grid.cols());
  std::vector<std::vector<int>> send(static_cast<std::size_t>(grid.size()), local.ranks()),
      recv(static_cast<std::size_t>(grid.size()));
  for (int r = 0; r < grid.size(); ++r)
    recv[r].resize(static_cast<std::size_t>(rmap.local_blocks(r / grid.cols())) *
                   static_cast<std::size_t>(cmap.local_blocks(r % grid.cols())));
  exchange(grid.comm(), send, recv);
  const int tc = cmap.blocks();
  std::vector<int> ranks(static_cast<std::size_t>(rmap.blocks()) * static_cast<std::size_t>(tc));
  for (int r = 0; r < grid.size(); ++r) {
    const int p = r / grid.cols(), q = r % grid.cols();
    const int lr = rmap.local_blocks(p), lc = cmap.local_blocks(q);
    for (int i = 0; i < lr; ++i)
      for (int j = 0; j < lc; ++j)
        ranks[static_cast<std::size_t>(rmap.global_block(p, i)) * tc + cmap.global_block(q, j)] =
            recv[r][static_cast<std::size_t>(i) * lc + j];
  }
  return std::make_shared<const TlrLayout>(rows, cols, tile_size, std::move(ranks),
                                           local.rank_multiple(), local.leading_dim());
}

}  // namespace detail

/// Each rank keeps its tiles of a TLR matrix every rank holds (any memory space).
template <class Scalar, class MemorySpace = Kokkos::DefaultExecutionSpace::memory_space,
          class WholeSpace>
DistributedTlrMatrix<Scalar, MemorySpace> distribute(const ProcessGrid& grid,
                                                     const TlrMatrix<Scalar, WholeSpace>& whole) {
  if (!whole.is_allocated()) throw InvalidArgument("distribute: an empty TlrMatrix");
  const TlrLayout& g = whole.layout();
  auto local_layout = local_tlr_layout(g, grid.row(), grid.rows(), grid.col(), grid.cols());
  auto u = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), whole.outer_factors());
  auto v = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), whole.inner_factors());
  const TlrLayout& l = *local_layout;
  std::vector<Scalar> outer(static_cast<std::size_t>(l.outer_size()));
  std::vector<Scalar> inner(static_cast<std::size_t>(l.inner_size()));
  const std::int64_t ld = l.leading_dim();
  for (int i = 0; i < l.tile_rows(); ++i)
    for (int j = 0; j < l.tile_cols(); ++j) {
      const int gi = grid.row() + i * grid.rows(), gj = grid.col() + j * grid.cols();
      const std::int64_t n = ld * l.stored_rank(i, j);
      for (std::int64_t e = 0; e < n; ++e) {
        outer[static_cast<std::size_t>(l.outer_offset(i, j) + e)] = u(g.outer_offset(gi, gj) + e);
        inner[static_cast<std::size_t>(l.inner_offset(i, j) + e)] = v(g.inner_offset(gi, gj) + e);
      }
    }
  auto structure = std::make_shared<const TlrLayout>(g);
  return DistributedTlrMatrix<Scalar, MemorySpace>(
      grid, std::move(structure), make_tlr_matrix<Scalar, MemorySpace>(local_layout, outer, inner));
}

namespace detail {

/// Collective: each rank compresses its own tiles of a rows x cols matrix:
/// compress_local(local_rows, local_cols, local_fill, where) returns the host factors of the
/// rank's local layout, where local_fill writes local tile (i, j) from the global `fill` and
/// where(i, j) places it in the global matrix. Then the ranks share their tiles' ranks.
template <class Scalar, class MemorySpace, class T, class CompressLocal>
DistributedTlrMatrix<Scalar, MemorySpace> compress_each_rank(const ProcessGrid& grid,
                                                             std::int64_t rows, std::int64_t cols,
                                                             int tile_size, const TileFill<T>& fill,
                                                             CompressLocal&& compress_local) {
  if (tile_size < 1) throw InvalidArgument("compress: tile size must be positive");
  const BlockCyclic rmap(rows, tile_size, grid.rows()), cmap(cols, tile_size, grid.cols());
  const int p = grid.row(), q = grid.col();
  const TileFill<T> local_fill = [&](int i, int j, T* tile, int ld) {
    fill(rmap.global_block(p, i), cmap.global_block(q, j), tile, ld);
  };
  const auto where = [&](int i, int j) {
    TileExtent x;
    x.row0 = static_cast<std::int64_t>(rmap.global_block(p, i)) * tile_size;
    x.col0 = static_cast<std::int64_t>(cmap.global_block(q, j)) * tile_size;
    x.height = static_cast<int>(std::min<std::int64_t>(tile_size, rows - x.row0));
    x.width = static_cast<int>(std::min<std::int64_t>(tile_size, cols - x.col0));
    return x;
  };
  // A failed tile (LAPACK, memory, a non-finite kernel value) must stop every rank, not leave
  // the others waiting.
  TlrHostFactors<T> factors;
  on_every_rank(grid.comm(), [&] {
    factors = compress_local(rmap.local_extent(p), cmap.local_extent(q), local_fill,
                             std::function<TileExtent(int, int)>(where));
  });
  auto structure = gather_tlr_structure(grid, *factors.layout, rows, cols, tile_size);
  return DistributedTlrMatrix<Scalar, MemorySpace>(grid, std::move(structure),
                                                   to_tlr_matrix<Scalar, MemorySpace>(factors));
}

/// Collective: the host SVD of each rank's own tiles.
template <class Scalar, class MemorySpace, class T>
DistributedTlrMatrix<Scalar, MemorySpace> compress_on_grid(const ProcessGrid& grid,
                                                           std::int64_t rows, std::int64_t cols,
                                                           int tile_size, const TileFill<T>& fill,
                                                           const TlrCompressOptions& options) {
  return compress_each_rank<Scalar, MemorySpace, T>(
      grid, rows, cols, tile_size, fill,
      [&](std::int64_t local_rows, std::int64_t local_cols, const TileFill<T>& local_fill,
          const std::function<TileExtent(int, int)>&) {
        return compress_tiles<T>(local_rows, local_cols, tile_size, local_fill, options,
                                 rank_multiple_for<Scalar>(options),
                                 tlr_leading_dim_multiple<Scalar>());
      });
}

}  // namespace detail

/// Collective: compresses K_pq = kernel(|rows_p - cols_q|) with each rank compressing only
/// its own tiles (the work splits over the ranks; no rank ever holds the dense matrix or
/// another rank's factors). Options as for compress_kernel.
template <class Scalar, class MemorySpace = Kokkos::DefaultExecutionSpace::memory_space>
DistributedTlrMatrix<Scalar, MemorySpace> compress_kernel(
    const ProcessGrid& grid, const PointSet& rows, const PointSet& cols,
    const CovarianceKernel& kernel, int tile_size, const TlrCompressOptions& options = {}) {
  if (rows.dimension != cols.dimension || rows.dimension < 1)
    throw InvalidArgument("compress_kernel: point sets must share a positive dimension");
  if (tile_size < 1) throw InvalidArgument("compress_kernel: tile size must be positive");
  const std::int64_t m = rows.size(), n = cols.size();
  const auto fill = detail::kernel_tile_fill(rows, cols, kernel, tile_size);
  return detail::compress_on_grid<Scalar, MemorySpace, double>(grid, m, n, tile_size, fill,
                                                               options);
}

/// Collective: as compress_kernel(grid, ...), each rank compressing its own tiles on `exec`
/// (its GPU in CUDA builds) by randomized range finding with every tile's error measured
/// (kcla/tlr_compress_randomized.hpp). `report`, when given, describes this rank's tiles.
template <class Scalar, class MemorySpace = Kokkos::DefaultExecutionSpace::memory_space,
          class ExecSpace, class = std::enable_if_t<Kokkos::is_execution_space<ExecSpace>::value>>
DistributedTlrMatrix<Scalar, MemorySpace> compress_kernel(
    const ExecSpace& exec, const ProcessGrid& grid, const PointSet& rows, const PointSet& cols,
    const CovarianceKernel& kernel, int tile_size, const TlrCompressOptions& options = {},
    TlrCompressReport* report = nullptr) {
  if (rows.dimension != cols.dimension || rows.dimension < 1)
    throw InvalidArgument("compress_kernel: point sets must share a positive dimension");
  if (tile_size < 1) throw InvalidArgument("compress_kernel: tile size must be positive");
  const std::int64_t m = rows.size(), n = cols.size();
  return detail::compress_each_rank<Scalar, MemorySpace, double>(
      grid, m, n, tile_size, detail::kernel_tile_fill(rows, cols, kernel, tile_size),
      [&](std::int64_t local_rows, std::int64_t local_cols,
          const detail::TileFill<double>& local_fill,
          const std::function<detail::TileExtent(int, int)>& where) {
        return detail::pack_tiles(local_rows, local_cols, tile_size,
                                  detail::compress_kernel_tiles_randomized(
                                      exec, rows, cols, kernel, local_rows, local_cols, tile_size,
                                      where, local_fill, options, report),
                                  detail::rank_multiple_for<Scalar>(options),
                                  tlr_leading_dim_multiple<Scalar>());
      });
}

/// Collective: compresses the column-major host matrix `a` (rows x cols, leading dimension
/// lda), which every rank holds, each rank only its own tiles (Source float or double).
template <class Scalar, class MemorySpace = Kokkos::DefaultExecutionSpace::memory_space,
          class Source>
DistributedTlrMatrix<Scalar, MemorySpace> compress(const ProcessGrid& grid, const Source* a,
                                                   std::int64_t rows, std::int64_t cols,
                                                   std::int64_t lda, int tile_size,
                                                   const TlrCompressOptions& options = {}) {
  const auto fill = detail::dense_tile_fill(a, rows, cols, lda, tile_size);
  return detail::compress_on_grid<Scalar, MemorySpace, Source>(grid, rows, cols, tile_size, fill,
                                                               options);
}

/// Collective: the whole matrix on every rank, in host memory (for checks, and for writing
/// one file from one rank).
template <class Scalar, class MemorySpace>
TlrMatrix<Scalar, Kokkos::HostSpace> allgather(const DistributedTlrMatrix<Scalar, MemorySpace>& a) {
  const ProcessGrid& grid = a.grid();
  const TlrLayout& g = a.structure();
  auto u = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a.local().outer_factors());
  auto v = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a.local().inner_factors());
  std::vector<Scalar> mine(u.extent(0) + v.extent(0));
  for (std::size_t e = 0; e < u.extent(0); ++e) mine[e] = u(e);
  for (std::size_t e = 0; e < v.extent(0); ++e) mine[u.extent(0) + e] = v(e);
  std::vector<std::vector<Scalar>> send(static_cast<std::size_t>(grid.size()), mine),
      recv(static_cast<std::size_t>(grid.size()));
  std::vector<std::shared_ptr<const TlrLayout>> layouts(static_cast<std::size_t>(grid.size()));
  for (int r = 0; r < grid.size(); ++r) {
    layouts[r] = local_tlr_layout(g, r / grid.cols(), grid.rows(), r % grid.cols(), grid.cols());
    recv[r].resize(static_cast<std::size_t>(layouts[r]->outer_size() + layouts[r]->inner_size()));
  }
  detail::exchange(grid.comm(), send, recv);
  auto structure = std::make_shared<const TlrLayout>(g);
  TlrMatrix<Scalar, Kokkos::HostSpace> whole(structure);
  const std::int64_t ld = g.leading_dim();
  for (int r = 0; r < grid.size(); ++r) {
    const TlrLayout& l = *layouts[r];
    const int p = r / grid.cols(), q = r % grid.cols();
    const std::int64_t inner0 = l.outer_size();
    for (int i = 0; i < l.tile_rows(); ++i)
      for (int j = 0; j < l.tile_cols(); ++j) {
        const int gi = p + i * grid.rows(), gj = q + j * grid.cols();
        const std::int64_t n = ld * l.stored_rank(i, j);
        for (std::int64_t e = 0; e < n; ++e) {
          whole.outer_factors()(g.outer_offset(gi, gj) + e) =
              recv[r][static_cast<std::size_t>(l.outer_offset(i, j) + e)];
          whole.inner_factors()(g.inner_offset(gi, gj) + e) =
              recv[r][static_cast<std::size_t>(inner0 + l.inner_offset(i, j) + e)];
        }
      }
  }
  return whole;
}

/// Collective: writes the matrix as one ordinary TLR file, every rank its own tiles
/// (parallel HDF5; hdf5_tlr_mpi.hpp). Any grid shape, or read_tlr_hdf5 in one process,
/// reads it back.
template <class Scalar, class MemorySpace>
void write_tlr_hdf5(const std::string& path, const DistributedTlrMatrix<Scalar, MemorySpace>& a) {
  const auto u =
      Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a.local().outer_factors());
  const auto v =
      Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a.local().inner_factors());
  detail::write_tlr_hdf5_grid(a.grid().comm(), path, a.structure(), a.grid().rows(),
                              a.grid().cols(), TlrScalarTraits<Scalar>::kind, u.data(), v.data());
}

/// Collective: each rank reads only its tiles of a TLR file (however it was written),
/// converting the precision as read_tlr_hdf5 does.
template <class Scalar, class MemorySpace = Kokkos::DefaultExecutionSpace::memory_space>
DistributedTlrMatrix<Scalar, MemorySpace> read_tlr_hdf5(const ProcessGrid& grid,
                                                        const std::string& path) {
  constexpr ScalarKind kind = TlrScalarTraits<Scalar>::kind;
  // A bad file, or a bad range of it, must stop every rank alike.
  std::shared_ptr<const TlrLayout> structure;
  TlrMatrix<Scalar, MemorySpace> m;
  detail::on_every_rank(grid.comm(), [&] {
    const detail::TlrHdf5Reader reader(path);
    reader.require_memory_for_tiles(grid.row(), grid.rows(), grid.col(), grid.cols());
    structure = detail::tlr_layout_for(reader.info().layout, reader.info().value_type, kind);
    const auto local =
        local_tlr_layout(*structure, grid.row(), grid.rows(), grid.col(), grid.cols());
    m = TlrMatrix<Scalar, MemorySpace>(local);
    auto u = Kokkos::create_mirror_view(m.outer_factors());
    auto v = Kokkos::create_mirror_view(m.inner_factors());
    reader.read_local_factors(grid.row(), grid.rows(), grid.col(), grid.cols(), *local, kind,
                              u.data(), v.data());
    Kokkos::deep_copy(m.outer_factors(), u);
    Kokkos::deep_copy(m.inner_factors(), v);
  });
  return DistributedTlrMatrix<Scalar, MemorySpace>(grid, structure, m);
}

}  // namespace kcla
#endif
