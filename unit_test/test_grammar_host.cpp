// Grammar host side: the papers' worked example, kcla's RePair on random and edge-case
// matrices, both schedules, structure metrics.
#include <kcla/grammar_metrics.hpp>
#include <kcla/grammar_reference.hpp>
#include <kcla/mm_repair.hpp>
#include <kcla/plink.hpp>
#include <kcla/repair.hpp>
#include <kcla/schedule.hpp>
#include <kcla/semiring.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <tuple>
#include <utility>

#include "grammar_fixtures.hpp"
#include "test_support.hpp"

namespace {

using kcla::Grammar;
using kcla::test::paper_grammar;
using kcla::test::paper_matrix;

// Every rule expands to strictly increasing columns: it lies inside one row.
void expect_rules_inside_rows(const Grammar& g) {
  const auto terminals = g.num_terminals();
  std::vector<std::int32_t> first(g.num_rules()), last(g.num_rules());
  auto lo = [&](kcla::symbol_t s) {
    return s < terminals ? g.terminal_columns[s] : first[s - terminals];
  };
  auto hi = [&](kcla::symbol_t s) {
    return s < terminals ? g.terminal_columns[s] : last[s - terminals];
  };
  for (std::int64_t i = 0; i < g.num_rules(); ++i) {
    ASSERT_LT(hi(g.rule_left[i]), lo(g.rule_right[i])) << "rule " << i << " crosses a row";
    first[i] = lo(g.rule_left[i]);
    last[i] = hi(g.rule_right[i]);
  }
}

template <class Semiring>
void expect_all_references_agree(const Grammar& g, const kcla::CsrMatrix<double>& a,
                                 const std::vector<typename Semiring::value_type>& x, double tol) {
  using T = typename Semiring::value_type;
  std::vector<T> expected(a.num_rows), by_grammar(a.num_rows), by_full(a.num_rows),
      by_layered(a.num_rows);
  kcla::reference::csr_multiply<Semiring>(a, x, expected);
  kcla::reference::grammar_multiply<Semiring>(g, x, by_grammar);
  const auto full = kcla::build_full_array_schedule(g);
  const auto layered = kcla::build_layered_schedule(g);
  ASSERT_NO_THROW(layered.validate());
  kcla::reference::full_array_multiply<Semiring>(full, x, by_full);
  // The first-use slot order permutes each level's slots: the same values.
  std::vector<T> by_first_use(a.num_rows);
  kcla::reference::full_array_multiply<Semiring>(
      kcla::build_full_array_schedule(g, {}, kcla::SlotOrder::first_use), x, by_first_use);
  for (std::int64_t r = 0; r < a.num_rows; ++r) ASSERT_EQ(by_first_use[r], by_full[r]) << r;
  kcla::reference::layered_multiply<Semiring>(layered, x, by_layered);
  for (std::int64_t r = 0; r < a.num_rows; ++r) {
    if constexpr (std::is_same<T, bool>::value) {
      ASSERT_EQ(by_grammar[r], expected[r]) << "row " << r;
      ASSERT_EQ(by_full[r], expected[r]) << "row " << r;
      ASSERT_EQ(by_layered[r], expected[r]) << "row " << r;
    } else {
      const double scale = std::abs(static_cast<double>(expected[r])) + 1;
      if (std::isinf(static_cast<double>(expected[r]))) {
        ASSERT_EQ(by_grammar[r], expected[r]);
        ASSERT_EQ(by_full[r], expected[r]);
        ASSERT_EQ(by_layered[r], expected[r]);
      } else {
        ASSERT_NEAR(by_grammar[r], expected[r], tol * scale) << "row " << r;
        ASSERT_NEAR(by_full[r], expected[r], tol * scale) << "row " << r;
        ASSERT_NEAR(by_layered[r], expected[r], tol * scale) << "row " << r;
      }
    }
  }
}

TEST(PaperExample, HandGrammarHasFiveLevelsAndOnePassThrough) {
  const auto g = paper_grammar();
  ASSERT_NO_THROW(g.validate());
  EXPECT_TRUE(kcla::test::same_matrix(g.decompress(), paper_matrix()));
  const auto levels = kcla::compute_levels(g);
  EXPECT_EQ(levels.depth, 5);
  // Strata of Figure 3.1: {N1,N3,N10} {N2,N4,N11} {N5,N7,N12} {N6,N8} {N9}.
  EXPECT_EQ(levels.rules_per_level, (std::vector<std::int64_t>{0, 3, 3, 3, 2, 1}));
  const auto layered = kcla::build_layered_schedule(g);
  EXPECT_EQ(layered.pass_throughs, 1);
  ASSERT_NO_THROW(layered.validate());
  // The pass-through sits at level 3 and carries N4 (level 2) to N8 (level 4).
  EXPECT_EQ(layered.level_offsets[3] - layered.level_offsets[2], 4);
  const auto pt = layered.level_offsets[3] - 1;  // last node of level 3
  EXPECT_EQ(layered.right[pt], kcla::kNoChild);
  EXPECT_EQ(layered.max_width, 4);
  const auto m = kcla::compute_metrics(g);
  EXPECT_EQ(m.nnz, 49);  // 3 rows x 6 + 3 rows x 7 + 2 rows x 5
  EXPECT_EQ(m.rules, 12);
  EXPECT_EQ(m.sequence, 8);
  EXPECT_EQ(m.pass_throughs, 1);
}

// The cost model's w* and +pt, counted without building the layered schedule, are the
// built schedule's: the paper's grammar and random grammars of every depth.
TEST(LayeredWidth, CountsWhatTheBuiltScheduleHas) {
  auto gen = kcla::test::rng();
  std::vector<kcla::Grammar> grammars{paper_grammar()};
  grammars.push_back(kcla::compress(kcla::test::random_genotypes(gen, 90, 700, 5, 4)));
  grammars.push_back(kcla::compress(kcla::test::random_csr(gen, 200, 300, 0.05, 2)));
  grammars.push_back(kcla::compress(kcla::test::random_csr(gen, 40, 60, 0.0, 0)));
  grammars.push_back(kcla::compress(kcla::test::random_csr(gen, 3, 5000, 0.5, 1)));
  for (const auto& g : grammars) {
    const auto built = kcla::build_layered_schedule(g);
    const auto counted = kcla::layered_width(g, kcla::compute_levels(g));
    EXPECT_EQ(counted.max_width, built.max_width) << g.num_rules() << " rules";
    EXPECT_EQ(counted.pass_throughs, built.pass_throughs) << g.num_rules() << " rules";
  }
  EXPECT_EQ(kcla::layered_width(paper_grammar(), kcla::compute_levels(paper_grammar())).max_width,
            4);
}

TEST(PaperExample, WorkedProductOfFigure42) {
  const auto g = paper_grammar();
  const auto x = kcla::test::paper_x();
  const auto y = kcla::test::paper_y();
  std::vector<double> by_layered(8), by_full(8);
  kcla::reference::layered_multiply<kcla::PlusTimes<double>>(kcla::build_layered_schedule(g), x,
                                                             by_layered);
  kcla::reference::full_array_multiply<kcla::PlusTimes<double>>(kcla::build_full_array_schedule(g),
                                                                x, by_full);
  for (int r = 0; r < 8; ++r) {
    EXPECT_NEAR(by_layered[r], y[r], 1e-12) << r;
    EXPECT_NEAR(by_full[r], y[r], 1e-12) << r;
  }
}

// First use: within a level, slots follow the order in which C (row by row), then the
// levels from the top, first read the rules; the schedule's codes say the same rules.
TEST(FullArraySchedule, FirstUseOrdersEachLevelByItsFirstReader) {
  auto gen = kcla::test::rng();
  const auto g = kcla::compress(kcla::test::random_genotypes(gen, 60, 700, 5, 4));
  const auto by_rule = kcla::build_full_array_schedule(g);
  const auto by_use = kcla::build_full_array_schedule(g, {}, kcla::SlotOrder::first_use);
  ASSERT_EQ(by_use.level_offsets, by_rule.level_offsets);
  ASSERT_EQ(by_use.row_offsets, by_rule.row_offsets);
  // The permutation between the two: slot in `by_use` of each slot of `by_rule`.
  const auto slots = by_rule.num_slots();
  std::vector<std::int64_t> to_use(static_cast<std::size_t>(slots), -1);
  for (std::size_t k = 0; k < by_rule.row_symbols.size(); ++k)
    if (by_rule.row_symbols[k] >= 0) {
      auto& t = to_use[by_rule.row_symbols[k]];
      ASSERT_TRUE(t < 0 || t == by_use.row_symbols[k]);
      t = by_use.row_symbols[k];
    }
  for (int pass = 0; pass < 64; ++pass)  // children through parents, top down
    for (std::int64_t s = 0; s < slots; ++s) {
      if (to_use[s] < 0) continue;
      for (auto [a, b] : {std::pair{by_rule.left[s], by_use.left[to_use[s]]},
                          std::pair{by_rule.right[s], by_use.right[to_use[s]]}}) {
        if (a >= 0) {
          to_use[a] = b;
        } else {
          ASSERT_EQ(a, b);
        }
      }
    }
  std::vector<char> seen(static_cast<std::size_t>(slots), 0);
  for (std::int64_t s = 0; s < slots; ++s) {
    ASSERT_GE(to_use[s], 0) << "slot " << s << " unread";
    seen[to_use[s]] = 1;
    const auto level =
        std::upper_bound(by_rule.level_offsets.begin(), by_rule.level_offsets.end(), s) -
        by_rule.level_offsets.begin();
    EXPECT_GE(to_use[s], by_rule.level_offsets[level - 1]);
    EXPECT_LT(to_use[s], by_rule.level_offsets[level]);
  }
  EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), slots);
  // The top level's slots appear in C in ascending order of first occurrence.
  const auto L = by_use.depth;
  std::int64_t next = by_use.level_offsets[L - 1];
  std::vector<char> met(static_cast<std::size_t>(slots), 0);
  for (auto code : by_use.row_symbols)
    if (code >= by_use.level_offsets[L - 1] && !met[code]) {
      met[code] = 1;
      EXPECT_EQ(code, next++);
    }
}

