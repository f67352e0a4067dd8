// ms output: hand-written files with known genotypes (replicates, haploid/diploid, no
// command line, no segregating sites), real scrm output, and the reader's errors.
#include <kcla/block_grammar.hpp>
#include <kcla/ms_format.hpp>

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "test_support.hpp"

namespace {

using kcla::FormatError;
using kcla::test::throws_with;

const std::string two_replicates =
    "ms 4 2 -t 5.0\n"
    "1 2 3\n"
    "\n"
    "//\n"
    "segsites: 3\n"
    "positions: 0.1 0.25 0.9\n"
    "101\n"
    "100\n"
    "000\n"
    "011\n"
    "\n"
    "//\n"
    "((1:0.1,2:0.1):0.2,(3:0.1,4:0.1):0.2);\n"
    "segsites: 2\n"
    "positions: 0.5 0.75\n"
    "01\n"
    "01\n"
    "10\n"
    "00\n";

kcla::CsrMatrix<double> dense_to_csr(const std::vector<std::vector<double>>& rows,
                                     std::int64_t cols) {
  kcla::CsrMatrix<double> a;
  a.num_rows = static_cast<std::int64_t>(rows.size());
  a.num_cols = cols;
  for (const auto& row : rows) {
    for (std::int64_t j = 0; j < cols; ++j)
      if (row[j] != 0) {
        a.column_indices.push_back(static_cast<std::int32_t>(j));
        a.values.push_back(row[j]);
      }
    a.row_offsets.push_back(a.nnz());
  }
  return a;
}

TEST(MsFormat, DiploidPairsConsecutiveHaplotypes) {
  kcla::test::TempDir tmp;
  const auto path = tmp.write("two.ms", two_replicates);
  const auto r = kcla::read_ms(path);
  EXPECT_TRUE(kcla::test::csr_equal(r.matrix, dense_to_csr({{2, 0, 1}, {0, 1, 1}}, 3)));
  EXPECT_EQ(r.positions, (std::vector<double>{0.1, 0.25, 0.9}));
  EXPECT_EQ(r.num_haplotypes, 4);
}

TEST(MsFormat, HaploidAndChosenReplicate) {
  kcla::test::TempDir tmp;
  const auto path = tmp.write("two.ms", two_replicates);
  kcla::MsReadOptions haploid;
  haploid.ploidy = 1;
  EXPECT_TRUE(kcla::test::csr_equal(kcla::read_ms(path, haploid).matrix,
                                    dense_to_csr({{1, 0, 1}, {1, 0, 0}, {0, 0, 0}, {0, 1, 1}}, 3)));
  kcla::MsReadOptions second;
  second.replicate = 1;  // past a tree line
  const auto r = kcla::read_ms(path, second);
  EXPECT_TRUE(kcla::test::csr_equal(r.matrix, dense_to_csr({{0, 2}, {1, 0}}, 2)));
  EXPECT_EQ(r.positions, (std::vector<double>{0.5, 0.75}));
  second.replicate = 2;
  EXPECT_TRUE(throws_with<FormatError>([&] { kcla::read_ms(path, second); },
                                       {path, "has 2 replicate(s)", "replicate 2"}));
}

TEST(MsFormat, WithoutCommandLineReadsToTheBlankLine) {
  kcla::test::TempDir tmp;
  const auto path =
      tmp.write("nocmd.ms", "some header\n//\nsegsites: 2\npositions: 1 2\n11\n01\n\nlater\n");
  const auto r = kcla::read_ms(path);
  EXPECT_TRUE(kcla::test::csr_equal(r.matrix, dense_to_csr({{1, 2}}, 2)));
  // CRLF line endings and no final newline.
  const auto crlf = tmp.write("crlf.ms", "x\r\n//\r\nsegsites: 1\r\npositions: 0.5\r\n1\r\n1");
  EXPECT_TRUE(kcla::test::csr_equal(kcla::read_ms(crlf).matrix, dense_to_csr({{2}}, 1)));
}

TEST(MsFormat, NoSegregatingSites) {
  kcla::test::TempDir tmp;
  const auto path = tmp.write("zero.ms", "scrm 6 1 -t 0.00001\n5\n\n//\nsegsites: 0\n");
  const auto r = kcla::read_ms(path);
  EXPECT_EQ(r.matrix.num_rows, 3);
  EXPECT_EQ(r.matrix.num_cols, 0);
  EXPECT_EQ(r.num_haplotypes, 6);
  EXPECT_NO_THROW(r.matrix.validate());
}

TEST(MsFormat, RejectsMalformedInputWithLineNumbers) {
  kcla::test::TempDir tmp;
  const std::string head = "ms 4 1 -t 1\n1 2 3\n\n//\n";
  const struct {
    std::string content;
    std::string needle;
  } cases[] = {
      {"", "empty file"},
      {head, "line 4: replicate 0 has no 'segsites:' line"},
      {"ms 4 1\n\n", "has 0 replicate(s)"},
      {head + "segsites: x\n", "line 5: expected 'segsites: S'"},
      {head + "segsites: -1\n", "line 5: expected 'segsites: S'"},
      {head + "segsites: 2\n01\n", "line 6: expected a 'positions:' line"},
      {head + "segsites: 2\npositions: 0.1\n", "line 6: 'positions:' lists 1 positions"},
      {head + "segsites: 2\npositions: 0.1 zz\n", "line 6: position 'zz' is not a number"},
      {head + "segsites: 2\npositions: 0.1 0.2\n01\n0\n",
       "line 8: haplotype line has 1 characters"},
      {head + "segsites: 2\npositions: 0.1 0.2\n01\n02\n",
       "line 8: haplotype line has '2' at site 1"},
      {head + "segsites: 2\npositions: 0.1 0.2\n01\n01\n01\n",
       "line 9: replicate has 3 haplotype lines, but the command line says 4"},
      {head + "segsites: 2\npositions: 0.1 0.2\n01\n01\n01\n01\n11\n",
       "line 11: more haplotype lines than the 4"},
      {"x\n//\nsegsites: 1\npositions: 1\n1\n1\n1\n", "3 haplotypes cannot pair"},
      {head + "segsites: 3000000000\n", "kcla supports at most 2^31-1 columns"},
  };
  for (const auto& c : cases) {
    const auto path = tmp.write("bad.ms", c.content);
    EXPECT_TRUE(throws_with<FormatError>([&] { kcla::read_ms(path); }, {path, c.needle}))
        << c.content;
  }
  const auto path = tmp.write("ok.ms", two_replicates);
  kcla::MsReadOptions triploid;
  triploid.ploidy = 3;
  EXPECT_THROW(kcla::read_ms(path, triploid), kcla::InvalidArgument);
  kcla::MsReadOptions negative;
  negative.replicate = -1;
  EXPECT_THROW(kcla::read_ms(path, negative), kcla::InvalidArgument);
}

/// Haplotype lines of replicate 0 read the simplest way: whole lines into memory.
std::vector<std::string> plain_haplotypes(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::vector<std::string> haplotypes;
  bool in_block = false;
  while (std::getline(in, line)) {
    if (line.rfind("positions:", 0) == 0) {
      in_block = true;
    } else if (in_block) {
      if (line.empty()) break;
      haplotypes.push_back(line);
    }
  }
  return haplotypes;
}

/// Reads `path` and checks it against the plain parse; returns the number of columns.
std::int64_t check_against_plain(const std::string& path, std::int64_t nsam) {
  const auto haplotypes = plain_haplotypes(path);
  EXPECT_EQ(static_cast<std::int64_t>(haplotypes.size()), nsam);
  if (haplotypes.empty()) return -1;
  const auto r = kcla::read_ms(path);
  EXPECT_EQ(r.matrix.num_rows, nsam / 2);
  EXPECT_EQ(r.matrix.num_cols, static_cast<std::int64_t>(haplotypes[0].size()));
  if (r.matrix.num_rows != nsam / 2 || haplotypes.size() % 2 != 0) return -1;
  std::int64_t nonzero = 0;
  double sum = 0;
  for (std::size_t i = 0; i + 1 < haplotypes.size(); i += 2)
    for (std::size_t j = 0; j < haplotypes[i].size(); ++j) {
      const int v = (haplotypes[i][j] == '1') + (haplotypes[i + 1][j] == '1');
      nonzero += v != 0;
      sum += v;
    }
  EXPECT_EQ(r.matrix.nnz(), nonzero);
  double read_sum = 0;
  for (double v : r.matrix.values) read_sum += v;
  EXPECT_EQ(read_sum, sum);
  return r.matrix.num_cols;
}

TEST(MsFormat, RealScrmOutput) {
  kcla::test::TempDir tmp;
  const auto path = tmp.path("small.ms");
  const std::string command = "scrm 40 2 -t 30 -r 20 100000 -seed 4 5 6 > " + path + " 2>/dev/null";
  if (std::system("command -v scrm >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "scrm is not installed (Debian package scrm)";
  ASSERT_EQ(std::system(command.c_str()), 0);
  check_against_plain(path, 40);
}

TEST(MsFormat, Scrm2504Panel) {
  const auto path = kcla::test::data_file("scrm2504.ms");
  if (path.empty())
    GTEST_SKIP() << "scrm2504.ms not in the data folder (scripts/data/fetch.sh scrm2504)";
  // The panel DATA.md describes (scrm's seed 1 2 3): 100,966 segregating sites.
  EXPECT_EQ(check_against_plain(path, 5008), 100966);
}

// Blocks read straight from the file give read_ms's matrix for any width, ploidy,
// replicate, line ending and header; skip_columns seeks; errors surface when opened.
TEST(MsFormat, BlocksGiveTheMatrixReadMsGives) {
  kcla::test::TempDir tmp;
  // A larger random replicate (33 haplotypes: odd, so ploidy 1 only; 34 for ploidy 2).
  auto gen = kcla::test::rng();
  auto random_ms = [&](int haplotypes, int sites, const char* eol) {
    std::string t = "scrm " + std::to_string(haplotypes) + " 1 -t 10" + eol + "7" + eol + eol +
                    "//" + eol + "segsites: " + std::to_string(sites) + eol + "positions:";
    for (int j = 0; j < sites; ++j) t += " 0." + std::to_string(100 + j);
    t += eol;
    for (int h = 0; h < haplotypes; ++h) {
      for (int j = 0; j < sites; ++j) t += gen() % 3 == 0 ? '1' : '0';
      t += eol;
    }
    return t;
  };
  struct Case {
    std::string path;
    kcla::MsReadOptions options;
  };
  std::vector<Case> cases;
  cases.push_back({tmp.write("two.ms", two_replicates), {}});
  kcla::MsReadOptions second;
  second.replicate = 1;
  second.ploidy = 1;
  cases.push_back({tmp.write("two_b.ms", two_replicates), second});
  kcla::MsReadOptions haploid;
  haploid.ploidy = 1;
  cases.push_back({tmp.write("odd.ms", random_ms(33, 57, "\n")), haploid});
  cases.push_back({tmp.write("even.ms", random_ms(34, 61, "\r\n")), {}});
  cases.push_back(
      {tmp.write("nocmd.ms", "header\n//\nsegsites: 2\npositions: 1 2\n11\n01\n\nx\n"), {}});
  cases.push_back({tmp.write("zero.ms", "scrm 6 1 -t 0.00001\n5\n\n//\nsegsites: 0\n"), {}});
  for (const auto& c : cases) {
    const auto whole = kcla::read_ms(c.path, c.options).matrix;
    for (std::int64_t width : {1, 2, 5, 1000}) {
      auto source = kcla::open_ms_blocks(c.path, c.options);
      EXPECT_EQ(source->num_rows(), whole.num_rows) << c.path;
      EXPECT_EQ(source->num_cols(), whole.num_cols) << c.path;
      kcla::CsrMatrix<double> block;
      std::int64_t at = 0;
      while (source->next_block(width, block)) {
        ASSERT_LE(block.num_cols, width);
        EXPECT_TRUE(
            kcla::test::csr_equal(block, kcla::column_slice(whole, at, at + block.num_cols)))
            << c.path << " width " << width << " at " << at;
        at += block.num_cols;
      }
      EXPECT_EQ(at, whole.num_cols) << c.path;
    }
    // Skipping to the middle delivers the rest.
    auto source = kcla::open_ms_blocks(c.path, c.options);
    const std::int64_t half = whole.num_cols / 2;
    source->skip_columns(half);
    kcla::CsrMatrix<double> rest;
    if (whole.num_cols - half > 0) {
      ASSERT_TRUE(source->next_block(whole.num_cols, rest));
      EXPECT_TRUE(kcla::test::csr_equal(rest, kcla::column_slice(whole, half, whole.num_cols)));
    }
    EXPECT_FALSE(source->next_block(1, rest));
  }
  // The file is checked when opened, as read_ms checks it.
  const auto bad = tmp.write(
      "bad.ms", "ms 4 1 -t 1\n1\n\n//\nsegsites: 3\npositions: 1 2 3\n101\n1x0\n000\n011\n");
  EXPECT_TRUE(throws_with<FormatError>([&] { kcla::open_ms_blocks(bad); }, {"bad.ms", "line 8"}));
  EXPECT_THROW(kcla::open_ms_blocks(tmp.path("absent.ms")), FormatError);
}

}  // namespace
