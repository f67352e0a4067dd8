// MPI: TLR matrices distributed 2D block-cyclically and SUMMA products, against the
// single-process product of the whole matrices (fp64 within 1e-12 relative): every op
// combination, TLR x dense, dense x TLR and TLR x TLR, uneven tile counts, grid shapes of
// every factorisation of the world, ranks without tiles, beta == 0 with a C of NaNs, and
// the broadcast volume against the SUMMA model. Run under mpirun -np 1..4.
#include <kcla/distributed_tlr_gemm.hpp>
#include <kcla/hdf5_tlr.hpp>
#include <kcla/tlr_compress.hpp>
#include <kcla/tlr_compress_randomized.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <vector>

#include "mpi_test_support.hpp"
#include "tlr_test_support.hpp"

namespace {

using kcla::Op;
using kcla::test::exec_space;
using kcla::test::HostMatrix;
using kcla::test::memory_space;
using kcla::test::shared_dir;
using kcla::test::shared_rng;
using kcla::test::world_rank;
using kcla::test::world_size;
using Dense = kcla::DistributedDenseMatrix<double, memory_space>;
using DistTlr = kcla::DistributedTlrMatrix<double, memory_space>;
using Whole = kcla::TlrMatrix<double, memory_space>;

// Every P x Q grid of the world.
std::vector<kcla::ProcessGrid> all_grids() {
  std::vector<kcla::ProcessGrid> grids;
  for (int p = 1; p <= world_size(); ++p)
    if (world_size() % p == 0) grids.emplace_back(MPI_COMM_WORLD, p, world_size() / p);
  return grids;
}

Whole random_whole(std::mt19937_64& gen, std::int64_t rows, std::int64_t cols, int tile) {
  return kcla::random_tlr<double, memory_space>(
      exec_space(), rows, cols, tile, kcla::test::random_ranks(gen, rows, cols, tile), gen());
}

HostMatrix random_host(std::mt19937_64& gen, std::int64_t rows, std::int64_t cols) {
  HostMatrix m{rows, cols, kcla::test::random_vector(gen, rows * cols)};
  return m;
}

Kokkos::View<double**, Kokkos::LayoutLeft, memory_space> to_view(const HostMatrix& m) {
  Kokkos::View<double**, Kokkos::LayoutLeft, memory_space> v("v", m.rows, m.cols);
  auto h = Kokkos::create_mirror_view(v);
  for (std::int64_t c = 0; c < m.cols; ++c)
    for (std::int64_t r = 0; r < m.rows; ++r) h(r, c) = m(r, c);
  Kokkos::deep_copy(v, h);
  return v;
}

Dense to_distributed(const kcla::ProcessGrid& grid, const HostMatrix& m, int block) {
  return kcla::distribute<double, memory_space>(grid, m.v.data(), m.rows, m.cols,
                                                std::max<std::int64_t>(1, m.rows), block);
}

double relative_difference(const std::vector<double>& a, const std::vector<double>& b) {
  return kcla::test::relative_error(a.data(), b.data(), a.size());
}

enum class Kinds { tlr_dense, dense_tlr, tlr_tlr };

// One product on one grid, with op(A) m x k and op(B) k x n.
void check_product(const kcla::ProcessGrid& grid, Kinds kinds, Op op_a, Op op_b, std::int64_t m,
                   std::int64_t k, std::int64_t n, int tile, double beta, std::mt19937_64& gen) {
  SCOPED_TRACE("grid " + std::to_string(grid.rows()) + " x " + std::to_string(grid.cols()) +
               ", kinds " + std::to_string(static_cast<int>(kinds)) + ", op_a " +
               (op_a == Op::T ? "T" : "N") + ", op_b " + (op_b == Op::T ? "T" : "N") + ", " +
               std::to_string(m) + " x " + std::to_string(k) + " x " + std::to_string(n));
  const std::int64_t ar = op_a == Op::N ? m : k, ac = op_a == Op::N ? k : m;
  const std::int64_t br = op_b == Op::N ? k : n, bc = op_b == Op::N ? n : k;
  const double alpha = 0.75;
  HostMatrix c0 = random_host(gen, m, n);
  Kokkos::View<double**, Kokkos::LayoutLeft, memory_space> c_whole = to_view(c0);
  Dense c = to_distributed(grid, c0, tile);

  kcla::DistributedGemmReport report;
  if (kinds == Kinds::tlr_dense) {
    const Whole a = random_whole(gen, ar, ac, tile);
    const HostMatrix b = random_host(gen, br, bc);
    kcla::gemm(exec_space(), op_a, a, op_b, to_view(b), alpha, beta, c_whole);
    report = kcla::gemm(exec_space(), op_a, kcla::distribute<double, memory_space>(grid, a), op_b,
                        to_distributed(grid, b, tile), alpha, beta, c);
  } else if (kinds == Kinds::dense_tlr) {
    const HostMatrix a = random_host(gen, ar, ac);
    const Whole b = random_whole(gen, br, bc, tile);
    kcla::gemm(exec_space(), op_a, to_view(a), op_b, b, alpha, beta, c_whole);
    report = kcla::gemm(exec_space(), op_a, to_distributed(grid, a, tile), op_b,
                        kcla::distribute<double, memory_space>(grid, b), alpha, beta, c);
  } else {
    const Whole a = random_whole(gen, ar, ac, tile);
    const Whole b = random_whole(gen, br, bc, tile);
    kcla::gemm(exec_space(), op_a, a, op_b, b, alpha, beta, c_whole);
    report = kcla::gemm(exec_space(), op_a, kcla::distribute<double, memory_space>(grid, a), op_b,
                        kcla::distribute<double, memory_space>(grid, b), alpha, beta, c);
  }
  exec_space().fence();
  const std::vector<double> got = kcla::allgather(c);
  const HostMatrix want = kcla::test::to_host(c_whole);
  ASSERT_EQ(got.size(), want.v.size());
  for (double x : got) ASSERT_TRUE(std::isfinite(x));
  EXPECT_LE(relative_difference(got, want.v), 1e-12);
  EXPECT_EQ(report.steps, static_cast<int>((k + tile - 1) / tile));
}

TEST(DistributedTlr, DistributeThenGatherGivesTheSameFactors) {
  auto gen = shared_rng();
  for (const auto& grid : all_grids()) {
    const Whole a = random_whole(gen, 53, 38, 8);
    const DistTlr d = kcla::distribute<double, memory_space>(grid, a);
    EXPECT_TRUE(d.structure().same_structure(a.layout()));
    const auto back = kcla::allgather(d);
    const auto u = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a.outer_factors());
    const auto v = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a.inner_factors());
    ASSERT_EQ(back.outer_factors().extent(0), u.extent(0));
    ASSERT_EQ(back.inner_factors().extent(0), v.extent(0));
    for (std::size_t e = 0; e < u.extent(0); ++e) ASSERT_EQ(back.outer_factors()(e), u(e));
    for (std::size_t e = 0; e < v.extent(0); ++e) ASSERT_EQ(back.inner_factors()(e), v(e));
    // Every tile lives on exactly one rank.
    std::int64_t tiles = d.local().tile_rows() * d.local().tile_cols();
    MPI_Allreduce(MPI_IN_PLACE, &tiles, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    EXPECT_EQ(tiles, a.tile_rows() * a.tile_cols());
  }
}

