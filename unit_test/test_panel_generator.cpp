// The streaming mosaic panel generator (kcla::MosaicPanelSource) and the streaming PLINK
// writer: shape, determinism across block widths and thread counts, the statistical shape
// the generator claims (neutral spectrum, LD decaying with distance), round trips through
// kcla::read_plink, and the errors of bad options.
#include "test_support.hpp"

#include <kcla/block_compress.hpp>
#include <kcla/block_grammar.hpp>
#include <kcla/panel_generator.hpp>
#include <kcla/plink.hpp>
#include <kcla/plink_writer.hpp>

#include <cmath>
#include <filesystem>
#include <utility>
#include <vector>

namespace {

using kcla::CsrMatrix;
using kcla::MosaicPanelOptions;
using kcla::MosaicPanelSource;

/// A seed for this run (printed by the test main; KCLA_TEST_SEED replays it).
std::uint64_t run_seed() {
  auto gen = kcla::test::rng();
  return gen();
}

/// Reads `source` to the end in blocks of `width` columns, joined into one matrix.
CsrMatrix<double> read_in_blocks(kcla::ColumnBlockSource& source, std::int64_t width) {
  std::vector<std::vector<std::pair<std::int32_t, double>>> rows(
      static_cast<std::size_t>(source.num_rows()));
  CsrMatrix<double> block;
  std::int64_t offset = 0;
  while (source.next_block(width, block)) {
    EXPECT_EQ(block.num_rows, source.num_rows());
    EXPECT_LE(block.num_cols, width);
    for (std::int64_t r = 0; r < block.num_rows; ++r)
      for (auto k = block.row_offsets[r]; k < block.row_offsets[r + 1]; ++k)
        rows[r].emplace_back(static_cast<std::int32_t>(offset + block.column_indices[k]),
                             block.values[k]);
    offset += block.num_cols;
  }
  CsrMatrix<double> all;
  all.num_rows = source.num_rows();
  all.num_cols = offset;
  for (const auto& row : rows) {
    for (const auto& [c, v] : row) {
      all.column_indices.push_back(c);
      all.values.push_back(v);
    }
    all.row_offsets.push_back(all.nnz());
  }
  return all;
}

MosaicPanelOptions small_options() {
  MosaicPanelOptions o;
  o.samples = 203;  // not a multiple of 4 (the .bed's last byte is padded)
  o.variants = 2000;
  o.switch_rate = 0.01;
  o.tree_span = 20;
  o.seed = run_seed();
  o.threads = 1;
  return o;
}

TEST(PanelGenerator, ShapeValuesAndStrictlyIncreasingColumns) {
  for (int ploidy : {1, 2}) {
    auto o = small_options();
    o.ploidy = ploidy;
    MosaicPanelSource source(o);
    EXPECT_EQ(source.num_rows(), o.samples);
    EXPECT_EQ(source.num_cols(), o.variants);
    CsrMatrix<double> block;
    std::int64_t columns = 0, nnz = 0;
    bool seen_max = false;
    while (source.next_block(333, block)) {
      ASSERT_NO_THROW(block.validate("generated block"));
      EXPECT_EQ(block.num_rows, o.samples);
      for (std::int64_t r = 0; r < block.num_rows; ++r)
        for (auto k = block.row_offsets[r]; k < block.row_offsets[r + 1]; ++k) {
          if (k > block.row_offsets[r]) {
            ASSERT_LT(block.column_indices[k - 1], block.column_indices[k]) << "row " << r;
          }
          ASSERT_TRUE(block.values[k] >= 1 && block.values[k] <= ploidy) << block.values[k];
          seen_max |= block.values[k] == ploidy;
        }
      columns += block.num_cols;
      nnz += block.nnz();
    }
    EXPECT_EQ(columns, o.variants);
    EXPECT_EQ(source.position(), o.variants);
    EXPECT_TRUE(seen_max);
    EXPECT_GT(nnz, 0);
    EXPECT_TRUE(block.row_offsets.size() == 1 && block.nnz() == 0);  // left empty at the end
    EXPECT_FALSE(source.next_block(10, block));
  }
}

TEST(PanelGenerator, SameMatrixForAnyBlockWidthAndThreadCount) {
  auto o = small_options();
  const auto whole = kcla::generate_mosaic_panel(o);
  EXPECT_EQ(whole.num_cols, o.variants);
  for (std::int64_t width : {1000, 1, 37, 64, 1999, 5000})
    for (int threads : {1, 2, 3}) {
      o.threads = threads;
      MosaicPanelSource source(o);
      EXPECT_TRUE(kcla::test::csr_equal(read_in_blocks(source, width), whole))
          << "blocks of " << width << ", " << threads << " threads";
    }
  MosaicPanelSource source(o);  // rewind replays the panel
  CsrMatrix<double> block;
  source.next_block(777, block);
  source.rewind();
  EXPECT_EQ(source.position(), 0);
  EXPECT_TRUE(kcla::test::csr_equal(read_in_blocks(source, 1000), whole));
  o.seed += 1;  // and another seed is another panel
  EXPECT_FALSE(kcla::test::csr_equal(kcla::generate_mosaic_panel(o), whole));
}

TEST(PanelGenerator, SkipColumnsLandsWhereReadingWould) {
  auto o = small_options();
  const auto whole = kcla::generate_mosaic_panel(o);
  for (std::int64_t skip : {0, 1, 19, 20, 999, 1000, 1234, 1999, 2000, 5000}) {
    o.threads = skip % 2 ? 1 : 3;
    MosaicPanelSource source(o);
    CsrMatrix<double> block;
    source.next_block(10, block);  // a skip from the middle of the panel, too
    source.skip_columns(skip);
    const std::int64_t from = std::min<std::int64_t>(10 + skip, o.variants);
    EXPECT_EQ(source.position(), from);
    EXPECT_TRUE(kcla::test::csr_equal(read_in_blocks(source, 300),
                                      kcla::column_slice(whole, from, o.variants)))
        << "after skipping " << skip;
  }
  MosaicPanelSource source(o);  // two skips in a row
  source.skip_columns(500);
  source.skip_columns(3);
  EXPECT_TRUE(kcla::test::csr_equal(read_in_blocks(source, 700),
                                    kcla::column_slice(whole, 503, o.variants)));
}

TEST(PanelGenerator, FeedsBlockCompressionDirectly) {
  auto o = small_options();
  const auto whole = kcla::generate_mosaic_panel(o);
  MosaicPanelSource source(o);
  kcla::BlockCompressOptions c;
  c.block_cols = 500;
  c.threads = 2;
  const auto grammar = kcla::compress_blocks(source, c);
  EXPECT_EQ(grammar.layout.num_blocks(), 4);
  EXPECT_TRUE(kcla::test::csr_equal(grammar.decompress(), whole));
}

/// Derived-allele counts per variant.
std::vector<double> allele_counts(const CsrMatrix<double>& g) {
  std::vector<double> counts(static_cast<std::size_t>(g.num_cols), 0.0);
  for (std::int64_t k = 0; k < g.nnz(); ++k) counts[g.column_indices[k]] += g.values[k];
  return counts;
}

TEST(PanelGenerator, AlleleFrequencySpectrumFollowsOneOverF) {
  // 2,000 haplotypes; many short founder genealogies, so the spectrum averages over
  // hundreds of trees rather than following the chance shape of a few.
  MosaicPanelOptions o;
  o.samples = 1000;
  o.variants = 40000;
  o.tree_span = 50;
  o.seed = run_seed();
  const auto g = kcla::generate_mosaic_panel(o);
  const double h = 2.0 * o.samples, k = o.founders;
  // Bins: recent mutations (two), then founder variants grouped by carriers c, each c
  // standing for [(c - 1/2) / K, (c + 1/2) / K]. Expected: the share of density 1/f.
  const std::vector<double> edges = {1 / h,   4 / h,    0.5 / k,  1.5 / k,    3.5 / k,
                                     7.5 / k, 15.5 / k, 31.5 / k, 1 - 0.5 / k};
  const double total = std::log(edges.back() / edges.front());
  std::vector<double> share(edges.size() - 1, 0.0);
  std::int64_t polymorphic = 0;
  for (double c : allele_counts(g)) {
    if (c == 0 || c == h) continue;
    ++polymorphic;
    const double f = c / h;
    for (std::size_t b = 0; b + 1 < edges.size(); ++b)
      if (f >= edges[b] && (f < edges[b + 1] || b + 2 == edges.size())) {
        share[b] += 1;
        break;
      }
  }
  // A few percent of recent mutations reach no sample (about one expected carrier).
  EXPECT_GT(polymorphic, 0.93 * o.variants);
  for (std::size_t b = 0; b < share.size(); ++b) {
    const double expected = std::log(edges[b + 1] / edges[b]) / total;
    const double got = share[b] / static_cast<double>(polymorphic);
    // Recent mutations have Poisson carrier counts, which thins the lowest bin.
    EXPECT_NEAR(got, expected, (b == 0 ? 0.3 : 0.2) * expected)
        << "frequencies [" << edges[b] * h << ", " << edges[b + 1] * h << ") of " << h
        << " haplotypes";
  }
  // Mean derived frequency of density 1/f on [1/H, 1]: about 1 / ln(H) = 0.13.
  double sum = 0;
  for (double c : allele_counts(g)) sum += c / h;
  EXPECT_NEAR(sum / static_cast<double>(o.variants), 1 / std::log(h), 0.04);
}

TEST(PanelGenerator, LinkageDisequilibriumDecaysWithDistance) {
  MosaicPanelOptions o;
  o.samples = 1000;
  o.variants = 5000;
  o.seed = run_seed();
  const auto g = kcla::generate_mosaic_panel(o);
  const auto n = static_cast<std::size_t>(o.samples), m = static_cast<std::size_t>(o.variants);
  std::vector<double> dense(n * m, 0.0);  // variant-major
  for (std::size_t r = 0; r < n; ++r)
    for (auto k = g.row_offsets[r]; k < g.row_offsets[r + 1]; ++k)
      dense[static_cast<std::size_t>(g.column_indices[k]) * n + r] = g.values[k];
  const auto counts = allele_counts(g);
  auto common = [&](std::size_t j) {
    const double f = counts[j] / (2.0 * o.samples);
    return f >= 0.05 && f <= 0.95;
  };
  auto r2 = [&](std::size_t a, std::size_t b) {
    double sa = 0, sb = 0, saa = 0, sbb = 0, sab = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const double x = dense[a * n + i], y = dense[b * n + i];
      sa += x, sb += y, saa += x * x, sbb += y * y, sab += x * y;
    }
    const double dn = static_cast<double>(n);
    const double cov = sab / dn - sa * sb / (dn * dn), va = saa / dn - sa * sa / (dn * dn),
                 vb = sbb / dn - sb * sb / (dn * dn);
    return cov * cov / (va * vb);
  };
  auto mean_r2 = [&](std::size_t d) {
    double sum = 0;
    int pairs = 0;
    for (std::size_t j = 0; j + d < m; ++j)
      if (common(j) && common(j + d)) sum += r2(j, j + d), ++pairs;
    EXPECT_GT(pairs, 100) << "distance " << d;
    return sum / pairs;
  };
  // Over 600 seeds near/mid >= 3.0, mid/far >= 3.6 and far <= 0.023, so the bounds below leave
  // a margin; at distance 100 the share of one tree still varies too much between seeds.
  const double near = mean_r2(1), mid = mean_r2(300), far = mean_r2(1000);
  EXPECT_GT(near, 0.15);  // shared founder genealogy and copied segments
  EXPECT_GT(near, 2 * mid);
  EXPECT_GT(mid, 2.5 * far);
  EXPECT_LT(far, 0.05);  // near the background of 64 founders and ~1/n sampling
}

