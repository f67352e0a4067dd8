// Packed 2-bit genotypes (the PLINK .bed layout): packing and unpacking, the packed .bed
// reader (files written here, hostile files, the real data sets), and the products of
// every kernel (pair tables, decoded tiles, host blocks; default and cramped tunings that
// force several tiles, chunks and splits on small shapes) against a plain double CSR
// product on the host.
#include <kcla/config.hpp>
#include <kcla/packed_genotype_multiply.hpp>
#include <kcla/packed_genotypes.hpp>
#include <kcla/plink.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "backends.hpp"
#include "test_support.hpp"

namespace {

using kcla::CountedAllele;
using kcla::PackedKernel;
using kcla::test::throws_with;

std::string seed_note() {
  return "random seed " + std::to_string(kcla::test::base_seed()) +
         " (KCLA_TEST_SEED=" + std::to_string(kcla::test::base_seed()) + " repeats it)";
}

void set_code(kcla::PackedGenotypes& p, std::int64_t sample, std::int64_t variant, unsigned code) {
  auto& byte = p.codes[static_cast<std::size_t>(variant * p.bytes_per_variant + sample / 4)];
  const unsigned shift = 2 * static_cast<unsigned>(sample % 4);
  byte = static_cast<std::uint8_t>((byte & ~(3u << shift)) | (code << shift));
}

/// A random panel: `csr` holds the allele counts with missing calls absent (what the
/// reference multiplies), `packed` the same calls packed, missing ones as code 01.
struct Panel {
  kcla::CsrMatrix<double> csr;
  kcla::PackedGenotypes packed;
  std::int64_t missing = 0;
};

Panel random_panel(std::mt19937_64& gen, std::int64_t samples, std::int64_t variants,
                   double missing_rate = 0.05, CountedAllele counted = CountedAllele::a1) {
  std::bernoulli_distribution is_missing(missing_rate);
  std::discrete_distribution<int> count({0.55, 0.3, 0.15});  // mostly 0, as real panels
  Panel p;
  p.csr.num_rows = samples;
  p.csr.num_cols = variants;
  std::vector<std::pair<std::int64_t, std::int64_t>> missing_calls;
  for (std::int64_t s = 0; s < samples; ++s) {
    for (std::int64_t j = 0; j < variants; ++j) {
      if (is_missing(gen)) {
        missing_calls.emplace_back(s, j);
        continue;
      }
      if (const int c = count(gen)) {
        p.csr.column_indices.push_back(static_cast<std::int32_t>(j));
        p.csr.values.push_back(c);
      }
    }
    p.csr.row_offsets.push_back(p.csr.nnz());
  }
  p.packed = kcla::pack_genotypes(p.csr, counted);
  for (const auto& [s, j] : missing_calls) set_code(p.packed, s, j, 1);
  p.missing = static_cast<std::int64_t>(missing_calls.size());
  return p;
}

/// Y = G X in double straight from the CSR matrix (X: variants x B, row-major).
std::vector<double> reference_product(const kcla::CsrMatrix<double>& g,
                                      const std::vector<double>& x, std::int64_t B) {
  std::vector<double> y(static_cast<std::size_t>(g.num_rows * B), 0.0);
  for (std::int64_t s = 0; s < g.num_rows; ++s)
    for (auto k = g.row_offsets[s]; k < g.row_offsets[s + 1]; ++k)
      for (std::int64_t b = 0; b < B; ++b)
        y[s * B + b] += g.values[k] * x[g.column_indices[k] * B + b];
  return y;
}

/// Random X (variants x B) holding values Scalar represents exactly.
template <class Scalar>
std::vector<double> random_x(std::mt19937_64& gen, std::int64_t variants, std::int64_t B) {
  auto x = kcla::test::random_vector(gen, variants * B);
  for (auto& v : x) v = static_cast<double>(static_cast<Scalar>(v));
  return x;
}

/// kcla::multiply on ExecutionSpace, rank 1 (B == 1 only) or rank 2; y is poisoned first.
template <class Scalar, class ExecutionSpace>
std::vector<double> packed_product(
    const kcla::PackedGenotypeMatrix<Scalar, typename ExecutionSpace::memory_space>& G,
    const std::vector<double>& x, std::int64_t B, bool rank2,
    const kcla::PackedMultiplyOptions& options) {
  using memory = typename ExecutionSpace::memory_space;
  const auto m = static_cast<std::size_t>(G.num_samples());
  const auto n = static_cast<std::size_t>(G.num_variants());
  std::vector<double> y(m * static_cast<std::size_t>(B));
  if (!rank2) {
    Kokkos::View<Scalar*, memory> xd("x", n), yd("y", m);
    auto xh = Kokkos::create_mirror_view(xd);
    for (std::size_t j = 0; j < n; ++j) xh(j) = static_cast<Scalar>(x[j]);
    Kokkos::deep_copy(xd, xh);
    Kokkos::deep_copy(yd, Scalar(-123));
    kcla::multiply(ExecutionSpace(), G, xd, yd, options);
    ExecutionSpace().fence();
    auto yh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), yd);
    for (std::size_t s = 0; s < m; ++s) y[s] = yh(s);
    return y;
  }
  Kokkos::View<Scalar**, Kokkos::LayoutRight, memory> xd("X", n, B), yd("Y", m, B);
  auto xh = Kokkos::create_mirror_view(xd);
  for (std::size_t j = 0; j < n; ++j)
    for (std::int64_t b = 0; b < B; ++b) xh(j, b) = static_cast<Scalar>(x[j * B + b]);
  Kokkos::deep_copy(xd, xh);
  Kokkos::deep_copy(yd, Scalar(-123));
  kcla::multiply(ExecutionSpace(), G, xd, yd, options);
  ExecutionSpace().fence();
  auto yh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), yd);
  for (std::size_t s = 0; s < m; ++s)
    for (std::int64_t b = 0; b < B; ++b) y[s * B + b] = yh(s, b);
  return y;
}

template <class Scalar>
constexpr double tolerance() {
  return std::is_same<Scalar, float>::value ? 1e-5 : 1e-12;
}

