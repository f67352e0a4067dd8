// MPI: block compression by ranks, one parallel HDF5 file written by every rank and read
// by one, and distributed products equal to the single-process result (bit for bit for
// Boolean and min-plus, 1e-6 relative for plus-times). Run under mpirun -np 1..4.
#include <kcla/block_compress.hpp>
#include <kcla/distributed_grammar_matrix.hpp>
#include <kcla/hdf5_block_grammar.hpp>
#include <kcla/hdf5_block_grammar_mpi.hpp>

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "mpi_test_support.hpp"

namespace {

using exec = Kokkos::DefaultExecutionSpace;
using memory = exec::memory_space;

using kcla::test::shared_dir;
using kcla::test::shared_rng;
using kcla::test::world_rank;
using kcla::test::world_size;

kcla::CsrMatrix<double> shared_panel(std::mt19937_64& gen, std::int64_t rows, std::int64_t cols) {
  kcla::SyntheticPanelOptions o;
  o.seed = gen();
  return kcla::synthetic_genotype_panel(rows, cols, o);
}

kcla::BlockGrammar this_ranks_share(const kcla::BlockGrammar& all) {
  kcla::BlockGrammar share;
  share.layout = all.layout;
  for (auto id : kcla::rank_blocks(all.layout, world_rank(), world_size())) {
    share.block_ids.push_back(id);
    share.grammars.push_back(all.grammars[id]);
  }
  return share;
}

// The distributed product against the whole block matrix on this one rank.
template <class Semiring>
void check_distributed(
    const kcla::BlockGrammar& all,
    const kcla::DistributedGrammarMatrix<
        std::conditional_t<std::is_same<typename Semiring::value_type, bool>::value, float,
                           typename Semiring::value_type>,
        memory>& D,
    std::int64_t B, std::mt19937_64& gen) {
  using T = typename Semiring::value_type;
  using Scalar = std::conditional_t<std::is_same<T, bool>::value, float, T>;
  kcla::BlockGrammarMatrix<Scalar, memory> whole(all);
  Kokkos::View<T**, Kokkos::LayoutRight, memory> x("x", all.num_cols(), B),
      y("y", all.num_rows(), B), expected("expected", all.num_rows(), B);
  auto xh = Kokkos::create_mirror_view(x);
  std::uniform_real_distribution<double> u(0, 1);
  for (std::int64_t k = 0; k < all.num_cols() * B; ++k) {
    const double r = u(gen);
    if constexpr (std::is_same<T, bool>::value)
      xh.data()[k] = r < 0.2;
    else if constexpr (std::is_same<Semiring, kcla::MinPlus<T>>::value)
      xh.data()[k] = r < 0.3 ? static_cast<T>(INFINITY) : static_cast<T>(10 * r);
    else
      xh.data()[k] = static_cast<T>(2 * r - 1);
  }
  Kokkos::deep_copy(x, xh);
  kcla::multiply<Semiring>(exec(), whole, x, expected);
  kcla::multiply<Semiring>(exec(), D, x, y);
  Kokkos::fence();
  auto yh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y);
  auto eh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), expected);
  if constexpr (std::is_same<Semiring, kcla::PlusTimes<T>>::value) {
    // Another summation order: within 1e-6 relative (norm-wise) for fp32, 1e-12 for fp64.
    double num = 0, den = 0;
    for (std::int64_t k = 0; k < all.num_rows() * B; ++k) {
      const double d = double(yh.data()[k]) - double(eh.data()[k]);
      num += d * d;
      den += double(eh.data()[k]) * double(eh.data()[k]);
    }
    const double tolerance = std::is_same<T, float>::value ? 1e-6 : 1e-12;
    EXPECT_LE(std::sqrt(num / den), tolerance);
  } else {
    for (std::int64_t k = 0; k < all.num_rows() * B; ++k)
      ASSERT_EQ(yh.data()[k], eh.data()[k]) << k;  // bit for bit
  }
}

TEST(Distributed, RankBlocksPartitionTheLayout) {
  const auto layout = kcla::BlockLayout::column_blocks(10, 1000, 37);
  std::vector<int> owners(static_cast<std::size_t>(layout.num_blocks()), 0);
  for (int r = 0; r < world_size(); ++r)
    for (auto id : kcla::rank_blocks(layout, r, world_size())) ++owners[id];
  for (int o : owners) EXPECT_EQ(o, 1);
}

// Every rank compresses the same random panel in column blocks of `block_cols`.
kcla::BlockGrammar block_panel(std::mt19937_64& gen, std::int64_t rows, std::int64_t cols,
                               std::int64_t block_cols) {
  const auto a = shared_panel(gen, rows, cols);
  kcla::CsrColumnBlockSource source(a);
  kcla::BlockCompressOptions o;
  o.block_cols = block_cols;
  o.threads = 1;
  return kcla::compress_blocks(source, o);
}

