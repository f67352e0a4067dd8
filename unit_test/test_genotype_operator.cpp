// kcla::GenotypeOperator and plink2_transform against a dense standardized matrix built
// directly from PLINK 2's definitions (frequencies over present calls, 2f centering,
// 1/sqrt(2f(1-f)) scaling, mean imputation or none, either allele counted).
#include <kcla/block_compress.hpp>
#include <kcla/genotype_operator.hpp>
#include <kcla/genotype_pca.hpp>
#include <kcla/genotype_transform.hpp>
#include <kcla/repair.hpp>
#include <kcla/small_dense.hpp>

#include <gtest/gtest.h>

#include <cmath>

#include "genotype_panels.hpp"
#include "test_support.hpp"

namespace {

using exec = Kokkos::DefaultExecutionSpace;
using memory = exec::memory_space;
using kcla::test::kMissing;
using kcla::test::Panel;
using kcla::test::random_panel;

// The standardized matrix, dense, by PLINK 2's definitions.
std::vector<double> dense_standardized(const Panel& p, kcla::GenotypeCentering centering,
                                       kcla::MissingCallPolicy policy,
                                       const std::vector<bool>& other) {
  std::vector<double> x(static_cast<std::size_t>(p.rows * p.cols), 0.0);
  for (std::int64_t j = 0; j < p.cols; ++j) {
    double sum = 0;
    std::int64_t present = 0;
    for (std::int64_t i = 0; i < p.rows; ++i) {
      const int c = p.calls[i * p.cols + j];
      if (c == kMissing) continue;
      sum += other[j] ? 2 - c : c;
      ++present;
    }
    const double f = present ? sum / (2.0 * present) : 0.0;  // frequency of the scored allele
    const double mean = 2 * f;
    double scale = 1;
    if (centering == kcla::GenotypeCentering::variance_standardize) {
      const double var = 2 * f * (1 - f);
      if (!(var > 0)) continue;  // contributes nothing
      scale = 1 / std::sqrt(var);
    }
    const double c = centering == kcla::GenotypeCentering::none ? 0 : 1;
    for (std::int64_t i = 0; i < p.rows; ++i) {
      const int call = p.calls[i * p.cols + j];
      double d;
      if (call == kMissing) {
        if (policy == kcla::MissingCallPolicy::no_imputation) continue;
        if (policy == kcla::MissingCallPolicy::plink2_imputation) {
          x[i * p.cols + j] = scale * mean;  // plink2 --score: imputed, scaled, not centered
          continue;
        }
        d = mean;
      } else {
        d = other[j] ? 2 - call : call;
      }
      x[i * p.cols + j] = scale * (d - c * mean);
    }
  }
  return x;
}

// The panel in column blocks of `block_cols` (as kcla compress --block-cols makes them).
kcla::BlockGrammar column_blocks(const Panel& p, std::int64_t block_cols) {
  const auto a = p.matrix();
  kcla::CsrColumnBlockSource source(a);
  kcla::BlockCompressOptions o;
  o.block_cols = block_cols;
  return kcla::compress_blocks(source, o);
}

/// block_cols > 0: the operator over the panel's column blocks instead of one grammar.
template <class Scalar>
void check_operator(const Panel& p, std::int64_t B, double tolerance, std::mt19937_64& gen,
                    std::int64_t block_cols = 0) {
  const auto g = kcla::compress(p.matrix());
  const auto blocks = column_blocks(p, block_cols > 0 ? block_cols : p.cols);
  const auto missing = p.missing();
  const auto stats = block_cols > 0 ? kcla::genotype_statistics(blocks, missing)
                                    : kcla::genotype_statistics(g, missing);
  std::uniform_real_distribution<double> u(-1, 1);
  for (auto centering : {kcla::GenotypeCentering::none, kcla::GenotypeCentering::center,
                         kcla::GenotypeCentering::variance_standardize})
    for (auto policy :
         {kcla::MissingCallPolicy::mean_imputation, kcla::MissingCallPolicy::plink2_imputation,
          kcla::MissingCallPolicy::no_imputation}) {
      kcla::Plink2TransformOptions o;
      o.centering = centering;
      o.missing = policy;
      o.other_allele.resize(static_cast<std::size_t>(p.cols));
      for (std::size_t j = 0; j < o.other_allele.size(); ++j) o.other_allele[j] = gen() % 3 == 0;
      const auto t = kcla::plink2_transform(stats, o);
      const auto x = dense_standardized(p, centering, policy, o.other_allele);
      const auto op = block_cols > 0
                          ? kcla::GenotypeOperator<Scalar, memory>(blocks, missing, t.transform)
                          : kcla::GenotypeOperator<Scalar, memory>(g, missing, t.transform);
      ASSERT_EQ(op.blocked(), block_cols > 0);

      std::vector<double> w(static_cast<std::size_t>(p.cols * B)),
          y(static_cast<std::size_t>(p.rows * B));
      for (auto& v : w) v = u(gen);
      for (auto& v : y) v = u(gen);
      Kokkos::View<Scalar**, Kokkos::LayoutRight, memory> wd("w", p.cols, B), yd("y", p.rows, B),
          xw("xw", p.rows, B), xty("xty", p.cols, B);
      auto wh = Kokkos::create_mirror_view(wd);
      auto yh = Kokkos::create_mirror_view(yd);
      for (std::int64_t k = 0; k < p.cols * B; ++k) wh.data()[k] = static_cast<Scalar>(w[k]);
      for (std::int64_t k = 0; k < p.rows * B; ++k) yh.data()[k] = static_cast<Scalar>(y[k]);
      Kokkos::deep_copy(wd, wh);
      Kokkos::deep_copy(yd, yh);
      op.apply(exec(), wd, xw);
      op.apply_transpose(exec(), yd, xty);
      auto xwh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), xw);
      auto xtyh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), xty);
      const std::string what = "centering " + std::to_string(static_cast<int>(centering)) +
                               " policy " + std::to_string(static_cast<int>(policy)) + " B " +
                               std::to_string(B);
      for (std::int64_t b = 0; b < B; ++b) {
        for (std::int64_t i = 0; i < p.rows; ++i) {
          double want = 0, mag = 0;
          for (std::int64_t j = 0; j < p.cols; ++j) {
            want += x[i * p.cols + j] * w[j * B + b];
            mag += std::abs(x[i * p.cols + j] * w[j * B + b]);
          }
          ASSERT_NEAR(xwh(i, b), want, tolerance * (mag + 1)) << what << " row " << i;
        }
        for (std::int64_t j = 0; j < p.cols; ++j) {
          double want = 0, mag = 0;
          for (std::int64_t i = 0; i < p.rows; ++i) {
            want += x[i * p.cols + j] * y[i * B + b];
            mag += std::abs(x[i * p.cols + j] * y[i * B + b]);
          }
          ASSERT_NEAR(xtyh(j, b), want, tolerance * (mag + 1)) << what << " column " << j;
        }
      }
    }
}