/// Tunings that make small shapes take every path: several sample tiles and variant
/// chunks (tables), many variant splits (tiles), 4-sample blocks and short chunks (host),
/// one-word tiles, three slices of three quads and many teams per tile (quad tables);
/// and two with so little scratch that the table plans must shrink.
std::vector<std::pair<std::string, kcla::PackedGenotypeTuning>> tunings() {
  kcla::PackedGenotypeTuning small;
  small.table_chunk_variants = 6;
  small.table_max_team_words = 2;
  small.tile_target_teams = 1 << 20;
  small.host_block_bytes = 1;
  small.host_chunk_variants = 3;
  small.quad_max_team_words = 1;
  small.quad_team_threads = 96;  // three slices
  small.quad_slice_quads = 3;
  small.quad_target_teams = 1 << 20;
  small.mma_team_warps = 3;
  small.mma_min_part_steps = 1;  // parts of two steps: many teams, a partial last batch
  small.mma_target_warps = 1 << 20;
  small.imma_target_warps = 1 << 20;  // int8 tensor cores: many ranges, 32 replicas
  kcla::PackedGenotypeTuning tight;   // quad tables: one slice of one quad
  tight.max_team_scratch_bytes = 7000;
  tight.imma_replicas = 1;             // int8 tensor cores: sums straight into y where it can
  kcla::PackedGenotypeTuning cramped;  // quad tables do not fit: pair tables instead
  cramped.max_team_scratch_bytes = 700;
  return {{"default tuning", {}},
          {"small tiles and chunks", small},
          {"tight scratch", tight},
          {"cramped scratch", cramped}};
}

const std::vector<PackedKernel>& all_kernels() {
  static const std::vector<PackedKernel> k = {
      PackedKernel::automatic,        PackedKernel::tables,
      PackedKernel::quad_tables,      PackedKernel::tiles,
      PackedKernel::host_blocks,      PackedKernel::tensor_cores,
      PackedKernel::int8_tensor_cores};
  return k;
}

const char* name(PackedKernel k) {
  switch (k) {
    case PackedKernel::tables:
      return "tables";
    case PackedKernel::quad_tables:
      return "quad_tables";
    case PackedKernel::tiles:
      return "tiles";
    case PackedKernel::host_blocks:
      return "host_blocks";
    case PackedKernel::tensor_cores:
      return "tensor_cores";
    case PackedKernel::int8_tensor_cores:
      return "int8_tensor_cores";
    default:
      return "automatic";
  }
}

/// Every kernel x tuning (x rank 1 and rank 2 when B == 1) against the CSR reference.
template <class Scalar, class ExecutionSpace = Kokkos::DefaultExecutionSpace>
void check_products(const Panel& panel, std::int64_t B, std::mt19937_64& gen,
                    const std::vector<PackedKernel>& kernels = all_kernels(),
                    bool all_tunings = true) {
  const auto x = random_x<Scalar>(gen, panel.csr.num_cols, B);
  const auto expected = reference_product(panel.csr, x, B);
  auto x_magnitude = x;
  for (auto& v : x_magnitude) v = std::abs(v);
  const auto magnitude = reference_product(panel.csr, x_magnitude, B);  // genotypes are >= 0
  const kcla::PackedGenotypeMatrix<Scalar, typename ExecutionSpace::memory_space> G(panel.packed);
  auto cases = tunings();
  if (!all_tunings) cases.resize(1);
  for (const auto kernel : kernels)
    for (const auto& [tuning_name, tuning] : cases)
      for (const bool rank2 : {false, true}) {
        if (!rank2 && B != 1) continue;
        kcla::PackedMultiplyOptions options;
        options.kernel = kernel;
        options.tuning = tuning;
        const auto y = packed_product<Scalar, ExecutionSpace>(G, x, B, rank2, options);
        EXPECT_LE(kcla::test::error_relative_to(y.data(), expected.data(), magnitude.data(),
                                                expected.size()),
                  tolerance<Scalar>())
            << panel.csr.num_rows << " samples x " << panel.csr.num_cols << " variants, B = " << B
            << (rank2 ? " (rank 2)" : " (rank 1)") << ", " << name(kernel) << ", " << tuning_name
            << ", " << (sizeof(Scalar) == 4 ? "float" : "double") << " on "
            << ExecutionSpace::name() << "; " << seed_note();
      }
}

// ---- packing ------------------------------------------------------------------------------

TEST(PackedGenotypes, PacksAlleleCountsIntoBedCodes) {
  // 5 samples x 2 variants, counts by row (sample): the layout spelled out by hand.
  kcla::CsrMatrix<double> g;
  g.num_rows = 5;
  g.num_cols = 2;
  g.row_offsets = {0, 1, 3, 3, 4, 5};
  g.column_indices = {0, 0, 1, 1, 0};
  g.values = {2, 1, 2, 1, 1};  // column 0: 2 1 0 0 1; column 1: 0 2 0 1 0
  const auto a1 = kcla::pack_genotypes(g);
  EXPECT_EQ(a1.num_samples, 5);
  EXPECT_EQ(a1.num_variants, 2);
  ASSERT_EQ(a1.bytes_per_variant, 16);
  ASSERT_EQ(a1.bytes(), 32u);
  // A1 counted: 2 -> 00, 1 -> 10, 0 -> 11; padding calls 01.
  EXPECT_EQ(a1.codes[0], 0b11111000);   // samples 3 2 1 0: 11 11 10 00
  EXPECT_EQ(a1.codes[1], 0b01010110);   // pad pad pad, sample 4: 10
  EXPECT_EQ(a1.codes[16], 0b10110011);  // 10 11 00 11
  EXPECT_EQ(a1.codes[17], 0b01010111);
  for (int b = 2; b < 16; ++b) {
    EXPECT_EQ(a1.codes[b], 0x55) << b;
    EXPECT_EQ(a1.codes[16 + b], 0x55) << b;
  }
  EXPECT_EQ(a1.code(4, 0), kcla::bed_code::het);
  EXPECT_EQ(a1.allele_count(1, 1), 2);
  EXPECT_EQ(a1.count_missing(), 0);
  const auto a2 = kcla::pack_genotypes(g, CountedAllele::a2);  // 2 -> 11, 1 -> 10, 0 -> 00
  EXPECT_EQ(a2.codes[0], 0b00001011);
  EXPECT_EQ(a2.codes[1], 0b01010110);
  EXPECT_EQ(a2.codes[16], 0b10001100);
  EXPECT_EQ(a2.allele_count(1, 1), 2);
  EXPECT_TRUE(kcla::test::csr_equal(kcla::unpack_genotypes(a1), g));
  EXPECT_TRUE(kcla::test::csr_equal(kcla::unpack_genotypes(a2), g));
}

