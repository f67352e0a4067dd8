// Level phases of the full array: schedules whose phases merge levels multiply like CSR
// (serial reference, every semiring), the planner's counts equal what the built schedule
// has, and bad phase lists are refused.
#include <kcla/error.hpp>
#include <kcla/grammar_reference.hpp>
#include <kcla/level_phases.hpp>
#include <kcla/repair.hpp>
#include <kcla/schedule.hpp>
#include <kcla/semiring.hpp>

#include <gtest/gtest.h>

#include <functional>
#include <random>
#include <type_traits>

#include "grammar_fixtures.hpp"
#include "test_support.hpp"

namespace {

/// Phase tops of `span` levels each (the last phase takes what is left).
std::vector<std::int32_t> uniform_tops(std::int32_t depth, std::int32_t span) {
  std::vector<std::int32_t> tops;
  for (std::int32_t top = span; top < depth + span; top += span)
    tops.push_back(std::min(top, depth));
  return tops;
}

/// Random phase tops, each phase 1 .. kMaxPhaseLevels levels.
std::vector<std::int32_t> random_tops(std::int32_t depth, std::mt19937_64& gen) {
  std::uniform_int_distribution<std::int32_t> span(1, kcla::kMaxPhaseLevels);
  std::vector<std::int32_t> tops;
  for (std::int32_t top = span(gen); top < depth; top += span(gen)) tops.push_back(top);
  if (depth > 0) tops.push_back(depth);
  return tops;
}

template <class Semiring>
void expect_phases_multiply_like_csr(const kcla::Grammar& g, const kcla::CsrMatrix<double>& a,
                                     const std::vector<std::int32_t>& tops, std::mt19937_64& gen) {
  using T = typename Semiring::value_type;
  using H = std::conditional_t<std::is_same<T, bool>::value, char, T>;  // no vector<bool>
  std::vector<H> x(a.num_cols), expected(a.num_rows), got(a.num_rows);
  std::uniform_real_distribution<double> u(0, 1);
  for (auto& v : x)
    v = std::is_same<T, bool>::value ? static_cast<H>(u(gen) < 0.3) : static_cast<H>(10 * u(gen));
  kcla::reference::csr_multiply<Semiring>(a, x, expected);
  const auto s = kcla::build_full_array_schedule(g, tops);
  ASSERT_EQ(s.depth,
            tops.empty() ? kcla::compute_levels(g).depth : static_cast<std::int32_t>(tops.size()));
  kcla::reference::full_array_multiply<Semiring>(s, x, got);
  for (std::int64_t r = 0; r < a.num_rows; ++r) {
    if constexpr (std::is_same<T, bool>::value || std::is_same<Semiring, kcla::MinPlus<T>>::value)
      ASSERT_EQ(got[r], expected[r]) << Semiring::name() << " row " << r;
    else
      ASSERT_NEAR(got[r], expected[r], 1e-9 * (1 + std::abs(expected[r]))) << "row " << r;
  }
}

/// Rules each phase evaluates per product, counted on the built schedule by walking every
/// computed slot's subtree inside its phase.
std::int64_t walks_in(const kcla::FullArraySchedule& s) {
  std::int64_t walked = 0, first = 0;
  std::function<void(std::int32_t)> walk = [&](std::int32_t c) {
    if (c < first) return;
    ++walked;
    walk(s.left[c]), walk(s.right[c]);
  };
  for (std::int32_t k = 1; k <= s.depth; ++k) {
    first = s.level_offsets[k - 1];
    for (auto n = first; n < s.level_offsets[k]; ++n) walk(static_cast<std::int32_t>(n));
  }
  return walked;
}

std::vector<kcla::CsrMatrix<double>> test_matrices(std::mt19937_64& gen) {
  return {kcla::test::paper_matrix(), kcla::test::random_genotypes(gen, 120, 900, 6, 5),
          kcla::test::random_genotypes(gen, 7, 3000, 3, 2),
          kcla::test::random_csr(gen, 300, 200, 0.02, 3),
          kcla::test::random_csr(gen, 40, 60, 0.0, 0)};
}

TEST(LevelPhases, EveryPartitionMultipliesLikeCsr) {
  auto gen = kcla::test::rng(21);
  for (const auto& a : test_matrices(gen)) {
    const auto g = kcla::compress(a);
    const auto L = kcla::compute_levels(g).depth;
    std::vector<std::vector<std::int32_t>> partitions{{}, random_tops(L, gen), random_tops(L, gen)};
    for (std::int32_t span = 2; span <= kcla::kMaxPhaseLevels; ++span)
      partitions.push_back(uniform_tops(L, span));
    for (const auto& tops : partitions) {
      expect_phases_multiply_like_csr<kcla::PlusTimes<double>>(g, a, tops, gen);
      expect_phases_multiply_like_csr<kcla::MinPlus<double>>(g, a, tops, gen);
      expect_phases_multiply_like_csr<kcla::Boolean>(g, a, tops, gen);
    }
  }
}

TEST(LevelPhases, MergedPhasesComputeFewerSlots) {
  auto gen = kcla::test::rng(22);
  const auto a = kcla::test::random_genotypes(gen, 120, 900, 6, 5);
  const auto g = kcla::compress(a);
  const auto L = kcla::compute_levels(g).depth;
  ASSERT_GE(L, 4) << "the fixture should be deep enough to merge levels";
  const auto plain = kcla::build_full_array_schedule(g);
  const auto merged = kcla::build_full_array_schedule(g, uniform_tops(L, L < 8 ? L : 8));
  EXPECT_EQ(plain.num_slots(), g.num_rules());
  EXPECT_EQ(merged.num_slots(), g.num_rules());
  EXPECT_LT(merged.computed_slots(), plain.computed_slots());
  // Every code C reads is a computed slot or a terminal.
  for (auto c : merged.row_symbols) EXPECT_LT(c, merged.computed_slots());
  // Children of a computed slot: a computed slot of an earlier phase, a leaf, or a rule of
  // its own phase (a computed slot of this phase or a walked rule).
  for (std::int32_t k = 1; k <= merged.depth; ++k)
    for (auto n = merged.level_offsets[k - 1]; n < merged.level_offsets[k]; ++n)
      for (auto c : {merged.left[n], merged.right[n]})
        EXPECT_TRUE(c < merged.level_offsets[k - 1] ||
                    (c >= merged.level_offsets[k - 1] && c < n) || c >= merged.computed_slots())
            << "slot " << n << " child " << c;
}

TEST(LevelPhases, PlannerCountsWhatTheScheduleHas) {
  auto gen = kcla::test::rng(23);
  for (const auto& a : test_matrices(gen)) {
    const auto g = kcla::compress(a);
    const auto levels = kcla::compute_levels(g);
    for (std::int32_t span = 1; span <= kcla::kMaxPhaseLevels; ++span) {
      // Boundaries that cost a second each: as few phases as the bound allows.
      auto machine = kcla::SweepMachine::for_host();
      machine.launch_seconds = machine.graph_node_seconds = machine.level_wait_seconds = 1.0;
      const auto p =
          kcla::plan_level_phases(g, levels, 1, 4, kcla::SweepLaunch::per_level, machine, span);
      ASSERT_EQ(static_cast<std::int32_t>(p.tops.size()), (levels.depth + span - 1) / span);
      const auto s = kcla::build_full_array_schedule(g, p.tops);
      EXPECT_EQ(p.computed_slots, s.computed_slots()) << "span " << span;
      EXPECT_EQ(p.walked_rules, walks_in(s)) << "span " << span;
      EXPECT_GE(p.walked_rules, p.computed_slots);
      EXPECT_NEAR(p.seconds, static_cast<double>(p.tops.size()), 1e-3);
    }
    // Free boundaries and costly walks: every level stays its own phase.
    auto free = kcla::SweepMachine::for_host();
    free.launch_seconds = free.graph_node_seconds = free.level_wait_seconds = 0.0;
    free.walk_level_seconds = 1.0;
    const auto p = kcla::plan_level_phases(g, levels, 1, 4, kcla::SweepLaunch::graph, free,
                                           kcla::kMaxPhaseLevels);
    EXPECT_EQ(p.tops, uniform_tops(levels.depth, 1));
    EXPECT_EQ(p.walked_rules, p.computed_slots);
  }
}

TEST(LevelPhases, PaperGrammarInTwoPhases) {
  // The hand grammar of the seed paper has five levels; phases {1-2, 3-5} give its
  // worked product (Figure 4.2) through the walks.
  const auto g = kcla::test::paper_grammar();
  ASSERT_EQ(kcla::compute_levels(g).depth, 5);
  std::vector<double> y(8);
  kcla::reference::full_array_multiply<kcla::PlusTimes<double>>(
      kcla::build_full_array_schedule(g, {2, 5}), kcla::test::paper_x(), y);
  const auto expected = kcla::test::paper_y();
  for (int r = 0; r < 8; ++r) EXPECT_NEAR(y[r], expected[r], 1e-12) << r;
}

TEST(LevelPhases, RejectsBadPhaseTops) {
  const auto g = kcla::test::paper_grammar();  // depth 5
  auto refused = [&](const std::vector<std::int32_t>& tops) {
    EXPECT_THROW(kcla::build_full_array_schedule(g, tops), kcla::InvalidArgument)
        << ::testing::PrintToString(tops);
  };
  refused({3, 2, 5});  // not ascending
  refused({2, 2, 5});  // an empty phase
  refused({0, 5});     // a phase below level 1
  refused({2, 4});     // does not reach the top
  refused({2, 6});     // beyond the top
  // Four equal rows of 1,024 columns: RePair nests pairs about ten levels deep, and one
  // phase over all of them is more than the walk's stack allows.
  kcla::CsrMatrix<double> a;
  a.num_rows = 4;
  a.num_cols = 1024;
  for (int r = 0; r < 4; ++r) {
    for (int j = 0; j < 1024; ++j) a.column_indices.push_back(j), a.values.push_back(1.0);
    a.row_offsets.push_back(static_cast<std::int64_t>(a.column_indices.size()));
  }
  const auto deep = kcla::compress(a);
  const auto L = kcla::compute_levels(deep).depth;
  ASSERT_GT(L, kcla::kMaxPhaseLevels);
  EXPECT_THROW(kcla::build_full_array_schedule(deep, {L}), kcla::InvalidArgument);
  EXPECT_NO_THROW(kcla::build_full_array_schedule(deep, uniform_tops(L, kcla::kMaxPhaseLevels)));
}

}  // namespace

namespace {

TEST(BaselinePredictions, HandComputedFromTheMachine) {
  kcla::GrammarMetrics m;
  m.rows = 100, m.cols = 1000, m.nnz = 20000;
  kcla::SweepMachine machine;
  machine.vendor_call_seconds = 1e-6;
  machine.csr_bytes_per_second = machine.dense_bytes_per_second = 1e9;
  machine.packed_bytes_per_second = 1e8;
  const auto p = kcla::predict_baselines(m, 4, machine);
  const double io = (100 + 1000) * 4;  // x read, y written
  EXPECT_DOUBLE_EQ(p.csr_seconds, 1e-6 + (101 * 4 + 20000 * 8 + io) / 1e9);
  EXPECT_DOUBLE_EQ(p.dense_seconds, 1e-6 + (100 * 1000 * 4 + io) / 1e9);
  EXPECT_DOUBLE_EQ(p.packed_seconds, 1e-6 + (100 * 1000 / 4 + io) / 1e8);
}

}  // namespace