TEST(GenotypeStatistics, CountsPresentCallsAndAlleles) {
  auto gen = kcla::test::rng();
  const auto p = random_panel(gen, 60, 90, 0.05);
  const auto stats = kcla::genotype_statistics(kcla::compress(p.matrix()), p.missing());
  for (std::int64_t j = 0; j < p.cols; ++j) {
    double sum = 0;
    std::int64_t present = 0;
    for (std::int64_t i = 0; i < p.rows; ++i)
      if (p.calls[i * p.cols + j] != kMissing) sum += p.calls[i * p.cols + j], ++present;
    EXPECT_EQ(stats.allele_sum[j], sum) << j;
    EXPECT_EQ(stats.observed[j], present) << j;
  }
}

TEST(GenotypeStatistics, OverARowSubset) {
  auto gen = kcla::test::rng();
  const auto p = random_panel(gen, 70, 80, 0.05);
  const auto g = kcla::compress(p.matrix());
  std::vector<char> include(static_cast<std::size_t>(p.rows));
  for (auto& flag : include) flag = gen() % 3 != 0;  // PLINK's founders, say
  const auto stats = kcla::genotype_statistics(g, p.missing(), include);
  for (std::int64_t j = 0; j < p.cols; ++j) {
    double sum = 0;
    std::int64_t present = 0;
    for (std::int64_t i = 0; i < p.rows; ++i)
      if (include[i] && p.calls[i * p.cols + j] != kMissing)
        sum += p.calls[i * p.cols + j], ++present;
    EXPECT_EQ(stats.allele_sum[j], sum) << j;
    EXPECT_EQ(stats.observed[j], present) << j;
  }
  const auto none = kcla::genotype_statistics(g, p.missing(), std::vector<char>(include.size(), 0));
  for (std::int64_t j = 0; j < p.cols; ++j) EXPECT_EQ(none.observed[j], 0);
  include.pop_back();
  EXPECT_THROW(kcla::genotype_statistics(g, p.missing(), include), kcla::InvalidArgument);
}