TEST(DistributedTlr, EveryOpCombinationEqualsTheSingleProcessProduct) {
  auto gen = shared_rng();
  for (const auto& grid : all_grids())
    for (Kinds kinds : {Kinds::tlr_dense, Kinds::dense_tlr, Kinds::tlr_tlr})
      for (Op op_a : {Op::N, Op::T})
        for (Op op_b : {Op::N, Op::T})
          // Uneven tile counts with short last tiles in every dimension.
          check_product(grid, kinds, op_a, op_b, 45, 37, 29, 8, -0.5, gen);
}

TEST(DistributedTlr, SinglePrecisionMatchesTheSingleProcessProduct) {
  auto gen = shared_rng();
  using FWhole = kcla::TlrMatrix<float, memory_space>;
  using FDense = Kokkos::View<float**, Kokkos::LayoutLeft, memory_space>;
  for (const auto& grid : all_grids())
    for (Op op_a : {Op::N, Op::T}) {
      const FWhole a = kcla::random_tlr<float, memory_space>(
          exec_space(), 48, 40, 8, kcla::test::random_ranks(gen, 48, 40, 8), gen());
      const std::int64_t m = op_a == Op::N ? 48 : 40, k = op_a == Op::N ? 40 : 48;
      FDense b("b", k, 12), c("c", m, 12);
      kcla::fill_random(exec_space(), b, gen());
      kcla::gemm(exec_space(), op_a, a, Op::N, b, 1.0, 0.0, c);
      const HostMatrix bh = kcla::test::to_host(b);
      std::vector<float> bf(bh.v.begin(), bh.v.end());
      auto db = kcla::distribute<float, memory_space>(grid, bf.data(), k, 12, k, 8);
      kcla::DistributedDenseMatrix<float, memory_space> dc(grid, m, 12, 8);
      kcla::gemm(exec_space(), op_a, kcla::distribute<float, memory_space>(grid, a), Op::N, db, 1.0,
                 0.0, dc);
      EXPECT_LE(relative_difference(kcla::allgather(dc), kcla::test::to_host(c).v), 1e-5);
    }
}

