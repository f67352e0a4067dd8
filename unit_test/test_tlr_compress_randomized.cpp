// Randomized TLR compression on an execution space (kcla/tlr_compress_randomized.hpp): the
// per-tile bound holds against the dense kernel matrix for every kernel type, on the
// default execution space (the GPU in CUDA builds) and on the host; ranks stay near the
// SVD's; batching does not change the result; tiles the device misses are recompressed by
// the host SVD; zero tiles, rank caps, absolute tolerances and bad arguments.
#include <kcla/tlr_compress.hpp>
#include <kcla/tlr_compress_randomized.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <numeric>
#include <type_traits>

#include "tlr_compress_checks.hpp"
#include "tlr_test_support.hpp"

namespace {

using kcla::test::check_error;
using kcla::test::clustered_points;
using kcla::test::HostMatrix;
using kcla::test::kernel_matrix;

std::int64_t rank_sum(const kcla::TlrLayout& l) {
  return std::accumulate(l.ranks().begin(), l.ranks().end(), std::int64_t{0});
}

template <class ExecSpace>
void meets_the_tolerance_on_every_kernel() {
  auto gen = kcla::test::rng();
  const auto x = clustered_points(gen, 300);
  const int b = 48;  // 300 = 6 * 48 + 12: ragged last tiles
  for (auto type :
       {kcla::KernelType::exponential, kcla::KernelType::matern32, kcla::KernelType::matern52,
        kcla::KernelType::gaussian, kcla::KernelType::inverse_distance}) {
    kcla::CovarianceKernel k;
    k.type = type;
    k.length_scale = 0.3;
    k.self_value = 10.0;
    const HostMatrix a = kernel_matrix(x, k);
    for (double rel : {1e-3, 1e-7}) {
      SCOPED_TRACE(std::string(kcla::to_string(type)) + " rel " + std::to_string(rel));
      kcla::TlrCompressOptions o;
      o.relative_tolerance = rel;
      kcla::TlrCompressReport report;
      auto t =
          kcla::compress_kernel<double, Kokkos::HostSpace>(ExecSpace(), x, x, k, b, o, &report);
      check_error(a, kcla::test::decompress(t), b, rel, 0);
      EXPECT_EQ(report.tiles, 49);
      EXPECT_LE(report.max_error_ratio, 1.0);
      EXPECT_EQ(report.capped_tiles, 0);
      // Near the SVD's ranks: the SVD keeps the fewest; the sketch at most a little more.
      auto svd = kcla::compress_kernel<double, Kokkos::HostSpace>(x, x, k, b, o);
      EXPECT_LE(rank_sum(t.layout()), rank_sum(svd.layout()) * 1.15 + 49);
      EXPECT_EQ(report.max_rank,
                *std::max_element(t.layout().ranks().begin(), t.layout().ranks().end()));
    }
  }
}

TEST(TlrCompressRandomized, MeetsTheToleranceOnEveryKernel) {
  meets_the_tolerance_on_every_kernel<kcla::test::exec_space>();
}

TEST(TlrCompressRandomized, MeetsTheToleranceOnTheHost) {
  if (std::is_same<kcla::test::exec_space, kcla::test::host_exec>::value)
    GTEST_SKIP()
        << "the default execution space is the host: covered by MeetsTheToleranceOnEveryKernel";
  meets_the_tolerance_on_every_kernel<kcla::test::host_exec>();
}

TEST(TlrCompressRandomized, RectangularAndBatchIndependent) {
  auto gen = kcla::test::rng();
  const auto rows = clustered_points(gen, 170);
  const auto cols = clustered_points(gen, 95);
  kcla::CovarianceKernel k;
  k.type = kcla::KernelType::matern32;
  k.length_scale = 0.25;
  const HostMatrix a = kernel_matrix(rows, cols, k);
  kcla::TlrCompressOptions o;
  o.relative_tolerance = 1e-6;
  const int b = 32;
  auto where = [&](int i, int j) {
    kcla::detail::TileExtent e;
    e.row0 = i * b;
    e.col0 = j * b;
    e.height = static_cast<int>(std::min<std::int64_t>(b, 170 - e.row0));
    e.width = static_cast<int>(std::min<std::int64_t>(b, 95 - e.col0));
    return e;
  };
  const auto fill = kcla::detail::kernel_tile_fill(rows, cols, k, b);
  kcla::detail::RandomizedCompressionTuning one_tile, all_tiles;
  one_tile.batch_bytes = 1;  // one tile per batch
  kcla::TlrCompressReport r1, r2;
  const kcla::test::exec_space exec;
  const auto t1 = kcla::detail::compress_kernel_tiles_randomized(exec, rows, cols, k, 170, 95, b,
                                                                 where, fill, o, &r1, one_tile);
  const auto t2 = kcla::detail::compress_kernel_tiles_randomized(exec, rows, cols, k, 170, 95, b,
                                                                 where, fill, o, &r2, all_tiles);
  EXPECT_EQ(r1.batches, 18);
  EXPECT_EQ(r2.batches, 1);
  ASSERT_EQ(t1.size(), t2.size());
  for (std::size_t t = 0; t < t1.size(); ++t) EXPECT_EQ(t1[t].rank, t2[t].rank) << "tile " << t;
  const auto packed = kcla::detail::pack_tiles(170, 95, b, t2, 1, 1);
  const auto m = kcla::detail::to_tlr_matrix<double, Kokkos::HostSpace>(packed);
  check_error(a, kcla::test::decompress(m), b, 1e-6, 0);
}

TEST(TlrCompressRandomized, MissedTilesAreRecompressedOnTheHost) {
  // A range finder told to stop far too early misses the bound; the measurement catches
  // every such tile and the host SVD recompresses it.
  auto gen = kcla::test::rng();
  const auto x = clustered_points(gen, 128);
  kcla::CovarianceKernel k;
  k.type = kcla::KernelType::exponential;
  k.length_scale = 0.5;
  const HostMatrix a = kernel_matrix(x, k);
  kcla::TlrCompressOptions o;
  o.relative_tolerance = 1e-6;
  kcla::detail::RandomizedCompressionTuning sloppy;
  sloppy.stop_fraction = 1e8;
  sloppy.sample_block = 4;
  const int b = 32;
  auto where = [&](int i, int j) {
    kcla::detail::TileExtent e;
    e.row0 = i * b;
    e.col0 = j * b;
    e.height = e.width = b;
    return e;
  };
  kcla::TlrCompressReport report;
  const auto tiles = kcla::detail::compress_kernel_tiles_randomized(
      kcla::test::exec_space(), x, x, k, 128, 128, b, where,
      kcla::detail::kernel_tile_fill(x, x, k, b), o, &report, sloppy);
  EXPECT_GT(report.fallback_tiles, 0);
  EXPECT_LE(report.fallback_tiles, 16);
  const auto m = kcla::detail::to_tlr_matrix<double, Kokkos::HostSpace>(
      kcla::detail::pack_tiles(128, 128, b, tiles, 1, 1));
  check_error(a, kcla::test::decompress(m), b, 1e-6, 0);
}

TEST(TlrCompressRandomized, ZeroTilesAbsoluteToleranceAndRankCap) {
  // Two clusters 100 length scales apart: the Gaussian kernel between them is exactly 0.
  auto gen = kcla::test::rng();
  auto x = clustered_points(gen, 160);
  for (std::size_t p = 80; p < 160; ++p) x.coordinates[2 * p] += 100.0;
  kcla::CovarianceKernel k;
  k.type = kcla::KernelType::gaussian;
  k.length_scale = 0.3;
  const HostMatrix a = kernel_matrix(x, k);
  kcla::TlrCompressOptions o;
  o.relative_tolerance = 0;
  o.absolute_tolerance = 1e-5;
  const int b = 40;
  auto t =
      kcla::compress_kernel<double, Kokkos::HostSpace>(kcla::test::exec_space(), x, x, k, b, o);
  check_error(a, kcla::test::decompress(t), b, 0, 1e-5);
  EXPECT_EQ(t.rank(0, 3), 0);
  EXPECT_EQ(t.rank(3, 0), 0);
  o.max_rank = 2;
  kcla::TlrCompressReport report;
  auto capped = kcla::compress_kernel<float, kcla::test::memory_space>(kcla::test::exec_space(), x,
                                                                       x, k, b, o, &report);
  for (int r : capped.layout().ranks()) EXPECT_LE(r, 2);
  EXPECT_GT(report.capped_tiles, 0);
  EXPECT_EQ(report.fallback_tiles, 0);
}

TEST(TlrCompressRandomized, ZeroToleranceKeepsEverything) {
  auto gen = kcla::test::rng();
  const auto x = clustered_points(gen, 50);
  kcla::CovarianceKernel k;
  k.type = kcla::KernelType::exponential;
  const HostMatrix a = kernel_matrix(x, k);
  kcla::TlrCompressOptions o;
  o.relative_tolerance = 0;
  auto t =
      kcla::compress_kernel<double, Kokkos::HostSpace>(kcla::test::exec_space(), x, x, k, 16, o);
  EXPECT_LE(kcla::test::relative_error(kcla::test::decompress(t), a), 1e-12);
}

TEST(TlrCompressRandomized, RejectsBadArguments) {
  const kcla::test::exec_space exec;
  kcla::PointSet p2{2, {0, 0, 1, 1}}, p1{1, {0, 1}};
  EXPECT_THROW((kcla::compress_kernel<double, Kokkos::HostSpace>(exec, p2, p1, {}, 2)),
               kcla::InvalidArgument);
  EXPECT_THROW((kcla::compress_kernel<double, Kokkos::HostSpace>(exec, p2, p2, {}, 0)),
               kcla::InvalidArgument);
  kcla::TlrCompressOptions o;
  o.relative_tolerance = -1;
  EXPECT_THROW((kcla::compress_kernel<double, Kokkos::HostSpace>(exec, p2, p2, {}, 2, o)),
               kcla::InvalidArgument);
  o.relative_tolerance = std::nan("");
  EXPECT_THROW((kcla::compress_kernel<double, Kokkos::HostSpace>(exec, p2, p2, {}, 2, o)),
               kcla::InvalidArgument);
  kcla::CovarianceKernel inv;  // an infinite diagonal
  inv.type = kcla::KernelType::inverse_distance;
  inv.self_value = std::numeric_limits<double>::infinity();
  EXPECT_THROW((kcla::compress_kernel<double, Kokkos::HostSpace>(exec, p2, p2, inv, 2)),
               kcla::InvalidArgument);
}

}  // namespace