// Distributed products in every semiring (fp32 and fp64 plus-times) for B = 1 and `B`.
void check_every_semiring(const kcla::BlockGrammar& all,
                          const kcla::DistributedGrammarMatrix<float, memory>& Df,
                          const kcla::DistributedGrammarMatrix<double, memory>& Dd, std::int64_t B,
                          std::mt19937_64& gen) {
  for (std::int64_t b : {std::int64_t{1}, B}) {
    check_distributed<kcla::PlusTimes<float>>(all, Df, b, gen);
    check_distributed<kcla::PlusTimes<double>>(all, Dd, b, gen);
    check_distributed<kcla::Boolean>(all, Df, b, gen);
    check_distributed<kcla::MinPlus<float>>(all, Df, b, gen);
  }
}

TEST(Distributed, ProductsEqualTheSingleProcessResult) {
  auto gen = shared_rng();
  const auto all = block_panel(gen, 70, 1500, 128);
  const auto share = this_ranks_share(all);
  kcla::DistributedGrammarMatrix<float, memory> Df(MPI_COMM_WORLD, share);
  kcla::DistributedGrammarMatrix<double, memory> Dd(MPI_COMM_WORLD, share);
  check_every_semiring(all, Df, Dd, 3, gen);
  if (Kokkos::SpaceAccessibility<Kokkos::HostSpace, memory>::accessible) {
    EXPECT_EQ(Df.last_transport(), kcla::MpiTransport::host_staged);
  }
}

// Every transport a caller can ask for gives the single-process result, or (a device
// transport this machine cannot give) an error on every rank that says why. Host memory
// always goes through host MPI. KCLA_TEST_EXPECT_NCCL=1 (the GPU runs, one GPU per rank)
// makes NCCL's absence a failure instead of a skip-worthy note.
TEST(Distributed, EveryTransportGivesTheSingleProcessResultOrSaysWhyNot) {
  auto gen = shared_rng();
  const auto all = block_panel(gen, 60, 1200, 100);
  const auto share = this_ranks_share(all);
  constexpr bool host_memory = Kokkos::SpaceAccessibility<Kokkos::HostSpace, memory>::accessible;
  const char* expect_nccl = std::getenv("KCLA_TEST_EXPECT_NCCL");
  using R = kcla::MpiTransportRequest;
  for (R request : {R::host_staged, R::device_buffers, R::nccl, R::automatic}) {
    SCOPED_TRACE(kcla::to_string(request));
    kcla::DistributedGrammarMatrix<float, memory> Df(MPI_COMM_WORLD, share);
    kcla::DistributedGrammarMatrix<double, memory> Dd(MPI_COMM_WORLD, share);
    Df.request_transport(request);
    Dd.request_transport(request);
    try {
      check_every_semiring(all, Df, Dd, 5, gen);
    } catch (const kcla::InvalidArgument& e) {
      // Only a named device transport may be refused, and only with its reason.
      ASSERT_FALSE(host_memory) << e.what();
      ASSERT_TRUE(request == R::nccl || request == R::device_buffers) << e.what();
      EXPECT_NE(std::string(e.what()).find("asked for but"), std::string::npos) << e.what();
      if (request == R::nccl && expect_nccl && std::string(expect_nccl) == "1")
        ADD_FAILURE() << "KCLA_TEST_EXPECT_NCCL=1 but: " << e.what();
      if (world_rank() == 0) std::printf("[ note ] %s\n", e.what());
      continue;
    }
    if (host_memory) {
      EXPECT_EQ(Df.last_transport(), kcla::MpiTransport::host_staged);
      continue;
    }
    switch (request) {
      case R::host_staged:
        EXPECT_EQ(Df.last_transport(), kcla::MpiTransport::host_staged);
        break;
      case R::device_buffers:
        EXPECT_EQ(Df.last_transport(), kcla::MpiTransport::device_buffers);
        break;
      case R::nccl:
        EXPECT_EQ(Df.last_transport(), kcla::MpiTransport::nccl);
        break;
      case R::automatic:
        // The first that works: NCCL, then CUDA-aware MPI; a passed-over one has a note.
        if (Df.last_transport() != kcla::MpiTransport::nccl) {
          EXPECT_FALSE(Df.transport_note().empty());
        }
        if (expect_nccl && std::string(expect_nccl) == "1") {
          EXPECT_EQ(Df.last_transport(), kcla::MpiTransport::nccl) << Df.transport_note();
        }
        if (world_rank() == 0)
          std::printf("[ note ] automatic: %s%s%s\n", kcla::to_string(Df.last_transport()),
                      Df.transport_note().empty() ? "" : "; ", Df.transport_note().c_str());
        break;
    }
  }
}