TEST(Plink2Transform, HandComputedVariant) {
  // One variant, present calls 0, 1, 2, 1 and one missing: f = 4 / 8 = 0.5, 2f = 1,
  // 2f(1-f) = 0.5, so variance-standardized dosages are (G - 1) * sqrt(2).
  kcla::GenotypeStatistics s;
  s.allele_sum = {4};
  s.observed = {4};
  kcla::Plink2TransformOptions o;
  o.centering = kcla::GenotypeCentering::variance_standardize;
  o.missing = kcla::MissingCallPolicy::mean_imputation;
  const auto t = kcla::plink2_transform(s, o).transform;
  EXPECT_NEAR(t.scale[0], std::sqrt(2.0), 1e-15);
  EXPECT_NEAR(t.shift[0], -std::sqrt(2.0), 1e-15);
  EXPECT_EQ(t.missing_value[0], 0.0);
  o.missing = kcla::MissingCallPolicy::plink2_imputation;  // 2f scaled, not centered
  EXPECT_NEAR(kcla::plink2_transform(s, o).transform.missing_value[0], std::sqrt(2.0), 1e-15);
  o.missing = kcla::MissingCallPolicy::mean_imputation;
  o.centering = kcla::GenotypeCentering::none;
  const auto plain = kcla::plink2_transform(s, o).transform;
  EXPECT_EQ(plain.scale[0], 1.0);
  EXPECT_EQ(plain.shift[0], 0.0);
  EXPECT_EQ(plain.missing_value[0], 1.0);  // imputed 2f
  o.other_allele = {true};
  const auto flipped = kcla::plink2_transform(s, o).transform;
  EXPECT_EQ(flipped.scale[0], -1.0);  // 2 - G
  EXPECT_EQ(flipped.shift[0], 2.0);
  EXPECT_EQ(flipped.missing_value[0], 1.0);
  s.allele_sum = {0};  // monomorphic: no variance to standardize
  o.centering = kcla::GenotypeCentering::variance_standardize;
  const auto mono = kcla::plink2_transform(s, o);
  EXPECT_EQ(mono.zero_variance, std::vector<std::int64_t>{0});
  EXPECT_EQ(mono.transform.scale[0], 0.0);
}

TEST(GenotypeOperator, MatchesDenseStandardizedMatrix) {
  auto gen = kcla::test::rng();
  for (std::int64_t B : {1, 4}) {
    check_operator<double>(random_panel(gen, 70, 130, 0.03), B, 1e-11, gen);
    check_operator<float>(random_panel(gen, 50, 200, 0.1), B, 2e-5, gen);
  }
  check_operator<double>(random_panel(gen, 40, 60, 0.0), 3, 1e-11, gen);  // no missing call
}

TEST(GenotypeOperator, OverColumnBlocksMatchesDenseStandardizedMatrix) {
  auto gen = kcla::test::rng();
  check_operator<double>(random_panel(gen, 70, 130, 0.03), 1, 1e-11, gen, 32);
  check_operator<double>(random_panel(gen, 60, 90, 0.05), 3, 1e-11, gen, 17);
  check_operator<float>(random_panel(gen, 50, 200, 0.1), 4, 2e-5, gen, 64);
}