TEST(Repair, PaperMatrixRoundTripsAndCompresses) {
  const auto a = paper_matrix();
  const auto g = kcla::compress(a);
  ASSERT_NO_THROW(g.validate());
  EXPECT_TRUE(kcla::test::same_matrix(g.decompress(), a));
  expect_rules_inside_rows(g);
  // Three distinct rows repeated: C must be one symbol per row.
  EXPECT_EQ(g.sequence.size(), 8u);
  expect_all_references_agree<kcla::PlusTimes<double>>(g, a, kcla::test::paper_x(), 1e-12);
}

struct RandomCase {
  std::int64_t rows, cols;
  double density;
  int distinct_values;
  bool duplicate_rows;
};

void check_random_case(const RandomCase& c, std::uint64_t salt) {
  auto gen = kcla::test::rng(salt);
  auto a = kcla::test::random_csr(gen, c.rows, c.cols, c.density, c.distinct_values);
  if (c.duplicate_rows && a.num_rows > 2) {
    // Rebuild with every third row a copy of an earlier one (the repetition RePair finds).
    kcla::CsrMatrix<double> d;
    d.num_rows = a.num_rows;
    d.num_cols = a.num_cols;
    std::uniform_int_distribution<std::int64_t> pick(0, a.num_rows - 1);
    for (std::int64_t r = 0; r < a.num_rows; ++r) {
      const std::int64_t src = (r % 3 == 2) ? pick(gen) % (r + 1) : r;
      for (auto k = a.row_offsets[src]; k < a.row_offsets[src + 1]; ++k) {
        d.column_indices.push_back(a.column_indices[k]);
        d.values.push_back(a.values[k]);
      }
      d.row_offsets.push_back(d.nnz());
    }
    a = std::move(d);
  }
  kcla::RepairStats stats;
  const auto g = kcla::compress(a, {}, &stats);
  ASSERT_NO_THROW(g.validate());
  ASSERT_TRUE(kcla::test::same_matrix(g.decompress(), a))
      << c.rows << "x" << c.cols << " density " << c.density;
  expect_rules_inside_rows(g);
  ASSERT_NO_THROW(kcla::build_layered_schedule(g).validate());
  const auto x = kcla::test::random_vector(gen, c.cols);
  expect_all_references_agree<kcla::PlusTimes<double>>(g, a, x, 1e-12);
  std::vector<bool> xb(c.cols);
  for (std::int64_t j = 0; j < c.cols; ++j) xb[j] = x[j] > 0.3;
  std::vector<bool> xb_copy(xb.begin(), xb.end());
  expect_all_references_agree<kcla::Boolean>(g, a, xb_copy, 0);
  std::vector<double> xd(c.cols);
  for (std::int64_t j = 0; j < c.cols; ++j) xd[j] = x[j] > 0.5 ? INFINITY : x[j] * 10;
  expect_all_references_agree<kcla::MinPlus<double>>(g, a, xd, 0);
}