TEST(PackedGenotypes, VariantsStartSixteenByteAligned) {
  for (const auto& [samples, bytes] : std::vector<std::pair<std::int64_t, std::int64_t>>{
           {0, 0}, {1, 16}, {4, 16}, {63, 16}, {64, 16}, {65, 32}, {2504, 640}, {427, 112}}) {
    EXPECT_EQ(kcla::PackedGenotypes::padded_bytes_per_variant(samples), bytes) << samples;
    const auto p = kcla::PackedGenotypes::all_missing(samples, 3);
    EXPECT_EQ(p.bytes(), static_cast<std::size_t>(3 * bytes));
    EXPECT_EQ(p.count_missing(), 3 * samples);
  }
  EXPECT_THROW(kcla::PackedGenotypes::all_missing(-1, 3), kcla::InvalidArgument);
  EXPECT_THROW(kcla::PackedGenotypes::all_missing(1 << 30, std::int64_t(1) << 40),
               kcla::InvalidArgument);
}

TEST(PackedGenotypes, UnpackInvertsPackAndCountsMissingCalls) {
  SCOPED_TRACE(seed_note());
  auto gen = kcla::test::rng();
  for (const auto counted : {CountedAllele::a1, CountedAllele::a2})
    for (const auto& [m, n] : std::vector<std::pair<int, int>>{{1, 1}, {7, 13}, {33, 40}}) {
      const auto panel = random_panel(gen, m, n, 0.1, counted);
      EXPECT_TRUE(kcla::test::csr_equal(kcla::unpack_genotypes(panel.packed), panel.csr));
      EXPECT_EQ(panel.packed.count_missing(), panel.missing);
      EXPECT_EQ(panel.packed.counted_allele, counted);
    }
}

TEST(PackedGenotypes, RejectsValuesThatAreNotAlleleCounts) {
  kcla::CsrMatrix<double> g;
  g.num_rows = 2;
  g.num_cols = 3;
  g.row_offsets = {0, 1, 2};
  g.column_indices = {2, 1};
  for (const double bad : {3.0, 0.5, -1.0, std::numeric_limits<double>::quiet_NaN()}) {
    g.values = {1, bad};
    EXPECT_TRUE(throws_with<kcla::InvalidArgument>([&] { kcla::pack_genotypes(g); },
                                                   {"pack_genotypes", "(sample 1, variant 1)"}))
        << bad;
  }
  g.values = {0, 2};  // an explicit zero is a 0 call
  const auto p = kcla::pack_genotypes(g);
  EXPECT_EQ(p.code(0, 2), kcla::bed_code::hom_a2);
  EXPECT_EQ(p.code(1, 1), kcla::bed_code::hom_a1);
  g.row_offsets = {0, 2, 2};  // the same call twice
  g.column_indices = {1, 1};
  g.values = {1, 1};
  EXPECT_TRUE(throws_with<kcla::InvalidArgument>([&] { kcla::pack_genotypes(g); },
                                                 {"(sample 0, variant 1)", "twice"}));
  g.column_indices = {1, 3};  // out of range: CsrMatrix::validate
  EXPECT_TRUE(throws_with<kcla::InvalidArgument>([&] { kcla::pack_genotypes(g); },
                                                 {"pack_genotypes", "out of range"}));
}

TEST(PackedGenotypes, MatrixRejectsInconsistentCodes) {
  auto p = kcla::PackedGenotypes::all_missing(5, 2);
  p.codes.pop_back();
  EXPECT_TRUE(throws_with<kcla::InvalidArgument>([&] { kcla::PackedGenotypeMatrix<double> G(p); },
                                                 {"codes has 31 bytes"}));
  p = kcla::PackedGenotypes::all_missing(5, 2);
  p.bytes_per_variant = 2;
  EXPECT_THROW(kcla::PackedGenotypeMatrix<float> G(p), kcla::InvalidArgument);
}

// ---- products -----------------------------------------------------------------------------

const std::vector<std::pair<int, int>>& edge_shapes() {
  // samples: 1, multiples of nothing (5, 17, 33, 131), of 4 but not 16 (1000), of 16 but
  // not 32 (48), of 32 (64); variants: 1, 2, odd (pair tables), fewer than a chunk, several
  // chunks, many.
  static const std::vector<std::pair<int, int>> shapes = {
      {1, 1},  {1, 37},   {5, 1},    {3, 2},     {17, 9},   {48, 130},
      {64, 3}, {33, 257}, {131, 64}, {1000, 33}, {7, 5001}, {300, 1001}};
  return shapes;
}

TEST(PackedMultiply, VectorMatchesCsrReferenceOnEdgeShapes) {
  SCOPED_TRACE(seed_note());
  auto gen = kcla::test::rng();
  for (const auto& [m, n] : edge_shapes()) {
    const auto panel = random_panel(gen, m, n);
    check_products<double>(panel, 1, gen);
    check_products<float>(panel, 1, gen);
  }
}

TEST(PackedMultiply, QuadTablePlanFitsItsScratchOrDeclines) {
  using exec = Kokkos::DefaultExecutionSpace;
  using functor = kcla::detail::PackedQuadTablesFunctor<float, exec>;
  const exec space;
  const kcla::PackedGenotypeTuning defaults;
  for (const std::int64_t words : {1, 27, 157, 256, 1000}) {
    const auto plan =
        kcla::detail::packed_quad_tables_plan<float>(space, words, 100000, defaults, 1024);
    ASSERT_TRUE(plan.fits) << words << " words";
    EXPECT_LE(functor::scratch_bytes(plan.slices, plan.slice_quads, plan.slice_threads),
              static_cast<std::size_t>(defaults.max_team_scratch_bytes));
    EXPECT_LE(plan.slices * plan.slice_threads, 1024);
    EXPECT_EQ(plan.slice_threads % 32, 0);
    EXPECT_GE(plan.slice_threads, plan.tile_words);
    EXPECT_GE(plan.tile_words * plan.num_tiles, words);
    const std::int64_t step = 4 * plan.slices * plan.slice_quads;
    EXPECT_GE(plan.num_steps * step, 100000);
    EXPECT_GE(plan.teams_per_tile, 1);
    EXPECT_LE(plan.teams_per_tile, plan.num_steps);
  }
  // A team of at most 64 threads: two-word tiles would need one 64-thread slice, so the
  // plan keeps one slice.
  const auto narrow = kcla::detail::packed_quad_tables_plan<float>(space, 40, 1000, defaults, 64);
  ASSERT_TRUE(narrow.fits);
  EXPECT_EQ(narrow.slices, 1);
  kcla::PackedGenotypeTuning cramped;
  cramped.max_team_scratch_bytes = 700;  // less than one table: pair tables run instead
  EXPECT_FALSE(kcla::detail::packed_quad_tables_plan<float>(space, 157, 1000, cramped, 1024).fits);
}

// ---- tensor-core kernel: the encoding (host) and where it runs -----------------------------

