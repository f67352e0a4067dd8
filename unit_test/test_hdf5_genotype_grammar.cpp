// Genotype grammar files: round trips of fresh random panels with missing calls and
// their .fam/.bim, plain grammar files refused by name, writes that refuse parts that do
// not agree, and damaged genotype parts that give a FormatError naming the file.
#include <kcla/block_compress.hpp>
#include <kcla/hdf5_block_grammar.hpp>
#include <kcla/hdf5_genotype_grammar.hpp>
#include <kcla/hdf5_grammar.hpp>
#include <kcla/repair.hpp>

#include <gtest/gtest.h>
#include <hdf5.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <random>

#include "test_support.hpp"

namespace {

namespace fs = std::filesystem;

fs::path scratch_dir() {
  auto d = fs::temp_directory_path() / ("kcla_test_genotype_h5_" + std::to_string(::getpid()));
  fs::create_directories(d);
  return d;
}

/// A random panel: allele counts, missing calls where the count is 0, and tables with one
/// line per sample / variant (blank lines and CRLF included, as real files have them).
kcla::GenotypeGrammar random_panel(std::mt19937_64& gen, std::int64_t rows, std::int64_t cols) {
  const auto matrix = kcla::test::random_genotypes(gen, rows, cols, 5, 3);
  kcla::GenotypeGrammar p;
  p.grammar = kcla::compress(matrix);
  std::bernoulli_distribution absent(0.05);
  p.missing = kcla::MissingCalls::none(rows, cols);
  p.missing.row_offsets.clear();
  p.missing.row_offsets.push_back(0);
  for (std::int64_t i = 0; i < rows; ++i) {
    auto k = matrix.row_offsets[i];
    for (std::int64_t j = 0; j < cols; ++j) {
      const bool present = k < matrix.row_offsets[i + 1] && matrix.column_indices[k] == j;
      if (present) ++k;
      if (!present && absent(gen)) p.missing.columns.push_back(static_cast<std::int32_t>(j));
    }
    p.missing.row_offsets.push_back(static_cast<std::int64_t>(p.missing.columns.size()));
  }
  p.tables.fam_name = "random.fam";
  p.tables.bim_name = "random.bim";
  for (std::int64_t i = 0; i < rows; ++i) {
    p.tables.fam_text += "f" + std::to_string(i) + " s" + std::to_string(i) + " 0 0 1 " +
                         std::to_string(i % 3) + (i % 7 == 0 ? "\r\n" : "\n");
    if (i == 2) p.tables.fam_text += "\n";
  }
  for (std::int64_t j = 0; j < cols; ++j)
    p.tables.bim_text +=
        "1\tv" + std::to_string(j) + "\t0\t" + std::to_string(100 * j) + "\tA\tG\n";
  return p;
}

void expect_same(const kcla::GenotypeGrammar& a, const kcla::GenotypeGrammar& b) {
  EXPECT_EQ(a.grammar.num_rows, b.grammar.num_rows);
  EXPECT_EQ(a.grammar.num_cols, b.grammar.num_cols);
  EXPECT_EQ(a.grammar.values, b.grammar.values);
  EXPECT_EQ(a.grammar.terminal_columns, b.grammar.terminal_columns);
  EXPECT_EQ(a.grammar.rule_left, b.grammar.rule_left);
  EXPECT_EQ(a.grammar.rule_right, b.grammar.rule_right);
  EXPECT_EQ(a.grammar.row_offsets, b.grammar.row_offsets);
  EXPECT_EQ(a.grammar.sequence, b.grammar.sequence);
  EXPECT_EQ(a.missing.row_offsets, b.missing.row_offsets);
  EXPECT_EQ(a.missing.columns, b.missing.columns);
  EXPECT_EQ(a.counted_allele, b.counted_allele);
  EXPECT_EQ(a.tables.fam_text, b.tables.fam_text);
  EXPECT_EQ(a.tables.bim_text, b.tables.bim_text);
}

void expect_format_error(const std::string& path, const std::string& fragment) {
  try {
    kcla::read_genotype_grammar_hdf5(path);
    ADD_FAILURE() << "no error for " << path;
  } catch (const kcla::FormatError& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos)
        << "message '" << e.what() << "' lacks '" << fragment << "'";
  }
}

/// Replaces one object of the genotype group of a written file.
void rewrite(const std::string& path, const std::function<void(hid_t group)>& change) {
  hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  hid_t group = H5Gopen2(file, "/kcla_genotypes", H5P_DEFAULT);
  change(group);
  H5Gclose(group);
  H5Fclose(file);
}

