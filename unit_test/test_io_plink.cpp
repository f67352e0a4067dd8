// PLINK 1 filesets: files written here from known genotypes (missing calls, individual
// counts that are not multiples of 4), every error the reader promises, and the real data
// sets of scripts/data/fetch.sh checked against an independent plain decoder.
#include <kcla/plink.hpp>

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "test_support.hpp"

namespace {

using kcla::FormatError;
using kcla::test::throws_with;

constexpr int missing = -1;

/// genotypes[i][j]: copies of A1 (0, 1, 2) of individual i at SNP j, or `missing`.
using Genotypes = std::vector<std::vector<int>>;

/// Writes BASE.bed/.bim/.fam straight from the format description: SNP-major, four
/// individuals per byte, low bits first; 00 = two A1, 10 = one, 11 = none, 01 = missing.
void write_plink(const std::string& base, const Genotypes& g, std::size_t snps) {
  std::ofstream fam(base + ".fam"), bim(base + ".bim");
  for (std::size_t i = 0; i < g.size(); ++i)
    fam << "fam" << i << " ind" << i << " 0 0 " << (1 + i % 2) << " -9\n";
  for (std::size_t j = 0; j < snps; ++j)
    bim << "1\trs" << j << "\t0\t" << 1000 * (j + 1) << "\tA\tG\n";
  std::ofstream bed(base + ".bed", std::ios::binary);
  bed << '\x6c' << '\x1b' << '\x01';
  for (std::size_t j = 0; j < snps; ++j)
    for (std::size_t first = 0; first < g.size(); first += 4) {
      unsigned byte = 0;
      for (std::size_t q = 0; q < 4 && first + q < g.size(); ++q) {
        const int v = g[first + q][j];
        const unsigned code = v == missing ? 1u : v == 2 ? 0u : v == 1 ? 2u : 3u;
        byte |= code << (2 * q);
      }
      bed << static_cast<char>(byte);
    }
}

Genotypes random_genotypes(std::mt19937_64& gen, std::size_t individuals, std::size_t snps) {
  std::discrete_distribution<int> pick({0.1, 0.5, 0.25, 0.15});  // missing, 0, 1, 2
  Genotypes g(individuals, std::vector<int>(snps));
  for (auto& row : g)
    for (auto& v : row) v = pick(gen) - 1;
  return g;
}

/// The value read_plink should give: A1 or A2 copies, missing as 0.
kcla::CsrMatrix<double> expected_matrix(const Genotypes& g, std::size_t snps, bool count_a2) {
  kcla::CsrMatrix<double> a;
  a.num_rows = static_cast<std::int64_t>(g.size());
  a.num_cols = static_cast<std::int64_t>(snps);
  for (const auto& row : g) {
    for (std::size_t j = 0; j < snps; ++j) {
      const int v = row[j] == missing ? 0 : count_a2 ? 2 - row[j] : row[j];
      if (v != 0) {
        a.column_indices.push_back(static_cast<std::int32_t>(j));
        a.values.push_back(v);
      }
    }
    a.row_offsets.push_back(a.nnz());
  }
  return a;
}

TEST(Plink, ReadsWhatWasWrittenIncludingMissingCalls) {
  kcla::test::TempDir tmp;
  auto gen = kcla::test::rng();
  for (std::size_t individuals : {1, 2, 3, 4, 5, 7, 8, 13, 64, 101}) {
    const std::size_t snps = 1 + gen() % 40;
    const auto g = random_genotypes(gen, individuals, snps);
    const auto base = tmp.path("set" + std::to_string(individuals));
    write_plink(base, g, snps);
    std::int64_t missing_calls = 0;
    for (const auto& row : g)
      for (int v : row) missing_calls += v == missing;

    const auto a1 = kcla::read_plink(base);
    EXPECT_TRUE(kcla::test::csr_equal(a1.matrix, expected_matrix(g, snps, false)))
        << individuals << " individuals";
    EXPECT_EQ(a1.num_missing, missing_calls);
    // The missing calls' positions, row by row with columns ascending.
    ASSERT_NO_THROW(a1.missing.validate());
    ASSERT_EQ(a1.missing.num_rows, static_cast<std::int64_t>(individuals));
    ASSERT_EQ(a1.missing.num_cols, static_cast<std::int64_t>(snps));
    for (std::size_t i = 0; i < individuals; ++i) {
      std::vector<std::int32_t> want;
      for (std::size_t j = 0; j < snps; ++j)
        if (g[i][j] == missing) want.push_back(static_cast<std::int32_t>(j));
      const std::vector<std::int32_t> got(
          a1.missing.columns.begin() + a1.missing.row_offsets[i],
          a1.missing.columns.begin() + a1.missing.row_offsets[i + 1]);
      EXPECT_EQ(got, want) << "individual " << i;
    }
    const auto alleles = kcla::read_plink_alleles(base);
    ASSERT_EQ(alleles.allele1.size(), snps);
    ASSERT_EQ(alleles.allele2.size(), snps);
    EXPECT_EQ(alleles.allele1.front(), "A");
    EXPECT_EQ(alleles.allele2.back(), "G");
    ASSERT_EQ(a1.individual_ids.size(), individuals);
    ASSERT_EQ(a1.family_ids.size(), individuals);
    ASSERT_EQ(a1.snp_ids.size(), snps);
    EXPECT_EQ(a1.individual_ids.back(), "ind" + std::to_string(individuals - 1));
    EXPECT_EQ(a1.family_ids.front(), "fam0");
    EXPECT_EQ(a1.snp_ids.back(), "rs" + std::to_string(snps - 1));

    // The missing calls alone (what block compression keeps beside its blocks): the same.
    const auto alone = kcla::read_plink_missing_calls(base);
    EXPECT_EQ(alone.num_rows, a1.missing.num_rows);
    EXPECT_EQ(alone.num_cols, a1.missing.num_cols);
    EXPECT_EQ(alone.row_offsets, a1.missing.row_offsets);
    EXPECT_EQ(alone.columns, a1.missing.columns);

    kcla::PlinkReadOptions options;
    options.counted_allele = kcla::CountedAllele::a2;
    const auto a2 = kcla::read_plink(base + ".bed", options);  // the .bed path works too
    EXPECT_TRUE(kcla::test::csr_equal(a2.matrix, expected_matrix(g, snps, true)));
    EXPECT_EQ(a2.num_missing, missing_calls);
  }
}

TEST(Plink, BaseNameStripsFilesetSuffixes) {
  EXPECT_EQ(kcla::plink_base_name("dir/x.bed"), "dir/x");
  EXPECT_EQ(kcla::plink_base_name("dir/x.bim"), "dir/x");
  EXPECT_EQ(kcla::plink_base_name("dir/x.fam"), "dir/x");
  EXPECT_EQ(kcla::plink_base_name("dir/x"), "dir/x");
  EXPECT_EQ(kcla::plink_base_name("dir/x.bed.gz"), "dir/x.bed.gz");
}

TEST(Plink, EmptyFilesetsAreEmptyMatrices) {
  kcla::test::TempDir tmp;
  write_plink(tmp.path("none"), Genotypes(3, std::vector<int>()), 0);
  const auto r = kcla::read_plink(tmp.path("none"));
  EXPECT_EQ(r.matrix.num_rows, 3);
  EXPECT_EQ(r.matrix.num_cols, 0);
  EXPECT_EQ(r.matrix.nnz(), 0);
}

class PlinkErrors : public ::testing::Test {
 protected:
  void SetUp() override {
    auto gen = kcla::test::rng();
    write_plink(base, random_genotypes(gen, 6, 5), 5);  // 5 SNPs x 2 bytes + 3
  }
  std::string read_bed() {
    std::ifstream in(base + ".bed", std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  kcla::test::TempDir tmp;
  const std::string base = tmp.path("g");
};

TEST_F(PlinkErrors, WrongMagicOrMode) {
  auto bytes = read_bed();
  tmp.write("g.bed", "\x6d" + bytes.substr(1));
  EXPECT_TRUE(throws_with<FormatError>([&] { kcla::read_plink(base); },
                                       {base + ".bed", "not a PLINK 1 .bed file"}));
  tmp.write("g.bed", bytes.substr(0, 2) + std::string(1, '\0') + bytes.substr(3));
  EXPECT_TRUE(throws_with<FormatError>([&] { kcla::read_plink(base); },
                                       {base + ".bed", "individual-major"}));
  tmp.write("g.bed", bytes.substr(0, 2) + "\x07" + bytes.substr(3));
  EXPECT_TRUE(throws_with<FormatError>([&] { kcla::read_plink(base); }, {"unknown .bed mode"}));
  tmp.write("g.bed", "");
  EXPECT_TRUE(throws_with<FormatError>([&] { kcla::read_plink(base); }, {"not a PLINK 1 .bed"}));
}

TEST_F(PlinkErrors, WrongSizeNamesExpectedAndActual) {
  const auto bytes = read_bed();
  ASSERT_EQ(bytes.size(), 13u);
  tmp.write("g.bed", bytes.substr(0, 12));  // truncated
  EXPECT_TRUE(throws_with<FormatError>([&] { kcla::read_plink(base); },
                                       {base + ".bed", "size is 12 bytes", "= 13 bytes"}));
  tmp.write("g.bed", bytes + "x");  // trailing garbage
  EXPECT_TRUE(throws_with<FormatError>([&] { kcla::read_plink(base); }, {"size is 14 bytes"}));
  tmp.write("g.bed", bytes);
  // One individual more in the .fam: 5 SNPs x 2 bytes still fit 7 individuals...
  tmp.write("g.fam",
            "a a 0 0 1 -9\nb b 0 0 1 -9\nc c 0 0 1 -9\nd d 0 0 1 -9\ne e 0 0 1 -9\n"
            "f f 0 0 1 -9\ng g 0 0 1 -9\n");
  EXPECT_NO_THROW(kcla::read_plink(base));
  // ...but not 9 (3 bytes per SNP).
  tmp.write("g.fam", "a a\nb b\nc c\nd d\ne e\nf f\ng g\nh h\ni i\n");
  EXPECT_TRUE(throws_with<FormatError>([&] { kcla::read_plink(base); },
                                       {"size is 13 bytes", "9 individuals", "3 + 5 * 3 = 18"}));
}

TEST_F(PlinkErrors, MalformedOrMissingTextFiles) {
  tmp.write("g.fam", "a a 0 0 1 -9\nlonely\n");
  EXPECT_TRUE(throws_with<FormatError>([&] { kcla::read_plink(base); },
                                       {base + ".fam", "line 2", "found 1 field"}));
  std::remove((base + ".fam").c_str());
  EXPECT_TRUE(
      throws_with<FormatError>([&] { kcla::read_plink(base); }, {base + ".fam", "cannot open"}));
  std::remove((base + ".bim").c_str());
  tmp.write("g.fam", "a a\n");
  EXPECT_TRUE(
      throws_with<FormatError>([&] { kcla::read_plink(base); }, {base + ".bim", "cannot open"}));
}

// ---- real data (scripts/data/fetch.sh small) ---------------------------------------------

struct PlainCounts {
  std::int64_t nonzero = 0, missing = 0;
  double sum = 0;  ///< sum of A1 copies
};

/// An independent, obviously-correct decoder of a .bed: byte by byte, genotype by genotype.
PlainCounts plain_decode(const std::string& bed, std::int64_t individuals, std::int64_t snps) {
  std::ifstream in(bed, std::ios::binary);
  const std::string bytes(std::istreambuf_iterator<char>(in), {});
  const std::int64_t per_snp = (individuals + 3) / 4;
  PlainCounts c;
  for (std::int64_t j = 0; j < snps; ++j)
    for (std::int64_t i = 0; i < individuals; ++i) {
      const auto byte = static_cast<unsigned char>(bytes[3 + j * per_snp + i / 4]);
      const int code = (byte >> (2 * (i % 4))) & 3;
      const int a1 = code == 0 ? 2 : code == 2 ? 1 : 0;
      c.missing += code == 1;
      c.nonzero += a1 != 0;
      c.sum += a1;
    }
  return c;
}

/// The value at (i, j) of a CSR matrix (0 when absent).
double entry(const kcla::CsrMatrix<double>& a, std::int64_t i, std::int32_t j) {
  const auto begin = a.column_indices.begin() + a.row_offsets[i];
  const auto end = a.column_indices.begin() + a.row_offsets[i + 1];
  const auto it = std::lower_bound(begin, end, j);
  return it != end && *it == j ? a.values[it - a.column_indices.begin()] : 0.0;
}

void check_real_fileset(const std::string& name, std::int64_t individuals, std::int64_t snps,
                        bool expect_missing) {
  const auto bed = kcla::test::data_file(name + ".bed");
  if (bed.empty())
    GTEST_SKIP() << name << ".bed not in the data folder (run scripts/data/fetch.sh small)";
  const auto r = kcla::read_plink(bed);
  ASSERT_EQ(r.matrix.num_rows, individuals);
  ASSERT_EQ(r.matrix.num_cols, snps);
  EXPECT_NO_THROW(r.matrix.validate());
  EXPECT_EQ(static_cast<std::int64_t>(r.individual_ids.size()), individuals);
  EXPECT_EQ(static_cast<std::int64_t>(r.snp_ids.size()), snps);

  const auto plain = plain_decode(bed, individuals, snps);
  EXPECT_EQ(r.matrix.nnz(), plain.nonzero);
  EXPECT_EQ(r.num_missing, plain.missing);
  EXPECT_EQ(expect_missing, plain.missing > 0);
  const auto missing_calls = kcla::read_plink_missing_calls(bed);
  EXPECT_EQ(missing_calls.row_offsets, r.missing.row_offsets);
  EXPECT_EQ(missing_calls.columns, r.missing.columns);
  double sum = 0;
  for (double v : r.matrix.values) sum += v;
  EXPECT_EQ(sum, plain.sum);
  // Spot checks against the bytes themselves.
  std::ifstream in(bed, std::ios::binary);
  const std::string bytes(std::istreambuf_iterator<char>(in), {});
  auto gen = kcla::test::rng();
  for (int k = 0; k < 2000; ++k) {
    const auto i = static_cast<std::int64_t>(gen() % individuals);
    const auto j = static_cast<std::int32_t>(gen() % snps);
    const auto byte = static_cast<unsigned char>(bytes[3 + j * ((individuals + 3) / 4) + i / 4]);
    const int code = (byte >> (2 * (i % 4))) & 3;
    ASSERT_EQ(entry(r.matrix, i, j), code == 0 ? 2.0 : code == 2 ? 1.0 : 0.0) << i << ", " << j;
  }
}

// The streaming block reader gives read_plink's matrix, block by block, for any width,
// with seeks past skipped SNPs, and the same errors naming the file.
TEST(PlinkBlocks, BlocksConcatenateToTheWholeMatrix) {
  kcla::test::TempDir tmp;
  auto gen = kcla::test::rng();
  for (std::size_t individuals : {1, 5, 13, 64}) {
    const std::size_t snps = 20 + gen() % 40;
    const auto g = random_genotypes(gen, individuals, snps);
    const auto base = tmp.path("b" + std::to_string(individuals));
    write_plink(base, g, snps);
    const auto whole = kcla::read_plink(base).matrix;
    for (std::int64_t width : {1, 3, 8, 100}) {
      auto source = kcla::open_plink_blocks(base);
      ASSERT_EQ(source->num_rows(), static_cast<std::int64_t>(individuals));
      ASSERT_EQ(source->num_cols(), static_cast<std::int64_t>(snps));
      std::int64_t col = 0;
      kcla::CsrMatrix<double> block;
      if (width == 3) {  // start past the first 5 SNPs, as a rank does
        source->skip_columns(5);
        col = 5;
      }
      while (source->next_block(width, block)) {
        block.validate();
        for (std::int64_t i = 0; i < block.num_rows; ++i)
          for (auto k = block.row_offsets[i]; k < block.row_offsets[i + 1]; ++k)
            ASSERT_EQ(entry(whole, i, static_cast<std::int32_t>(col + block.column_indices[k])),
                      block.values[k]);
        std::int64_t row_nnz = 0;
        for (std::int64_t i = 0; i < block.num_rows; ++i)
          for (auto k = whole.row_offsets[i]; k < whole.row_offsets[i + 1]; ++k)
            row_nnz +=
                whole.column_indices[k] >= col && whole.column_indices[k] < col + block.num_cols;
        EXPECT_EQ(block.nnz(), row_nnz);
        col += block.num_cols;
      }
      EXPECT_EQ(col, static_cast<std::int64_t>(snps));
    }
  }
}

TEST(PlinkBlocks, BadFilesetsNameTheFile) {
  kcla::test::TempDir tmp;
  auto gen = kcla::test::rng();
  const auto g = random_genotypes(gen, 9, 12);
  const auto base = tmp.path("bad");
  write_plink(base, g, 12);
  {  // one byte short: the size check names the .bed and both counts
    std::ifstream in(base + ".bed", std::ios::binary);
    std::string bytes(std::istreambuf_iterator<char>(in), {});
    bytes.pop_back();
    std::ofstream(base + ".bed", std::ios::binary) << bytes;
  }
  EXPECT_TRUE(
      throws_with<FormatError>([&] { kcla::open_plink_blocks(base); }, {"bad.bed", "size"}));
  EXPECT_TRUE(
      throws_with<FormatError>([&] { kcla::open_plink_blocks(tmp.path("none")); }, {"none.fam"}));
  EXPECT_TRUE(
      throws_with<FormatError>([&] { kcla::read_plink_missing_calls(base); }, {"bad.bed", "size"}));
  write_plink(base, g, 12);
  auto source = kcla::open_plink_blocks(base);
  kcla::CsrMatrix<double> block;
  EXPECT_THROW(source->next_block(0, block), kcla::InvalidArgument);
}

TEST(PlinkRealData, MouseHs1940) {
  check_real_fileset("mouse_hs1940", 1940, 12226, false);
}
TEST(PlinkRealData, EurSubset) {
  check_real_fileset("EUR_subset", 379, 54051, false);
}
TEST(PlinkRealData, HlcWithMissingCalls) {
  check_real_fileset("HLC", 427, 358499, true);
}

}  // namespace
