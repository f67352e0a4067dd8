// kcla::linear_association against per-variant least squares done directly: for each
// variant and phenotype the design [1 C g] over the samples with the phenotype, every
// covariate and the call present, solved by Gram-Schmidt QR in long double (no normal
// equations, no shared sums); the p-values from Student's t (tested on its own).
#include <kcla/block_compress.hpp>
#include <kcla/genotype_association.hpp>
#include <kcla/repair.hpp>
#include <kcla/student_t.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "genotype_panels.hpp"
#include "test_support.hpp"

namespace {

using exec = Kokkos::DefaultExecutionSpace;
using kcla::test::kMissing;
using kcla::test::Panel;

struct Fit {
  bool ok = false;
  double beta = 0, se = 0, t = 0, p = 0;
  std::int64_t obs = 0;
};

// Least squares of y on the columns of x (samples x k, the genotype last) by modified
// Gram-Schmidt with one reorthogonalization; the genotype's coefficient and standard error
// come from the last column of R: beta = (Q^T y)_k / R_kk, var = sigma^2 / R_kk^2.
Fit least_squares(std::vector<std::vector<long double>> x, std::vector<long double> y) {
  Fit f;
  const std::size_t n = y.size(), k = x.size();
  f.obs = static_cast<std::int64_t>(n);
  if (n <= k) return f;
  std::vector<long double> r(k, 0);
  for (std::size_t a = 0; a < k; ++a) {
    const long double original = std::sqrt(
        std::inner_product(x[a].begin(), x[a].end(), x[a].begin(), static_cast<long double>(0)));
    for (int pass = 0; pass < 2; ++pass)
      for (std::size_t b = 0; b < a; ++b) {
        long double dot = 0;
        for (std::size_t i = 0; i < n; ++i) dot += x[b][i] * x[a][i];
        for (std::size_t i = 0; i < n; ++i) x[a][i] -= dot * x[b][i];
      }
    long double norm = 0;
    for (auto v : x[a]) norm += v * v;
    norm = std::sqrt(norm);
    if (!(norm > 1e-6L * original)) return f;  // (near) dependent column
    for (auto& v : x[a]) v /= norm;
    r[a] = norm;
  }
  std::vector<long double> qy(k, 0);
  long double yy = 0;
  for (auto v : y) yy += v * v;
  long double explained = 0;
  for (std::size_t a = 0; a < k; ++a) {
    for (std::size_t i = 0; i < n; ++i) qy[a] += x[a][i] * y[i];
    explained += qy[a] * qy[a];
  }
  const long double df = static_cast<long double>(n - k);
  const long double sigma2 = (yy - explained) / df;
  f.beta = static_cast<double>(qy[k - 1] / r[k - 1]);
  f.se = static_cast<double>(std::sqrt(sigma2) / r[k - 1]);
  f.t = f.beta / f.se;
  f.p = kcla::student_t_two_sided_p(f.t, static_cast<double>(df));
  f.ok = true;
  return f;
}

Fit reference_fit(const Panel& panel, const kcla::LinearAssociationData& d, std::int64_t j,
                  std::int64_t p) {
  std::vector<std::vector<long double>> x(static_cast<std::size_t>(d.covariates + 2));
  std::vector<long double> y;
  for (std::int64_t i = 0; i < d.samples; ++i) {
    const int call = panel.calls[i * panel.cols + j];
    const double yi = d.phenotype_values[i * d.phenotypes + p];
    bool present = call != kMissing && !std::isnan(yi);
    for (std::int64_t c = 0; c < d.covariates; ++c)
      present = present && !std::isnan(d.covariate_values[i * d.covariates + c]);
    if (!present) continue;
    x[0].push_back(1);
    for (std::int64_t c = 0; c < d.covariates; ++c)
      x[c + 1].push_back(d.covariate_values[i * d.covariates + c]);
    x.back().push_back(call);
    y.push_back(yi);
  }
  return least_squares(x, y);
}

// Phenotypes: a genetic effect of a few variants plus noise, some values missing (NaN);
// the second phenotype shares the first one's missing samples (one product serves both).
kcla::LinearAssociationData random_data(const Panel& panel, std::int64_t phenotypes,
                                        std::int64_t covariates, std::mt19937_64& gen) {
  std::normal_distribution<double> normal(0, 1);
  std::uniform_real_distribution<double> u(0, 1);
  kcla::LinearAssociationData d;
  d.samples = panel.rows;
  d.phenotypes = phenotypes;
  d.covariates = covariates;
  d.covariate_values.resize(static_cast<std::size_t>(d.samples * covariates));
  d.phenotype_values.resize(static_cast<std::size_t>(d.samples * phenotypes));
  for (std::int64_t i = 0; i < d.samples; ++i) {
    for (std::int64_t c = 0; c < covariates; ++c)
      d.covariate_values[i * covariates + c] =
          u(gen) < 0.03 ? NAN : (c == 0 ? 40 + 10 * normal(gen) : normal(gen));
    for (std::int64_t p = 0; p < phenotypes; ++p) {
      double y = 100 + normal(gen);  // a large mean: sums must not cancel
      for (std::int64_t j = p; j < panel.cols; j += 7) {
        const int call = panel.calls[i * panel.cols + j];
        if (call != kMissing) y += 0.3 * call;
      }
      if (covariates > 0) y += 0.02 * d.covariate_values[i * covariates];
      const bool missing = p == 1 ? std::isnan(d.phenotype_values[i * phenotypes]) : u(gen) < 0.1;
      d.phenotype_values[i * phenotypes + p] = missing ? NAN : y;
    }
  }
  return d;
}

void expect_matches_reference(const Panel& panel, const kcla::LinearAssociationData& d,
                              const kcla::LinearAssociationResult& r) {
  std::int64_t fitted = 0;
  for (std::int64_t j = 0; j < panel.cols; ++j)
    for (std::int64_t p = 0; p < d.phenotypes; ++p) {
      const auto at = j * d.phenotypes + p;
      const Fit f = reference_fit(panel, d, j, p);
      ASSERT_EQ(r.observations[at], f.obs) << "variant " << j << " phenotype " << p;
      if (!f.ok) {
        EXPECT_NE(r.status[at], kcla::AssociationStatus::ok) << "variant " << j;
        EXPECT_TRUE(std::isnan(r.beta[at]));
        continue;
      }
      ASSERT_EQ(r.status[at], kcla::AssociationStatus::ok)
          << "variant " << j << " phenotype " << p << ": " << kcla::to_string(r.status[at]);
      ++fitted;
      EXPECT_NEAR(r.beta[at], f.beta, 1e-8 * std::abs(f.beta) + 1e-12) << "variant " << j;
      EXPECT_NEAR(r.standard_error[at], f.se, 1e-8 * f.se) << "variant " << j;
      EXPECT_NEAR(r.t_statistic[at], f.t, 1e-8 * std::abs(f.t) + 1e-12) << "variant " << j;
      EXPECT_NEAR(r.p_value[at], f.p, 1e-7 * f.p + 1e-300) << "variant " << j;
    }
  EXPECT_GT(fitted, panel.cols * d.phenotypes / 2);
}

TEST(GenotypeAssociation, MatchesPerVariantLeastSquaresWithMissingValues) {
  auto gen = kcla::test::rng();
  for (double missing_rate : {0.0, 0.04}) {
    const Panel panel = kcla::test::random_panel(gen, 300, 90, missing_rate);
    const auto g = kcla::compress(panel.matrix());
    for (std::int64_t covariates : {0, 3}) {
      const auto d = random_data(panel, 3, covariates, gen);
      EXPECT_EQ(kcla::association_groups(d).size(), 2u);  // phenotypes 0 and 1 share samples
      const auto r = kcla::linear_association<double>(exec(), g, panel.missing(), d);
      ASSERT_EQ(r.variants, panel.cols);
      SCOPED_TRACE("missing rate " + std::to_string(missing_rate) + ", covariates " +
                   std::to_string(covariates));
      expect_matches_reference(panel, d, r);
    }
  }
}

// A panel compressed in column blocks (as kcla compress --block-cols writes it): the scan
// over the block grammar gives the reference's statistics too.
TEST(GenotypeAssociation, OverColumnBlocksMatchesPerVariantLeastSquares) {
  auto gen = kcla::test::rng();
  const Panel panel = kcla::test::random_panel(gen, 250, 97, 0.03);
  const auto a = panel.matrix();
  kcla::CsrColumnBlockSource source(a);
  kcla::BlockCompressOptions o;
  o.block_cols = 20;  // five blocks, the last narrower
  const auto blocks = kcla::compress_blocks(source, o);
  ASSERT_EQ(blocks.layout.num_blocks(), 5);
  const auto d = random_data(panel, 3, 2, gen);
  const auto r = kcla::linear_association<double>(exec(), blocks, panel.missing(), d);
  ASSERT_EQ(r.variants, panel.cols);
  expect_matches_reference(panel, d, r);
  // A rank's share is refused: the scan needs every block.
  auto share = blocks;
  share.block_ids.pop_back();
  share.grammars.pop_back();
  EXPECT_THROW(kcla::linear_association<double>(exec(), share, panel.missing(), d),
               kcla::InvalidArgument);
}

TEST(GenotypeAssociation, SinglePrecisionProductsStayClose) {
  auto gen = kcla::test::rng();
  const Panel panel = kcla::test::random_panel(gen, 400, 60, 0.02);
  const auto g = kcla::compress(panel.matrix());
  const auto d = random_data(panel, 2, 2, gen);
  const auto r64 = kcla::linear_association<double>(exec(), g, panel.missing(), d);
  const auto r32 = kcla::linear_association<float>(exec(), g, panel.missing(), d);
  for (std::size_t k = 0; k < r64.beta.size(); ++k) {
    ASSERT_EQ(r32.status[k], r64.status[k]) << k;
    if (r64.status[k] != kcla::AssociationStatus::ok) continue;
    EXPECT_NEAR(r32.t_statistic[k], r64.t_statistic[k], 1e-3 * (1 + std::abs(r64.t_statistic[k])))
        << k;
  }
}

TEST(GenotypeAssociation, DegenerateVariantsAndPhenotypes) {
  auto gen = kcla::test::rng();
  Panel panel = kcla::test::random_panel(gen, 120, 20, 0.0);
  kcla::LinearAssociationData d;
  d.samples = panel.rows;
  d.phenotypes = 2;
  d.covariates = 1;
  std::normal_distribution<double> normal(0, 1);
  for (std::int64_t i = 0; i < d.samples; ++i) {
    // Variant 5 is constant (all 1), the covariate is variant 6's genotype plus tiny noise.
    panel.calls[i * panel.cols + 5] = 1;
    d.covariate_values.push_back(panel.calls[i * panel.cols + 6] + 1e-4 * normal(gen));
    d.phenotype_values.push_back(normal(gen));
    d.phenotype_values.push_back(NAN);  // phenotype 1 has no value at all
  }
  bool varies = false;  // variant 6 must not be constant
  for (std::int64_t i = 1; i < d.samples; ++i)
    varies = varies || panel.calls[i * panel.cols + 6] != panel.calls[6];
  if (!varies) {
    panel.calls[6] = panel.calls[6] == 0 ? 2 : 0;
    d.covariate_values[0] = panel.calls[6];
  }
  const auto g = kcla::compress(panel.matrix());
  const auto r = kcla::linear_association<double>(exec(), g, panel.missing(), d);
  EXPECT_EQ(r.status[5 * 2 + 0], kcla::AssociationStatus::constant_genotype);
  EXPECT_EQ(r.status[6 * 2 + 0], kcla::AssociationStatus::collinear);
  for (std::int64_t j = 0; j < panel.cols; ++j) {
    EXPECT_EQ(r.status[j * 2 + 1], kcla::AssociationStatus::too_few_observations) << j;
    EXPECT_EQ(r.observations[j * 2 + 1], 0) << j;
  }
  EXPECT_STREQ(kcla::to_string(kcla::AssociationStatus::constant_genotype), "CONST_OMITTED_ALLELE");
}

TEST(GenotypeAssociation, RejectsInconsistentInput) {
  auto gen = kcla::test::rng();
  const Panel panel = kcla::test::random_panel(gen, 50, 10, 0.0);
  const auto g = kcla::compress(panel.matrix());
  auto d = random_data(panel, 1, 1, gen);
  d.phenotype_values.pop_back();
  EXPECT_THROW(kcla::linear_association<double>(exec(), g, panel.missing(), d),
               kcla::InvalidArgument);
  d = random_data(panel, 1, 1, gen);
  d.covariate_values[3] = INFINITY;
  EXPECT_THROW(kcla::linear_association<double>(exec(), g, panel.missing(), d),
               kcla::InvalidArgument);
  d = random_data(panel, 1, 1, gen);
  EXPECT_THROW(kcla::linear_association<double>(exec(), g, kcla::MissingCalls::none(49, 10), d),
               kcla::InvalidArgument);
}

}  // namespace