TEST(PanelGenerator, BadOptionsNameTheOption) {
  using kcla::InvalidArgument;
  using kcla::test::throws_with;
  auto with = [](auto change) {
    MosaicPanelOptions o;
    change(o);
    return [o] { MosaicPanelSource source(o); };
  };
  EXPECT_TRUE(throws_with<InvalidArgument>(with([](auto& o) { o.samples = 0; }), {"samples"}));
  EXPECT_TRUE(
      throws_with<InvalidArgument>(with([](auto& o) { o.variants = -5; }), {"variants", "-5"}));
  EXPECT_TRUE(
      throws_with<InvalidArgument>(with([](auto& o) { o.variants = 1LL << 31; }), {"variants"}));
  EXPECT_TRUE(throws_with<InvalidArgument>(with([](auto& o) { o.ploidy = 3; }), {"ploidy", "3"}));
  EXPECT_TRUE(throws_with<InvalidArgument>(with([](auto& o) { o.founders = 1; }), {"founders"}));
  EXPECT_TRUE(
      throws_with<InvalidArgument>(with([](auto& o) { o.switch_rate = 1.5; }), {"switch_rate"}));
  EXPECT_TRUE(
      throws_with<InvalidArgument>(with([](auto& o) { o.switch_rate = NAN; }), {"switch_rate"}));
  EXPECT_TRUE(
      throws_with<InvalidArgument>(with([](auto& o) { o.tree_span = 0.5; }), {"tree_span"}));
  EXPECT_TRUE(
      throws_with<InvalidArgument>(with([](auto& o) { o.rare_fraction = 2; }), {"rare_fraction"}));
  EXPECT_TRUE(
      throws_with<InvalidArgument>(with([](auto& o) { o.sfs_exponent = -1; }), {"sfs_exponent"}));
  EXPECT_TRUE(throws_with<InvalidArgument>(with([](auto& o) { o.threads = -1; }), {"threads"}));
  MosaicPanelSource source(small_options());
  CsrMatrix<double> block;
  EXPECT_TRUE(throws_with<InvalidArgument>([&] { source.next_block(0, block); }, {"max_cols"}));
}