TEST(GenotypeStatistics, OverColumnBlocksEqualsOneGrammar) {
  auto gen = kcla::test::rng();
  const auto p = random_panel(gen, 80, 111, 0.04);
  const auto blocks = column_blocks(p, 25);
  ASSERT_EQ(blocks.layout.num_blocks(), 5);
  std::vector<char> include(static_cast<std::size_t>(p.rows));
  for (auto& f : include) f = gen() % 3 != 0;
  const auto g = kcla::compress(p.matrix());
  const auto want = kcla::genotype_statistics(g, p.missing(), include);
  const auto got = kcla::genotype_statistics(blocks, p.missing(), include);
  EXPECT_EQ(got.allele_sum, want.allele_sum);
  EXPECT_EQ(got.observed, want.observed);
  // Squared counts against the calls themselves.
  const auto squares = kcla::column_square_sums(blocks, include);
  EXPECT_EQ(squares, kcla::column_square_sums(g, include));
  for (std::int64_t j = 0; j < p.cols; ++j) {
    double want_square = 0;
    for (std::int64_t i = 0; i < p.rows; ++i) {
      const int c = p.calls[i * p.cols + j];
      if (include[i] && c != kMissing) want_square += c * c;
    }
    EXPECT_EQ(squares[j], want_square) << j;
  }
  auto share = blocks;
  share.block_ids.erase(share.block_ids.begin());
  share.grammars.erase(share.grammars.begin());
  EXPECT_THROW(kcla::genotype_statistics(share, p.missing()), kcla::InvalidArgument);
  EXPECT_THROW(kcla::column_square_sums(blocks, std::vector<char>(3, 1)), kcla::InvalidArgument);
  EXPECT_THROW((kcla::GenotypeOperator<double, memory>(share, p.missing(),
                                                       kcla::GenotypeTransform::identity(p.cols))),
               kcla::InvalidArgument);
}

TEST(GenotypeOperator, RejectsMismatchedInputs) {
  auto gen = kcla::test::rng();
  const auto p = random_panel(gen, 10, 20, 0.1);
  const auto g = kcla::compress(p.matrix());
  const auto t = kcla::GenotypeTransform::identity(20);
  EXPECT_THROW((kcla::GenotypeOperator<double, memory>(g, kcla::MissingCalls::none(10, 19), t)),
               kcla::InvalidArgument);
  EXPECT_THROW((kcla::GenotypeOperator<double, memory>(g, p.missing(),
                                                       kcla::GenotypeTransform::identity(21))),
               kcla::InvalidArgument);
  kcla::GenotypeOperator<double, memory> op(g, p.missing(), t);
  Kokkos::View<double*, memory> w("w", 19), y("y", 10);
  EXPECT_THROW(op.apply(exec(), w, y), kcla::InvalidArgument);
  Kokkos::View<double*, memory> y2("y", 10), z("z", 21);
  EXPECT_THROW(op.apply_transpose(exec(), y2, z), kcla::InvalidArgument);
  // One direction only: the other says how to build it.
  kcla::GrammarMatrixOptions right;
  right.products = kcla::GrammarProducts::right;
  kcla::GenotypeOperator<double, memory> scores_only(g, p.missing(), t, right);
  Kokkos::View<double*, memory> w20("w", 20), y10("y", 10);
  EXPECT_NO_THROW(scores_only.apply(exec(), w20, y10));
  EXPECT_THROW(scores_only.apply_transpose(exec(), y10, w20), kcla::InvalidArgument);
}

}  // namespace