TEST(PackedTensorCores, BytePermuteFollowsPtx) {
  // byte i of the result is byte (s >> 4i) & 7 of y:x
  EXPECT_EQ(kcla::detail::packed_byte_perm(0x33221100u, 0x77665544u, 0x3210u), 0x33221100u);
  EXPECT_EQ(kcla::detail::packed_byte_perm(0x33221100u, 0x77665544u, 0x7654u), 0x77665544u);
  EXPECT_EQ(kcla::detail::packed_byte_perm(0x33221100u, 0x77665544u, 0x0415u), 0x00441155u);
}

TEST(PackedTensorCores, RegistersHoldTheCodesValuesAsSubnormalHalves) {
  auto gen = kcla::test::rng();
  for (const auto counted : {kcla::CountedAllele::a1, kcla::CountedAllele::a2}) {
    const auto counts = kcla::allele_counts_of_codes(counted);
    float values[4];
    for (int c = 0; c < 4; ++c) values[c] = counts[static_cast<std::size_t>(c)];
    std::uint32_t table = 0, flip = 0;
    ASSERT_TRUE(kcla::detail::packed_mma_table(values, table, flip));
    for (int trial = 0; trial < 200; ++trial) {
      const auto wa = static_cast<std::uint32_t>(gen()), wb = static_cast<std::uint32_t>(gen());
      for (int m = 0; m < 4; ++m) {  // the kernel's pair of bytes m, then sample 4m + q (+ 2)
        const std::uint32_t pair =
            kcla::detail::packed_byte_perm(wa, wb, 0x40u + 0x11u * static_cast<unsigned>(m)) ^ flip;
        for (int q = 0; q < 2; ++q)
          for (const bool high : {false, true}) {
            const int sample = 4 * m + q + (high ? 2 : 0);
            const auto r = kcla::detail::packed_mma_register(pair >> (2 * q), high, table);
            const auto code_a = (wa >> (2 * sample)) & 3u, code_b = (wb >> (2 * sample)) & 3u;
            // fp16 bits of value * 2^-24 are the value; of value * 2^-16, the value << 8
            const unsigned shift = high ? 8 : 0;
            EXPECT_EQ(r & 0xFFFFu, counts[code_a] << shift) << "sample " << sample;
            EXPECT_EQ(r >> 16, counts[code_b] << shift) << "sample " << sample;
          }
      }
    }
  }
}

TEST(PackedTensorCores, TableTakesOnlyValuesZeroToThree) {
  std::uint32_t table = 0, flip = 0;
  const float counts[4] = {2, 0, 1, 0};  // counting A1: code 1 is the first zero
  ASSERT_TRUE(kcla::detail::packed_mma_table(counts, table, flip));
  EXPECT_EQ(flip, 0x55555555u);
  EXPECT_EQ(table, 0x01000200u);  // byte c: the value of code c ^ 1
  const float a2[4] = {0, 0, 1, 2};
  ASSERT_TRUE(kcla::detail::packed_mma_table(a2, table, flip));
  EXPECT_EQ(flip, 0u);
  EXPECT_EQ(table, 0x02010000u);
  const float half[4] = {0, 0.5f, 1, 2};
  EXPECT_FALSE(kcla::detail::packed_mma_table(half, table, flip));
  const float four[4] = {0, 1, 2, 4};
  EXPECT_FALSE(kcla::detail::packed_mma_table(four, table, flip));
  const double negative[4] = {0, -1, 1, 2};
  EXPECT_FALSE(kcla::detail::packed_mma_table(negative, table, flip));
  const float no_zero[4] = {1, 2, 3, 1};
  EXPECT_FALSE(kcla::detail::packed_mma_table(no_zero, table, flip));
}

TEST(PackedTensorCores, PlanCoversEverySampleAndStep) {
  using functor = kcla::detail::PackedTensorCoreFunctor<Kokkos::DefaultHostExecutionSpace>;
  kcla::PackedGenotypeTuning tuning;
  for (const std::int64_t words : {1, 7, 8, 9, 28, 313, 3000})
    for (const std::int64_t variants : {1, 15, 17, 1000, 358499})
      for (const std::int64_t concurrency : {1, 270336}) {
        const auto plan =
            kcla::detail::packed_tensor_core_plan(words, variants, concurrency, tuning);
        EXPECT_GE(plan.sample_blocks * functor::words_per_warp, words);
        EXPECT_GE(plan.team_groups * plan.block_warps, plan.sample_blocks);
        EXPECT_GE(plan.splits, 1);
        EXPECT_LE(plan.block_warps * plan.splits, functor::max_team_warps);
        EXPECT_EQ(plan.split_steps % functor::split_round, 0);
        const std::int64_t team_steps = plan.splits * plan.split_steps;
        EXPECT_GE(plan.num_parts * team_steps * functor::step_variants, variants);
        EXPECT_LT((plan.num_parts - 1) * team_steps, plan.num_steps);     // no empty team
        EXPECT_LT((plan.splits - 1) * plan.split_steps, plan.num_steps);  // no empty split
        if (plan.num_parts * plan.splits > 1) {
          EXPECT_GE(plan.split_steps, tuning.mma_min_part_steps);
        }
      }
}

TEST(PackedTensorCores, RunWhereTheGpuHasThem) {
  auto gen = kcla::test::rng();
  const auto panel = random_panel(gen, 20, 30);
  using exec = Kokkos::DefaultExecutionSpace;
  const kcla::PackedGenotypeMatrix<float, exec::memory_space> Gf(panel.packed);
  const kcla::PackedGenotypeMatrix<double, exec::memory_space> Gd(panel.packed);
  EXPECT_FALSE(kcla::detail::packed_tensor_cores_available(exec(), Gd)) << "double never";
#if KCLA_HAVE_CUDA
  if (std::is_same<exec, Kokkos::Cuda>::value) {
    int major = 0;
    ASSERT_EQ(
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, exec().cuda_device()),
        cudaSuccess);
    EXPECT_EQ(kcla::detail::packed_tensor_cores_available(exec(), Gf), major >= 8);
    return;
  }
#endif
  EXPECT_FALSE(kcla::detail::packed_tensor_cores_available(exec(), Gf)) << "host spaces never";
}

// ---- integer tensor-core kernel: one warp's step emulated on the host ---------------------

TEST(PackedInt8TensorCores, CountsFollowTheCodes) {
  auto gen = kcla::test::rng();
  for (int trial = 0; trial < 200; ++trial) {
    const auto w = static_cast<std::uint32_t>(gen());
    const auto a1 = kcla::detail::packed_imma_counts<false>(w);
    const auto a2 = kcla::detail::packed_imma_counts<true>(w);
    for (int i = 0; i < 16; ++i) {
      const auto code = (w >> (2 * i)) & 3u;
      EXPECT_EQ((a1 >> (2 * i)) & 3u, kcla::allele_counts_of_codes(CountedAllele::a1)[code]);
      EXPECT_EQ((a2 >> (2 * i)) & 3u, kcla::allele_counts_of_codes(CountedAllele::a2)[code]);
    }
  }
}

