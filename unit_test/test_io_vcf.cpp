// VCF/BCF through htslib: small VCF texts written here (missing calls, haploid calls,
// multi-allelic records, phased and unphased genotypes, DS fields) checked against
// hand-computed matrices; the same content bgzip-compressed (htslib's BGZF writer) and
// converted to BCF (htslib's writer) reads back identically; malformed files give a
// FormatError naming the file (and the line where there is one).
#include <kcla/block_compress.hpp>
#include <kcla/vcf.hpp>

#include <kcla/sparse_matrix_file.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "test_support.hpp"

#if KCLA_HAVE_HTSLIB
#include <htslib/bgzf.h>
#include <htslib/hts.h>
#include <htslib/vcf.h>
#endif

namespace {

using kcla::FormatError;
using kcla::test::csr_equal;
using kcla::test::throws_with;

#if KCLA_HAVE_HTSLIB

const char* kHeader =
    "##fileformat=VCFv4.2\n"
    "##contig=<ID=1,length=100000>\n"
    "##contig=<ID=X,length=100000>\n"
    "##FORMAT=<ID=GT,Number=1,Type=String,Description=\"Genotype\">\n"
    "##FORMAT=<ID=DS,Number=A,Type=Float,Description=\"ALT dosage\">\n";

/// A header plus the #CHROM line for `samples`, then `records` (tab-separated lines).
std::string vcf_text(const std::vector<std::string>& samples, const std::string& records) {
  std::string text = kHeader;
  text += "#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO";
  if (!samples.empty()) text += "\tFORMAT";  // a sites-only file has neither
  for (const auto& s : samples) text += "\t" + s;
  return text + "\n" + records;
}

/// Dense rows -> CSR (zeros dropped): the hand-computed expectation.
kcla::CsrMatrix<double> csr_of(const std::vector<std::vector<double>>& rows, std::int64_t cols) {
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

/// Compresses `text` into a BGZF file (what bgzip writes) with htslib's BGZF writer.
std::string write_bgzip(const kcla::test::TempDir& tmp, const std::string& name,
                        const std::string& text) {
  const auto path = tmp.path(name);
  BGZF* out = bgzf_open(path.c_str(), "w");
  if (!out) throw std::runtime_error("bgzf_open failed for " + path);
  const bool ok = bgzf_write(out, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  if (bgzf_close(out) != 0 || !ok) throw std::runtime_error("bgzf write failed for " + path);
  return path;
}

/// Converts the VCF at `vcf_path` into BCF at `name` through htslib's reader and writer.
std::string write_bcf(const kcla::test::TempDir& tmp, const std::string& name,
                      const std::string& vcf_path) {
  const auto path = tmp.path(name);
  htsFile* in = bcf_open(vcf_path.c_str(), "r");
  htsFile* out = bcf_open(path.c_str(), "wb");
  if (!in || !out) throw std::runtime_error("cannot open for BCF conversion");
  bcf_hdr_t* header = bcf_hdr_read(in);
  bcf1_t* record = bcf_init();
  bool ok = header && bcf_hdr_write(out, header) == 0;
  while (ok && bcf_read(in, header, record) == 0) ok = bcf_write(out, header, record) == 0;
  bcf_destroy(record);
  if (header) bcf_hdr_destroy(header);
  hts_close(in);
  if (hts_close(out) != 0 || !ok) throw std::runtime_error("BCF conversion failed: " + path);
  return path;
}

// The records below, per sample (s1 s2 s3 s4), with the value each call gives:
//   rs1  A>G     0|1=1   1/1=2   ./.=miss  0/0=0     phased and unphased, missing
//   .    A>G,T   1/2=2   2|2=2   0/1=1     .=miss    multi-allelic, ID '.'
//   rs3  C>T     1=1     0=0     1=1       0/.=miss  haploid calls, half-missing
//   rs4  G>A     1|0=1   0|0=0   1|1=2     1/0=1
//   rs5  T>.     0/0=0   0/0=0   0=0       0|0=0     no ALT: an all-zero column
//   rs6  A>C     DS but no GT: every call missing (DS is read only on request)
const char* kRecords =
    "1\t100\trs1\tA\tG\t.\tPASS\t.\tGT\t0|1\t1/1\t./.\t0/0\n"
    "1\t200\t.\tA\tG,T\t.\tPASS\t.\tGT\t1/2\t2|2\t0/1\t.\n"
    "1\t300\trs3\tC\tT\t.\tPASS\t.\tGT\t1\t0\t1\t0/.\n"
    "X\t400\trs4\tG\tA\t50\tPASS\t.\tGT\t1|0\t0|0\t1|1\t1/0\n"
    "X\t500\trs5\tT\t.\t.\t.\t.\tGT\t0/0\t0/0\t0\t0|0\n"
    "X\t600\trs6\tA\tC\t.\t.\t.\tDS\t0.5\t1\t.\t0\n";

const std::vector<std::string> kSamples = {"s1", "s2", "s3", "s4"};

kcla::CsrMatrix<double> expected_counts() {
  return csr_of({{1, 2, 1, 1, 0, 0}, {2, 2, 0, 0, 0, 0}, {0, 1, 1, 2, 0, 0}, {0, 0, 0, 1, 0, 0}},
                6);
}

TEST(Vcf, ReadsGenotypeCountsFromText) {
  kcla::test::TempDir tmp;
  const auto path = tmp.write("g.vcf", vcf_text(kSamples, kRecords));
  const auto g = kcla::read_vcf(path);
  EXPECT_TRUE(csr_equal(g.matrix, expected_counts()));
  EXPECT_EQ(g.sample_ids, kSamples);
  EXPECT_EQ(g.variant_ids,
            (std::vector<std::string>{"rs1", "1:200:A:G,T", "rs3", "rs4", "rs5", "rs6"}));
  EXPECT_EQ(g.num_missing, 1 + 1 + 1 + 4);  // ./.  .  0/.  and rs6's four calls
  // Where they are, sample by sample (columns ascending).
  ASSERT_NO_THROW(g.missing.validate());
  EXPECT_EQ(g.missing.num_rows, 4);
  EXPECT_EQ(g.missing.num_cols, 6);
  EXPECT_EQ(g.missing.row_offsets, (std::vector<std::int64_t>{0, 1, 2, 4, 7}));
  EXPECT_EQ(g.missing.columns, (std::vector<std::int32_t>{5, 5, 0, 5, 1, 2, 5}));
  EXPECT_EQ(g.num_multiallelic, 1);
  EXPECT_EQ(g.num_skipped_multiallelic, 0);
  EXPECT_EQ(g.num_dosage_records, 0);

  // With DS requested, rs6 (the one record that has DS) reads it; the others keep GT.
  kcla::VcfReadOptions options;
  options.use_dosage_field = true;
  const auto d = kcla::read_vcf(path, options);
  EXPECT_TRUE(csr_equal(
      d.matrix,
      csr_of({{1, 2, 1, 1, 0, 0.5}, {2, 2, 0, 0, 0, 1}, {0, 1, 1, 2, 0, 0}, {0, 0, 0, 1, 0, 0}},
             6)));
  EXPECT_EQ(d.num_dosage_records, 1);
  EXPECT_EQ(d.num_missing, 1 + 1 + 1 + 1);  // ./.  .  0/.  and rs6's '.'
}

TEST(Vcf, SkipsMultiallelicRecordsWhenAsked) {
  kcla::test::TempDir tmp;
  const auto path = tmp.write("g.vcf", vcf_text(kSamples, kRecords));
  kcla::VcfReadOptions options;
  options.multiallelic = kcla::MultiallelicPolicy::skip;
  options.keep_variant_ids = false;
  const auto g = kcla::read_vcf(path, options);
  EXPECT_TRUE(csr_equal(
      g.matrix, csr_of({{1, 1, 1, 0, 0}, {2, 0, 0, 0, 0}, {0, 1, 2, 0, 0}, {0, 0, 1, 0, 0}}, 5)));
  EXPECT_TRUE(g.variant_ids.empty());
  EXPECT_EQ(g.num_multiallelic, 1);
  EXPECT_EQ(g.num_skipped_multiallelic, 1);
  EXPECT_EQ(g.num_missing, 1 + 1 + 4) << "a skipped record's calls are not counted";
}

TEST(Vcf, ReadsTheDosageFieldWhenAsked) {
  kcla::test::TempDir tmp;
  // rs1 has DS (one missing value), the multi-allelic record has DS per ALT (summed), rs3
  // has none (GT is used).
  const std::string records =
      "1\t100\trs1\tA\tG\t.\t.\t.\tGT:DS\t0|1:0.9\t1/1:1.75\t./.:.\t0/0:0\n"
      "1\t200\trs2\tA\tG,T\t.\t.\t.\tGT:DS\t1/2:1.5,0.25\t0/0:0,0\t0/1:0.5,0.5\t1/1:2,0\n"
      "1\t300\trs3\tC\tT\t.\t.\t.\tGT\t1/1\t0/1\t./.\t0/0\n";
  const auto path = tmp.write("d.vcf", vcf_text(kSamples, records));
  kcla::VcfReadOptions options;
  options.use_dosage_field = true;
  const auto g = kcla::read_vcf(path, options);
  // DS values are floats in htslib (and BCF): expect exactly what float holds.
  const double f09 = static_cast<double>(0.9f);
  const auto expected = csr_of({{f09, 1.75, 2}, {1.75, 0, 1}, {0, 1, 0}, {0, 2, 0}}, 3);
  EXPECT_TRUE(csr_equal(g.matrix, expected));
  EXPECT_EQ(g.num_dosage_records, 2);
  EXPECT_EQ(g.num_missing, 2);  // rs1's '.' DS and rs3's ./.

  // Without the option the same file reads GT.
  const auto gt = kcla::read_vcf(path);
  EXPECT_TRUE(csr_equal(gt.matrix, csr_of({{1, 2, 2}, {2, 0, 1}, {0, 1, 0}, {0, 2, 0}}, 3)));
  EXPECT_EQ(gt.num_dosage_records, 0);

  const auto bad = tmp.write(
      "neg.vcf", vcf_text(kSamples, "1\t100\trs1\tA\tG\t.\t.\t.\tGT:DS\t0|1:-1\t0:0\t0:0\t0:0\n"));
  EXPECT_TRUE(throws_with<FormatError>([&] { kcla::read_vcf(bad, options); },
                                       {bad, "line 7", "1:100", "s1", "DS value"}));
}

TEST(Vcf, BgzipAndBcfReadLikeTheText) {
  kcla::test::TempDir tmp;
  const std::string text = vcf_text(kSamples, kRecords);
  const auto plain = tmp.write("g.vcf", text);
  const auto gz = write_bgzip(tmp, "g.vcf.gz", text);
  const auto bcf = write_bcf(tmp, "g.bcf", plain);
  for (const auto& path : {gz, bcf}) {
    const auto g = kcla::read_vcf(path);
    EXPECT_TRUE(csr_equal(g.matrix, expected_counts())) << path;
    EXPECT_EQ(g.sample_ids, kSamples) << path;
    EXPECT_EQ(g.variant_ids.size(), 6u) << path;
    EXPECT_EQ(g.num_missing, 7) << path;
  }
  // read_sparse_matrix (and so `kcla compress`) reaches read_vcf by the name.
  for (const auto& path : {plain, gz, bcf})
    EXPECT_TRUE(csr_equal(kcla::read_sparse_matrix(path), expected_counts())) << path;
}

/// Random calls: ploidy 1 or 2, phased or not, missing alleles, 1-3 ALT alleles.
TEST(Vcf, RandomCallsInEveryFormat) {
  kcla::test::TempDir tmp;
  auto gen = kcla::test::rng();
  const int samples = 1 + static_cast<int>(gen() % 40),
            variants = 1 + static_cast<int>(gen() % 150);
  std::vector<std::string> names;
  for (int s = 0; s < samples; ++s) names.push_back("ind" + std::to_string(s));
  std::vector<std::vector<double>> dense(samples, std::vector<double>(variants, 0));
  std::int64_t missing = 0;
  std::ostringstream records;
  for (int v = 0; v < variants; ++v) {
    const int alts = 1 + static_cast<int>(gen() % 3);
    records << "1\t" << (v + 1) * 10 << "\tv" << v << "\tA\t"
            << (alts == 1   ? "C"
                : alts == 2 ? "C,G"
                            : "C,G,T")
            << "\t.\t.\t.\tGT";
    for (int s = 0; s < samples; ++s) {
      const int ploidy = gen() % 5 == 0 ? 1 : 2;
      bool is_missing = false;
      int count = 0;
      std::string call;
      for (int k = 0; k < ploidy; ++k) {
        if (k > 0) call += gen() % 2 ? '|' : '/';
        if (gen() % 10 == 0) {
          call += '.';
          is_missing = true;
        } else {
          const int allele = static_cast<int>(gen() % (alts + 1));
          call += std::to_string(allele);
          count += allele != 0;
        }
      }
      records << '\t' << call;
      if (is_missing)
        ++missing;
      else
        dense[s][v] = count;
    }
    records << '\n';
  }
  const std::string text = vcf_text(names, records.str());
  const auto plain = tmp.write("r.vcf", text);
  const auto expected = csr_of(dense, variants);
  for (const auto& path :
       {plain, write_bgzip(tmp, "r.vcf.gz", text), write_bcf(tmp, "r.bcf", plain)}) {
    const auto g = kcla::read_vcf(path);
    EXPECT_TRUE(csr_equal(g.matrix, expected)) << path;
    EXPECT_EQ(g.num_missing, missing) << path;
    EXPECT_EQ(g.matrix.num_rows, samples) << path;
    EXPECT_NO_THROW(g.matrix.validate()) << path;
  }
}

TEST(Vcf, NoSamplesGivesNoRows) {
  kcla::test::TempDir tmp;
  const auto path = tmp.write("sites.vcf", vcf_text({},
                                                    "1\t100\trs1\tA\tG\t.\t.\t.\n"
                                                    "1\t200\trs2\tA\tG\t.\t.\t.\n"));
  const auto g = kcla::read_vcf(path);
  EXPECT_EQ(g.matrix.num_rows, 0);
  EXPECT_EQ(g.matrix.num_cols, 2);
  EXPECT_EQ(g.matrix.nnz(), 0);
}

TEST(Vcf, MalformedFilesNameTheFileAndLine) {
  kcla::test::TempDir tmp;
  const std::string good = "1\t100\trs1\tA\tG\t.\t.\t.\tGT\t0|1\t1/1\t0/0\t0/0\n";
  // The header is 6 lines, so the first record is line 7 and the second line 8.
  struct Case {
    const char* name;
    std::string content;
    std::vector<std::string> needles;
  };
  const std::vector<Case> cases = {
      {"bad_gt.vcf",
       vcf_text(kSamples, good + "1\t200\trs2\tA\tG\t.\t.\t.\tGT\t0/x\t0\t0\t0\n"),
       {"line 8"}},
      {"columns.vcf",
       vcf_text(kSamples, good + "1\t200\trs2\tA\tG\t.\t.\t.\tGT\t0/1\t0\n"),
       {"line 8"}},
      {"allele.vcf",
       vcf_text(kSamples, good + "1\t200\trs2\tA\tG\t.\t.\t.\tGT\t0/1\t0\t0|3\t0\n"),
       {"line 8", "1:200", "s3", "allele 3", "2 alleles"}},
      {"no_chrom_line.vcf", std::string(kHeader) + good, {"header"}},
      {"not_vcf.vcf", "hello\tworld\n1 2 3\n", {"not a VCF or BCF"}},
      {"empty.vcf", "", {}},
  };
  for (const auto& c : cases) {
    const auto path = tmp.write(c.name, c.content);
    std::vector<std::string> needles = c.needles;
    needles.push_back(path);
    bool threw = false;
    try {
      kcla::read_vcf(path);
    } catch (const FormatError& e) {
      threw = true;
      EXPECT_EQ(e.file(), path);
      for (const auto& n : needles)
        EXPECT_NE(std::string(e.what()).find(n), std::string::npos)
            << c.name << ": \"" << e.what() << "\" lacks \"" << n << "\"";
    } catch (const std::exception& e) {
      ADD_FAILURE() << c.name << ": threw another exception: " << e.what();
      threw = true;
    }
    EXPECT_TRUE(threw) << c.name << " did not throw";
  }
  const auto missing = tmp.path("no_such.vcf");
  EXPECT_TRUE(throws_with<FormatError>([&] { kcla::read_vcf(missing); }, {missing, "cannot open"}));
}

TEST(Vcf, TruncatedCompressedFilesAreErrors) {
  kcla::test::TempDir tmp;
  std::ostringstream records;
  for (int v = 0; v < 3000; ++v)
    records << "1\t" << (v + 1) << "\tv" << v << "\tA\tG\t.\t.\t.\tGT\t0|1\t1/1\t0/0\t1|0\n";
  const std::string text = vcf_text(kSamples, records.str());
  const auto plain = tmp.write("big.vcf", text);
  const auto gz = write_bgzip(tmp, "big.vcf.gz", text);
  const auto bcf = write_bcf(tmp, "big.bcf", plain);
  ASSERT_EQ(kcla::read_vcf(gz).matrix.num_cols, 3000);
  ASSERT_EQ(kcla::read_vcf(bcf).matrix.num_cols, 3000);
  for (const auto& path : {gz, bcf}) {
    // Cut in the middle: the end-of-file marker is gone, and the last block is partial.
    const auto size = std::filesystem::file_size(path);
    std::filesystem::resize_file(path, size / 2);
    EXPECT_TRUE(throws_with<FormatError>([&] { kcla::read_vcf(path); }, {path, "truncated"}))
        << path;
  }
}

#else  // !KCLA_HAVE_HTSLIB

TEST(Vcf, WithoutHtslibSaysSo) {
  EXPECT_TRUE(
      throws_with<FormatError>([] { kcla::read_vcf("x.vcf"); }, {"x.vcf", "without htslib"}));
  EXPECT_TRUE(throws_with<FormatError>([] { kcla::read_sparse_matrix("x.vcf.gz"); },
                                       {"x.vcf.gz", "without htslib"}));
}

#endif

TEST(Vcf, FileNames) {
  for (const char* name : {"a.vcf", "dir/a.vcf.gz", "a.vcf.bgz", "a.bcf"})
    EXPECT_TRUE(kcla::is_vcf_file_name(name)) << name;
  for (const char* name : {"a.vcf.txt", "vcf", ".vcf", "a.bcf.gz", "a.bed"})
    EXPECT_FALSE(kcla::is_vcf_file_name(name)) << name;
}

// The block source delivers read_vcf's columns, block by block, for any block width, every
// option, text, bgzip and BCF; a fault in a later record surfaces from next_block.
TEST(Vcf, BlocksStreamTheColumnsReadVcfGives) {
  kcla::test::TempDir tmp;
  // A larger random file besides the hand-made one: 13 samples, 97 records, some
  // multi-allelic, some missing.
  auto gen = kcla::test::rng();
  std::vector<std::string> samples;
  for (int s = 0; s < 13; ++s) samples.push_back("i" + std::to_string(s));
  std::string records;
  const char* calls[] = {"0/0", "0/1", "1|1", "./.", "1/2", "0"};
  for (int r = 0; r < 97; ++r) {
    records += "1\t" + std::to_string(1000 + r) + "\tv" + std::to_string(r) + "\tA\t" +
               (r % 11 == 3 ? "C,G" : "C") + "\t.\tPASS\t.\tGT";
    for (std::size_t s = 0; s < samples.size(); ++s)
      records += std::string("\t") + calls[gen() % (r % 11 == 3 ? 6 : 4)];
    records += "\n";
  }
  const auto small = tmp.write("small.vcf", vcf_text(kSamples, kRecords));
  const auto large = tmp.write("large.vcf", vcf_text(samples, records));
  const std::vector<std::string> paths = {
      small, large, write_bgzip(tmp, "large.vcf.gz", vcf_text(samples, records)),
      write_bcf(tmp, "large.bcf", large)};
  for (const auto& path : paths)
    for (int variant = 0; variant < 3; ++variant) {
      kcla::VcfReadOptions options;
      if (variant == 1) options.multiallelic = kcla::MultiallelicPolicy::skip;
      if (variant == 2) options.use_dosage_field = true;
      const auto whole = kcla::read_vcf(path, options).matrix;
      for (std::int64_t width : {1, 2, 5, 40, 1000}) {
        auto source = kcla::open_vcf_blocks(path, options);
        EXPECT_EQ(source->num_rows(), whole.num_rows);
        EXPECT_EQ(source->num_cols(), -1);
        EXPECT_EQ(source->name(), path);
        kcla::CsrMatrix<double> block;
        std::int64_t at = 0;
        while (source->next_block(width, block)) {
          ASSERT_LE(block.num_cols, width);
          ASSERT_GT(block.num_cols, 0);
          EXPECT_TRUE(csr_equal(block, kcla::column_slice(whole, at, at + block.num_cols)))
              << path << " width " << width << " at column " << at;
          at += block.num_cols;
        }
        EXPECT_EQ(at, whole.num_cols) << path << " width " << width;
        EXPECT_EQ(block.num_cols, 0);
        EXPECT_FALSE(source->next_block(width, block)) << "stays at the end";
      }
    }
  // Block compression over the stream gives the matrix read whole.
  kcla::BlockCompressOptions o;
  o.block_cols = 16;
  o.threads = 2;
  auto source = kcla::open_vcf_blocks(large);
  const auto blocks = kcla::compress_blocks(*source, o);
  EXPECT_TRUE(csr_equal(blocks.decompress(), kcla::read_vcf(large).matrix));
  // A broken record in the second block: the error names the file and line.
  std::string broken = records;
  broken.replace(broken.find("\tv50\t"), 1, " ");  // the tab before the ID: a short record
  const auto bad = tmp.write("bad.vcf", vcf_text(samples, broken));
  auto faulty = kcla::open_vcf_blocks(bad);
  kcla::CsrMatrix<double> block;
  ASSERT_TRUE(faulty->next_block(40, block));
  try {
    while (faulty->next_block(40, block)) {
    }
    ADD_FAILURE() << "a broken record was read";
  } catch (const kcla::FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.vcf"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("line"), std::string::npos) << e.what();
  }
}

}  // namespace
