// TLR compression: the error bound holds on kernel matrices of every kernel type and on
// dense inputs (per tile and globally), ranks respect the cap, low-rank inputs are found.
#include <kcla/tlr_compress.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "tlr_compress_checks.hpp"
#include "tlr_test_support.hpp"

namespace {

using kcla::test::check_error;
using kcla::test::clustered_points;
using kcla::test::HostMatrix;
using kcla::test::kernel_matrix;

TEST(TlrCompress, KernelMatricesMeetTheTolerance) {
  auto gen = kcla::test::rng();
  const auto x = clustered_points(gen, 200);
  const int b = 32;
  for (auto type : {kcla::KernelType::exponential, kcla::KernelType::matern12,
                    kcla::KernelType::matern32, kcla::KernelType::matern52,
                    kcla::KernelType::gaussian, kcla::KernelType::inverse_distance}) {
    kcla::CovarianceKernel k;
    k.type = type;
    k.length_scale = 0.3;
    k.self_value = 10.0;
    const HostMatrix a = kernel_matrix(x, k);
    for (double rel : {1e-3, 1e-7}) {
      kcla::TlrCompressOptions o;
      o.relative_tolerance = rel;
      auto t = kcla::compress_kernel<double, Kokkos::HostSpace>(x, x, k, b, o);
      const HostMatrix approx = kcla::test::decompress(t);
      SCOPED_TRACE(std::string(kcla::to_string(type)) + " rel " + std::to_string(rel));
      check_error(a, approx, b, rel, 0);
      if (type == kcla::KernelType::gaussian || type == kcla::KernelType::matern52) {
        // Smooth kernels compress: the average rank is well below the tile size.
        const auto& r = t.layout().ranks();
        EXPECT_LT(std::accumulate(r.begin(), r.end(), 0.0) / r.size(), 0.75 * b);
      }
    }
  }
}

TEST(TlrCompress, AbsoluteToleranceAndRankCap) {
  auto gen = kcla::test::rng();
  const auto x = clustered_points(gen, 150);
  kcla::CovarianceKernel k;
  k.type = kcla::KernelType::matern32;
  k.length_scale = 0.2;
  const HostMatrix a = kernel_matrix(x, k);
  kcla::TlrCompressOptions o;
  o.relative_tolerance = 0;
  o.absolute_tolerance = 1e-4;
  auto t = kcla::compress_kernel<double, Kokkos::HostSpace>(x, x, k, 24, o);
  check_error(a, kcla::test::decompress(t), 24, 0, 1e-4);
  o.max_rank = 3;
  auto capped = kcla::compress_kernel<double, Kokkos::HostSpace>(x, x, k, 24, o);
  for (int r : capped.layout().ranks()) EXPECT_LE(r, 3);
}

TEST(TlrCompress, DenseLowRankWithRaggedTiles) {
  auto gen = kcla::test::rng();
  const std::int64_t m = 70, n = 45;
  const int rank = 5, b = 16;
  HostMatrix x{m, rank, kcla::test::random_vector(gen, m * rank)};
  HostMatrix y{rank, n, kcla::test::random_vector(gen, rank * n)};
  HostMatrix a{m, n, std::vector<double>(static_cast<std::size_t>(m * n), 0.0)};
  for (std::int64_t c = 0; c < n; ++c)
    for (std::int64_t r = 0; r < m; ++r)
      for (int q = 0; q < rank; ++q) a(r, c) += x(r, q) * y(q, c);
  kcla::TlrCompressOptions o;
  o.relative_tolerance = 1e-12;
  auto t = kcla::compress<double, Kokkos::HostSpace>(a.v.data(), m, n, m, b, o);
  for (int r : t.layout().ranks()) EXPECT_LE(r, rank);
  EXPECT_EQ(t.layout().tile_height(t.tile_rows() - 1), 70 - 64);
  EXPECT_LE(kcla::test::relative_error(kcla::test::decompress(t), a), 1e-11);

  // float source (sgesdd) into fp32 and bf16 storage, on the default memory space.
  std::vector<float> af(a.v.begin(), a.v.end());
  o.relative_tolerance = 1e-5;
  auto tf = kcla::compress<float, kcla::test::memory_space>(af.data(), m, n, m, b, o);
  EXPECT_LE(kcla::test::relative_error(kcla::test::decompress(tf), a), 1e-4);
  auto tb = kcla::compress<kcla::bhalf_t, kcla::test::memory_space>(af.data(), m, n, m, b, o);
  EXPECT_EQ(tb.layout().rank_multiple(), 8);
  EXPECT_LE(kcla::test::relative_error(kcla::test::decompress(tb), a), 2e-2);
}

TEST(TlrCompress, FullRankWhenIncompressible) {
  auto gen = kcla::test::rng();
  const std::int64_t m = 20, n = 20;
  const auto v = kcla::test::random_vector(gen, m * n);
  kcla::TlrCompressOptions o;
  o.relative_tolerance = 0;
  auto t = kcla::compress<double, Kokkos::HostSpace>(v.data(), m, n, m, 8, o);
  for (int i = 0; i < t.tile_rows(); ++i)
    for (int j = 0; j < t.tile_cols(); ++j)
      EXPECT_EQ(t.rank(i, j), std::min(t.layout().tile_height(i), t.layout().tile_width(j)));
  EXPECT_LE(kcla::test::relative_error(kcla::test::decompress(t), HostMatrix{m, n, v}), 1e-13);
}

TEST(TlrCompress, RejectsBadArguments) {
  std::vector<double> a(16, 1.0);
  kcla::TlrCompressOptions o;
  o.relative_tolerance = -1;
  EXPECT_THROW((kcla::compress<double, Kokkos::HostSpace>(a.data(), 4, 4, 4, 2, o)),
               kcla::InvalidArgument);
  EXPECT_THROW((kcla::compress<double, Kokkos::HostSpace>(a.data(), 4, 4, 3, 2)),
               kcla::InvalidArgument);
  EXPECT_THROW((kcla::compress<double, Kokkos::HostSpace>(a.data(), 4, 4, 4, 0)),
               kcla::InvalidArgument);
  kcla::PointSet p2{2, {0, 0, 1, 1}}, p1{1, {0, 1}};
  EXPECT_THROW((kcla::compress_kernel<double, Kokkos::HostSpace>(p2, p1, {}, 2)),
               kcla::InvalidArgument);
}

TEST(TlrKernelFunction, NamesRoundTrip) {
  for (auto type : {kcla::KernelType::exponential, kcla::KernelType::matern12,
                    kcla::KernelType::matern32, kcla::KernelType::matern52,
                    kcla::KernelType::gaussian, kcla::KernelType::inverse_distance}) {
    const auto back = kcla::kernel_type_from_string(kcla::to_string(type));
    ASSERT_TRUE(back.has_value());
    // exponential and matern12 are one formula; the name of each comes back as itself.
    EXPECT_EQ(kcla::to_string(*back), std::string(kcla::to_string(type)));
  }
  EXPECT_FALSE(kcla::kernel_type_from_string("matern72").has_value());
  EXPECT_FALSE(kcla::kernel_type_from_string("").has_value());
}

TEST(TlrKernelFunction, MortonPointsAreSeededOrderedAndChecked) {
  for (int dim : {1, 2, 3}) {
    const auto a = kcla::morton_points(500, dim, 7), b = kcla::morton_points(500, dim, 7);
    EXPECT_EQ(a.dimension, dim);
    EXPECT_EQ(a.size(), 500);
    EXPECT_EQ(a.coordinates, b.coordinates);
    EXPECT_NE(a.coordinates, kcla::morton_points(500, dim, 8).coordinates);
    for (double c : a.coordinates) {
      EXPECT_GE(c, 0.0);
      EXPECT_LT(c, 1.0);
    }
    // Neighbours in the order are near in space: the mean step is far below a random pair's.
    double step = 0;
    for (std::int64_t p = 1; p < a.size(); ++p) step += a.distance(p - 1, a, p);
    EXPECT_LT(step / (a.size() - 1), 0.5 * std::sqrt(dim / 6.0));
  }
  EXPECT_THROW(kcla::morton_points(10, 4, 1), kcla::InvalidArgument);
  EXPECT_THROW(kcla::morton_points(10, 0, 1), kcla::InvalidArgument);
  EXPECT_THROW(kcla::morton_points(-1, 2, 1), kcla::InvalidArgument);
}

}  // namespace