TEST(PackedInt8TensorCores, TransposeAndDigits) {
  const std::uint32_t in[4] = {0x03020100u, 0x13121110u, 0x23222120u, 0x33323130u};
  std::uint32_t out[4];
  kcla::detail::packed_imma_transpose(in, out);
  EXPECT_EQ(out[0], 0x30201000u);
  EXPECT_EQ(out[1], 0x31211101u);
  EXPECT_EQ(out[2], 0x32221202u);
  EXPECT_EQ(out[3], 0x33231303u);
  auto gen = kcla::test::rng();
  std::uniform_int_distribution<std::int32_t> value(-(1 << 30), 1 << 30);
  for (int trial = 0; trial < 1000; ++trial) {
    const std::int32_t v = trial == 0 ? (1 << 30) : trial == 1 ? -(1 << 30) : value(gen);
    std::int8_t d[4];
    kcla::detail::packed_imma_digits(v, d);
    const std::int64_t back = d[0] + 256LL * d[1] + 65536LL * d[2] + 16777216LL * d[3];
    EXPECT_EQ(back, v);
  }
  EXPECT_EQ(kcla::detail::packed_imma_exponent(0.0f), 0);
  EXPECT_EQ(kcla::detail::packed_imma_exponent(1.0f), 29);  // 1 -> 2^29
  EXPECT_EQ(kcla::detail::packed_imma_exponent(0.75f), 30);
}

// One step of one warp as the GPU runs it: every lane's A registers from its words and B
// registers from the team's fragment bytes, the 8 m16n8k32 products assembled from those
// registers by PTX's fragment layout (A: rows g and g + 8, k = 4 q + i and 16 + 4 q + i;
// B: k likewise, column g; D: rows g and g + 8, columns 2 q and 2 q + 1), each row's sum
// recombined from the lanes' D registers and scaled as the kernel's epilogue does, against
// the plain product of the 128 samples x 32 variants.
template <bool CountA2>
void check_emulated_warp_step(std::mt19937_64& gen) {
  namespace d = kcla::detail;
  const auto counts = kcla::allele_counts_of_codes(CountA2 ? CountedAllele::a2 : CountedAllele::a1);
  std::uint32_t words[32][8];  // [variant][word of 16 samples]
  for (auto& row : words)
    for (auto& w : row) w = static_cast<std::uint32_t>(gen());
  std::normal_distribution<float> normal;
  float x[32];
  float most = 0.0f;
  for (auto& v : x) {
    v = normal(gen);
    most = std::max(most, std::abs(v));
  }
  const int e = d::packed_imma_exponent(most);
  unsigned char fragments[128] = {};
  for (int k = 0; k < 32; ++k) {
    std::int8_t digits[4];
    d::packed_imma_digits(static_cast<std::int32_t>(std::nearbyint(std::ldexp(x[k], e))), digits);
    for (int n = 0; n < 4; ++n)
      fragments[d::packed_imma_fragment_byte(0, n, k)] = static_cast<unsigned char>(digits[n]);
  }
  std::int64_t A[8][16][32] = {}, B[32][8] = {};
  for (int lane = 0; lane < 32; ++lane) {
    const int g = lane / 4, q = lane % 4;
    std::uint32_t u[8], x4[4], y4[4];
    for (int i = 0; i < 4; ++i) {
      u[i] = d::packed_imma_counts<CountA2>(words[4 * q + i][g]);
      u[4 + i] = d::packed_imma_counts<CountA2>(words[16 + 4 * q + i][g]);
    }
    d::packed_imma_transpose(u, x4);
    d::packed_imma_transpose(u + 4, y4);
    for (int t = 0; t < 8; ++t)
      for (int r = 0; r < 4; ++r) {
        const std::uint32_t a = d::packed_imma_register(x4, y4, t, r);
        for (int i = 0; i < 4; ++i)
          A[t][r & 1 ? g + 8 : g][(r < 2 ? 0 : 16) + 4 * q + i] = (a >> (8 * i)) & 255u;
      }
    std::uint32_t b[2] = {0u, 0u};
    if (g < 4) std::memcpy(b, fragments + 8 * (4 * g + q), 8);
    for (int r = 0; r < 2; ++r)
      for (int i = 0; i < 4; ++i)
        B[16 * r + 4 * q + i][g] = static_cast<std::int8_t>((b[r] >> (8 * i)) & 255u);
  }
  for (int t = 0; t < 8; ++t) {
    std::int64_t D[16][8] = {};
    for (int row = 0; row < 16; ++row)
      for (int n = 0; n < 8; ++n)
        for (int k = 0; k < 32; ++k) D[row][n] += A[t][row][k] * B[k][n];
    for (int g = 0; g < 8; ++g) {
      long long share[4][2];  // lanes q of group g: rows g and g + 8
      for (int q = 0; q < 4; ++q) {
        const int c[4] = {static_cast<int>(D[g][2 * q]), static_cast<int>(D[g][2 * q + 1]),
                          static_cast<int>(D[g + 8][2 * q]), static_cast<int>(D[g + 8][2 * q + 1])};
        share[q][0] = d::packed_imma_row_share(c, q, false);
        share[q][1] = d::packed_imma_row_share(c, q, true);
      }
      for (const bool high : {false, true}) {
        const long long total = share[0][high] + share[1][high];  // the exchange q ^ 1
        const int j = d::packed_imma_sample(t, high);
        const double got = std::ldexp(static_cast<double>(total), -e - 2 * (j & 3));
        double want = 0.0, magnitude = 0.0;
        for (int k = 0; k < 32; ++k) {
          const auto count = counts[(words[k][g] >> (2 * j)) & 3u];
          want += count * static_cast<double>(x[k]);
          magnitude += count * std::abs(static_cast<double>(x[k]));
        }
        // each term's x is rounded to a multiple of 2^-e (<= 2^-30 of the largest |x|)
        EXPECT_NEAR(got, want, 64 * std::ldexp(most, -30) + 1e-12 * magnitude)
            << "word " << g << " sample " << j;
        EXPECT_EQ(share[2][high] + share[3][high], 0);
      }
    }
  }
}

