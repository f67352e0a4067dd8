// Block grammars: layouts, streaming block compression (threads, memory budget, order),
// and products over blocks in every semiring against the CSR reference, resident and
// out of core (blocks streamed through device slots).
#include <kcla/block_compress.hpp>
#include <kcla/block_grammar_multiply.hpp>
#include <kcla/grammar_multiply.hpp>
#include <kcla/grammar_reference.hpp>
#include <kcla/repair.hpp>

#include <gtest/gtest.h>

#include "test_support.hpp"

namespace {

using exec = Kokkos::DefaultExecutionSpace;
using memory = exec::memory_space;

void expect_same_csr(const kcla::CsrMatrix<double>& a, const kcla::CsrMatrix<double>& b) {
  ASSERT_EQ(a.num_rows, b.num_rows);
  ASSERT_EQ(a.num_cols, b.num_cols);
  EXPECT_EQ(a.row_offsets, b.row_offsets);
  EXPECT_EQ(a.column_indices, b.column_indices);
  EXPECT_EQ(a.values, b.values);
}

// A panel with shared segments, so blocks compress to real rules.
kcla::CsrMatrix<double> panel(std::mt19937_64& gen, std::int64_t rows, std::int64_t cols) {
  kcla::SyntheticPanelOptions o;
  o.seed = gen();
  return kcla::synthetic_genotype_panel(rows, cols, o);
}

TEST(BlockLayout, ColumnBlocksCoverTheMatrix) {
  const auto l = kcla::BlockLayout::column_blocks(7, 10, 4);
  ASSERT_EQ(l.num_blocks(), 3);
  EXPECT_EQ(l.blocks[0], (kcla::BlockExtent{0, 7, 0, 4}));
  EXPECT_EQ(l.blocks[2], (kcla::BlockExtent{0, 7, 8, 10}));
  EXPECT_THROW(kcla::BlockLayout::column_blocks(7, 10, 0), kcla::InvalidArgument);
}

TEST(BlockLayout, RejectsBlocksOutsideTheMatrix) {
  kcla::BlockLayout l;
  l.num_rows = 4;
  l.num_cols = 5;
  l.blocks.push_back({0, 4, 3, 6});
  try {
    l.validate("layout");
    FAIL() << "no error";
  } catch (const kcla::InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("block 0"), std::string::npos) << e.what();
  }
  l.blocks[0] = {2, 1, 0, 5};
  EXPECT_THROW(l.validate(), kcla::InvalidArgument);
}

TEST(BlockGrammar, ColumnSliceMatchesTheEntries) {
  auto gen = kcla::test::rng();
  const auto a = kcla::test::random_csr(gen, 40, 90, 0.2, 3);
  std::int64_t nnz = 0;
  for (std::int64_t c0 = 0; c0 < 90; c0 += 17) {
    const auto s = kcla::column_slice(a, c0, std::min<std::int64_t>(90, c0 + 17));
    s.validate();
    nnz += s.nnz();
    for (std::int64_t r = 0; r < a.num_rows; ++r)
      for (auto k = s.row_offsets[r]; k < s.row_offsets[r + 1]; ++k) {
        const auto* first = a.column_indices.data() + a.row_offsets[r];
        const auto* last = a.column_indices.data() + a.row_offsets[r + 1];
        const auto* p = std::find(first, last, s.column_indices[k] + c0);
        ASSERT_NE(p, last);
        EXPECT_EQ(a.values[p - a.column_indices.data()], s.values[k]);
      }
  }
  EXPECT_EQ(nnz, a.nnz());
  EXPECT_THROW(kcla::column_slice(a, 80, 91), kcla::InvalidArgument);
}

TEST(BlockCompress, BlocksDecompressToTheInputForAnyThreadCount) {
  auto gen = kcla::test::rng();
  const auto a = panel(gen, 60, 1000);
  kcla::BlockCompressOptions o;
  o.block_cols = 128;
  std::vector<kcla::BlockGrammar> results;
  for (int threads : {1, 3}) {
    o.threads = threads;
    kcla::CsrColumnBlockSource source(a);
    kcla::BlockCompressStats stats;
    results.push_back(kcla::compress_blocks(source, o, &stats));
    EXPECT_EQ(stats.blocks, 8);
    EXPECT_EQ(stats.nonzeros, a.nnz());
    EXPECT_EQ(stats.threads, threads);
    expect_same_csr(results.back().decompress(), a);
  }
  // Deterministic: the same grammars whatever the thread count.
  ASSERT_EQ(results[0].grammars.size(), results[1].grammars.size());
  for (std::size_t i = 0; i < results[0].grammars.size(); ++i) {
    EXPECT_EQ(results[0].grammars[i].sequence, results[1].grammars[i].sequence);
    EXPECT_EQ(results[0].grammars[i].rule_left, results[1].grammars[i].rule_left);
  }
}

