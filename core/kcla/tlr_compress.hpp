// Compression into TLR form: every tile is compressed independently by a truncated SVD
// (LAPACKE dgesdd / sgesdd) on the host, at a tolerance; the factors are then packed and
// copied to the target memory space. Sources: a dense matrix, or a kernel function on
// point sets (the tiles are generated on the fly; the dense matrix never exists).
#pragma once

#include <kcla/error.hpp>
#include <kcla/tlr_kernel_function.hpp>
#include <kcla/tlr_matrix.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <type_traits>
#include <vector>

namespace kcla {

/// Tile (i, j) keeps the smallest rank r whose truncation error
/// ||A_ij - U_r V_r^T||_F = sqrt(sum_{t >= r} sigma_t^2) is at most
/// max(relative_tolerance * ||A_ij||_F, absolute_tolerance), capped at max_rank (0: no cap;
/// a capped tile may miss the tolerance). Every tile meeting its bound makes the whole
/// matrix's error at most relative_tolerance * ||A||_F + absolute_tolerance *
/// sqrt(number of tiles). The singular values are split evenly: U_r = U sqrt(S),
/// V_r = V sqrt(S), which keeps both factors in range for 16-bit storage.
struct TlrCompressOptions {
  double relative_tolerance = 1e-8;
  double absolute_tolerance = 0.0;
  int max_rank = 0;
  int rank_multiple = 0;  // 0: TlrScalarTraits<Scalar>::rank_multiple
};

/// What a compression did. Randomized compression (kcla::compress_kernel with an execution
/// space) measures every tile's error against its bound; the SVD path leaves this empty.
struct TlrCompressReport {
  int tiles = 0;
  int batches = 0;                  // tile batches the device worked through
  int max_rank = 0;                 // largest rank kept
  std::int64_t sample_columns = 0;  // range-finder basis columns, summed over the tiles
  int fallback_tiles = 0;           // measured over the bound: recompressed by the host SVD
  int capped_tiles = 0;             // at max_rank and over the bound (as the SVD path allows)
  double max_error_ratio = 0;       // largest measured error / bound of the kept device tiles
  double gemm_flops = 0;            // floating-point operations of the batched GEMMs
  // Where the time went: range finding (tile generation included), the host eigenproblems,
  // and the rest (sketches, factors, measurement, transfers), summed over the batches.
  double range_seconds = 0, eigen_seconds = 0, finish_seconds = 0;
};

namespace detail {

/// Packed host factors in the compression's own precision.
template <class T>
struct TlrHostFactors {
  std::shared_ptr<const TlrLayout> layout;
  std::vector<T> outer, inner;
};

/// One compressed tile: U (height x rank) and V (width x rank), column-major and
/// contiguous, with the singular values split evenly between them.
template <class T>
struct CompressedTile {
  int rank = 0;
  std::vector<T> u, v;
};

/// Truncated SVD of the h x w column-major tile `a` (destroyed) at the options' tolerances.
/// Returns LAPACK gesdd's info (0: success; `out` is then set).
template <class T>
int compress_tile_svd(int h, int w, T* a, const TlrCompressOptions& options,
                      CompressedTile<T>& out);

extern template int compress_tile_svd<double>(int, int, double*, const TlrCompressOptions&,
                                              CompressedTile<double>&);
extern template int compress_tile_svd<float>(int, int, float*, const TlrCompressOptions&,
                                             CompressedTile<float>&);

/// Packs compressed tiles (row-major tile order) into a layout and its factor arrays.
template <class T>
TlrHostFactors<T> pack_tiles(std::int64_t rows, std::int64_t cols, int tile_size,
                             const std::vector<CompressedTile<T>>& tiles, int rank_multiple,
                             int leading_dim_multiple);

extern template TlrHostFactors<double> pack_tiles<double>(
    std::int64_t, std::int64_t, int, const std::vector<CompressedTile<double>>&, int, int);
extern template TlrHostFactors<float> pack_tiles<float>(std::int64_t, std::int64_t, int,
                                                        const std::vector<CompressedTile<float>>&,
                                                        int, int);

/// Checks the options (InvalidArgument).
void check_compress_options(const TlrCompressOptions& options);

/// Writes tile (i, j) (height_i x width_j, column-major, leading dimension ld).
template <class T>
using TileFill = std::function<void(int i, int j, T* tile, int ld)>;

/// Compresses every tile of a rows x cols matrix (T = double: dgesdd, T = float: sgesdd).
template <class T>
TlrHostFactors<T> compress_tiles(std::int64_t rows, std::int64_t cols, int tile_size,
                                 const TileFill<T>& fill, const TlrCompressOptions& options,
                                 int rank_multiple, int leading_dim_multiple);

extern template TlrHostFactors<double> compress_tiles<double>(std::int64_t, std::int64_t, int,
                                                              const TileFill<double>&,
                                                              const TlrCompressOptions&, int, int);
extern template TlrHostFactors<float> compress_tiles<float>(std::int64_t, std::int64_t, int,
                                                            const TileFill<float>&,
                                                            const TlrCompressOptions&, int, int);

template <class Scalar, class MemorySpace, class T>
TlrMatrix<Scalar, MemorySpace> to_tlr_matrix(const TlrHostFactors<T>& f) {
  return make_tlr_matrix<Scalar, MemorySpace>(f.layout, f.outer, f.inner);
}

template <class Scalar>
int rank_multiple_for(const TlrCompressOptions& options) {
  return options.rank_multiple > 0 ? options.rank_multiple : TlrScalarTraits<Scalar>::rank_multiple;
}

/// Writes global tile (i, j) of the column-major host matrix `a` (rows x cols, leading
/// dimension lda) in tiles of tile_size.
/// Checks the source's type and dimensions (InvalidArgument).
template <class Source>
TileFill<Source> dense_tile_fill(const Source* a, std::int64_t rows, std::int64_t cols,
                                 std::int64_t lda, int tile_size) {
  static_assert(std::is_same<Source, double>::value || std::is_same<Source, float>::value,
                "compress: the dense source must be float or double");
  if (rows < 0 || cols < 0 || lda < std::max<std::int64_t>(1, rows))
    throw InvalidArgument("compress: bad dimensions or leading dimension");
  if (tile_size < 1) throw InvalidArgument("compress: tile size must be positive");
  return [=](int i, int j, Source* tile, int ld) {
    const std::int64_t r0 = static_cast<std::int64_t>(i) * tile_size;
    const std::int64_t c0 = static_cast<std::int64_t>(j) * tile_size;
    const std::int64_t h = std::min<std::int64_t>(tile_size, rows - r0);
    const std::int64_t w = std::min<std::int64_t>(tile_size, cols - c0);
    for (std::int64_t c = 0; c < w; ++c)
      for (std::int64_t r = 0; r < h; ++r) tile[r + c * ld] = a[(r0 + r) + (c0 + c) * lda];
  };
}

/// Writes global tile (i, j) of K_pq = kernel(|rows_p - cols_q|) (the point sets must
/// outlive the function).
inline TileFill<double> kernel_tile_fill(const PointSet& rows, const PointSet& cols,
                                         const CovarianceKernel& kernel, int tile_size) {
  const std::int64_t m = rows.size(), n = cols.size();
  return [&rows, &cols, kernel, m, n, tile_size](int i, int j, double* tile, int ld) {
    const std::int64_t r0 = static_cast<std::int64_t>(i) * tile_size;
    const std::int64_t c0 = static_cast<std::int64_t>(j) * tile_size;
    const std::int64_t h = std::min<std::int64_t>(tile_size, m - r0);
    const std::int64_t w = std::min<std::int64_t>(tile_size, n - c0);
    for (std::int64_t c = 0; c < w; ++c)
      for (std::int64_t r = 0; r < h; ++r) tile[r + c * ld] = kernel(rows, r0 + r, cols, c0 + c);
  };
}

}  // namespace detail

/// Compresses the column-major host matrix `a` (rows x cols, leading dimension lda;
/// Source float or double, which also picks sgesdd or dgesdd).
template <class Scalar, class MemorySpace = Kokkos::DefaultExecutionSpace::memory_space,
          class Source>
TlrMatrix<Scalar, MemorySpace> compress(const Source* a, std::int64_t rows, std::int64_t cols,
                                        std::int64_t lda, int tile_size,
                                        const TlrCompressOptions& options = {}) {
  const auto fill = detail::dense_tile_fill(a, rows, cols, lda, tile_size);
  return detail::to_tlr_matrix<Scalar, MemorySpace>(detail::compress_tiles<Source>(
      rows, cols, tile_size, fill, options, detail::rank_multiple_for<Scalar>(options),
      tlr_leading_dim_multiple<Scalar>()));
}

/// Compresses a host-accessible rank-2 View (LayoutLeft, or any layout with stride(0) == 1).
template <class Scalar, class MemorySpace = Kokkos::DefaultExecutionSpace::memory_space,
          class DenseView>
TlrMatrix<Scalar, MemorySpace> compress(const DenseView& a, int tile_size,
                                        const TlrCompressOptions& options = {}) {
  static_assert(Kokkos::is_view<DenseView>::value && DenseView::rank == 2,
                "compress: a must be a rank-2 View");
  static_assert(
      Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename DenseView::memory_space>::accessible,
      "compress: the dense matrix must be host-accessible (compression runs on the "
      "host)");
  if (a.extent(0) > 1 && a.stride(0) != 1)
    throw InvalidArgument("compress: the dense matrix must be column-major (stride(0) == 1)");
  const std::int64_t lda =
      std::max<std::int64_t>(std::max<std::int64_t>(1, a.extent(0)), a.stride(1));
  return compress<Scalar, MemorySpace>(a.data(), static_cast<std::int64_t>(a.extent(0)),
                                       static_cast<std::int64_t>(a.extent(1)), lda, tile_size,
                                       options);
}

/// Compresses K_pq = kernel(|rows_p - cols_q|) tile by tile, in double precision.
template <class Scalar, class MemorySpace = Kokkos::DefaultExecutionSpace::memory_space>
TlrMatrix<Scalar, MemorySpace> compress_kernel(const PointSet& rows, const PointSet& cols,
                                               const CovarianceKernel& kernel, int tile_size,
                                               const TlrCompressOptions& options = {}) {
  if (rows.dimension != cols.dimension || rows.dimension < 1)
    throw InvalidArgument("compress_kernel: point sets must share a positive dimension");
  if (tile_size < 1) throw InvalidArgument("compress_kernel: tile size must be positive");
  const std::int64_t m = rows.size(), n = cols.size();
  const auto fill = detail::kernel_tile_fill(rows, cols, kernel, tile_size);
  return detail::to_tlr_matrix<Scalar, MemorySpace>(detail::compress_tiles<double>(
      m, n, tile_size, fill, options, detail::rank_multiple_for<Scalar>(options),
      tlr_leading_dim_multiple<Scalar>()));
}

}  // namespace kcla