TEST(DistributedTlr, RanksWithoutTilesStillTakePart) {
  auto gen = shared_rng();
  // One tile row and one tile column of C: on a 2 x 2 grid three ranks hold no C block.
  for (const auto& grid : all_grids()) {
    check_product(grid, Kinds::tlr_dense, Op::N, Op::N, 6, 21, 5, 8, 1.0, gen);
    check_product(grid, Kinds::tlr_tlr, Op::T, Op::N, 7, 5, 30, 8, 0.25, gen);
    check_product(grid, Kinds::dense_tlr, Op::N, Op::T, 30, 3, 7, 8, 0.0, gen);
  }
}

TEST(DistributedTlr, BetaZeroDoesNotReadC) {
  auto gen = shared_rng();
  for (const auto& grid : all_grids()) {
    const Whole a = random_whole(gen, 40, 24, 8);
    const HostMatrix b = random_host(gen, 24, 17);
    Dense c(grid, 40, 17, 8);
    Kokkos::deep_copy(c.local(), std::numeric_limits<double>::quiet_NaN());
    kcla::gemm(exec_space(), Op::N, kcla::distribute<double, memory_space>(grid, a), Op::N,
               to_distributed(grid, b, 8), 1.0, 0.0, c);
    for (double x : kcla::allgather(c)) ASSERT_TRUE(std::isfinite(x));
    // An empty inner dimension: C <- beta C, and with beta == 0 zeros from NaNs.
    const Whole e = kcla::random_tlr<double, memory_space>(exec_space(), 40, 0, 8, {}, 1);
    Dense b0(grid, 0, 17, 8);
    kcla::gemm(exec_space(), Op::N, kcla::distribute<double, memory_space>(grid, e), Op::N, b0, 1.0,
               0.0, c);
    for (double x : kcla::allgather(c)) ASSERT_EQ(x, 0.0);
  }
}