TEST(BlockCompress, HandsBlocksOnInColumnOrderWithProgress) {
  auto gen = kcla::test::rng();
  const auto a = panel(gen, 30, 700);
  kcla::BlockCompressOptions o;
  o.block_cols = 50;
  o.threads = 4;
  std::vector<std::int64_t> seen_progress;
  o.progress = [&](const kcla::BlockCompressProgress& p) {
    seen_progress.push_back(p.blocks_done);
    EXPECT_EQ(p.columns_total, 700);
  };
  std::vector<std::int64_t> ids;
  std::int64_t next_col = 0;
  kcla::CsrColumnBlockSource source(a);
  const auto layout = kcla::compress_blocks(
      source, o, [&](std::int64_t id, const kcla::BlockExtent& e, kcla::Grammar&& g) {
        ids.push_back(id);
        EXPECT_EQ(e.col_begin, next_col);
        EXPECT_EQ(g.num_cols, e.cols());
        next_col = e.col_end;
      });
  ASSERT_EQ(ids.size(), 14u);
  for (std::size_t i = 0; i < ids.size(); ++i) EXPECT_EQ(ids[i], static_cast<std::int64_t>(i));
  EXPECT_EQ(seen_progress.back(), 14);
  EXPECT_EQ(layout.num_cols, 700);
}

TEST(BlockCompress, RespectsTheMemoryLimit) {
  auto gen = kcla::test::rng();
  const auto a = panel(gen, 50, 2000);
  kcla::BlockCompressOptions o;
  o.block_cols = 100;
  o.threads = 4;
  // Room for about two blocks at a time.
  const std::int64_t per_block = (a.nnz() / 20) * (kcla::kRepairBytesPerNonzero + 12);
  o.memory_limit_bytes = 3 * per_block;
  kcla::CsrColumnBlockSource source(a);
  kcla::BlockCompressStats stats;
  const auto g = kcla::compress_blocks(source, o, &stats);
  EXPECT_LE(stats.peak_bytes_in_flight, o.memory_limit_bytes);
  expect_same_csr(g.decompress(), a);
  // One block alone above the limit: an error naming the block, not a silent overrun.
  o.memory_limit_bytes = 1000;
  kcla::CsrColumnBlockSource again(a, "panel.bed");
  try {
    kcla::compress_blocks(again, o);
    FAIL() << "no error";
  } catch (const kcla::InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("panel.bed"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("--block-cols"), std::string::npos) << e.what();
  }
}

TEST(BlockCompress, ErrorsInTheSinkStopTheWork) {
  auto gen = kcla::test::rng();
  const auto a = panel(gen, 20, 500);
  kcla::BlockCompressOptions o;
  o.block_cols = 10;
  o.threads = 3;
  int calls = 0;
  kcla::CsrColumnBlockSource source(a);
  EXPECT_THROW(
      kcla::compress_blocks(source, o,
                            [&](std::int64_t id, const kcla::BlockExtent&, kcla::Grammar&&) {
                              ++calls;
                              if (id == 3) throw kcla::FormatError("out.h5", "disk full");
                            }),
      kcla::FormatError);
  EXPECT_EQ(calls, 4);
}

// Sum over blocks of |a_ij| |v_j| for each output entry (j over the block's columns, or its
// rows when `transposed`): floating-point sums carry an error of order eps * this magnitude,
// which the result itself can hide by cancellation.
template <class Get>
std::vector<double> term_magnitudes(const kcla::BlockGrammar& bg,
                                    const std::vector<kcla::CsrMatrix<double>>& blocks,
                                    bool transposed, Get operand) {
  std::vector<double> m(transposed ? bg.num_cols() : bg.num_rows(), 0.0);
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    const auto& e = bg.extent_of(i);
    const auto& a = blocks[i];
    for (std::int64_t r = 0; r < a.num_rows; ++r)
      for (auto k = a.row_offsets[r]; k < a.row_offsets[r + 1]; ++k) {
        const std::int64_t j = a.column_indices[k];
        if (transposed)
          m[e.col_begin + j] += std::abs(a.values[k] * operand(e.row_begin + r));
        else
          m[e.row_begin + r] += std::abs(a.values[k] * operand(e.col_begin + j));
      }
  }
  return m;
}