TEST(PackedInt8TensorCores, EmulatedWarpStepGivesTheProduct) {
  SCOPED_TRACE(seed_note());
  auto gen = kcla::test::rng();
  for (int trial = 0; trial < 20; ++trial) {
    check_emulated_warp_step<false>(gen);
    check_emulated_warp_step<true>(gen);
  }
}

TEST(PackedInt8TensorCores, PlanCoversEverySampleAndStep) {
  using functor =
      kcla::detail::PackedInt8TensorCoreFunctor<Kokkos::DefaultHostExecutionSpace, false>;
  kcla::PackedGenotypeTuning tuning;
  for (const std::int64_t words : {1, 7, 8, 9, 28, 157, 313, 3000})
    for (const std::int64_t variants : {1, 31, 33, 1000, 358499, 300000000})
      for (const std::int64_t concurrency : {1, 270336}) {
        const auto plan =
            kcla::detail::packed_int8_tensor_core_plan(words, variants, concurrency, tuning, 3);
        EXPECT_GE(plan.sample_blocks * functor::words_per_warp, words);
        EXPECT_GE(plan.team_groups * plan.block_warps, plan.sample_blocks);
        EXPECT_LT((plan.team_groups - 1) * plan.block_warps, plan.sample_blocks);  // none idle
        EXPECT_LE(plan.block_warps, functor::max_team_warps);
        EXPECT_LE(plan.chunk_steps, functor::max_chunk_steps);
        EXPECT_GE(plan.num_chunks * plan.chunk_steps * functor::step_variants, variants);
        EXPECT_LT((plan.num_chunks - 1) * plan.chunk_steps, plan.num_steps);  // no empty team
        EXPECT_EQ(plan.replicas, kcla::detail::packed_imma_replicas(plan.num_chunks));
        // Ranges of at least imma_min_chunk_steps steps unless the panel has fewer.
        EXPECT_GE(plan.chunk_steps,
                  std::min<std::int64_t>(tuning.imma_min_chunk_steps, plan.num_steps));
        // One vector: sums straight into y, whatever the ranges.
        EXPECT_EQ(kcla::detail::packed_int8_tensor_core_plan(words, variants, concurrency, tuning)
                      .replicas,
                  1);
      }
  EXPECT_EQ(kcla::detail::packed_imma_replicas(1), 1);
  EXPECT_EQ(kcla::detail::packed_imma_replicas(64), 1);
  EXPECT_EQ(kcla::detail::packed_imma_replicas(65), 2);
  EXPECT_EQ(kcla::detail::packed_imma_replicas(1 << 20), 32);
}

// The ring stage: a permutation of its 256 words; each variant's 8 words two aligned
// 16-byte pieces (the copies); a step's reads conflict-free (32 banks per read).
TEST(PackedInt8TensorCores, RingLayoutIsConflictFree) {
  std::vector<int> seen(256, 0);
  for (int v = 0; v < 32; ++v) {
    for (int g = 0; g < 8; ++g) {
      const int w = kcla::detail::packed_imma_ring_word(v, g);
      ASSERT_GE(w, 0);
      ASSERT_LT(w, 256);
      ++seen[static_cast<std::size_t>(w)];
      if (g % 4 != 0) {
        EXPECT_EQ(w, kcla::detail::packed_imma_ring_word(v, g - 1) + 1) << "piece not contiguous";
      }
    }
    EXPECT_EQ(kcla::detail::packed_imma_ring_word(v, 0) % 4, 0);
    EXPECT_EQ(kcla::detail::packed_imma_ring_word(v, 4) % 4, 0);
  }
  for (const int n : seen) EXPECT_EQ(n, 1);
  for (const int high : {0, 16})
    for (int i = 0; i < 4; ++i) {
      std::vector<int> banks(32, 0);
      for (int lane = 0; lane < 32; ++lane) {
        const int g = lane / 4, q = lane % 4;
        ++banks[static_cast<std::size_t>(kcla::detail::packed_imma_ring_word(high + 4 * q + i, g) %
                                         32)];
      }
      for (const int n : banks) EXPECT_EQ(n, 1) << "read " << i << (high ? " (high)" : "");
    }
}

TEST(PackedInt8TensorCores, RunWhereTheGpuHasThem) {
  auto gen = kcla::test::rng();
  const auto panel = random_panel(gen, 20, 30);
  using exec = Kokkos::DefaultExecutionSpace;
  const kcla::PackedGenotypeMatrix<float, exec::memory_space> Gf(panel.packed);
  const kcla::PackedGenotypeMatrix<double, exec::memory_space> Gd(panel.packed);
  EXPECT_FALSE(kcla::detail::packed_int8_tensor_cores_available(exec(), Gd)) << "double never";
#if KCLA_HAVE_CUDA
  if (std::is_same<exec, Kokkos::Cuda>::value) {
    int major = 0;
    ASSERT_EQ(
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, exec().cuda_device()),
        cudaSuccess);
    EXPECT_EQ(kcla::detail::packed_int8_tensor_cores_available(exec(), Gf), major >= 8);
    return;
  }
#endif
  EXPECT_FALSE(kcla::detail::packed_int8_tensor_cores_available(exec(), Gf)) << "host spaces never";
}

TEST(PackedMultiply, BatchedMatchesCsrReference) {
  SCOPED_TRACE(seed_note());
  auto gen = kcla::test::rng();
  for (const auto& [m, n] : std::vector<std::pair<int, int>>{{1, 1}, {17, 9}, {131, 257}}) {
    const auto panel = random_panel(gen, m, n);
    // 3: one table pass of 3; 5: passes of 4 and 1; 17 / 33: tiles of 4 / 8 per thread;
    // 64: the benchmark's batch; 70: two vector tiles.
    for (const std::int64_t B : {1, 3, 5, 17, 33, 64, 70}) {
      check_products<double>(panel, B, gen);
      check_products<float>(panel, B, gen);
    }
  }
}

// Missing calls, padding, empty shapes and argument checks on every enabled back end.
template <class ExecutionSpace>
class PackedMultiplyOnEveryBackend : public kcla::test::OnEveryBackend<ExecutionSpace> {};
TYPED_TEST_SUITE(PackedMultiplyOnEveryBackend, kcla::test::Backends, kcla::test::BackendName);

TYPED_TEST(PackedMultiplyOnEveryBackend, MissingCallsCountZeroForEitherAllele) {
  SCOPED_TRACE(seed_note());
  auto gen = kcla::test::rng();
  for (const auto counted : {CountedAllele::a1, CountedAllele::a2}) {
    const auto panel = random_panel(gen, 37, 75, 0.35, counted);
    ASSERT_GT(panel.missing, 0);
    check_products<double, TypeParam>(panel, 1, gen);
    check_products<float, TypeParam>(panel, 3, gen);
  }
}