TEST(Distributed, RanksCompressAndWriteOneFileThatReadsInOneProcess) {
  auto gen = shared_rng();
  const auto a = shared_panel(gen, 50, 2000);
  kcla::BlockCompressOptions o;
  o.block_cols = 150;
  o.threads = 2;
  kcla::CsrColumnBlockSource source(a);
  const auto share = kcla::compress_blocks(MPI_COMM_WORLD, source, o);
  EXPECT_EQ(share.block_ids, kcla::rank_blocks(share.layout, world_rank(), world_size()));
  const auto dir = shared_dir();
  const auto path = dir + "/panel.h5";
  kcla::write_block_grammar_hdf5(MPI_COMM_WORLD, path, share);
  // Read back in one process: every block, the same as one process compressing alone.
  kcla::CsrColumnBlockSource again(a);
  const auto alone = kcla::compress_blocks(again, o);
  const auto read = kcla::read_block_grammar_hdf5(path);
  ASSERT_EQ(read.layout.blocks, alone.layout.blocks);
  for (std::size_t i = 0; i < alone.grammars.size(); ++i) {
    EXPECT_EQ(read.grammars[i].sequence, alone.grammars[i].sequence) << i;
    EXPECT_EQ(read.grammars[i].rule_left, alone.grammars[i].rule_left) << i;
  }
  const auto d = read.decompress();
  EXPECT_EQ(d.column_indices, a.column_indices);
  EXPECT_EQ(d.values, a.values);
  // Each rank reads its own blocks of the file and the product matches.
  kcla::DistributedGrammarMatrix<float, memory> D(MPI_COMM_WORLD, path);
  EXPECT_EQ(D.local().num_held_blocks(),
            kcla::rank_blocks(read.layout, world_rank(), world_size()).size());
  check_distributed<kcla::PlusTimes<float>>(alone, D, 2, gen);
  MPI_Barrier(MPI_COMM_WORLD);
  if (world_rank() == 0) std::filesystem::remove_all(dir);
}

TEST(Distributed, DisagreeingLayoutsFailOnEveryRankAndLeaveNoFile) {
  if (world_size() < 2) GTEST_SKIP() << "needs two ranks to disagree";
  auto gen = shared_rng();
  const auto a = shared_panel(gen, 20, 400);
  kcla::CsrColumnBlockSource source(a);
  kcla::BlockCompressOptions o;
  o.block_cols = 100;
  auto share = kcla::compress_blocks(MPI_COMM_WORLD, source, o);
  if (world_rank() == world_size() - 1) share.layout.num_rows += 1;  // one rank disagrees
  const auto dir = shared_dir();
  EXPECT_THROW(kcla::write_block_grammar_hdf5(MPI_COMM_WORLD, dir + "/bad.h5", share), kcla::Error);
  MPI_Barrier(MPI_COMM_WORLD);
  std::size_t files = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++files;
  EXPECT_EQ(files, 0u);
  MPI_Barrier(MPI_COMM_WORLD);
  if (world_rank() == 0) std::filesystem::remove_all(dir);
}

// A device budget one rank's blocks do not fit: every rank throws (none waits for the
// failed rank in a product).
TEST(Distributed, ABudgetOneRankCannotMeetFailsOnEveryRank) {
  if (world_size() < 2) GTEST_SKIP() << "needs two ranks, one failing";
  auto gen = shared_rng();
  const auto a = shared_panel(gen, 30, 600);
  kcla::CsrColumnBlockSource source(a);
  kcla::BlockCompressOptions o;
  o.block_cols = 64;
  o.threads = 1;
  const auto share = this_ranks_share(kcla::compress_blocks(source, o));
  kcla::BlockMatrixOptions tight;
  if (world_rank() == world_size() - 1) tight.device_budget_bytes = 1;  // this rank fails
  using matrix = kcla::DistributedGrammarMatrix<float, memory>;
  if (world_rank() == world_size() - 1) {
    EXPECT_TRUE(kcla::test::throws_with<kcla::InvalidArgument>(
        [&] { matrix(MPI_COMM_WORLD, share, kcla::GrammarMatrixOptions(), tight); },
        {"slots of the largest block"}));
  } else {
    EXPECT_TRUE(kcla::test::throws_with<kcla::InvalidArgument>(
        [&] { matrix(MPI_COMM_WORLD, share, kcla::GrammarMatrixOptions(), tight); },
        {"another rank"}));
  }
}

}  // namespace