// y = A x over blocks, every semiring, against the CSR reference of the whole matrix.
template <class Semiring>
void check_blocks(const kcla::BlockGrammar& bg, std::int64_t B, double tolerance,
                  kcla::SweepSchedule schedule, std::mt19937_64& gen,
                  const kcla::BlockMatrixOptions& streaming = {}) {
  using T = typename Semiring::value_type;
  using H = std::conditional_t<std::is_same<T, bool>::value, char, T>;
  std::vector<kcla::CsrMatrix<double>> blocks;
  for (const auto& g : bg.grammars) blocks.push_back(g.decompress());
  const std::int64_t rows = bg.num_rows(), cols = bg.num_cols();
  std::uniform_real_distribution<double> u(0, 1);
  Kokkos::View<T**, Kokkos::LayoutRight, memory> x("x", cols, B), y("y", rows, B);
  auto xh = Kokkos::create_mirror_view(x);
  for (std::int64_t j = 0; j < cols; ++j)
    for (std::int64_t b = 0; b < B; ++b) {
      const double r = u(gen);
      if constexpr (std::is_same<T, bool>::value)
        xh(j, b) = r < 0.3;
      else if constexpr (std::is_same<Semiring, kcla::MinPlus<T>>::value)
        xh(j, b) = r < 0.2 ? static_cast<T>(INFINITY) : static_cast<T>(r * 10);
      else
        xh(j, b) = static_cast<T>(2 * r - 1);
    }
  Kokkos::deep_copy(x, xh);
  kcla::GrammarMatrixOptions options;
  options.schedule = schedule;
  // Boolean products read float coefficients (nonzero = true).
  using Scalar = std::conditional_t<std::is_same<T, bool>::value, float, T>;
  kcla::BlockGrammarMatrix<Scalar, memory> A(bg, options, streaming);
  auto yh = Kokkos::create_mirror_view(y);
  for (int repeat = 0; repeat < 2; ++repeat) {  // the second reuses buffers and slots
    Kokkos::deep_copy(y, T(1));
    kcla::multiply<Semiring>(exec(), A, x, y);
    Kokkos::fence();
    Kokkos::deep_copy(yh, y);
    for (std::int64_t b = 0; b < B; ++b) {
      // The definition: the semiring sum over blocks of each block's own product.
      std::vector<H> yb(rows, static_cast<H>(Semiring::zero()));
      for (std::size_t i = 0; i < blocks.size(); ++i) {
        const auto& e = bg.extent_of(i);
        std::vector<H> xs(e.cols()), ys(e.rows());
        for (std::int64_t j = 0; j < e.cols(); ++j) xs[j] = xh(e.col_begin + j, b);
        kcla::reference::csr_multiply<Semiring>(blocks[i], xs, ys);
        for (std::int64_t r = 0; r < e.rows(); ++r)
          yb[e.row_begin + r] = static_cast<H>(Semiring::combine(yb[e.row_begin + r], ys[r]));
      }
      std::vector<double> magnitude(rows, 0.0);
      if (tolerance != 0)
        magnitude =
            term_magnitudes(bg, blocks, false, [&](std::int64_t j) { return double(xh(j, b)); });
      for (std::int64_t r = 0; r < rows; ++r) {
        if (tolerance == 0)
          ASSERT_EQ(static_cast<H>(yh(r, b)), yb[r]) << "row " << r << " vector " << b;
        else
          ASSERT_NEAR(yh(r, b), yb[r], tolerance * (1 + magnitude[r]))
              << "row " << r << " vector " << b;
      }
    }
  }
  EXPECT_GT(A.device_bytes(), A.static_bytes());
}

// z = A^T y over blocks, every semiring: the semiring sum over blocks of each block's own
// left product (CSR reference), under a budget that forces vector chunks too.
template <class Semiring>
void check_blocks_transpose(const kcla::BlockGrammar& bg, std::int64_t B, double tolerance,
                            std::mt19937_64& gen) {
  using T = typename Semiring::value_type;
  using H = std::conditional_t<std::is_same<T, bool>::value, char, T>;
  using Scalar = std::conditional_t<std::is_same<T, bool>::value, float, T>;
  std::vector<kcla::CsrMatrix<double>> blocks;
  for (const auto& g : bg.grammars) blocks.push_back(g.decompress());
  const std::int64_t rows = bg.num_rows(), cols = bg.num_cols();
  std::uniform_real_distribution<double> u(0, 1);
  Kokkos::View<T**, Kokkos::LayoutRight, memory> y("y", rows, B), z("z", cols, B);
  auto yh = Kokkos::create_mirror_view(y);
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t b = 0; b < B; ++b) {
      const double v = u(gen);
      if constexpr (std::is_same<T, bool>::value)
        yh(r, b) = v < 0.3;
      else if constexpr (std::is_same<Semiring, kcla::MinPlus<T>>::value)
        yh(r, b) = v < 0.2 ? static_cast<T>(INFINITY) : static_cast<T>(v * 10);
      else
        yh(r, b) = static_cast<T>(2 * v - 1);
    }
  Kokkos::deep_copy(y, yh);
  for (std::int64_t budget : {std::int64_t(0), std::int64_t(1)}) {  // 1 byte: chunks of 1
    kcla::GrammarMatrixOptions options;
    options.products = kcla::GrammarProducts::transpose;
    options.workspace_budget_bytes = budget;
    kcla::BlockGrammarMatrix<Scalar, memory> A(bg, options);
    Kokkos::deep_copy(z, T(1));  // poison
    kcla::multiply_transpose<Semiring>(exec(), A, y, z);
    auto zh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), z);
    for (std::int64_t b = 0; b < B; ++b) {
      std::vector<H> zb(cols, static_cast<H>(Semiring::zero()));
      for (std::size_t i = 0; i < blocks.size(); ++i) {
        const auto& e = bg.extent_of(i);
        std::vector<H> ys(e.rows()), zs(e.cols());
        for (std::int64_t r = 0; r < e.rows(); ++r) ys[r] = yh(e.row_begin + r, b);
        kcla::reference::csr_multiply_transpose<Semiring>(blocks[i], ys, zs);
        for (std::int64_t j = 0; j < e.cols(); ++j)
          zb[e.col_begin + j] = static_cast<H>(Semiring::combine(zb[e.col_begin + j], zs[j]));
      }
      std::vector<double> magnitude(cols, 0.0);
      if (tolerance != 0)
        magnitude =
            term_magnitudes(bg, blocks, true, [&](std::int64_t r) { return double(yh(r, b)); });
      for (std::int64_t j = 0; j < cols; ++j) {
        if (tolerance == 0)
          ASSERT_EQ(static_cast<H>(zh(j, b)), zb[j]) << "column " << j << " vector " << b;
        else
          ASSERT_NEAR(zh(j, b), zb[j], tolerance * (1 + magnitude[j]))
              << "column " << j << " vector " << b;
      }
    }
  }
}