TEST(Repair, RandomMatricesDecompressExactly) {
  const RandomCase cases[] = {
      {300, 400, 1e-4, 0, false}, {300, 400, 1e-3, 3, false}, {200, 300, 0.01, 3, true},
      {100, 200, 0.1, 2, true},   {60, 80, 0.5, 3, true},     {50, 60, 0.5, 0, false},
      {1000, 1, 0.5, 2, true},    {1, 1, 1.0, 1, false},      {40, 50, 0.0, 0, false},
      {30, 70, 1.0, 2, true},
  };
  std::uint64_t salt = 0;
  for (const auto& c : cases) check_random_case(c, ++salt);
}

TEST(Repair, WideMatrixWithManyDistinctValues) {
  // 10 M columns x 1000 values: value * cols + column overflows 32 bits.
  check_random_case({20, 10'000'000, 2e-5, 1000, true}, 99);
}

TEST(Repair, EmptyAndZeroRowMatrices) {
  kcla::CsrMatrix<double> empty;
  empty.num_rows = 0;
  empty.num_cols = 5;
  auto g = kcla::compress(empty);
  EXPECT_EQ(g.num_rows, 0);
  EXPECT_TRUE(kcla::test::same_matrix(g.decompress(), empty));
  kcla::CsrMatrix<double> zero_rows;
  zero_rows.num_rows = 4;
  zero_rows.num_cols = 3;
  zero_rows.row_offsets = {0, 0, 0, 0, 0};
  g = kcla::compress(zero_rows);
  EXPECT_TRUE(kcla::test::same_matrix(g.decompress(), zero_rows));
  std::vector<double> y(4, 7.0);
  kcla::reference::grammar_multiply<kcla::MinPlus<double>>(g, std::vector<double>{1, 2, 3}, y);
  for (double v : y) EXPECT_TRUE(std::isinf(v));
}