void replace_bytes(hid_t group, const char* name, const std::string& text) {
  H5Ldelete(group, name, H5P_DEFAULT);
  const hsize_t n = text.size();
  hid_t s = H5Screate_simple(1, &n, nullptr);
  hid_t d = H5Dcreate2(group, name, H5T_NATIVE_UINT8, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  H5Dwrite(d, H5T_NATIVE_UINT8, H5S_ALL, H5S_ALL, H5P_DEFAULT, text.data());
  H5Dclose(d), H5Sclose(s);
}

TEST(Hdf5GenotypeGrammar, RoundTripsRandomPanels) {
  const auto dir = scratch_dir();
  auto gen = kcla::test::rng();
  for (int i = 0; i < 3; ++i) {
    auto panel = random_panel(gen, 40 + 30 * i, 200 + 50 * i);
    if (i == 1) panel.counted_allele = kcla::CountedAllele::a2;
    const auto path = (dir / ("p" + std::to_string(i) + ".h5")).string();
    kcla::write_genotype_grammar_hdf5(path, panel);
    EXPECT_TRUE(kcla::is_genotype_grammar_hdf5(path));
    const auto back = kcla::read_genotype_grammar_hdf5(path);
    expect_same(back, panel);
    // The tables' errors name the file they are in and the table they came from.
    EXPECT_NE(back.tables.fam_name.find(path), std::string::npos);
    EXPECT_NE(back.tables.fam_name.find("random.fam"), std::string::npos);
    // A genotype grammar file is a grammar file.
    const auto plain = kcla::read_grammar_hdf5(path);
    EXPECT_EQ(plain.sequence, panel.grammar.sequence);
    const auto samples = kcla::parse_plink_samples(back.tables);
    ASSERT_EQ(static_cast<std::int64_t>(samples.size()), panel.grammar.num_rows);
    EXPECT_EQ(samples.individual_ids[3], "s3");
    EXPECT_EQ(samples.phenotypes[2], "2");
    EXPECT_TRUE(samples.is_founder(0));
    const auto variants = kcla::parse_plink_variants(back.tables);
    ASSERT_EQ(static_cast<std::int64_t>(variants.size()), panel.grammar.num_cols);
    EXPECT_EQ(variants.ids[5], "v5");
    EXPECT_EQ(variants.alleles.positions[5], 500);
  }
  fs::remove_all(dir);
}

// A block grammar file with the genotype part (kcla compress FILESET --block-cols N): the
// blocks read as before, the part reads back equal; read_genotype_part_hdf5 reads the part
// of either file kind; a part whose shape is not the layout's is refused at finish() and
// leaves no file.
TEST(Hdf5GenotypeGrammar, BlockGrammarFilesCarryTheGenotypePart) {
  const auto dir = scratch_dir();
  auto gen = kcla::test::rng();
  const auto panel = random_panel(gen, 60, 230);
  const auto matrix = panel.grammar.decompress();
  kcla::CsrColumnBlockSource source(matrix);
  kcla::BlockCompressOptions o;
  o.block_cols = 64;
  const auto blocks = kcla::compress_blocks(source, o);
  const kcla::GenotypePart part{panel.missing, kcla::CountedAllele::a2, panel.tables};
  const auto path = (dir / "blocks.h5").string();
  {
    kcla::BlockGrammarFileWriter writer(path);
    for (std::size_t i = 0; i < blocks.grammars.size(); ++i)
      writer.append(blocks.block_ids[i], blocks.extent_of(i), blocks.grammars[i]);
    writer.append_genotypes(part);
    EXPECT_THROW(writer.append_genotypes(part), kcla::InvalidArgument);  // once only
    writer.finish(blocks.layout);
  }
  EXPECT_TRUE(kcla::is_block_grammar_hdf5(path));
  EXPECT_TRUE(kcla::is_genotype_grammar_hdf5(path));
  const auto back = kcla::read_genotype_part_hdf5(path);
  EXPECT_EQ(back.missing.row_offsets, panel.missing.row_offsets);
  EXPECT_EQ(back.missing.columns, panel.missing.columns);
  EXPECT_EQ(back.counted_allele, kcla::CountedAllele::a2);
  EXPECT_EQ(back.tables.fam_text, panel.tables.fam_text);
  EXPECT_EQ(back.tables.bim_text, panel.tables.bim_text);
  EXPECT_NE(back.tables.bim_name.find(path), std::string::npos);
  const auto read = kcla::read_block_grammar_hdf5(path);
  EXPECT_EQ(read.layout.num_blocks(), 4);
  EXPECT_TRUE(kcla::test::csr_equal(read.decompress(), matrix));

  // The single-grammar kind through the same reader.
  const auto single = (dir / "single.h5").string();
  kcla::write_genotype_grammar_hdf5(single, panel);
  EXPECT_EQ(kcla::read_genotype_part_hdf5(single).missing.columns, panel.missing.columns);

  // A part of another shape: refused, no file left behind.
  const auto wrong = (dir / "wrong.h5").string();
  {
    auto other = random_panel(gen, 61, 230);
    kcla::BlockGrammarFileWriter writer(wrong);
    for (std::size_t i = 0; i < blocks.grammars.size(); ++i)
      writer.append(blocks.block_ids[i], blocks.extent_of(i), blocks.grammars[i]);
    writer.append_genotypes({other.missing, kcla::CountedAllele::a1, other.tables});
    EXPECT_THROW(writer.finish(blocks.layout), kcla::InvalidArgument);
  }
  EXPECT_FALSE(fs::exists(wrong));
  {  // a part inconsistent in itself (tables of 60 samples, missing calls of 61 rows)
    kcla::BlockGrammarFileWriter writer(wrong);
    auto bad = part;
    bad.missing = kcla::MissingCalls::none(61, 230);
    EXPECT_THROW(writer.append_genotypes(bad), kcla::InvalidArgument);
  }
  EXPECT_FALSE(fs::exists(wrong));

  // A layout whose row count would overflow the part's offsets: named, not read.
  {
    const auto huge = (dir / "huge.h5").string();
    fs::copy_file(path, huge);
    hid_t file = H5Fopen(huge.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    hid_t group = H5Gopen2(file, "/kcla_block_grammar", H5P_DEFAULT);
    hid_t rows = H5Aopen(group, "rows", H5P_DEFAULT);
    const std::int64_t most = std::numeric_limits<std::int64_t>::max();
    H5Awrite(rows, H5T_NATIVE_INT64, &most);
    H5Aclose(rows), H5Gclose(group), H5Fclose(file);
    try {
      kcla::read_genotype_part_hdf5(huge);
      ADD_FAILURE() << "no error for " << huge;
    } catch (const kcla::FormatError& e) {
      EXPECT_NE(std::string(e.what()).find(huge), std::string::npos) << e.what();
    }
  }

  // A block grammar file without the part is named.
  const auto plain = (dir / "plain_blocks.h5").string();
  kcla::write_block_grammar_hdf5(plain, blocks);
  EXPECT_FALSE(kcla::is_genotype_grammar_hdf5(plain));
  try {
    kcla::read_genotype_part_hdf5(plain);
    ADD_FAILURE() << "no error for " << plain;
  } catch (const kcla::FormatError& e) {
    EXPECT_NE(std::string(e.what()).find(plain), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("no genotype part"), std::string::npos) << e.what();
  }
  fs::remove_all(dir);
}

TEST(Hdf5GenotypeGrammar, PlainGrammarFilesAreNamed) {
  const auto dir = scratch_dir();
  auto gen = kcla::test::rng();
  const auto path = (dir / "plain.h5").string();
  kcla::write_grammar_hdf5(path, kcla::compress(kcla::test::random_genotypes(gen, 20, 50, 3, 2)));
  EXPECT_FALSE(kcla::is_genotype_grammar_hdf5(path));
  expect_format_error(path, "no genotype part");
  EXPECT_FALSE(kcla::is_genotype_grammar_hdf5((dir / "absent.h5").string()));
  fs::remove_all(dir);
}

TEST(Hdf5GenotypeGrammar, WritesRefusePartsThatDisagree) {
  const auto dir = scratch_dir();
  auto gen = kcla::test::rng();
  const auto good = random_panel(gen, 30, 80);
  const auto path = (dir / "bad.h5").string();
  auto expect_refused = [&](const kcla::GenotypeGrammar& p, const std::string& fragment) {
    try {
      kcla::write_genotype_grammar_hdf5(path, p);
      ADD_FAILURE() << "written: " << fragment;
    } catch (const kcla::InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
    EXPECT_FALSE(fs::exists(path));
  };
  auto p = good;
  p.tables.fam_text += "extra sample 0 0 1 -9\n";
  expect_refused(p, "lists 31 samples");
  p = good;
  p.tables.bim_text =
      p.tables.bim_text.substr(0, p.tables.bim_text.rfind('\n', p.tables.bim_text.size() - 2) + 1);
  expect_refused(p, "lists 79 variants");
  p = good;
  p.tables.bim_text += "1 short\n";
  expect_refused(p, "expected 'chromosome snp cM position A1 A2'");
  p = good;
  p.missing.num_cols = 81;
  expect_refused(p, "missing calls are 30 x 81");
  p = good;
  p.missing.columns.push_back(5);  // the last row's columns no longer covered
  expect_refused(p, "row_offsets do not cover");
  fs::remove_all(dir);
}

TEST(Hdf5GenotypeGrammar, DamagedGenotypePartsAreNamed) {
  const auto dir = scratch_dir();
  auto gen = kcla::test::rng();
  const auto panel = random_panel(gen, 30, 80);
  ASSERT_GT(panel.missing.count(), 2);
  const auto good = (dir / "good.h5").string();
  kcla::write_genotype_grammar_hdf5(good, panel);
  int case_number = 0;
  auto damaged = [&](const std::function<void(hid_t)>& change) {
    const auto p = (dir / ("damaged" + std::to_string(case_number++) + ".h5")).string();
    fs::copy_file(good, p, fs::copy_options::overwrite_existing);
    rewrite(p, change);
    return p;
  };
  expect_format_error(damaged([](hid_t g) { H5Ldelete(g, "missing_columns", H5P_DEFAULT); }),
                      "missing_columns");
  expect_format_error(damaged([&](hid_t g) {
                        H5Ldelete(g, "missing_columns", H5P_DEFAULT);
                        auto columns = panel.missing.columns;
                        columns.back() = 80;  // out of range
                        const hsize_t n = columns.size();
                        hid_t s = H5Screate_simple(1, &n, nullptr);
                        hid_t d = H5Dcreate2(g, "missing_columns", H5T_NATIVE_INT32, s, H5P_DEFAULT,
                                             H5P_DEFAULT, H5P_DEFAULT);
                        H5Dwrite(d, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT,
                                 columns.data());
                        H5Dclose(d), H5Sclose(s);
                      }),
                      "out of range");
  expect_format_error(damaged([&](hid_t g) { replace_bytes(g, "fam", "f0 s0 0 0 1 -9\n"); }),
                      "lists 1 samples, the genotypes have 30 rows");
  expect_format_error(damaged([&](hid_t g) { replace_bytes(g, "bim", "1 v0 0 x A G\n"); }),
                      "base-pair coordinate 'x' is not an integer");
  expect_format_error(damaged([](hid_t g) {
                        H5Adelete(g, "counted_allele");
                        hid_t t = H5Tcopy(H5T_C_S1);
                        H5Tset_size(t, 2);
                        hid_t s = H5Screate(H5S_SCALAR);
                        hid_t a = H5Acreate2(g, "counted_allele", t, s, H5P_DEFAULT, H5P_DEFAULT);
                        H5Awrite(a, t, "a3");
                        H5Aclose(a), H5Sclose(s), H5Tclose(t);
                      }),
                      "expected a1 or a2");
  expect_format_error(damaged([](hid_t g) {
                        H5Adelete(g, "version");
                        const std::int64_t v = 7;
                        hid_t s = H5Screate(H5S_SCALAR);
                        hid_t a =
                            H5Acreate2(g, "version", H5T_NATIVE_INT64, s, H5P_DEFAULT, H5P_DEFAULT);
                        H5Awrite(a, H5T_NATIVE_INT64, &v);
                        H5Aclose(a), H5Sclose(s);
                      }),
                      "7 is not supported");
  // Flipped bytes anywhere: an error naming the file, or (padding) the same content.
  const std::string bytes = kcla::test::read_bytes(good);
  std::uniform_int_distribution<std::size_t> where(0, bytes.size() - 1);
  for (int trial = 0; trial < 40; ++trial) {
    auto corrupt = bytes;
    const auto at = where(gen);
    corrupt[at] = static_cast<char>(corrupt[at] ^ 0x5a);
    const auto p = (dir / "flipped.h5").string();
    std::ofstream(p, std::ios::binary)
        .write(corrupt.data(), static_cast<std::streamsize>(corrupt.size()));
    try {
      expect_same(kcla::read_genotype_grammar_hdf5(p), panel);
    } catch (const kcla::FormatError& e) {
      EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
    }
  }
  fs::remove_all(dir);
}

}  // namespace