kcla::BlockGrammar column_blocked(const kcla::CsrMatrix<double>& a, std::int64_t width) {
  kcla::BlockCompressOptions o;
  o.block_cols = width;
  o.threads = 2;
  kcla::CsrColumnBlockSource source(a);
  return kcla::compress_blocks(source, o);
}

// Tiles of mixed shapes: row and column blocks, an overlap, and rows no block covers.
kcla::BlockGrammar tiled(const kcla::CsrMatrix<double>& a) {
  kcla::BlockGrammar bg;
  bg.layout.num_rows = a.num_rows + 3;  // the last three rows stay empty
  bg.layout.num_cols = a.num_cols;
  const std::int64_t r2 = a.num_rows / 2, c3 = a.num_cols / 3;
  bg.layout.blocks = {{0, r2, 0, c3},
                      {r2, a.num_rows, 0, c3},
                      {0, a.num_rows, c3, a.num_cols},
                      {0, r2, c3, 2 * c3}};  // overlaps block 2: entries add up
  for (std::int64_t b = 0; b < bg.layout.num_blocks(); ++b) {
    const auto& e = bg.layout.blocks[b];
    auto cols = kcla::column_slice(a, e.col_begin, e.col_end);
    kcla::CsrMatrix<double> rows;
    rows.num_rows = e.rows();
    rows.num_cols = cols.num_cols;
    for (auto r = e.row_begin; r < e.row_end; ++r) {
      for (auto k = cols.row_offsets[r]; k < cols.row_offsets[r + 1]; ++k) {
        rows.column_indices.push_back(cols.column_indices[k]);
        rows.values.push_back(cols.values[k]);
      }
      rows.row_offsets.push_back(rows.nnz());
    }
    bg.block_ids.push_back(b);
    bg.grammars.push_back(kcla::compress(rows));
  }
  return bg;
}

TEST(BlockGrammarMultiply, ColumnBlocksEverySemiringAndSchedule) {
  auto gen = kcla::test::rng();
  const auto a = panel(gen, 45, 900);
  const auto bg = column_blocked(a, 200);
  for (auto s : {kcla::SweepSchedule::full_array, kcla::SweepSchedule::layered}) {
    for (std::int64_t B : {1, 5}) {
      check_blocks<kcla::PlusTimes<float>>(bg, B, 1e-5, s, gen);
      check_blocks<kcla::PlusTimes<double>>(bg, B, 1e-12, s, gen);
      check_blocks<kcla::Boolean>(bg, B, 0, s, gen);
      check_blocks<kcla::MinPlus<float>>(bg, B, 0, s, gen);
    }
  }
}

TEST(BlockGrammarMultiply, TilesWithOverlapAndUncoveredRows) {
  auto gen = kcla::test::rng();
  const auto a = kcla::test::random_csr(gen, 37, 80, 0.3, 2);
  const auto bg = tiled(a);
  for (std::int64_t B : {1, 3}) {
    check_blocks<kcla::PlusTimes<double>>(bg, B, 1e-12, kcla::SweepSchedule::automatic, gen);
    check_blocks<kcla::Boolean>(bg, B, 0, kcla::SweepSchedule::automatic, gen);
    check_blocks<kcla::MinPlus<double>>(bg, B, 0, kcla::SweepSchedule::automatic, gen);
  }
}

