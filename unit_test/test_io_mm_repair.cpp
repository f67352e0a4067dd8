// mm-repair files: the papers' 8 x 7 example (committed fixture) imports and multiplies
// to the published y, exports byte for byte as mm-repair wrote it; random grammars round
// trip; every validation error and the 32-bit terminal-code limit of the writer.
#include <kcla/mm_repair.hpp>

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <tuple>

#include "test_support.hpp"

namespace {

using kcla::FormatError;
using kcla::test::throws_with;

const std::string example = kcla::test::fixture_dir() + "/mm-repair-example/";

template <class T>
std::string bytes_of(const std::vector<T>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

/// M.csv as a CSR matrix (dense CSV, zeros omitted).
kcla::CsrMatrix<double> read_csv(const std::string& path) {
  kcla::CsrMatrix<double> a;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    std::stringstream fields(line);
    std::string field;
    std::int32_t j = 0;
    for (; std::getline(fields, field, ','); ++j)
      if (const double v = std::stod(field); v != 0) {
        a.column_indices.push_back(j);
        a.values.push_back(v);
      }
    a.num_cols = j;
    a.row_offsets.push_back(a.nnz());
    ++a.num_rows;
  }
  return a;
}

TEST(MmRepair, PapersExampleGivesThePublishedProduct) {
  const auto g = kcla::read_mm_repair(example + "M.csv", 7);
  EXPECT_NO_THROW(g.validate());
  EXPECT_EQ(g.num_rows, 8);
  EXPECT_EQ(g.num_cols, 7);
  EXPECT_EQ(g.values, (std::vector<double>{2.3, 1.2, 4.5, 3.4}));
  EXPECT_EQ(g.num_rules(), 12);
  const auto m = g.decompress();
  EXPECT_TRUE(kcla::test::csr_equal(m, read_csv(example + "M.csv")));

  const std::string x_bytes = kcla::test::read_bytes(example + "x.bin");
  ASSERT_EQ(x_bytes.size(), 7 * sizeof(float));
  std::vector<float> x(7);
  std::memcpy(x.data(), x_bytes.data(), x_bytes.size());
  EXPECT_EQ(x, (std::vector<float>{2, 1, 1, 2, 1, 1, 1}));
  std::vector<double> y(8);
  kcla::reference_spmv(m, x.data(), y.data());
  const std::vector<double> published = {12.9, 20.7, 20.7, 12.9, 20.7, 19.3, 19.3, 12.9};
  for (int i = 0; i < 8; ++i) EXPECT_NEAR(y[i], published[i], 1e-12) << "row " << i;
}

TEST(MmRepair, ExampleExportsByteForByte) {
  kcla::test::TempDir tmp;
  const auto g = kcla::read_mm_repair(example + "M.csv", 7);
  kcla::write_mm_repair(tmp.path("M.csv"), g);
  for (const char* ext : {".val", ".vc.R", ".vc.C"})
    EXPECT_EQ(kcla::test::read_bytes(tmp.path("M.csv") + ext),
              kcla::test::read_bytes(example + "M.csv" + ext))
        << ext;
}

/// A random valid grammar of a random matrix: CSRV terminals in first-seen order, then
/// random adjacent pairs (within a row) replaced by new rules.
kcla::Grammar random_grammar(std::mt19937_64& gen, std::int64_t rows, std::int64_t cols, int levels,
                             int pairings) {
  const auto a = kcla::test::random_csr(gen, rows, cols, 0.3, levels);
  kcla::Grammar g;
  g.num_rows = rows;
  g.num_cols = cols;
  std::map<double, std::int32_t> value_id;
  std::map<std::pair<std::int32_t, std::int32_t>, kcla::symbol_t> terminal_id;
  std::vector<std::vector<kcla::symbol_t>> seq(rows);
  for (std::int64_t r = 0; r < rows; ++r)
    for (auto k = a.row_offsets[r]; k < a.row_offsets[r + 1]; ++k) {
      auto v = value_id.emplace(a.values[k], static_cast<std::int32_t>(g.values.size()));
      if (v.second) g.values.push_back(a.values[k]);
      auto t = terminal_id.emplace(std::make_pair(v.first->second, a.column_indices[k]),
                                   static_cast<kcla::symbol_t>(g.terminal_values.size()));
      if (t.second) {
        g.terminal_values.push_back(v.first->second);
        g.terminal_columns.push_back(a.column_indices[k]);
      }
      seq[r].push_back(t.first->second);
    }
  const auto terminals = g.num_terminals();
  for (int p = 0; p < pairings; ++p) {
    auto& row = seq[gen() % rows];
    if (row.size() < 2) continue;
    const auto at = gen() % (row.size() - 1);
    g.rule_left.push_back(row[at]);
    g.rule_right.push_back(row[at + 1]);
    row[at] = static_cast<kcla::symbol_t>(terminals + g.num_rules() - 1);
    row.erase(row.begin() + static_cast<std::ptrdiff_t>(at) + 1);
  }
  for (const auto& row : seq) {
    g.sequence.insert(g.sequence.end(), row.begin(), row.end());
    g.row_offsets.push_back(static_cast<std::int64_t>(g.sequence.size()));
  }
  g.validate();
  EXPECT_TRUE(kcla::test::csr_equal(g.decompress(), a));
  return g;
}

TEST(MmRepair, RandomGrammarsRoundTrip) {
  kcla::test::TempDir tmp;
  auto gen = kcla::test::rng();
  for (const auto& [rows, cols, levels] : {std::tuple{30, 20, 3}, std::tuple{1, 500, 2},
                                           std::tuple{200, 5, 1}, std::tuple{50, 50, 0}}) {
    const auto g = random_grammar(gen, rows, cols, levels, 4 * rows);
    kcla::write_mm_repair(tmp.path("g"), g);
    const auto back = kcla::read_mm_repair(tmp.path("g"), cols);
    EXPECT_EQ(back.num_rows, g.num_rows);
    EXPECT_EQ(back.num_rules(), g.num_rules());
    EXPECT_EQ(back.num_terminals(), g.num_terminals());
    EXPECT_EQ(back.values, g.values);
    EXPECT_EQ(back.row_offsets, g.row_offsets);
    EXPECT_TRUE(kcla::test::csr_equal(back.decompress(), g.decompress()));
  }
}

TEST(MmRepair, UnusedTerminalCodesAreDropped) {
  kcla::test::TempDir tmp;
  // alpha = 100 although only codes 3 and 7 occur; 2 values x 4 columns.
  const auto base = tmp.path("u");
  tmp.write("u.val", bytes_of(std::vector<double>{5.0, -1.0}));
  tmp.write("u.vc.R", bytes_of(std::vector<std::int32_t>{100, 7, 3}));
  tmp.write("u.vc.C", bytes_of(std::vector<std::int32_t>{100, 0, 0, 3, 0}));
  const auto g = kcla::read_mm_repair(base, 4);
  EXPECT_EQ(g.num_terminals(), 2);
  EXPECT_EQ(g.num_rows, 3);
  EXPECT_EQ(g.terminal_values, (std::vector<std::int32_t>{0, 1}));   // code 3: (0, 2)
  EXPECT_EQ(g.terminal_columns, (std::vector<std::int32_t>{2, 2}));  // code 7: (1, 2)
  EXPECT_EQ(g.rule_left, (std::vector<kcla::symbol_t>{1}));
  EXPECT_EQ(g.sequence, (std::vector<kcla::symbol_t>{2, 0}));
  EXPECT_EQ(g.row_offsets, (std::vector<std::int64_t>{0, 1, 1, 2}));
}

TEST(MmRepair, RejectsInvalidFilesNamingThem) {
  kcla::test::TempDir tmp;
  const auto base = tmp.path("m");
  auto write = [&](std::vector<double> val, std::vector<std::int32_t> rules,
                   std::vector<std::int32_t> seq) {
    tmp.write("m.val", bytes_of(val));
    tmp.write("m.vc.R", bytes_of(rules));
    tmp.write("m.vc.C", bytes_of(seq));
  };
  const std::vector<double> two_values = {1.5, 2.5};
  // 2 values x 3 columns: valid terminal codes are 1..6.
  write(two_values, {7, 1, 6}, {7, 0});
  EXPECT_NO_THROW(kcla::read_mm_repair(base, 3));
  const struct {
    std::vector<std::int32_t> rules, seq;
    std::string file, needle;
  } cases[] = {
      {{}, {0}, ".vc.R", "holds 0 int32 values"},
      {{7, 1}, {0}, ".vc.R", "holds 2 int32 values"},
      {{0}, {0}, ".vc.R", "alpha 0 < 1"},
      {{7, 1, 7}, {7, 0}, ".vc.R", "rule 0 (symbol 7, int32 #2) has child 7"},
      {{7, 1, 8}, {7, 0}, ".vc.R", "has child 8"},
      {{7, 0, 1}, {7, 0}, ".vc.R", "has child 0"},
      {{7, -3, 1}, {7, 0}, ".vc.R", "has child -3"},
      {{9, 1, 7},
       {9, 0},
       ".vc.R",
       "invalid terminal code 7 (value index 2, but there are 2 values"},
      {{7, 1, 6}, {7, 0, 8, 0}, ".vc.C", "symbol #2 is 8, outside [0, 8)"},
      {{7, 1, 6}, {7, 0, -1, 0}, ".vc.C", "symbol #2 is -1"},
      {{9, 1, 6}, {8, 0}, ".vc.C", "symbol #0 is an invalid terminal code 8"},
      {{7, 1, 6}, {7, 0, 7}, ".vc.C", "does not end with a 0"},
      {{2147483647, 1, 1, 1, 1}, {0}, ".vc.R", "exceeds the 32-bit symbol range"},
  };
  for (const auto& c : cases) {
    write(two_values, c.rules, c.seq);
    EXPECT_TRUE(
        throws_with<FormatError>([&] { kcla::read_mm_repair(base, 3); }, {base + c.file, c.needle}))
        << c.needle;
  }
  write(two_values, {7, 1, 6}, {7, 0});
  tmp.write("m.val", std::string(12, '\0'));  // not a multiple of 8
  EXPECT_TRUE(throws_with<FormatError>([&] { kcla::read_mm_repair(base, 3); },
                                       {base + ".val", "not a multiple of 8"}));
  tmp.write("m.val", bytes_of(two_values));
  tmp.write("m.vc.C", std::string(6, '\0'));
  EXPECT_TRUE(throws_with<FormatError>([&] { kcla::read_mm_repair(base, 3); },
                                       {base + ".vc.C", "not a multiple of 4"}));
  std::remove((base + ".vc.C").c_str());
  EXPECT_TRUE(throws_with<FormatError>([&] { kcla::read_mm_repair(base, 3); },
                                       {base + ".vc.C", "cannot open"}));
  // With too few columns the same codes point past the values.
  write(two_values, {7, 1, 6}, {7, 0});
  EXPECT_TRUE(throws_with<FormatError>([&] { kcla::read_mm_repair(base, 2); },
                                       {"invalid terminal code 6"}));
  EXPECT_THROW(kcla::read_mm_repair(base, -1), kcla::InvalidArgument);
  EXPECT_THROW(kcla::read_mm_repair(base, std::int64_t(1) << 31), kcla::InvalidArgument);
}

/// One row holding the terminal (last value, last column): the largest code.
kcla::Grammar one_terminal_grammar(std::int64_t num_values, std::int64_t cols) {
  kcla::Grammar g;
  g.num_rows = 1;
  g.num_cols = cols;
  g.values.assign(static_cast<std::size_t>(num_values), 0.0);
  for (std::int64_t v = 0; v < num_values; ++v) g.values[v] = 1.0 + static_cast<double>(v);
  g.terminal_values = {static_cast<std::int32_t>(num_values - 1)};
  g.terminal_columns = {static_cast<std::int32_t>(cols - 1)};
  g.sequence = {0};
  g.row_offsets = {0, 1};
  return g;
}

TEST(MmRepair, WriterRefusesWhenTheTerminalCodeWouldOverflow) {
  kcla::test::TempDir tmp;
  const auto base = tmp.path("w");
  // 2 values x 2^30 columns = 2^31: the largest code would be 2^31.
  EXPECT_TRUE(throws_with<FormatError>(
      [&] { kcla::write_mm_repair(base, one_terminal_grammar(2, std::int64_t(1) << 30)); },
      {base, "32-bit terminal code", "overflows", "2 values x 1073741824 columns >= 2^31"}));
  std::ifstream probe(base + ".val");
  EXPECT_FALSE(probe.good()) << "nothing may be written when refusing";
  // The largest code 2^31 - 1 fits, but alpha = largest code + 1 would not.
  EXPECT_TRUE(throws_with<FormatError>(
      [&] { kcla::write_mm_repair(base, one_terminal_grammar(1, 2147483647)); },
      {base, "alpha 2147483648 + 0 rules exceed 2^31-1"}));
  // 1 value x (2^31 - 2) columns fits: code 2^31 - 2, alpha 2^31 - 1.
  const auto widest = one_terminal_grammar(1, 2147483646);
  kcla::write_mm_repair(base, widest);
  const auto back = kcla::read_mm_repair(base, 2147483646);
  EXPECT_EQ(back.terminal_columns, widest.terminal_columns);
  EXPECT_EQ(back.terminal_values, widest.terminal_values);
  // An invalid grammar is refused as such.
  auto broken = widest;
  broken.sequence = {5};
  EXPECT_THROW(kcla::write_mm_repair(base, broken), kcla::InvalidArgument);
}

}  // namespace