TEST(PanelGenerator, ExtremeOptionsStillWork) {
  auto o = small_options();
  o.switch_rate = 1;  // a new founder at every variant
  o.tree_span = 1;    // a new genealogy at every variant
  o.rare_fraction = 1;
  o.founders = 2;
  EXPECT_NO_THROW(kcla::generate_mosaic_panel(o).validate());
  o.switch_rate = 0;  // one founder per haplotype throughout
  o.rare_fraction = 0;
  o.sfs_exponent = 0;
  const auto g = kcla::generate_mosaic_panel(o);
  EXPECT_NO_THROW(g.validate());
  EXPECT_GT(g.nnz(), 0);
}

TEST(PlinkWriter, GeneratedPanelReadsBackExactly) {
  kcla::test::TempDir tmp;
  for (auto counted : {kcla::CountedAllele::a1, kcla::CountedAllele::a2}) {
    auto o = small_options();
    const auto expected = kcla::generate_mosaic_panel(o);
    o.threads = 2;
    MosaicPanelSource source(o);
    kcla::PlinkWriteOptions w;
    w.block_cols = 300;
    w.threads = 3;
    w.counted_allele = counted;
    std::vector<std::int64_t> progress;
    w.progress = [&](std::int64_t done, std::int64_t total) {
      EXPECT_EQ(total, o.variants);
      progress.push_back(done);
    };
    EXPECT_EQ(kcla::write_plink(source, tmp.path("panel.bed"), w), o.variants);
    EXPECT_EQ(progress.size(), 7u);
    EXPECT_EQ(progress.back(), o.variants);
    kcla::PlinkReadOptions r;
    r.counted_allele = counted;
    const auto back = kcla::read_plink(tmp.path("panel"), r);
    EXPECT_TRUE(kcla::test::csr_equal(back.matrix, expected));
    EXPECT_EQ(back.num_missing, 0);
    EXPECT_EQ(back.individual_ids.front(), "s1");
    EXPECT_EQ(back.family_ids.back(), "s203");
    EXPECT_EQ(back.snp_ids.back(), "v2000");
    for (const auto& entry : std::filesystem::directory_iterator(tmp.dir()))
      EXPECT_EQ(entry.path().string().find(".tmp"), std::string::npos) << entry.path();
  }
}