TEST(BlockGrammarMultiply, TransposedOverColumnBlocksAndTiles) {
  auto gen = kcla::test::rng();
  const auto columns = column_blocked(panel(gen, 45, 900), 200);
  const auto tiles = tiled(kcla::test::random_csr(gen, 37, 80, 0.3, 2));
  for (const auto* bg : {&columns, &tiles})
    for (std::int64_t B : {1, 4}) {
      check_blocks_transpose<kcla::PlusTimes<double>>(*bg, B, 1e-12, gen);
      check_blocks_transpose<kcla::PlusTimes<float>>(*bg, B, 1e-5, gen);
      check_blocks_transpose<kcla::Boolean>(*bg, B, 0, gen);
      check_blocks_transpose<kcla::MinPlus<float>>(*bg, B, 0, gen);
    }
  // A matrix built for right products only says so.
  kcla::BlockGrammarMatrix<double, memory> right_only(columns);
  Kokkos::View<double*, memory> y("y", columns.num_rows()), z("z", columns.num_cols());
  EXPECT_THROW(kcla::multiply_transpose(exec(), right_only, y, z), kcla::InvalidArgument);
}

TEST(BlockGrammarMultiply, ASubsetOfBlocksGivesTheirSum) {
  auto gen = kcla::test::rng();
  const auto a = panel(gen, 20, 300);
  auto bg = column_blocked(a, 64);
  // Keep blocks 1 and 3 only: the product is theirs alone.
  kcla::BlockGrammar part;
  part.layout = bg.layout;
  for (std::int64_t id : {1, 3}) {
    part.block_ids.push_back(id);
    part.grammars.push_back(bg.grammars[id]);
  }
  check_blocks<kcla::PlusTimes<double>>(part, 2, 1e-12, kcla::SweepSchedule::automatic, gen);
  EXPECT_EQ(part.decompress().nnz(),
            bg.grammars[1].decompress().nnz() + bg.grammars[3].decompress().nnz());
}

TEST(BlockGrammarMultiply, RejectsOperandsOfTheWrongShape) {
  auto gen = kcla::test::rng();
  const auto a = panel(gen, 10, 100);
  kcla::BlockGrammarMatrix<double, memory> A(column_blocked(a, 30));
  Kokkos::View<double*, memory> x("x", 99), y("y", 10);
  EXPECT_THROW(kcla::multiply(exec(), A, x, y), kcla::InvalidArgument);
}

}  // namespace

namespace {

// A workspace budget smaller than B vectors need: the product runs in chunks of vectors
// and gives the same Y.
TEST(BlockGrammarMultiply, WorkspaceBudgetRunsInVectorChunks) {
  auto gen = kcla::test::rng();
  const auto a = panel(gen, 40, 600);
  const auto bg = column_blocked(a, 150);
  const std::int64_t B = 11;
  Kokkos::View<double**, Kokkos::LayoutRight, memory> x("x", 600, B), y0("y0", 40, B),
      y1("y1", 40, B), y2("y2", 40, B);
  auto xh = Kokkos::create_mirror_view(x);
  std::uniform_real_distribution<double> u(-1, 1);
  for (std::size_t k = 0; k < xh.span(); ++k) xh.data()[k] = u(gen);
  Kokkos::deep_copy(x, xh);
  kcla::BlockGrammarMatrix<double, memory> unbounded(bg);
  kcla::multiply(exec(), unbounded, x, y0);
  kcla::GrammarMatrixOptions tight;
  tight.schedule = kcla::SweepSchedule::full_array;
  // Room for about three vectors of the largest block's slots.
  std::int64_t rules = 0;
  for (const auto& g : bg.grammars) rules = std::max(rules, g.num_rules());
  tight.workspace_budget_bytes = 3 * rules * 8 + 8;
  kcla::BlockGrammarMatrix<double, memory> bounded(bg, tight);
  kcla::multiply(exec(), bounded, x, y1);
  kcla::GrammarMatrix<double, memory> single(bg.grammars[0], tight);
  Kokkos::fence();
  EXPECT_LE(static_cast<std::int64_t>(bounded.buffers().workspace.span() * 8),
            tight.workspace_budget_bytes + 8);
  auto h0 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y0);
  auto h1 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y1);
  for (std::size_t k = 0; k < h0.span(); ++k) ASSERT_NEAR(h0.data()[k], h1.data()[k], 1e-10) << k;
  // The same for one grammar.
  Kokkos::View<double**, Kokkos::LayoutRight, memory> xs("xs", bg.grammars[0].num_cols, B);
  const std::int64_t first_cols = bg.grammars[0].num_cols;
  Kokkos::deep_copy(xs,
                    Kokkos::subview(x, std::make_pair(std::int64_t(0), first_cols), Kokkos::ALL));
  kcla::GrammarMatrix<double, memory> whole(bg.grammars[0]);
  kcla::multiply(exec(), whole, xs, y0);
  kcla::multiply(exec(), single, xs, y2);
  Kokkos::fence();
  EXPECT_LE(static_cast<std::int64_t>(single.plan().workspace.span() * 8),
            tight.workspace_budget_bytes + 8);
  Kokkos::deep_copy(h0, y0);
  auto h2 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y2);
  for (std::size_t k = 0; k < h0.span(); ++k) ASSERT_NEAR(h0.data()[k], h2.data()[k], 1e-10) << k;
}

}  // namespace