TEST(Repair, DeterministicAcrossThreadCounts) {
  auto gen = kcla::test::rng();
  const auto a = kcla::test::random_csr(gen, 400, 300, 0.05, 3);
  kcla::RepairOptions one, two;
  one.block_rows = two.block_rows = 64;
  one.threads = 1;
  two.threads = 2;
  const auto g1 = kcla::compress(a, one), g2 = kcla::compress(a, two), g3 = kcla::compress(a, two);
  EXPECT_EQ(g1.rule_left, g2.rule_left);
  EXPECT_EQ(g1.rule_right, g2.rule_right);
  EXPECT_EQ(g1.sequence, g2.sequence);
  EXPECT_EQ(g2.sequence, g3.sequence);
  EXPECT_TRUE(kcla::test::same_matrix(g1.decompress(), a));
}

// A haplotype-like panel: every row a mosaic of chunks copied from a few founder rows, with
// rare mutations. Long shared segments make RePair run many passes of high and low
// counts, merge hole runs and outgrow its first occurrence store.
kcla::CsrMatrix<double> mosaic_panel(std::mt19937_64& gen, std::int64_t rows, std::int64_t cols,
                                     int founders) {
  const auto base = kcla::test::random_csr(gen, founders, cols, 0.3, 2);
  std::vector<std::vector<double>> dense(founders, std::vector<double>(cols, 0.0));
  for (int f = 0; f < founders; ++f)
    for (auto k = base.row_offsets[f]; k < base.row_offsets[f + 1]; ++k)
      dense[f][base.column_indices[k]] = base.values[k];
  std::uniform_int_distribution<int> pick(0, founders - 1);
  std::uniform_int_distribution<std::int64_t> chunk(1, std::max<std::int64_t>(1, cols / 4));
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  kcla::CsrMatrix<double> a;
  a.num_rows = rows;
  a.num_cols = cols;
  a.row_offsets.assign(1, 0);
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t c = 0; c < cols;) {
      const int f = pick(gen);
      const std::int64_t end = std::min(cols, c + chunk(gen));
      for (; c < end; ++c) {
        double v = dense[f][c];
        if (unit(gen) < 0.002) v = v == 0 ? 1.0 : 0.0;  // mutation
        if (v != 0) {
          a.column_indices.push_back(static_cast<std::int32_t>(c));
          a.values.push_back(v);
        }
      }
    }
    a.row_offsets.push_back(a.nnz());
  }
  return a;
}