TEST(DistributedTlr, BroadcastVolumeMatchesTheSummaModel) {
  auto gen = shared_rng();
  for (const auto& grid : all_grids()) {
    const Whole a = random_whole(gen, 96, 80, 8);
    const HostMatrix b = random_host(gen, 80, 40);
    Dense c(grid, 96, 40, 8);
    const auto report =
        kcla::gemm(exec_space(), Op::N, kcla::distribute<double, memory_space>(grid, a), Op::N,
                   to_distributed(grid, b, 8), 1.0, 0.0, c);
    // Summed over the ranks the payload received is exactly the model's (Q - 1)|A| +
    // (P - 1)|B|; what one rank receives depends on its tiles' ranks.
    std::int64_t received = report.panel_bytes_received, sent = report.panel_bytes_sent;
    MPI_Allreduce(MPI_IN_PLACE, &received, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &sent, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    EXPECT_NEAR(static_cast<double>(received), report.model_bytes * grid.size(),
                1e-9 * report.model_bytes * grid.size() + 0.5);
    EXPECT_EQ(received, sent);
    EXPECT_EQ(report.transpose_bytes_received, 0);
  }
}

TEST(DistributedTlr, CompressionSplitsTheTilesAndMatchesOneProcess) {
  // A 30 x 30 grid of points in the unit square: 900 points, tiles of 64 (a short last one).
  kcla::PointSet points{2, {}};
  for (int x = 0; x < 30; ++x)
    for (int y = 0; y < 30; ++y)
      points.coordinates.insert(points.coordinates.end(), {x / 29.0, y / 29.0});
  kcla::CovarianceKernel kernel;
  kernel.type = kcla::KernelType::matern32;
  kernel.length_scale = 0.2;
  kcla::TlrCompressOptions options;
  options.relative_tolerance = 1e-9;
  const auto one = kcla::compress_kernel<double, memory_space>(points, points, kernel, 64, options);
  for (const auto& grid : all_grids()) {
    const auto d =
        kcla::compress_kernel<double, memory_space>(grid, points, points, kernel, 64, options);
    ASSERT_EQ(d.structure().ranks(), one.layout().ranks());
    const HostMatrix want = kcla::test::decompress(one);
    const HostMatrix got = kcla::test::decompress(kcla::allgather(d));
    EXPECT_LE(kcla::test::relative_error(got, want), 1e-14);
  }
  // A dense source every rank holds (here: that kernel matrix, 900 x 700).
  HostMatrix dense{900, 700, std::vector<double>(900 * 700)};
  for (std::int64_t c = 0; c < dense.cols; ++c)
    for (std::int64_t r = 0; r < dense.rows; ++r) dense(r, c) = kernel(points, r, points, c);
  const auto one_dense = kcla::compress<double, memory_space>(dense.v.data(), dense.rows,
                                                              dense.cols, dense.rows, 64, options);
  for (const auto& grid : all_grids()) {
    const auto d = kcla::compress<double, memory_space>(grid, dense.v.data(), dense.rows,
                                                        dense.cols, dense.rows, 64, options);
    ASSERT_EQ(d.structure().ranks(), one_dense.layout().ranks());
    EXPECT_LE(kcla::test::relative_error(kcla::test::decompress(kcla::allgather(d)),
                                         kcla::test::decompress(one_dense)),
              1e-14);
  }
}

TEST(DistributedTlr, RandomizedCompressionOnEachRankMatchesOneProcess) {
  // Uneven on purpose: 700 row points and 530 column points in tiles of 64.
  auto gen = shared_rng();
  kcla::PointSet rows{2, kcla::test::random_vector(gen, 2 * 700, 0.0, 1.0)};
  kcla::PointSet cols{2, kcla::test::random_vector(gen, 2 * 530, 0.0, 1.0)};
  kcla::CovarianceKernel kernel;
  kernel.type = kcla::KernelType::matern52;
  kernel.length_scale = 0.3;
  kcla::TlrCompressOptions options;
  options.relative_tolerance = 1e-7;
  kcla::TlrCompressReport one_report;
  const auto one = kcla::compress_kernel<double, memory_space>(exec_space(), rows, cols, kernel, 64,
                                                               options, &one_report);
  EXPECT_EQ(one_report.tiles, 11 * 9);
  for (const auto& grid : all_grids()) {
    kcla::TlrCompressReport report;
    const auto d = kcla::compress_kernel<double, memory_space>(exec_space(), grid, rows, cols,
                                                               kernel, 64, options, &report);
    EXPECT_EQ(report.tiles, d.local().tile_rows() * d.local().tile_cols());
    // A tile's samples and arithmetic do not depend on which rank or batch holds it.
    ASSERT_EQ(d.structure().ranks(), one.layout().ranks());
    EXPECT_LE(kcla::test::relative_error(kcla::test::decompress(kcla::allgather(d)),
                                         kcla::test::decompress(one)),
              1e-12);
  }
}

// Factors of two host TLR matrices, element by element.
void expect_same_factors(const kcla::TlrMatrix<double, Kokkos::HostSpace>& got, const Whole& want) {
  const auto u = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), want.outer_factors());
  const auto v = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), want.inner_factors());
  ASSERT_TRUE(got.layout().same_structure(want.layout()));
  for (std::size_t e = 0; e < u.extent(0); ++e) ASSERT_EQ(got.outer_factors()(e), u(e));
  for (std::size_t e = 0; e < v.extent(0); ++e) ASSERT_EQ(got.inner_factors()(e), v(e));
}