TYPED_TEST(PackedMultiplyOnEveryBackend, PaddingCallsAreIgnored) {
  // Padding codes as a raw .bed leaves them (00, two copies of A1) must not leak into y.
  SCOPED_TRACE(seed_note());
  auto gen = kcla::test::rng();
  for (const int m : {1, 5, 30}) {
    auto panel = random_panel(gen, m, 21);
    for (auto& byte : panel.packed.codes) {
      const auto index = static_cast<std::int64_t>(&byte - panel.packed.codes.data());
      const std::int64_t first_sample = 4 * (index % panel.packed.bytes_per_variant);
      for (int q = 0; q < 4; ++q)
        if (first_sample + q >= m) byte = static_cast<std::uint8_t>(byte & ~(3u << (2 * q)));
    }
    check_products<double, TypeParam>(panel, 1, gen);
    check_products<double, TypeParam>(panel, 64, gen);
  }
}

TYPED_TEST(PackedMultiplyOnEveryBackend, EmptyShapes) {
  using exec = TypeParam;
  using memory = typename exec::memory_space;
  for (const auto& [m, n] : std::vector<std::pair<int, int>>{{0, 0}, {0, 5}, {4, 0}}) {
    const kcla::PackedGenotypeMatrix<double, memory> G(kcla::PackedGenotypes::all_missing(m, n));
    for (const auto kernel : all_kernels()) {
      kcla::PackedMultiplyOptions options;
      options.kernel = kernel;
      Kokkos::View<double*, memory> x("x", n), y("y", m);
      Kokkos::deep_copy(y, 7.0);
      kcla::multiply(exec(), G, x, y, options);
      auto yh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y);
      for (int s = 0; s < m; ++s) EXPECT_EQ(yh(s), 0.0) << name(kernel);
      Kokkos::View<double**, Kokkos::LayoutRight, memory> X("X", n, 0), Y("Y", m, 0);
      kcla::multiply(exec(), G, X, Y, options);
    }
  }
}

TYPED_TEST(PackedMultiplyOnEveryBackend, RejectsMismatchedExtents) {
  using exec = TypeParam;
  using memory = typename exec::memory_space;
  const kcla::PackedGenotypeMatrix<float, memory> G(kcla::PackedGenotypes::all_missing(6, 4));
  Kokkos::View<float*, memory> x4("x", 4), x5("x", 5), y6("y", 6), y5("y", 5);
  EXPECT_TRUE(throws_with<kcla::InvalidArgument>([&] { kcla::multiply(exec(), G, x5, y6); },
                                                 {"x has 5 rows", "4 variants"}));
  EXPECT_TRUE(throws_with<kcla::InvalidArgument>([&] { kcla::multiply(exec(), G, x4, y5); },
                                                 {"y has 5 rows", "6 samples"}));
  Kokkos::View<float**, Kokkos::LayoutRight, memory> X("X", 4, 3), Y("Y", 6, 2);
  EXPECT_THROW(kcla::multiply(exec(), G, X, Y), kcla::InvalidArgument);
}

#if defined(KOKKOS_ENABLE_SERIAL)
TEST(PackedMultiply, SerialSpaceToo) {
  if (std::is_same<Kokkos::DefaultExecutionSpace, Kokkos::Serial>::value)
    GTEST_SKIP() << "Serial is the default space: the other tests ran on it";
  SCOPED_TRACE(seed_note());
  auto gen = kcla::test::rng();
  const auto panel = random_panel(gen, 45, 131);
  check_products<double, Kokkos::Serial>(panel, 1, gen);
  check_products<float, Kokkos::Serial>(panel, 3, gen);
  check_products<double, Kokkos::Serial>(panel, 20, gen);
}
#endif

// ---- the packed .bed reader ---------------------------------------------------------------

/// Writes BASE.bed/.bim/.fam from calls g[sample][variant] (-1 missing, else A1 copies),
/// straight from the format description; `padding` fills the unused bits of each SNP's
/// last byte (a .bed normally has 00 there).
void write_plink(const std::string& base, const std::vector<std::vector<int>>& g, std::size_t snps,
                 unsigned padding = 0) {
  std::ofstream fam(base + ".fam"), bim(base + ".bim");
  for (std::size_t i = 0; i < g.size(); ++i) fam << "f" << i << " i" << i << " 0 0 1 -9\n";
  for (std::size_t j = 0; j < snps; ++j) bim << "1\trs" << j << "\t0\t" << j + 1 << "\tA\tG\n";
  std::ofstream bed(base + ".bed", std::ios::binary);
  bed << '\x6c' << '\x1b' << '\x01';
  for (std::size_t j = 0; j < snps; ++j)
    for (std::size_t first = 0; first < g.size(); first += 4) {
      unsigned byte = 0;
      for (std::size_t q = 0; q < 4; ++q) {
        unsigned code = padding & 3u;
        if (first + q < g.size()) {
          const int v = g[first + q][j];
          code = v < 0 ? 1u : v == 2 ? 0u : v == 1 ? 2u : 3u;
        }
        byte |= code << (2 * q);
      }
      bed << static_cast<char>(byte);
    }
}

TEST(PackedPlink, ReadsTheBedCodesAsTheyAre) {
  SCOPED_TRACE(seed_note());
  kcla::test::TempDir tmp;
  auto gen = kcla::test::rng();
  std::discrete_distribution<int> pick({0.1, 0.5, 0.25, 0.15});  // missing, 0, 1, 2
  for (const std::size_t individuals : {1, 3, 4, 5, 17, 64, 101}) {
    const std::size_t snps = 1 + gen() % 40;
    std::vector<std::vector<int>> g(individuals, std::vector<int>(snps));
    for (auto& row : g)
      for (auto& v : row) v = pick(gen) - 1;
    const auto base = tmp.path("set" + std::to_string(individuals));
    write_plink(base, g, snps, individuals % 2 ? 0u : 2u);  // padding bits 00 or 10
    for (const auto counted : {CountedAllele::a1, CountedAllele::a2}) {
      kcla::PlinkReadOptions options;
      options.counted_allele = counted;
      const auto unpacked = kcla::read_plink(base, options);
      const auto packed = kcla::read_plink_packed(base + ".bed", options);
      ASSERT_EQ(packed.num_samples, static_cast<std::int64_t>(individuals));
      ASSERT_EQ(packed.num_variants, static_cast<std::int64_t>(snps));
      EXPECT_EQ(packed.counted_allele, counted);
      EXPECT_NO_THROW(packed.validate());
      for (std::size_t j = 0; j < snps; ++j)
        for (std::size_t i = 0; i < individuals; ++i) {
          const int v = g[i][j];
          ASSERT_EQ(packed.code(i, j), v < 0 ? 1 : v == 2 ? 0 : v == 1 ? 2 : 3) << i << ", " << j;
        }
      for (std::size_t j = 0; j < snps; ++j)  // padding normalised to missing
        for (auto s = static_cast<std::int64_t>(individuals); s < 4 * packed.bytes_per_variant; ++s)
          ASSERT_EQ(packed.code(s, j), kcla::bed_code::missing) << s << ", " << j;
      EXPECT_TRUE(kcla::test::csr_equal(kcla::unpack_genotypes(packed), unpacked.matrix));
      EXPECT_EQ(packed.count_missing(), unpacked.num_missing);
      Panel panel{unpacked.matrix, packed, unpacked.num_missing};
      check_products<double>(panel, 1, gen, all_kernels(), false);
    }
  }
}