TEST(Repair, MosaicPanelsRoundTripAndLeaveNoRepeatedPair) {
  auto gen = kcla::test::rng();
  for (const auto& [rows, cols, founders] :
       {std::tuple{300, 400, 6}, std::tuple{64, 3000, 3}, std::tuple{500, 60, 12}}) {
    const auto a = mosaic_panel(gen, rows, cols, founders);
    kcla::RepairStats stats;
    const auto g = kcla::compress(a, {}, &stats);
    ASSERT_NO_THROW(g.validate());
    ASSERT_TRUE(kcla::test::same_matrix(g.decompress(), a)) << rows << "x" << cols;
    expect_rules_inside_rows(g);
    EXPECT_LT(g.sequence.size() + 2 * g.rule_left.size(), a.column_indices.size() / 2)
        << "shared segments must compress";
    EXPECT_GT(stats.working_bytes, 0);
    // RePair stops when no pair occurs twice: within rows, every adjacent pair of the
    // final sequence is distinct.
    std::set<std::pair<kcla::symbol_t, kcla::symbol_t>> seen;
    for (std::int64_t r = 0; r < g.num_rows; ++r)
      for (auto k = g.row_offsets[r]; k + 1 < g.row_offsets[r + 1]; ++k)
        EXPECT_TRUE(seen.insert({g.sequence[k], g.sequence[k + 1]}).second)
            << "pair (" << g.sequence[k] << ", " << g.sequence[k + 1] << ") left twice";
  }
}

TEST(Repair, MosaicBlocksAreIdenticalForAnyThreadCount) {
  auto gen = kcla::test::rng();
  const auto a = mosaic_panel(gen, 400, 500, 8);
  kcla::RepairOptions one, two;
  one.block_rows = two.block_rows = 70;  // 6 blocks, the last one short
  one.threads = 1;
  two.threads = 2;
  kcla::RepairStats s1, s2;
  const auto g1 = kcla::compress(a, one, &s1), g2 = kcla::compress(a, two, &s2);
  EXPECT_EQ(s1.blocks, 6);
  EXPECT_EQ(g1.rule_left, g2.rule_left);
  EXPECT_EQ(g1.rule_right, g2.rule_right);
  EXPECT_EQ(g1.sequence, g2.sequence);
  EXPECT_EQ(g1.row_offsets, g2.row_offsets);
  EXPECT_EQ(s1.rules_before_merge, s2.rules_before_merge);
  ASSERT_NO_THROW(g2.validate());
  EXPECT_TRUE(kcla::test::same_matrix(g2.decompress(), a));
}

TEST(Repair, RowBlocksShareIdenticalRules) {
  // The same 10 rows repeated 8 times, split into blocks of 10 rows: every block finds
  // the same rules, and the merge keeps one copy.
  auto gen = kcla::test::rng();
  const auto base = kcla::test::random_csr(gen, 10, 200, 0.2, 2);
  kcla::CsrMatrix<double> a;
  a.num_rows = 80;
  a.num_cols = 200;
  for (int rep = 0; rep < 8; ++rep)
    for (int r = 0; r < 10; ++r) {
      for (auto k = base.row_offsets[r]; k < base.row_offsets[r + 1]; ++k) {
        a.column_indices.push_back(base.column_indices[k]);
        a.values.push_back(base.values[k]);
      }
      a.row_offsets.push_back(a.nnz());
    }
  kcla::RepairOptions blocks;
  blocks.block_rows = 20;
  blocks.threads = 2;
  kcla::RepairStats stats;
  const auto g = kcla::compress(a, blocks, &stats);
  EXPECT_EQ(stats.blocks, 4);
  EXPECT_LT(g.num_rules(), stats.rules_before_merge);
  EXPECT_EQ(g.num_rules() * 4, stats.rules_before_merge);
  EXPECT_TRUE(kcla::test::same_matrix(g.decompress(), a));
}

TEST(Repair, ProgressIsReported) {
  auto gen = kcla::test::rng();
  const auto a = kcla::test::random_csr(gen, 2000, 500, 0.2, 2);
  kcla::RepairOptions options;
  options.block_rows = 500;
  options.threads = 2;
  std::int64_t calls = 0, last_blocks_done = 0;
  options.progress = [&](const kcla::RepairProgress& p) {
    ++calls;
    EXPECT_GE(p.blocks_done, last_blocks_done);
    last_blocks_done = p.blocks_done;
    EXPECT_EQ(p.blocks_total, 4);
  };
  kcla::compress(a, options);
  EXPECT_GE(calls, 4);
  EXPECT_EQ(last_blocks_done, 4);
}