namespace {

// A panel's variance-standardized, mean-imputed genotypes as kcla holds them (grammar,
// missing calls, transform) and, for reference, every eigenpair of the dense GRM
// X X^T / variants (LAPACK on the dense matrix).
struct PcaFixture {
  kcla::Grammar grammar;
  kcla::MissingCalls missing;
  kcla::GenotypeTransform transform;
  std::int64_t variants = 0;
  std::vector<double> values, vectors;
};

PcaFixture pca_fixture(const Panel& p) {
  PcaFixture f;
  f.grammar = kcla::compress(p.matrix());
  f.missing = p.missing();
  kcla::Plink2TransformOptions o;
  o.centering = kcla::GenotypeCentering::variance_standardize;
  o.missing = kcla::MissingCallPolicy::mean_imputation;
  const auto t = kcla::plink2_transform(kcla::genotype_statistics(f.grammar, f.missing), o);
  f.transform = t.transform;
  f.variants = p.cols - static_cast<std::int64_t>(t.zero_variance.size());
  const auto x = dense_standardized(p, o.centering, o.missing,
                                    std::vector<bool>(static_cast<std::size_t>(p.cols), false));
  std::vector<double> grm(static_cast<std::size_t>(p.rows * p.rows), 0.0);
  for (std::int64_t a = 0; a < p.rows; ++a)
    for (std::int64_t b = 0; b < p.rows; ++b) {
      double s = 0;
      for (std::int64_t j = 0; j < p.cols; ++j) s += x[a * p.cols + j] * x[b * p.cols + j];
      grm[a * p.rows + b] = s / static_cast<double>(f.variants);
    }
  kcla::symmetric_eigen_descending(p.rows, grm, f.values, f.vectors);
  return f;
}

TEST(GenotypePca, MatchesDenseEigenpairsOfTheGrm) {
  // A panel with four founder haplotypes: three well-separated components.
  auto gen = kcla::test::rng();
  const auto p = random_panel(gen, 120, 400, 0.02);
  const auto f = pca_fixture(p);
  const auto& values = f.values;
  const auto& vectors = f.vectors;
  const std::int64_t variants = f.variants;
  kcla::GenotypeOperator<double, memory> op(f.grammar, f.missing, f.transform);
  ASSERT_GT(values[2], 1.5 * values[3]) << "the fixture lost its structure";
  for (auto method : {kcla::PcaMethod::block_krylov, kcla::PcaMethod::subspace_iteration}) {
    kcla::PcaOptions options;
    options.components = 3;
    options.iterations = 15;
    options.method = method;
    SCOPED_TRACE(method == kcla::PcaMethod::block_krylov ? "block Krylov" : "subspace iteration");
    const auto pca = kcla::genotype_pca(exec(), op, variants, options);
    ASSERT_EQ(pca.eigenvalues.size(), 3u);
    for (std::int64_t j = 0; j < 3; ++j) {
      EXPECT_NEAR(pca.eigenvalues[j], values[j], 1e-6 * values[j]) << "eigenvalue " << j;
      double dot = 0, norm = 0;
      for (std::int64_t i = 0; i < p.rows; ++i) {
        dot += pca.eigenvectors[i * 3 + j] * vectors[i * p.rows + j];
        norm += pca.eigenvectors[i * 3 + j] * pca.eigenvectors[i * 3 + j];
      }
      EXPECT_NEAR(norm, 1.0, 1e-10);
      EXPECT_NEAR(std::abs(dot), 1.0, 1e-6) << "eigenvector " << j;
    }
    // The sign is fixed (largest entry positive), so another start gives the same vectors.
    options.seed = 7;
    const auto again = kcla::genotype_pca(exec(), op, variants, options);
    for (std::int64_t j = 0; j < 3; ++j) {
      double largest = 0, dot = 0;
      for (std::int64_t i = 0; i < p.rows; ++i) {
        const double v = pca.eigenvectors[i * 3 + j];
        if (std::abs(v) > std::abs(largest)) largest = v;
        dot += v * again.eigenvectors[i * 3 + j];
      }
      EXPECT_GT(largest, 0) << "eigenvector " << j;
      EXPECT_NEAR(dot, 1.0, 1e-6) << "eigenvector " << j << " changed sign with the seed";
    }
  }
  kcla::PcaOptions options;
  options.components = 0;
  EXPECT_THROW(kcla::genotype_pca(exec(), op, variants, options), kcla::InvalidArgument);
}

// Where the Krylov space fills the whole column space (few variants), block Krylov's
// Rayleigh-Ritz is exact: every eigenvalue, also the small ones past the gap, to rounding.
TEST(GenotypePca, BlockKrylovIsExactOnceItsSpaceIsFull) {
  auto gen = kcla::test::rng();
  const auto p = random_panel(gen, 60, 24, 0.0);
  const auto f = pca_fixture(p);
  kcla::GenotypeOperator<double, memory> op(f.grammar, f.missing, f.transform);
  kcla::PcaOptions options;
  options.components = 8;
  options.oversampling = 2;
  options.iterations = 6;  // 10 x 7 columns asked for, the space has at most 24
  std::int64_t last_step = 0;
  options.progress = [&](std::int64_t step, std::int64_t steps) {
    EXPECT_EQ(steps, 7);
    EXPECT_GT(step, last_step);
    last_step = step;
  };
  const auto pca = kcla::genotype_pca(exec(), op, f.variants, options);
  EXPECT_EQ(last_step, 7);
  for (std::int64_t j = 0; j < 8; ++j)
    EXPECT_NEAR(pca.eigenvalues[j], f.values[j], 1e-9 * f.values[0]) << "eigenvalue " << j;
  // Asking for more components than the space holds is an error naming the dimension.
  options.components = 25;
  options.progress = nullptr;
  EXPECT_THROW(kcla::genotype_pca(exec(), op, f.variants, options), kcla::InvalidArgument);
}

}  // namespace
