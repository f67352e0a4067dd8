// HDF5 grammar files: round trips on fresh random grammars, atomic writes, and hostile
// files (truncated, flipped bytes, missing datasets, wrong types, absurd sizes, broken
// references) that must give a FormatError naming the file, never a crash.
#include <kcla/hdf5_grammar.hpp>
#include <kcla/repair.hpp>

#include <gtest/gtest.h>
#include <hdf5.h>

#include "hdf5_crafting.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "grammar_fixtures.hpp"
#include "test_support.hpp"

namespace {

namespace fs = std::filesystem;

fs::path scratch_dir() {
  auto d = fs::temp_directory_path() / ("kcla_test_hdf5_" + std::to_string(::getpid()));
  fs::create_directories(d);
  return d;
}

void expect_same(const kcla::Grammar& a, const kcla::Grammar& b) {
  EXPECT_EQ(a.num_rows, b.num_rows);
  EXPECT_EQ(a.num_cols, b.num_cols);
  EXPECT_EQ(a.values, b.values);
  EXPECT_EQ(a.terminal_values, b.terminal_values);
  EXPECT_EQ(a.terminal_columns, b.terminal_columns);
  EXPECT_EQ(a.rule_left, b.rule_left);
  EXPECT_EQ(a.rule_right, b.rule_right);
  EXPECT_EQ(a.row_offsets, b.row_offsets);
  EXPECT_EQ(a.sequence, b.sequence);
}

void expect_format_error(const std::string& path, const std::string& fragment) {
  try {
    kcla::read_grammar_hdf5(path);
    ADD_FAILURE() << "no error for " << path;
  } catch (const kcla::FormatError& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos)
        << "message '" << e.what() << "' lacks '" << fragment << "'";
  }
}

TEST(Hdf5Grammar, RoundTripsRandomGrammars) {
  const auto dir = scratch_dir();
  auto gen = kcla::test::rng();
  for (int i = 0; i < 3; ++i) {
    const auto g = kcla::compress(kcla::test::random_genotypes(gen, 50 + 20 * i, 400, 5, 3));
    const auto path = (dir / ("g" + std::to_string(i) + ".h5")).string();
    kcla::write_grammar_hdf5(path, g);
    EXPECT_TRUE(kcla::is_hdf5_file(path));
    expect_same(kcla::read_grammar_hdf5(path), g);
  }
  const auto paper = kcla::test::paper_grammar();
  kcla::write_grammar_hdf5((dir / "paper.h5").string(), paper);
  expect_same(kcla::read_grammar_hdf5((dir / "paper.h5").string()), paper);
  // Empty matrix.
  kcla::Grammar empty;
  empty.num_cols = 3;
  kcla::write_grammar_hdf5((dir / "empty.h5").string(), empty);
  expect_same(kcla::read_grammar_hdf5((dir / "empty.h5").string()), empty);
  fs::remove_all(dir);
}

TEST(Hdf5Grammar, FailedWriteLeavesNothing) {
  const auto dir = scratch_dir();
  auto bad = kcla::test::paper_grammar();
  bad.sequence[0] = 10000;  // invalid: refused before anything is written
  const auto path = (dir / "bad.h5").string();
  EXPECT_THROW(kcla::write_grammar_hdf5(path, bad), kcla::InvalidArgument);
  EXPECT_FALSE(fs::exists(path));
  EXPECT_THROW(
      kcla::write_grammar_hdf5((dir / "no/such/folder/x.h5").string(), kcla::test::paper_grammar()),
      kcla::Error);
  for (const auto& entry : fs::directory_iterator(dir))
    ADD_FAILURE() << "left behind: " << entry.path();
  fs::remove_all(dir);
}

TEST(Hdf5Grammar, HostileFiles) {
  const auto dir = scratch_dir();
  auto gen = kcla::test::rng();
  const auto g = kcla::compress(kcla::test::random_genotypes(gen, 200, 3000, 6, 4));
  const auto good = (dir / "good.h5").string();
  kcla::write_grammar_hdf5(good, g);
  const std::string bytes = kcla::test::read_bytes(good);
  const std::size_t size = bytes.size();

  expect_format_error((dir / "missing.h5").string(), "no such file");
  {
    const auto p = (dir / "text.h5").string();
    std::ofstream(p) << "not hdf5 at all";
    expect_format_error(p, "not an HDF5 file");
  }
  for (double fraction : {0.1, 0.5, 0.9, 0.99}) {
    const auto p = (dir / "truncated.h5").string();
    std::ofstream(p, std::ios::binary)
        .write(bytes.data(), static_cast<std::streamsize>(size * fraction));
    try {
      kcla::read_grammar_hdf5(p);
      ADD_FAILURE() << "truncated file at " << fraction << " read without error";
    } catch (const kcla::FormatError&) {
    }
  }
  // Flipped bytes anywhere: an error or (if the byte was padding) the same grammar.
  std::uniform_int_distribution<std::size_t> where(0, size - 1);
  for (int trial = 0; trial < 60; ++trial) {
    auto corrupt = bytes;
    const auto at = where(gen);
    corrupt[at] = static_cast<char>(corrupt[at] ^ 0x5a);
    const auto p = (dir / "flipped.h5").string();
    std::ofstream(p, std::ios::binary).write(corrupt.data(), static_cast<std::streamsize>(size));
    try {
      expect_same(kcla::read_grammar_hdf5(p), g);
    } catch (const kcla::FormatError&) {
    }
  }
  fs::remove_all(dir);
}

