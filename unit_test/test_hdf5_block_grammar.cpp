// Block grammar files: round trips, reading a subset of blocks, single-grammar files read
// as one block, incremental writes that leave nothing behind unless finished, and hostile
// layouts that must give a FormatError naming the file.
#include <kcla/block_compress.hpp>
#include <kcla/hdf5_block_grammar.hpp>
#include <kcla/hdf5_grammar.hpp>
#include <kcla/repair.hpp>

#include <gtest/gtest.h>
#include <hdf5.h>

#include <filesystem>

#include "test_support.hpp"

namespace {

namespace fs = std::filesystem;

kcla::BlockGrammar blocked_panel(std::mt19937_64& gen, std::int64_t rows, std::int64_t cols,
                                 std::int64_t width) {
  kcla::SyntheticPanelOptions p;
  p.seed = gen();
  const auto a = kcla::synthetic_genotype_panel(rows, cols, p);
  kcla::CsrColumnBlockSource source(a);
  kcla::BlockCompressOptions o;
  o.block_cols = width;
  o.threads = 2;
  return kcla::compress_blocks(source, o);
}

void expect_same(const kcla::Grammar& a, const kcla::Grammar& b) {
  EXPECT_EQ(a.num_rows, b.num_rows);
  EXPECT_EQ(a.num_cols, b.num_cols);
  EXPECT_EQ(a.values, b.values);
  EXPECT_EQ(a.terminal_columns, b.terminal_columns);
  EXPECT_EQ(a.rule_left, b.rule_left);
  EXPECT_EQ(a.rule_right, b.rule_right);
  EXPECT_EQ(a.row_offsets, b.row_offsets);
  EXPECT_EQ(a.sequence, b.sequence);
}

bool no_files_besides(const std::string& dir, std::size_t expected) {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator(dir)) ++n;
  return n == expected;
}

TEST(Hdf5BlockGrammar, RoundTripAndSubsets) {
  auto gen = kcla::test::rng();
  const auto bg = blocked_panel(gen, 40, 600, 128);
  kcla::test::TempDir tmp;
  const auto path = tmp.path("panel.h5");
  kcla::write_block_grammar_hdf5(path, bg);
  EXPECT_TRUE(kcla::is_block_grammar_hdf5(path));
  const auto layout = kcla::read_block_layout_hdf5(path);
  EXPECT_EQ(layout.blocks, bg.layout.blocks);
  const auto all = kcla::read_block_grammar_hdf5(path);
  ASSERT_EQ(all.grammars.size(), bg.grammars.size());
  for (std::size_t i = 0; i < bg.grammars.size(); ++i) expect_same(all.grammars[i], bg.grammars[i]);
  const auto part = kcla::read_block_grammar_hdf5(path, {1, 4});
  ASSERT_EQ(part.block_ids, (std::vector<std::int64_t>{1, 4}));
  expect_same(part.grammars[1], bg.grammars[4]);
  EXPECT_THROW(kcla::read_block_grammar_hdf5(path, {4, 1}), kcla::InvalidArgument);
  EXPECT_THROW(kcla::read_block_grammar_hdf5(path, {9}), kcla::InvalidArgument);
  // A single-grammar reader names what the file holds instead.
  EXPECT_TRUE(kcla::test::throws_with<kcla::FormatError>([&] { kcla::read_grammar_hdf5(path); },
                                                         {"block grammar"}));
}

TEST(Hdf5BlockGrammar, SingleGrammarFileReadsAsOneBlock) {
  auto gen = kcla::test::rng();
  const auto a = kcla::test::random_csr(gen, 30, 50, 0.2, 2);
  const auto g = kcla::compress(a);
  kcla::test::TempDir tmp;
  const auto path = tmp.path("one.h5");
  kcla::write_grammar_hdf5(path, g);
  EXPECT_FALSE(kcla::is_block_grammar_hdf5(path));
  const auto bg = kcla::read_block_grammar_hdf5(path);
  ASSERT_EQ(bg.layout.num_blocks(), 1);
  EXPECT_EQ(bg.layout.blocks[0], (kcla::BlockExtent{0, 30, 0, 50}));
  expect_same(bg.grammars[0], g);
}

TEST(Hdf5BlockGrammar, UnfinishedWritesLeaveNoFile) {
  auto gen = kcla::test::rng();
  const auto bg = blocked_panel(gen, 20, 300, 100);
  kcla::test::TempDir tmp;
  const auto path = tmp.path("out.h5");
  {
    kcla::BlockGrammarFileWriter writer(path);
    writer.append(0, bg.extent_of(0), bg.grammars[0]);
    EXPECT_GT(writer.bytes_written(), 0);
  }  // no finish(): as a crash or an exception would leave it
  EXPECT_FALSE(fs::exists(path));
  EXPECT_TRUE(no_files_besides(tmp.dir(), 0));
  {
    kcla::BlockGrammarFileWriter writer(path);
    writer.append(0, bg.extent_of(0), bg.grammars[0]);
    writer.append(2, bg.extent_of(2), bg.grammars[2]);
    EXPECT_THROW(writer.append(2, bg.extent_of(2), bg.grammars[2]), kcla::InvalidArgument);
    EXPECT_THROW(writer.finish(bg.layout), kcla::InvalidArgument);  // block 1 missing
  }
  EXPECT_TRUE(no_files_besides(tmp.dir(), 0));
  kcla::BlockGrammarFileWriter writer(path);
  for (std::int64_t b : {2, 0, 1}) writer.append(b, bg.extent_of(b), bg.grammars[b]);
  writer.finish(bg.layout);
  EXPECT_TRUE(no_files_besides(tmp.dir(), 1));
  EXPECT_EQ(kcla::read_block_grammar_hdf5(path).grammars.size(), 3u);
}

TEST(Hdf5BlockGrammar, HostileLayoutsNameTheFile) {
  auto gen = kcla::test::rng();
  const auto bg = blocked_panel(gen, 20, 300, 100);
  kcla::test::TempDir tmp;
  const auto path = tmp.path("bad.h5");
  kcla::write_block_grammar_hdf5(path, bg);
  auto rewrite_extents = [&](std::vector<std::int64_t> flat) {
    hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    hid_t d = H5Dopen2(f, "/kcla_block_grammar/extents", H5P_DEFAULT);
    H5Dwrite(d, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, flat.data());
    H5Dclose(d);
    H5Fclose(f);
  };
  // Block 1 claims columns past the matrix.
  rewrite_extents({0, 20, 0, 100, 0, 20, 100, 400, 0, 20, 200, 300});
  EXPECT_TRUE(kcla::test::throws_with<kcla::FormatError>(
      [&] { kcla::read_block_grammar_hdf5(path); }, {"bad.h5"}));
  // Block 1 is narrower than its grammar.
  rewrite_extents({0, 20, 0, 100, 0, 20, 100, 150, 0, 20, 200, 300});
  EXPECT_TRUE(kcla::test::throws_with<kcla::FormatError>(
      [&] { kcla::read_block_grammar_hdf5(path); }, {"block 1"}));
}

}  // namespace