namespace {

// The packed image of each block's arrays as the matrix would build it.
template <class Scalar>
std::vector<std::int64_t> image_bytes(const kcla::BlockGrammar& bg,
                                      const kcla::GrammarMatrixOptions& options = {}) {
  std::vector<std::int64_t> bytes;
  for (const auto& g : bg.grammars)
    bytes.push_back(
        kcla::GrammarMatrix<Scalar, Kokkos::HostSpace>(g, options).packed_image_bytes());
  return bytes;
}

// A matrix over a packed image of another's arrays multiplies like the original.
TEST(OutOfCoreBlocks, PackedImageHoldsTheSchedule) {
  auto gen = kcla::test::rng();
  const auto a = panel(gen, 30, 400);
  for (auto schedule : {kcla::SweepSchedule::full_array, kcla::SweepSchedule::layered}) {
    kcla::GrammarMatrixOptions o;
    o.schedule = schedule;
    const kcla::GrammarMatrix<double, Kokkos::HostSpace> host(kcla::compress(a), o);
    const std::int64_t bytes = host.packed_image_bytes();
    ASSERT_EQ(bytes % 256, 0);
    Kokkos::View<std::uint64_t*, Kokkos::HostSpace> image("image", bytes / 8);
    host.write_packed_image(image.data());
    Kokkos::View<std::uint64_t*, memory> device("device", bytes / 8);
    Kokkos::deep_copy(device, image);
    const auto shell = host.over_packed_image<memory>(device.data());
    EXPECT_EQ(shell.schedule(), schedule);
    EXPECT_EQ(shell.packed_image_bytes(), bytes);
    Kokkos::View<double*, memory> x("x", a.num_cols), y("y", a.num_rows);
    auto xh = Kokkos::create_mirror_view(x);
    std::uniform_real_distribution<double> u(-1, 1);
    std::vector<double> xs(a.num_cols), ys(a.num_rows);
    for (std::int64_t j = 0; j < a.num_cols; ++j) xs[j] = xh(j) = u(gen);
    Kokkos::deep_copy(x, xh);
    kcla::multiply(exec(), shell, x, y);
    auto yh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y);
    kcla::reference::csr_multiply<kcla::PlusTimes<double>>(a, xs, ys);
    for (std::int64_t r = 0; r < a.num_rows; ++r) ASSERT_NEAR(yh(r), ys[r], 1e-9) << r;
  }
}

// Budgets that stream every block, some blocks, or none: the same products as resident
// blocks in every semiring, single and batched, two or three slots.
TEST(OutOfCoreBlocks, StreamedBlocksGiveTheResidentProduct) {
  auto gen = kcla::test::rng();
  const auto bg = column_blocked(panel(gen, 45, 900), 100);
  ASSERT_GE(bg.grammars.size(), 6u);
  const auto bytes = image_bytes<double>(bg);
  const std::int64_t largest = *std::max_element(bytes.begin(), bytes.end());
  std::int64_t total = 0;
  for (auto b : bytes) total += b;
  for (int slots : {2, 3}) {
    for (std::int64_t budget : {slots * largest, slots * largest + total / 3, total}) {
      kcla::BlockMatrixOptions streaming;
      streaming.slots = slots;
      streaming.device_budget_bytes = budget;
      kcla::BlockGrammarMatrix<double, memory> A(bg, {}, streaming);
      SCOPED_TRACE("slots " + std::to_string(slots) + ", budget " + std::to_string(budget) +
                   " of " + std::to_string(total) + ", streamed " +
                   std::to_string(A.num_streamed_blocks()));
      EXPECT_EQ(A.streamed(), budget < total);
      if (budget == slots * largest) {
        EXPECT_EQ(A.num_streamed_blocks(), bg.grammars.size());
      }
      if (budget == slots * largest + total / 3) {
        EXPECT_GT(A.num_streamed_blocks(), 0u);
        EXPECT_LT(A.num_streamed_blocks(), bg.grammars.size());
      }
      EXPECT_LE(A.static_bytes(), budget);
      std::int64_t streamed = 0;
      for (std::size_t i = 0; i < A.num_held_blocks(); ++i)
        if (!A.resident(i)) streamed += bytes[i];
      EXPECT_EQ(A.streamed_bytes(), streamed);
      for (std::int64_t B : {1, 4}) {
        check_blocks<kcla::PlusTimes<double>>(bg, B, 1e-12, kcla::SweepSchedule::automatic, gen,
                                              streaming);
        check_blocks<kcla::MinPlus<double>>(bg, B, 0, kcla::SweepSchedule::automatic, gen,
                                            streaming);
      }
    }
  }
  // Float coefficients (also what Boolean products read), each schedule: budgets from their
  // own images.
  for (auto schedule : {kcla::SweepSchedule::full_array, kcla::SweepSchedule::layered}) {
    kcla::GrammarMatrixOptions o;
    o.schedule = schedule;
    const auto float_bytes = image_bytes<float>(bg, o);
    kcla::BlockMatrixOptions streaming;
    streaming.slots = 2;
    streaming.device_budget_bytes = 2 * *std::max_element(float_bytes.begin(), float_bytes.end());
    check_blocks<kcla::PlusTimes<float>>(bg, 3, 1e-5, schedule, gen, streaming);
    check_blocks<kcla::Boolean>(bg, 3, 0, schedule, gen, streaming);
  }
}