// Builds a file with the grammar layout but one thing wrong.
void write_crafted(const std::string& path, const std::string& defect) {
  const auto g = kcla::test::paper_grammar();
  const kcla::test::CraftedHdf5 crafted(path, "/kcla_grammar");
  const hid_t group = crafted.group();
  crafted.str_attr("format", defect == "format" ? "something-else" : "kcla-grammar");
  crafted.int_attr("version", defect == "version" ? 99 : 1);
  crafted.int_attr("rows", defect == "rows" ? (std::int64_t(1) << 62) : g.num_rows);
  crafted.int_attr("cols", g.num_cols);
  crafted.dataset("values", H5T_NATIVE_DOUBLE, g.values.data(), g.values.size());
  if (defect == "type")
    crafted.dataset("terminal_values", H5T_NATIVE_DOUBLE, g.values.data(), g.values.size());
  else
    crafted.dataset("terminal_values", H5T_NATIVE_INT32, g.terminal_values.data(),
                    g.terminal_values.size());
  crafted.dataset("terminal_columns", H5T_NATIVE_INT32, g.terminal_columns.data(),
                  g.terminal_columns.size());
  auto left = g.rule_left;
  if (defect == "reference") left[0] = 1000;
  crafted.dataset("rule_left", H5T_NATIVE_INT32, left.data(), left.size());
  crafted.dataset("rule_right", H5T_NATIVE_INT32, g.rule_right.data(), g.rule_right.size());
  if (defect == "huge") {
    // A 2^62-element dataset that holds no data: must not be allocated.
    hsize_t n = hsize_t(1) << 62, chunk = 1024;
    hid_t s = H5Screate_simple(1, &n, nullptr);
    hid_t p = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(p, 1, &chunk);
    hid_t d = H5Dcreate2(group, "row_offsets", H5T_NATIVE_INT64, s, H5P_DEFAULT, p, H5P_DEFAULT);
    H5Dclose(d), H5Pclose(p), H5Sclose(s);
  } else {
    crafted.dataset("row_offsets", H5T_NATIVE_INT64, g.row_offsets.data(), g.row_offsets.size());
  }
  if (defect != "missing")
    crafted.dataset("sequence", H5T_NATIVE_INT32, g.sequence.data(), g.sequence.size());
}

TEST(Hdf5Grammar, CraftedDefectsAreNamed) {
  const auto dir = scratch_dir();
  const std::pair<const char*, const char*> cases[] = {
      {"format", "format"},
      {"version", "not supported"},
      {"rows", "absurd shape"},
      {"type", "wrong element type"},
      {"reference", "rule 0"},
      {"huge", "absurd length"},
      {"missing", "'sequence': dataset missing"},
  };
  for (const auto& [defect, fragment] : cases) {
    const auto p = (dir / (std::string(defect) + ".h5")).string();
    write_crafted(p, defect);
    expect_format_error(p, fragment);
  }
  fs::remove_all(dir);
}

// Format version 2 writes checksummed metadata: a flipped byte in the superblock, object
// headers or chunk indexes (all near the start of a small file) is a FormatError or, where
// it hit padding, changes nothing; never a different grammar.
TEST(Hdf5Grammar, MetadataCorruptionIsDetected) {
  const auto dir = scratch_dir();
  auto gen = kcla::test::rng();
  const auto g = kcla::compress(kcla::test::random_genotypes(gen, 50, 400, 4, 3));
  const auto good = (dir / "good.h5").string();
  kcla::write_grammar_hdf5(good, g);
  const std::string bytes = kcla::test::read_bytes(good);
  const std::size_t limit = std::min<std::size_t>(bytes.size(), 2048);
  int errors = 0, unchanged = 0;
  for (std::size_t at = 8; at < limit; at += 5) {  // past the signature
    auto corrupt = bytes;
    corrupt[at] = static_cast<char>(corrupt[at] ^ 0x21);
    const auto p = (dir / "flipped.h5").string();
    std::ofstream(p, std::ios::binary)
        .write(corrupt.data(), static_cast<std::streamsize>(corrupt.size()));
    try {
      const auto read = kcla::read_grammar_hdf5(p);
      expect_same(read, g);
      ++unchanged;
    } catch (const kcla::FormatError& e) {
      EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
      ++errors;
    }
  }
  EXPECT_GT(errors, unchanged) << "most metadata bytes are checked";
  fs::remove_all(dir);
}

// Files of format version 1 (HDF5's oldest container, no metadata checksums) still read.
TEST(Hdf5Grammar, VersionOneFilesStillRead) {
  const auto dir = scratch_dir();
  const auto p = (dir / "v1.h5").string();
  write_crafted(p, "");
  expect_same(kcla::read_grammar_hdf5(p), kcla::test::paper_grammar());
  fs::remove_all(dir);
}

}  // namespace