TEST(Repair, RejectsRowsWithRepeatedColumns) {
  kcla::CsrMatrix<double> a;
  a.num_rows = 1;
  a.num_cols = 3;
  a.row_offsets = {0, 2};
  a.column_indices = {1, 1};
  a.values = {2, 2};
  EXPECT_THROW(kcla::compress(a), kcla::InvalidArgument);
}

TEST(GrammarValidate, RejectsForwardReferencesAndBadIndices) {
  auto g = paper_grammar();
  g.rule_left[0] = static_cast<kcla::symbol_t>(g.num_terminals() + 5);  // N1 -> N6: cycle
  EXPECT_THROW(g.validate(), kcla::InvalidArgument);
  g = paper_grammar();
  g.terminal_columns[0] = 7;
  EXPECT_THROW(g.validate(), kcla::InvalidArgument);
  g = paper_grammar();
  g.sequence.back() = static_cast<kcla::symbol_t>(g.num_symbols());
  EXPECT_THROW(g.validate(), kcla::InvalidArgument);
  g = paper_grammar();
  g.row_offsets.pop_back();
  EXPECT_THROW(g.validate(), kcla::InvalidArgument);
}

}  // namespace

// --- the public mm-repair tool's grammar and real data ---------------------------------

namespace {

TEST(PaperExample, MmRepairGrammarLayersAndMultiplies) {
  // The public tool's grammar differs from (2.3): depth 5, three level-skipping
  // nonterminal edges; completion must still make it properly layered.
  const auto g = kcla::read_mm_repair(kcla::test::fixture_dir() + "/mm-repair-example/M.csv", 7);
  EXPECT_EQ(kcla::compute_levels(g).depth, 5);
  const auto layered = kcla::build_layered_schedule(g);
  ASSERT_NO_THROW(layered.validate());
  EXPECT_GE(layered.pass_throughs, 1);
  std::vector<double> by_layered(8), by_full(8);
  kcla::reference::layered_multiply<kcla::PlusTimes<double>>(layered, kcla::test::paper_x(),
                                                             by_layered);
  kcla::reference::full_array_multiply<kcla::PlusTimes<double>>(kcla::build_full_array_schedule(g),
                                                                kcla::test::paper_x(), by_full);
  const auto y = kcla::test::paper_y();
  for (int r = 0; r < 8; ++r) {
    EXPECT_NEAR(by_layered[r], y[r], 1e-12) << r;
    EXPECT_NEAR(by_full[r], y[r], 1e-12) << r;
  }
}

void real_round_trip(const std::string& name) {
  const auto path = kcla::test::data_file(name + ".bed");
  if (path.empty()) GTEST_SKIP() << name << " not fetched (scripts/data/fetch.sh small)";
  const auto genotypes = kcla::read_plink(path).matrix;
  const auto g = kcla::compress(genotypes);
  ASSERT_NO_THROW(g.validate());
  EXPECT_TRUE(kcla::test::same_matrix(g.decompress(), genotypes));
  ASSERT_NO_THROW(kcla::build_layered_schedule(g).validate());
  // Fewer stored symbols than nonzeros: the panel is repetitive.
  EXPECT_LT(2 * g.num_rules() + static_cast<std::int64_t>(g.sequence.size()), genotypes.nnz());
  auto gen = kcla::test::rng();
  const auto x = kcla::test::random_vector(gen, genotypes.num_cols);
  std::vector<double> expected(genotypes.num_rows), got(genotypes.num_rows);
  kcla::reference::csr_multiply<kcla::PlusTimes<double>>(genotypes, x, expected);
  kcla::reference::full_array_multiply<kcla::PlusTimes<double>>(kcla::build_full_array_schedule(g),
                                                                x, got);
  EXPECT_LE(kcla::test::relative_error(got, expected, expected.size()), 1e-12);
}

TEST(RealData, EurSubsetRoundTrip) {
  real_round_trip("EUR_subset");
}
TEST(RealData, MouseHs1940RoundTrip) {
  real_round_trip("mouse_hs1940");
}

}  // namespace