TEST(DistributedTlr, FileWrittenByOneGridIsReadByEveryGridAndOneProcess) {
  auto gen = shared_rng();
  const std::string dir = shared_dir();
  const std::string path = dir + "/a.h5";
  const auto grids = all_grids();
  for (const auto& writer : grids) {
    const Whole a = random_whole(gen, 61, 45, 8);
    kcla::write_tlr_hdf5(path, kcla::distribute<double, memory_space>(writer, a));
    // One process reads the whole file.
    if (world_rank() == 0)
      expect_same_factors(kcla::read_tlr_hdf5<double, Kokkos::HostSpace>(path), a);
    for (const auto& reader : grids) {
      const auto d = kcla::read_tlr_hdf5<double, memory_space>(reader, path);
      expect_same_factors(kcla::allgather(d), a);
      // In fp32: the values rounded, the ranks the same.
      const auto f = kcla::read_tlr_hdf5<float, memory_space>(reader, path);
      EXPECT_EQ(f.structure().ranks(), a.layout().ranks());
      const auto fw = kcla::allgather(f);
      EXPECT_LE(kcla::test::relative_error(kcla::test::decompress(fw), kcla::test::decompress(a)),
                1e-6);
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
  // A file written by one process, read by the grid.
  const Whole b = random_whole(gen, 30, 50, 8);
  if (world_rank() == 0) kcla::write_tlr_hdf5(path, b);
  MPI_Barrier(MPI_COMM_WORLD);
  expect_same_factors(kcla::allgather(kcla::read_tlr_hdf5<double, memory_space>(
                          kcla::ProcessGrid(MPI_COMM_WORLD), path)),
                      b);
  MPI_Barrier(MPI_COMM_WORLD);
  if (world_rank() == 0) std::filesystem::remove_all(dir);
}

TEST(DistributedTlr, AFailedCollectiveWriteLeavesNoFile) {
  const std::string dir = shared_dir();
  const std::string path = dir + "/bad.h5";
  const kcla::ProcessGrid grid(MPI_COMM_WORLD);
  // Full-rank tiles; the last tile row is 4 rows high, so rows 4..7 of its U are padding.
  std::vector<int> ranks{8, 8, 4, 8, 8, 4, 4, 4, 4};
  const Whole a = kcla::random_tlr<double, memory_space>(exec_space(), 20, 20, 8, ranks, 7);
  auto d = kcla::distribute<double, memory_space>(grid, a);
  // The owner of tile (2, 0) puts a nonzero into that padding.
  if (grid.row() == 2 % grid.rows() && grid.col() == 0) {
    const auto& l = d.local().layout();
    const auto at = l.outer_offset(l.tile_rows() - 1, 0) + 5;
    Kokkos::deep_copy(Kokkos::subview(d.local().outer_factors(), std::make_pair(at, at + 1)), 1.0);
  }
  EXPECT_THROW(kcla::write_tlr_hdf5(path, d), kcla::InvalidArgument);
  MPI_Barrier(MPI_COMM_WORLD);
  int files = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++files;
  EXPECT_EQ(files, 0);
  MPI_Barrier(MPI_COMM_WORLD);
  if (world_rank() == 0) std::filesystem::remove_all(dir);
}

TEST(DistributedTlr, APlanServesNewValuesOfTheSameStructure) {
  auto gen = shared_rng();
  for (const auto& grid : all_grids()) {
    const auto ranks = kcla::test::random_ranks(gen, 50, 34, 8);
    const Whole a1 = kcla::random_tlr<double, memory_space>(exec_space(), 50, 34, 8, ranks, gen());
    const Whole a2 = kcla::random_tlr<double, memory_space>(exec_space(), 50, 34, 8, ranks, gen());
    const HostMatrix b = random_host(gen, 50, 9);
    const auto d1 = kcla::distribute<double, memory_space>(grid, a1);
    const auto d2 = kcla::distribute<double, memory_space>(grid, a2);
    const Dense db = to_distributed(grid, b, 8);
    Dense c(grid, 34, 9, 8);
    const auto plan = kcla::analyze(Op::T, d1, Op::N, db, c);
    EXPECT_EQ(plan.steps(), 7);
    for (const Whole* a : {&a1, &a2, &a1}) {
      const auto& d = a == &a2 ? d2 : d1;
      kcla::gemm(exec_space(), plan, d, db, 1.0, 0.0, c);
      Kokkos::View<double**, Kokkos::LayoutLeft, memory_space> want("want", 34, 9);
      kcla::gemm(exec_space(), Op::T, *a, Op::N, to_view(b), 1.0, 0.0, want);
      EXPECT_LE(relative_difference(kcla::allgather(c), kcla::test::to_host(want).v), 1e-12);
    }
    // Another structure is refused.
    const Whole other = random_whole(gen, 50, 34, 8);
    EXPECT_THROW(kcla::gemm(exec_space(), plan, kcla::distribute<double, memory_space>(grid, other),
                            db, 1.0, 0.0, c),
                 kcla::InvalidArgument);
  }
}

TEST(DistributedTlr, AnErrorOnSomeRanksIsAnErrorOnAll) {
  auto gen = shared_rng();
  // C has one block column: on a 1 x N grid only rank 0 holds blocks of C and plans local
  // products, and only it meets the too small workspace budget. Every rank must throw
  // (none may wait in a broadcast).
  const kcla::ProcessGrid row(MPI_COMM_WORLD, 1, world_size());
  const Whole a = random_whole(gen, 40, 40, 8);
  const auto da = kcla::distribute<double, memory_space>(row, a);
  Dense b(row, 40, 5, 8), c(row, 40, 5, 8);
  kcla::TlrGemmOptions options;
  options.workspace_bytes = 8;
  EXPECT_THROW(kcla::analyze(Op::N, da, Op::N, b, c, options), kcla::Error);
  // A file missing on every rank: every rank throws, naming it.
  try {
    kcla::read_tlr_hdf5<double, memory_space>(row, "/nonexistent/kcla.h5");
    ADD_FAILURE() << "no error";
  } catch (const kcla::Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/kcla.h5"), std::string::npos) << e.what();
  }
}

TEST(DistributedTlr, DenseTf32PanelsGetLeadingDimensionsTheGroupedGemmTakes) {
  auto gen = shared_rng();
  // A dense A of 30 rows (not a multiple of 4) times a TLR B with TF32 math: the panels'
  // leading dimensions are padded (host backends compute in fp32).
  for (const auto& grid : all_grids()) {
    using FWhole = kcla::TlrMatrix<float, memory_space>;
    const FWhole b = kcla::random_tlr<float, memory_space>(
        exec_space(), 24, 18, 8, kcla::test::random_ranks(gen, 24, 18, 8), gen());
    std::vector<float> a(30 * 24);
    for (auto& x : a) x = static_cast<float>(std::uniform_real_distribution<>(-1, 1)(gen));
    Kokkos::View<float**, Kokkos::LayoutLeft, memory_space> aw("a", 30, 24), cw("c", 30, 18);
    auto ah = Kokkos::create_mirror_view(aw);
    for (int col = 0; col < 24; ++col)
      for (int r = 0; r < 30; ++r) ah(r, col) = a[r + col * 30];
    Kokkos::deep_copy(aw, ah);
    kcla::gemm(exec_space(), Op::N, aw, Op::N, b, 1.0, 0.0, cw);
    kcla::TlrGemmOptions options;
    options.math = kcla::TlrMath::tf32;
    kcla::DistributedDenseMatrix<float, memory_space> dc(grid, 30, 18, 8);
    kcla::gemm(exec_space(), Op::N,
               kcla::distribute<float, memory_space>(grid, a.data(), 30, 24, 30, 8), Op::N,
               kcla::distribute<float, memory_space>(grid, b), 1.0, 0.0, dc, options);
    EXPECT_LE(relative_difference(kcla::allgather(dc), kcla::test::to_host(cw).v),
              kcla::test::product_tolerance<float>(kcla::TlrMath::tf32));
  }
}

TEST(DistributedTlr, MismatchedOperandsAreRejected) {
  auto gen = shared_rng();
  const kcla::ProcessGrid grid(MPI_COMM_WORLD);
  const Whole a = random_whole(gen, 24, 16, 8);
  const auto da = kcla::distribute<double, memory_space>(grid, a);
  Dense b(grid, 16, 8, 8), wrong_k(grid, 15, 8, 8), wrong_block(grid, 16, 8, 4);
  Dense c(grid, 24, 8, 8);
  EXPECT_THROW(kcla::gemm(exec_space(), Op::N, da, Op::N, wrong_k, 1.0, 0.0, c),
               kcla::InvalidArgument);
  EXPECT_THROW(kcla::gemm(exec_space(), Op::N, da, Op::N, wrong_block, 1.0, 0.0, c),
               kcla::InvalidArgument);
  EXPECT_THROW(kcla::gemm(exec_space(), Op::T, da, Op::N, b, 1.0, 0.0, c), kcla::InvalidArgument);
  if (world_size() > 1) {
    const kcla::ProcessGrid column(MPI_COMM_WORLD, world_size(), 1);
    Dense other(column, 16, 8, 8);
    EXPECT_THROW(kcla::gemm(exec_space(), Op::N, da, Op::N, other, 1.0, 0.0, c),
                 kcla::InvalidArgument);
  }
  EXPECT_THROW(kcla::ProcessGrid(MPI_COMM_WORLD, world_size() + 1, 1), kcla::InvalidArgument);
  // A dense source with a leading dimension below its rows, or no tile size.
  std::vector<double> dense(16, 1.0);
  EXPECT_THROW((kcla::compress<double, memory_space>(grid, dense.data(), 4, 4, 3, 2)),
               kcla::InvalidArgument);
  EXPECT_THROW((kcla::compress<double, memory_space>(grid, dense.data(), 4, 4, 4, 0)),
               kcla::InvalidArgument);
}

}  // namespace