// Tiles (blocks that do not span every row, overlaps, uncovered rows) streamed.
TEST(OutOfCoreBlocks, StreamedTiles) {
  auto gen = kcla::test::rng();
  const auto bg = tiled(kcla::test::random_csr(gen, 37, 80, 0.3, 2));
  const auto bytes = image_bytes<double>(bg);
  kcla::BlockMatrixOptions streaming;
  streaming.slots = 2;
  // Room for the slots only: every block is streamed, the tiles that do not span every row
  // first.
  streaming.device_budget_bytes = 2 * *std::max_element(bytes.begin(), bytes.end());
  kcla::BlockGrammarMatrix<double, memory> A(bg, {}, streaming);
  EXPECT_TRUE(A.streamed());
  for (std::int64_t B : {1, 3}) {
    check_blocks<kcla::PlusTimes<double>>(bg, B, 1e-12, kcla::SweepSchedule::automatic, gen,
                                          streaming);
    check_blocks<kcla::Boolean>(bg, B, 0, kcla::SweepSchedule::automatic, gen, streaming);
  }
}

// A workspace budget on top of streaming: vector chunks, each streaming the blocks again.
TEST(OutOfCoreBlocks, StreamedBlocksInVectorChunks) {
  auto gen = kcla::test::rng();
  const auto bg = column_blocked(panel(gen, 40, 600), 120);
  const std::int64_t B = 7;
  Kokkos::View<double**, Kokkos::LayoutRight, memory> x("x", 600, B), y0("y0", 40, B),
      y1("y1", 40, B);
  auto xh = Kokkos::create_mirror_view(x);
  std::uniform_real_distribution<double> u(-1, 1);
  for (std::size_t k = 0; k < xh.span(); ++k) xh.data()[k] = u(gen);
  Kokkos::deep_copy(x, xh);
  kcla::BlockGrammarMatrix<double, memory> resident(bg);
  kcla::multiply(exec(), resident, x, y0);
  kcla::GrammarMatrixOptions tight;
  tight.schedule = kcla::SweepSchedule::full_array;
  std::int64_t rules = 0;
  for (const auto& g : bg.grammars) rules = std::max(rules, g.num_rules());
  tight.workspace_budget_bytes = 2 * rules * 8 + 8;  // two vectors at a time
  const auto bytes = image_bytes<double>(bg, tight);
  kcla::BlockMatrixOptions streaming;
  streaming.device_budget_bytes = 3 * *std::max_element(bytes.begin(), bytes.end());
  kcla::BlockGrammarMatrix<double, memory> streamed(bg, tight, streaming);
  ASSERT_TRUE(streamed.streamed());
  kcla::multiply(exec(), streamed, x, y1);
  auto h0 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y0);
  auto h1 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y1);
  for (std::size_t k = 0; k < h0.span(); ++k) ASSERT_NEAR(h0.data()[k], h1.data()[k], 1e-10) << k;
}

TEST(OutOfCoreBlocks, RejectsBudgetsAndOptionsItCannotServe) {
  auto gen = kcla::test::rng();
  const auto bg = column_blocked(panel(gen, 20, 300), 64);
  const auto bytes = image_bytes<double>(bg);
  const std::int64_t largest = *std::max_element(bytes.begin(), bytes.end());
  kcla::BlockMatrixOptions streaming;
  streaming.slots = 3;
  streaming.device_budget_bytes = 3 * largest - 1;  // not three slots of the largest block
  try {
    kcla::BlockGrammarMatrix<double, memory> A(bg, {}, streaming);
    ADD_FAILURE() << "a budget below three slots was accepted";
  } catch (const kcla::InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("slots of the largest block"), std::string::npos)
        << e.what();
  }
  using matrix = kcla::BlockGrammarMatrix<double, memory>;
  streaming.device_budget_bytes = -1;
  EXPECT_THROW(matrix(bg, kcla::GrammarMatrixOptions(), streaming), kcla::InvalidArgument);
  streaming.device_budget_bytes = 10 * largest;
  streaming.slots = 1;
  EXPECT_THROW(matrix(bg, kcla::GrammarMatrixOptions(), streaming), kcla::InvalidArgument);
  streaming.slots = 2;
  kcla::GrammarMatrixOptions both;
  both.products = kcla::GrammarProducts::both;
  EXPECT_THROW(matrix(bg, both, streaming), kcla::InvalidArgument);
}

}  // namespace