/// A source serving one in-memory matrix in blocks (for the writer's error paths).
class MatrixSource : public kcla::ColumnBlockSource {
 public:
  explicit MatrixSource(CsrMatrix<double> m) : m_(std::move(m)) {}
  std::int64_t num_rows() const override { return m_.num_rows; }
  std::int64_t num_cols() const override { return m_.num_cols; }
  std::string name() const override { return "test matrix"; }
  bool next_block(std::int64_t, CsrMatrix<double>& block) override {
    if (done_) {
      block = {};
      return false;
    }
    done_ = true;
    block = m_;
    return true;
  }

 private:
  CsrMatrix<double> m_;
  bool done_ = false;
};

TEST(PlinkWriter, BadValuesAndUnwritablePathsFailLeavingNoFileset) {
  kcla::test::TempDir tmp;
  CsrMatrix<double> m;
  m.num_rows = 2;
  m.num_cols = 3;
  m.row_offsets = {0, 1, 2};
  m.column_indices = {0, 2};
  m.values = {1, 3};
  MatrixSource bad(m);
  EXPECT_TRUE(kcla::test::throws_with<kcla::FormatError>(
      [&] { kcla::write_plink(bad, tmp.path("bad")); }, {"test matrix", "row 1, column 2", "3"}));
  EXPECT_TRUE(std::filesystem::is_empty(tmp.dir()));

  m.values = {1, 2};
  MatrixSource good(m);
  EXPECT_TRUE(kcla::test::throws_with<kcla::FormatError>(
      [&] { kcla::write_plink(good, tmp.path("no/such/folder/x")); }, {"no/such/folder/x."}));
  MatrixSource again(m);
  kcla::write_plink(again, tmp.path("ok"));
  EXPECT_TRUE(kcla::test::csr_equal(kcla::read_plink(tmp.path("ok")).matrix, m));
}

}  // namespace