TEST(PackedPlink, EmptyFilesets) {
  kcla::test::TempDir tmp;
  write_plink(tmp.path("none"), std::vector<std::vector<int>>(3), 0);
  const auto p = kcla::read_plink_packed(tmp.path("none"));
  EXPECT_EQ(p.num_samples, 3);
  EXPECT_EQ(p.num_variants, 0);
  EXPECT_EQ(p.bytes(), 0u);
  write_plink(tmp.path("nobody"), {}, 4);
  const auto q = kcla::read_plink_packed(tmp.path("nobody"));
  EXPECT_EQ(q.num_samples, 0);
  EXPECT_EQ(q.num_variants, 4);
}

TEST(PackedPlink, HostileBedFilesNameTheFile) {
  kcla::test::TempDir tmp;
  const auto base = tmp.path("g");
  write_plink(base, std::vector<std::vector<int>>(6, std::vector<int>(5, 1)), 5);  // 3 + 5 x 2
  const auto bytes = kcla::test::read_bytes(base + ".bed");
  ASSERT_EQ(bytes.size(), 13u);
  const auto read = [&] { kcla::read_plink_packed(base); };
  tmp.write("g.bed", bytes.substr(0, 12));  // truncated
  EXPECT_TRUE(throws_with<kcla::FormatError>(read, {base + ".bed", "size is 12 bytes", "= 13"}));
  tmp.write("g.bed", bytes + "xyz");  // trailing bytes
  EXPECT_TRUE(throws_with<kcla::FormatError>(read, {base + ".bed", "size is 16 bytes"}));
  tmp.write("g.bed", "\x6d" + bytes.substr(1));  // bad magic
  EXPECT_TRUE(throws_with<kcla::FormatError>(read, {base + ".bed", "not a PLINK 1 .bed"}));
  tmp.write("g.bed", bytes.substr(0, 2));  // shorter than the magic
  EXPECT_TRUE(throws_with<kcla::FormatError>(read, {base + ".bed", "not a PLINK 1 .bed"}));
  tmp.write("g.bed", bytes.substr(0, 2) + std::string(1, '\0') + bytes.substr(3));
  EXPECT_TRUE(throws_with<kcla::FormatError>(read, {base + ".bed", "individual-major"}));
  tmp.write("g.bed", bytes);
  tmp.write("g.fam", "a a\nb b\nc c\nd d\ne e\nf f\ng g\nh h\ni i\n");  // 9: 3 bytes per SNP
  EXPECT_TRUE(throws_with<kcla::FormatError>(read, {base + ".bed", "9 individuals", "= 18"}));
  tmp.write("g.bim", "1 rs1\nlonely\n");
  EXPECT_TRUE(throws_with<kcla::FormatError>(read, {base + ".bim", "line 2"}));
  std::remove((base + ".bed").c_str());
  tmp.write("g.bim", "1 rs1\n");
  EXPECT_TRUE(throws_with<kcla::FormatError>(read, {base + ".bed", "cannot open"}));
}

// ---- real data (scripts/data/fetch.sh small) ----------------------------------------------

void check_real_fileset(const std::string& name, std::int64_t samples, std::int64_t variants,
                        bool expect_missing) {
  const auto bed = kcla::test::data_file(name + ".bed");
  if (bed.empty())
    GTEST_SKIP() << name << ".bed not in the data folder (run scripts/data/fetch.sh small)";
  SCOPED_TRACE(name + "; " + seed_note());
  const auto csr = kcla::read_plink(bed);
  const auto packed = kcla::read_plink_packed(bed);
  ASSERT_EQ(packed.num_samples, samples);
  ASSERT_EQ(packed.num_variants, variants);
  EXPECT_EQ(packed.bytes(),
            static_cast<std::size_t>(variants * ((samples + 63) / 64 * 16)));  // 16-byte rows
  EXPECT_EQ(packed.count_missing(), csr.num_missing);
  EXPECT_EQ(expect_missing, csr.num_missing > 0);
  EXPECT_TRUE(kcla::test::csr_equal(kcla::unpack_genotypes(packed), csr.matrix));
  if (csr.num_missing == 0) {  // without missing calls, packing the CSR gives the same bytes
    const auto repacked = kcla::pack_genotypes(csr.matrix);
    EXPECT_TRUE(repacked.codes == packed.codes);
  }
  auto gen = kcla::test::rng();
  const Panel panel{csr.matrix, packed, csr.num_missing};
  // One vector through the table and host kernels; a few vectors through each batched
  // path. The tile kernel (a GPU design, slow on a host) runs on the smaller sets only.
  const std::vector<PackedKernel> vector_kernels = {
      PackedKernel::automatic,   PackedKernel::tables,       PackedKernel::quad_tables,
      PackedKernel::host_blocks, PackedKernel::tensor_cores, PackedKernel::int8_tensor_cores};
  check_products<float>(panel, 1, gen, vector_kernels, false);
  check_products<double>(panel, 1, gen, {PackedKernel::automatic}, false);
  check_products<float>(panel, 3, gen, {PackedKernel::automatic}, false);
  check_products<double>(panel, 2, gen, {PackedKernel::tables}, false);
  if (samples * variants < 50'000'000)
    check_products<float>(panel, 18, gen, {PackedKernel::tiles}, false);
}

TEST(PackedPlinkRealData, MouseHs1940) {
  check_real_fileset("mouse_hs1940", 1940, 12226, false);
}
TEST(PackedPlinkRealData, EurSubset) {
  check_real_fileset("EUR_subset", 379, 54051, false);
}
TEST(PackedPlinkRealData, HlcWithMissingCalls) {
  check_real_fileset("HLC", 427, 358499, true);
}

}  // namespace