namespace {

// Block sweeps spread over instances (on the host: names for one instance, through the
// same per-instance buffers and final combination): the resident product in every
// semiring, for column blocks and tiles (blocks not spanning every row, overlaps).
TEST(ConcurrentBlocks, InstancesGiveTheSequentialProduct) {
  auto gen = kcla::test::rng();
  const auto columns = column_blocked(panel(gen, 45, 900), 100);
  const auto tiles = tiled(kcla::test::random_csr(gen, 37, 80, 0.3, 2));
  for (int streams : {1, 2, 3, 16}) {
    kcla::BlockMatrixOptions o;
    o.streams = streams;
    for (std::int64_t B : {1, 4}) {
      check_blocks<kcla::PlusTimes<double>>(columns, B, 1e-12, kcla::SweepSchedule::automatic, gen,
                                            o);
      check_blocks<kcla::PlusTimes<float>>(columns, B, 1e-5, kcla::SweepSchedule::layered, gen, o);
      check_blocks<kcla::Boolean>(columns, B, 0, kcla::SweepSchedule::full_array, gen, o);
      check_blocks<kcla::MinPlus<double>>(columns, B, 0, kcla::SweepSchedule::automatic, gen, o);
      check_blocks<kcla::PlusTimes<double>>(tiles, B, 1e-12, kcla::SweepSchedule::automatic, gen,
                                            o);
      check_blocks<kcla::MinPlus<double>>(tiles, B, 0, kcla::SweepSchedule::automatic, gen, o);
    }
  }
  kcla::BlockMatrixOptions negative;
  negative.streams = -1;
  using matrix = kcla::BlockGrammarMatrix<double, memory>;
  EXPECT_THROW(matrix(columns, kcla::GrammarMatrixOptions(), negative), kcla::InvalidArgument);
}

// A matrix used with few and many vectors alternately (the automatic choice may switch
// between concurrent and sequential sweeps, which share the blocks' plans).
TEST(ConcurrentBlocks, AlternatingVectorCountsKeepTheProduct) {
  auto gen = kcla::test::rng();
  const auto bg = column_blocked(panel(gen, 30, 500), 90);
  kcla::BlockMatrixOptions o;
  o.streams = 3;
  kcla::BlockGrammarMatrix<double, memory> concurrent(bg, {}, o);
  kcla::BlockGrammarMatrix<double, memory> sequential(bg);
  std::uniform_real_distribution<double> u(-1, 1);
  for (std::int64_t B : {1, 12, 1, 3}) {
    Kokkos::View<double**, Kokkos::LayoutRight, memory> x("x", 500, B), y0("y0", 30, B),
        y1("y1", 30, B);
    auto xh = Kokkos::create_mirror_view(x);
    for (std::size_t k = 0; k < xh.span(); ++k) xh.data()[k] = u(gen);
    Kokkos::deep_copy(x, xh);
    kcla::multiply(exec(), sequential, x, y0);
    kcla::multiply(exec(), concurrent, x, y1);
    auto h0 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y0);
    auto h1 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y1);
    for (std::size_t k = 0; k < h0.span(); ++k)
      ASSERT_NEAR(h0.data()[k], h1.data()[k], 1e-10) << "B " << B << " entry " << k;
  }
}

// Streamed blocks spread over instances: each waits for its copy on the instance that
// sweeps it, each slot is refilled after its sweep, whatever instance ran it.
TEST(ConcurrentBlocks, StreamedBlocksOverInstances) {
  auto gen = kcla::test::rng();
  const auto columns = column_blocked(panel(gen, 45, 900), 100);
  const auto tiles = tiled(kcla::test::random_csr(gen, 37, 80, 0.3, 2));
  for (const auto* bg : {&columns, &tiles}) {
    const auto bytes = image_bytes<double>(*bg);
    const std::int64_t largest = *std::max_element(bytes.begin(), bytes.end());
    std::int64_t total = 0;
    for (auto b : bytes) total += b;
    for (int slots : {2, 3})
      for (int streams : {2, 3, 5}) {
        if (slots * largest >= total) continue;  // all would fit: nothing streamed
        kcla::BlockMatrixOptions o;
        o.slots = slots;
        o.streams = streams;
        o.device_budget_bytes = slots * largest;  // every block streamed
        kcla::BlockGrammarMatrix<double, memory> A(*bg, {}, o);
        ASSERT_EQ(A.num_streamed_blocks(), bg->grammars.size());
        for (std::int64_t B : {1, 3}) {
          check_blocks<kcla::PlusTimes<double>>(*bg, B, 1e-12, kcla::SweepSchedule::automatic, gen,
                                                o);
          check_blocks<kcla::MinPlus<double>>(*bg, B, 0, kcla::SweepSchedule::automatic, gen, o);
        }
      }
  }
}

}  // namespace
