// Kernel-matrix compression into TLR form on an execution space (a GPU in CUDA builds):
// tiles are generated and compressed on `exec` by adaptive randomized range finding, and
// every tile's error is measured there against its bound (a tile over it is recompressed by
// the host SVD). The same tolerance contract as the host SVD path (kcla/tlr_compress.hpp):
// ||A_ij - U V^T||_F <= max(relative_tolerance ||A_ij||_F, absolute_tolerance) per tile,
// unless max_rank caps it; ranks are close to, not always equal to, the SVD's.
//
//   Kokkos::Cuda exec;
//   kcla::TlrCompressReport report;
//   auto A = kcla::compress_kernel<float>(exec, points, points, matern, 1024, options, &report);
#pragma once

#include <kcla/detail/randomized_tile_compression.hpp>
#include <kcla/tlr_compress.hpp>
#include <kcla/tlr_kernel_function.hpp>
#include <kcla/tlr_matrix.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
#include <type_traits>

namespace kcla {

/// Compresses K_pq = kernel(|rows_p - cols_q|) on `exec` (fp64 arithmetic), returning the
/// factors in MemorySpace as Scalar; `report` (optional) says what the compression did.
template <class Scalar, class MemorySpace = Kokkos::DefaultExecutionSpace::memory_space,
          class ExecSpace, class = std::enable_if_t<Kokkos::is_execution_space<ExecSpace>::value>>
TlrMatrix<Scalar, MemorySpace> compress_kernel(const ExecSpace& exec, const PointSet& rows,
                                               const PointSet& cols, const CovarianceKernel& kernel,
                                               int tile_size,
                                               const TlrCompressOptions& options = {},
                                               TlrCompressReport* report = nullptr) {
  if (rows.dimension != cols.dimension || rows.dimension < 1)
    throw InvalidArgument("compress_kernel: point sets must share a positive dimension");
  if (tile_size < 1) throw InvalidArgument("compress_kernel: tile size must be positive");
  const std::int64_t m = rows.size(), n = cols.size();
  const auto where = [&](int i, int j) {
    detail::TileExtent x;
    x.row0 = static_cast<std::int64_t>(i) * tile_size;
    x.col0 = static_cast<std::int64_t>(j) * tile_size;
    x.height = static_cast<int>(std::min<std::int64_t>(tile_size, m - x.row0));
    x.width = static_cast<int>(std::min<std::int64_t>(tile_size, n - x.col0));
    return x;
  };
  const auto tiles = detail::compress_kernel_tiles_randomized(
      exec, rows, cols, kernel, m, n, tile_size, where,
      detail::kernel_tile_fill(rows, cols, kernel, tile_size), options, report);
  return detail::to_tlr_matrix<Scalar, MemorySpace>(
      detail::pack_tiles(m, n, tile_size, tiles, detail::rank_multiple_for<Scalar>(options),
                         tlr_leading_dim_multiple<Scalar>()));
}

}  // namespace kcla
