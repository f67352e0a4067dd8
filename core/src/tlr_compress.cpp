// Per-tile truncated SVD (LAPACKE gesdd) and packing into a TlrLayout.
#include <kcla/detail/single_threaded_blas.hpp>
#include <kcla/error.hpp>
#include <kcla/tlr_compress.hpp>

#include <lapacke.h>
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <string>

namespace kcla::detail {

namespace {

lapack_int gesdd(int m, int n, double* a, int lda, double* s, double* u, int ldu, double* vt,
                 int ldvt) {
  return LAPACKE_dgesdd(LAPACK_COL_MAJOR, 'S', m, n, a, lda, s, u, ldu, vt, ldvt);
}

lapack_int gesdd(int m, int n, float* a, int lda, float* s, float* u, int ldu, float* vt,
                 int ldvt) {
  return LAPACKE_sgesdd(LAPACK_COL_MAJOR, 'S', m, n, a, lda, s, u, ldu, vt, ldvt);
}

}  // namespace

void check_compress_options(const TlrCompressOptions& options) {
  if (!(options.relative_tolerance >= 0) || !(options.absolute_tolerance >= 0) ||
      options.max_rank < 0)
    throw InvalidArgument("compress: tolerances and max_rank must be non-negative");
}

template <class T>
int compress_tile_svd(int h, int w, T* a, const TlrCompressOptions& options,
                      CompressedTile<T>& out) {
  const int k = std::min(h, w);
  std::vector<T> s(k), u(static_cast<std::size_t>(h) * k), vt(static_cast<std::size_t>(k) * w);
  const lapack_int info = gesdd(h, w, a, h, s.data(), u.data(), h, vt.data(), k);
  if (info != 0) return static_cast<int>(info);
  // tail[r] = sum_{q >= r} sigma_q^2, accumulated from the smallest value up.
  std::vector<double> tail(static_cast<std::size_t>(k) + 1, 0.0);
  for (int q = k - 1; q >= 0; --q)
    tail[q] = tail[q + 1] + static_cast<double>(s[q]) * static_cast<double>(s[q]);
  const double norm = std::sqrt(tail[0]);
  const double bound = std::max(options.relative_tolerance * norm, options.absolute_tolerance);
  int r = 0;
  while (r < k && std::sqrt(tail[r]) > bound) ++r;
  if (options.max_rank > 0) r = std::min(r, options.max_rank);
  out.rank = r;
  out.u.resize(static_cast<std::size_t>(h) * r);
  out.v.resize(static_cast<std::size_t>(w) * r);
  for (int q = 0; q < r; ++q) {
    const T root = static_cast<T>(std::sqrt(static_cast<double>(s[q])));
    for (int row = 0; row < h; ++row)
      out.u[row + static_cast<std::size_t>(q) * h] =
          u[row + static_cast<std::size_t>(q) * h] * root;
    for (int col = 0; col < w; ++col)
      out.v[col + static_cast<std::size_t>(q) * w] =
          vt[q + static_cast<std::size_t>(col) * k] * root;
  }
  return 0;
}

template <class T>
TlrHostFactors<T> pack_tiles(std::int64_t rows, std::int64_t cols, int tile_size,
                             const std::vector<CompressedTile<T>>& tiles, int rank_multiple,
                             int leading_dim_multiple) {
  std::vector<int> ranks(tiles.size());
  for (std::size_t t = 0; t < tiles.size(); ++t) ranks[t] = tiles[t].rank;
  TlrHostFactors<T> result;
  result.layout = std::make_shared<const TlrLayout>(rows, cols, tile_size, std::move(ranks),
                                                    rank_multiple, leading_dim_multiple);
  const TlrLayout& layout = *result.layout;
  const int tr = layout.tile_rows(), tc = layout.tile_cols();
  const std::int64_t ld = layout.leading_dim();
  result.outer.assign(static_cast<std::size_t>(layout.outer_size()), T(0));
  result.inner.assign(static_cast<std::size_t>(layout.inner_size()), T(0));
  for (int i = 0; i < tr; ++i)
    for (int j = 0; j < tc; ++j) {
      const auto& tile = tiles[static_cast<std::size_t>(i) * tc + j];
      const int h = layout.tile_height(i), w = layout.tile_width(j);
      T* u = result.outer.data() + layout.outer_offset(i, j);
      T* v = result.inner.data() + layout.inner_offset(i, j);
      for (int q = 0; q < tile.rank; ++q) {
        std::copy_n(tile.u.data() + static_cast<std::size_t>(q) * h, h, u + q * ld);
        std::copy_n(tile.v.data() + static_cast<std::size_t>(q) * w, w, v + q * ld);
      }
    }
  return result;
}

template <class T>
TlrHostFactors<T> compress_tiles(std::int64_t rows, std::int64_t cols, int tile_size,
                                 const TileFill<T>& fill, const TlrCompressOptions& options,
                                 int rank_multiple, int leading_dim_multiple) {
  check_compress_options(options);
  // The layout validates the shape; build it with zero ranks first to get the grid.
  const TlrLayout grid(
      rows, cols, tile_size,
      std::vector<int>(static_cast<std::size_t>(((rows + tile_size - 1) / tile_size) *
                                                ((cols + tile_size - 1) / tile_size)),
                       0),
      rank_multiple, leading_dim_multiple);
  const int tc = grid.tile_cols();
  const int num_tiles = grid.tile_rows() * tc;
  std::vector<CompressedTile<T>> tiles(static_cast<std::size_t>(num_tiles));
  std::atomic<int> failed_tile{-1};
  std::atomic<int> failed_info{0};

  auto compress_one = [&](int t) {
    const int i = t / tc, j = t % tc;
    const int h = grid.tile_height(i), w = grid.tile_width(j);
    std::vector<T> a(static_cast<std::size_t>(h) * w);
    fill(i, j, a.data(), h);
    const int info = compress_tile_svd(h, w, a.data(), options, tiles[static_cast<std::size_t>(t)]);
    if (info != 0) {
      failed_tile = t;
      failed_info = info;
    }
  };
  const SingleThreadedBlas one_blas_thread_per_tile;
  Kokkos::parallel_for("kcla::tlr::compress",
                       Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace>(0, num_tiles),
                       compress_one);
  Kokkos::DefaultHostExecutionSpace().fence();
  if (failed_tile >= 0)
    throw BackendError("compress: LAPACK gesdd failed on tile " + std::to_string(failed_tile) +
                       " (info " + std::to_string(failed_info.load()) + ")");
  return pack_tiles(rows, cols, tile_size, tiles, rank_multiple, leading_dim_multiple);
}

template int compress_tile_svd<double>(int, int, double*, const TlrCompressOptions&,
                                       CompressedTile<double>&);
template int compress_tile_svd<float>(int, int, float*, const TlrCompressOptions&,
                                      CompressedTile<float>&);
template TlrHostFactors<double> pack_tiles<double>(std::int64_t, std::int64_t, int,
                                                   const std::vector<CompressedTile<double>>&, int,
                                                   int);
template TlrHostFactors<float> pack_tiles<float>(std::int64_t, std::int64_t, int,
                                                 const std::vector<CompressedTile<float>>&, int,
                                                 int);
template TlrHostFactors<double> compress_tiles<double>(std::int64_t, std::int64_t, int,
                                                       const TileFill<double>&,
                                                       const TlrCompressOptions&, int, int);
template TlrHostFactors<float> compress_tiles<float>(std::int64_t, std::int64_t, int,
                                                     const TileFill<float>&,
                                                     const TlrCompressOptions&, int, int);

}  // namespace kcla::detail
