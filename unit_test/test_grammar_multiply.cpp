// kcla::multiply on every enabled back end (Cuda, OpenMP, Serial) against the serial
// references, the vendor CSR product and, across semirings, exactly.
#include <kcla/csr_spmv.hpp>
#include <kcla/grammar_metrics.hpp>
#include <kcla/grammar_multiply.hpp>
#include <kcla/grammar_reference.hpp>
#include <kcla/level_phases.hpp>
#include <kcla/repair.hpp>
#include <kcla/schedule.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "backends.hpp"
#include "grammar_fixtures.hpp"
#include "sweep_configs.hpp"
#include "test_support.hpp"

namespace {

template <class T, class memory, class H>
Kokkos::View<T**, Kokkos::LayoutRight, memory> to_device_2d(const std::vector<H>& host,
                                                            std::int64_t n, std::int64_t b) {
  Kokkos::View<T**, Kokkos::LayoutRight, memory> d("x", n, b);
  auto h = Kokkos::create_mirror_view(d);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < b; ++j) h(i, j) = static_cast<T>(host[i * b + j]);
  Kokkos::deep_copy(d, h);
  return d;
}

// Runs every schedule x launch for B vectors and compares each column with the CSR
// reference in the semiring. tolerance 0 means bit-for-bit.
template <class Semiring, class Scalar, class exec>
void check_semiring(const kcla::Grammar& g, const kcla::CsrMatrix<double>& a, std::int64_t B,
                    double tolerance, std::mt19937_64& gen) {
  using T = typename Semiring::value_type;
  using memory = typename exec::memory_space;
  // std::vector<bool> packs bits; hold booleans as char on the host.
  using H = std::conditional_t<std::is_same<T, bool>::value, char, T>;
  const std::int64_t rows = a.num_rows, cols = a.num_cols;
  std::vector<H> x(cols * B);
  std::uniform_real_distribution<double> u(0, 1);
  for (auto& v : x) {
    const double r = u(gen);
    if constexpr (std::is_same<T, bool>::value)
      v = r < 0.3;
    else if constexpr (std::is_same<Semiring, kcla::MinPlus<T>>::value)
      v = r < 0.2 ? static_cast<T>(INFINITY) : static_cast<T>(r * 10);
    else
      v = static_cast<T>(2 * r - 1);
  }
  // Reference, column by column.
  // Reference, column by column, and the magnitude sum |a_ij| |x_j| that bounds the
  // rounding error of any summation order.
  std::vector<H> expected(rows * B);
  std::vector<double> magnitude(rows * B);
  auto abs_a = a;
  for (auto& v : abs_a.values) v = std::abs(v);
  for (std::int64_t b = 0; b < B; ++b) {
    std::vector<H> xb(cols), yb(rows);
    std::vector<double> xabs(cols), yabs(rows);
    for (std::int64_t j = 0; j < cols; ++j) {
      xb[j] = x[j * B + b];
      xabs[j] = std::abs(static_cast<double>(xb[j]));
    }
    kcla::reference::csr_multiply<Semiring>(a, xb, yb);
    kcla::reference::csr_multiply<kcla::PlusTimes<double>>(abs_a, xabs, yabs);
    for (std::int64_t r = 0; r < rows; ++r) {
      expected[r * B + b] = yb[r];
      magnitude[r * B + b] = yabs[r];
    }
  }
  const auto x_dev = to_device_2d<T, memory>(x, cols, B);
  for (const auto& c : kcla::test::kSweepConfigs) {
    if (!kcla::test::runs_on<exec>(c)) continue;
    kcla::GrammarMatrix<Scalar, memory> A(g, kcla::test::sweep_options(c));
    ASSERT_EQ(A.schedule(), c.schedule);
    if (c.schedule == kcla::SweepSchedule::full_array) {
      ASSERT_EQ(A.depth(), kcla::test::expected_phases(c, A.metrics().depth));
    }
    Kokkos::View<T**, Kokkos::LayoutRight, memory> y("y", rows, B);
    for (int repeat = 0; repeat < 2; ++repeat) {  // the second run reuses the plan
      Kokkos::deep_copy(y, static_cast<T>(7));    // poison
      kcla::multiply<Semiring>(exec(), A, x_dev, y, c.launch);
      exec().fence();
      auto y_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y);
      for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t b = 0; b < B; ++b) {
          const T got = y_host(r, b), want = static_cast<T>(expected[r * B + b]);
          if (tolerance == 0) {
            ASSERT_EQ(got, want) << Semiring::name() << " " << kcla::to_string(c.schedule) << "/"
                                 << kcla::to_string(c.launch) << " phases of " << c.phase_levels
                                 << " row " << r << " vector " << b;
          } else {
            ASSERT_NEAR(static_cast<double>(got), static_cast<double>(want),
                        tolerance * magnitude[r * B + b])
                << kcla::to_string(c.schedule) << "/" << kcla::to_string(c.launch) << " phases of "
                << c.phase_levels << " row " << r << " vector " << b;
          }
        }
    }
  }
}

template <class exec>
void check_matrix(const kcla::CsrMatrix<double>& a, std::uint64_t salt,
                  std::initializer_list<std::int64_t> batches = {1, 3, 64}) {
  auto gen = kcla::test::rng(salt);
  const auto g = kcla::compress(a);
  for (std::int64_t B : batches) {
    check_semiring<kcla::PlusTimes<double>, double, exec>(g, a, B, 1e-12, gen);
    check_semiring<kcla::PlusTimes<float>, float, exec>(g, a, B, 1e-5, gen);
    check_semiring<kcla::Boolean, float, exec>(g, a, B, 0, gen);
    check_semiring<kcla::MinPlus<float>, float, exec>(g, a, B, 0, gen);
  }
}

template <class ExecutionSpace>
class GrammarMultiply : public kcla::test::OnEveryBackend<ExecutionSpace> {};
TYPED_TEST_SUITE(GrammarMultiply, kcla::test::Backends, kcla::test::BackendName);

TYPED_TEST(GrammarMultiply, PaperExample) {
  using exec = TypeParam;
  using memory = typename exec::memory_space;
  const auto g = kcla::test::paper_grammar();
  const auto a = kcla::test::paper_matrix();
  const auto x = kcla::test::paper_x(), y = kcla::test::paper_y();
  for (const auto& c : kcla::test::kSweepConfigs) {
    if (!kcla::test::runs_on<exec>(c)) continue;
    kcla::GrammarMatrix<double, memory> A(g, kcla::test::sweep_options(c));
    Kokkos::View<double*, memory> x_dev("x", 7), y_dev("y", 8);
    auto xh = Kokkos::create_mirror_view(x_dev);
    for (int j = 0; j < 7; ++j) xh(j) = x[j];
    Kokkos::deep_copy(x_dev, xh);
    kcla::multiply(exec(), A, x_dev, y_dev, c.launch);
    auto yh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y_dev);
    for (int r = 0; r < 8; ++r) EXPECT_NEAR(yh(r), y[r], 1e-12) << r;
  }
  check_matrix<exec>(a, 1);
}

TYPED_TEST(GrammarMultiply, GenotypeLikeMatrices) {
  using exec = TypeParam;
  auto gen = kcla::test::rng();
  check_matrix<exec>(kcla::test::random_genotypes(gen, 120, 900, 6, 5), 2);
  check_matrix<exec>(kcla::test::random_genotypes(gen, 7, 3000, 3, 2), 3);
}

TYPED_TEST(GrammarMultiply, RandomSparseAndEdgeCases) {
  using exec = TypeParam;
  auto gen = kcla::test::rng();
  check_matrix<exec>(kcla::test::random_csr(gen, 300, 200, 0.02, 3), 4);
  check_matrix<exec>(kcla::test::random_csr(gen, 50, 1, 0.7, 2), 5);    // one column
  check_matrix<exec>(kcla::test::random_csr(gen, 40, 60, 0.0, 0), 6);   // all zero
  check_matrix<exec>(kcla::test::random_csr(gen, 1, 1, 1.0, 1), 7);     // 1 x 1
  check_matrix<exec>(kcla::test::random_csr(gen, 30, 500, 0.6, 0), 8);  // dense, no repetition
  // Rows longer than a row-phase chunk (16384 symbols on the host, 2048 / B on a GPU): a
  // row's chunks meet through the semiring's atomic combine (host) or its last chunk (GPU).
  check_matrix<exec>(kcla::test::random_csr(gen, 3, 120000, 0.3, 0), 9);
  // Long rows between rows without entries (first and last row empty too): chunks that
  // start and end inside rows, and the empty rows written by the chunks.
  auto gapped = kcla::test::random_csr(gen, 41, 6000, 0.4, 2);
  kcla::CsrMatrix<double> holes;
  holes.num_rows = gapped.num_rows;
  holes.num_cols = gapped.num_cols;
  for (std::int64_t r = 0; r < gapped.num_rows; ++r) {
    if (r % 2 == 1 && r % 7 != 3)
      for (auto k = gapped.row_offsets[r]; k < gapped.row_offsets[r + 1]; ++k) {
        holes.column_indices.push_back(gapped.column_indices[k]);
        holes.values.push_back(gapped.values[k]);
      }
    holes.row_offsets.push_back(static_cast<std::int64_t>(holes.column_indices.size()));
  }
  check_matrix<exec>(holes, 12, {1, 64});
}

TYPED_TEST(GrammarMultiply, ManyShortRowsAndWideBatches) {
  using exec = TypeParam;
  // Rows x B x 8 bytes over 1 MiB at B = 70: on the host, the full array's row phase then
  // reduces row by row (chunks of C) instead of by occurrence into per-thread copies of y;
  // B = 70 also runs the host kernels' 64-value blocks twice.
  auto gen = kcla::test::rng();
  check_matrix<exec>(kcla::test::random_csr(gen, 2000, 40, 0.5, 2), 10, {3, 70});
  check_matrix<exec>(kcla::test::random_genotypes(gen, 120, 900, 6, 5), 11, {70});
}

TYPED_TEST(GrammarMultiply, MatchesVendorCsrProduct) {
  using exec = TypeParam;
  using memory = typename exec::memory_space;
  // plus-times against KokkosSparse::spmv (host) / cuSPARSE (CUDA) on the decompressed CSR.
  auto gen = kcla::test::rng();
  const auto a = kcla::test::random_genotypes(gen, 200, 2000, 8, 6);
  const auto g = kcla::compress(a);
  const auto csr = kcla::to_device_csr<float, memory>(g.decompress());
  const auto xh = kcla::test::random_vector(gen, a.num_cols);
  Kokkos::View<float*, memory> x("x", a.num_cols), y_vendor("yv", a.num_rows), y("y", a.num_rows);
  auto xm = Kokkos::create_mirror_view(x);
  for (std::int64_t j = 0; j < a.num_cols; ++j) xm(j) = static_cast<float>(xh[j]);
  Kokkos::deep_copy(x, xm);
  kcla::csr_spmv(exec(), csr, x, y_vendor);
  kcla::GrammarMatrix<float, memory> A(g);
  kcla::multiply(exec(), A, x, y);
  exec().fence();
  auto yv = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y_vendor);
  auto yk = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y);
  EXPECT_LE(kcla::test::relative_error(yk.data(), yv.data(), a.num_rows), 1e-5);
}

TYPED_TEST(GrammarMultiply, RejectsMismatchedShapes) {
  using exec = TypeParam;
  using memory = typename exec::memory_space;
  const auto g = kcla::test::paper_grammar();
  kcla::GrammarMatrix<float, memory> A(g);
  Kokkos::View<float*, memory> x("x", 6), y("y", 8);
  EXPECT_THROW(kcla::multiply(exec(), A, x, y), kcla::InvalidArgument);
  Kokkos::View<float**, Kokkos::LayoutRight, memory> X("X", 7, 2), Y("Y", 8, 3);
  EXPECT_THROW(kcla::multiply(exec(), A, X, Y), kcla::InvalidArgument);
}

// One matrix, one plan, launch forms and batch widths alternating: the dataflow kernel's
// tags and the fused kernel's level counters must stay consistent with each other across
// products, plan rebuilds (another B) and workspaces left by a wider batch.
TYPED_TEST(GrammarMultiply, LaunchFormsShareOnePlan) {
  using exec = TypeParam;
  using memory = typename exec::memory_space;
  auto gen = kcla::test::rng();
  const auto a = kcla::test::random_genotypes(gen, 90, 1500, 6, 5);
  const auto g = kcla::compress(a);
  kcla::GrammarMatrixOptions options;
  options.schedule = kcla::SweepSchedule::full_array;
  kcla::GrammarMatrix<float, memory> A(g, options);
  using kcla::SweepLaunch;
  const std::pair<SweepLaunch, std::int64_t> steps[] = {
      {SweepLaunch::dataflow, 1}, {SweepLaunch::dataflow, 1}, {SweepLaunch::fused, 1},
      {SweepLaunch::dataflow, 1}, {SweepLaunch::dataflow, 3}, {SweepLaunch::per_level, 3},
      {SweepLaunch::dataflow, 1}, {SweepLaunch::graph, 1},    {SweepLaunch::dataflow, 2},
      {SweepLaunch::fused, 2},    {SweepLaunch::dataflow, 2}};
  int step = 0;
  for (const auto& [launch, B] : steps) {
    std::vector<double> x(a.num_cols * B);
    for (auto& v : x) v = std::uniform_real_distribution<double>(-1, 1)(gen);
    std::vector<double> want(a.num_rows * B), xb(a.num_cols), yb(a.num_rows);
    for (std::int64_t b = 0; b < B; ++b) {
      for (std::int64_t j = 0; j < a.num_cols; ++j) xb[j] = x[j * B + b];
      kcla::reference::csr_multiply<kcla::PlusTimes<double>>(a, xb, yb);
      for (std::int64_t r = 0; r < a.num_rows; ++r) want[r * B + b] = yb[r];
    }
    const auto x_dev = to_device_2d<float, memory>(x, a.num_cols, B);
    Kokkos::View<float**, Kokkos::LayoutRight, memory> y("y", a.num_rows, B);
    Kokkos::deep_copy(y, 7.0f);
    kcla::multiply(exec(), A, x_dev, y, launch);
    exec().fence();
    auto yh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y);
    for (std::int64_t r = 0; r < a.num_rows; ++r)
      for (std::int64_t b = 0; b < B; ++b)
        ASSERT_NEAR(yh(r, b), want[r * B + b], 1e-4 * (1 + std::abs(want[r * B + b])))
            << "step " << step << " (" << kcla::to_string(launch) << ", B = " << B << ") row " << r;
    ++step;
  }
}

TYPED_TEST(GrammarMultiply, DataflowNeedsTheFullArray) {
  using exec = TypeParam;
  using memory = typename exec::memory_space;
  kcla::GrammarMatrixOptions options;
  options.schedule = kcla::SweepSchedule::layered;
  kcla::GrammarMatrix<float, memory> A(kcla::test::paper_grammar(), options);
  Kokkos::View<float*, memory> x("x", 7), y("y", 8);
  try {
    kcla::multiply(exec(), A, x, y, kcla::SweepLaunch::dataflow);
    FAIL() << "the layered schedule ran a dataflow launch";
  } catch (const kcla::InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("full-array"), std::string::npos) << e.what();
  }
  options.tuning.launch = kcla::SweepLaunch::dataflow;
  EXPECT_THROW((kcla::GrammarMatrix<float, memory>(kcla::test::paper_grammar(), options)),
               kcla::InvalidArgument);
  // Asked for dataflow with the schedule left to the model: a layered choice runs fused.
  options.schedule = kcla::SweepSchedule::automatic;
  options.workspace_budget_bytes = 1;  // fits neither: the smaller workspace wins
  kcla::GrammarMatrix<float, memory> chosen(kcla::test::paper_grammar(), options);
  if (chosen.schedule() == kcla::SweepSchedule::layered) {
    EXPECT_EQ(chosen.prediction().launch, kcla::SweepLaunch::fused);
  }
  EXPECT_NO_THROW(kcla::multiply(exec(), chosen, x, y));
}

TYPED_TEST(GrammarMultiply, CostModelChoosesAndReports) {
  using memory = typename TypeParam::memory_space;
  auto gen = kcla::test::rng();
  const auto g = kcla::compress(kcla::test::random_genotypes(gen, 100, 1000, 5, 4));
  kcla::GrammarMatrix<float, memory> automatic(g);
  EXPECT_NE(automatic.schedule(), kcla::SweepSchedule::automatic);
  EXPECT_GT(automatic.prediction().bytes_moved, 0);
  EXPECT_GT(automatic.static_bytes(), 0);
  // A budget smaller than the full array's workspace but larger than the layered one.
  const auto& m = automatic.metrics();
  kcla::GrammarMatrixOptions tight;
  tight.expected_vectors = 16;
  tight.tuning.max_phase_levels = 1;  // so the full array keeps a slot for every rule
  tight.workspace_budget_bytes = 2 * m.max_width * 16 * 4;
  if (2 * m.max_width < m.rules) {
    kcla::GrammarMatrix<float, memory> constrained(g, tight);
    EXPECT_EQ(constrained.schedule(), kcla::SweepSchedule::layered);
  }
}

// The cost model's machine follows the matrix's memory space, not the build: a host
// matrix in a CUDA build gets host constants and the host's launch form.
// Left to the model, a GPU's launch is the faster prediction of its default and dataflow;
// long rows (one team per row in a dataflow kernel) and 8-byte values keep the default.
TEST(GrammarCostModel, AutomaticLaunchTakesTheFasterPrediction) {
  auto gen = kcla::test::rng();
  const auto g = kcla::compress(kcla::test::random_genotypes(gen, 200, 3000, 8, 6));
  auto m = kcla::compute_metrics(g);
  const auto gpu = kcla::SweepMachine::for_gpu();
  ASSERT_TRUE(gpu.dataflow_candidate);
  ASSERT_FALSE(kcla::SweepMachine::for_host().dataflow_candidate);
  const auto full = kcla::SweepSchedule::full_array;
  auto check = [&](const kcla::GrammarMetrics& metrics, int value_bytes) {
    const auto chosen =
        kcla::predict_sweep(metrics, full, kcla::SweepLaunch::automatic, 1, value_bytes, gpu);
    const auto graph = kcla::predict_sweep(metrics, full, gpu.default_launch, 1, value_bytes, gpu);
    const auto dataflow =
        kcla::predict_sweep(metrics, full, kcla::SweepLaunch::dataflow, 1, value_bytes, gpu);
    if (value_bytes > 4) {
      EXPECT_EQ(chosen.launch, gpu.default_launch);
    } else {
      EXPECT_DOUBLE_EQ(chosen.seconds, std::min(graph.seconds, dataflow.seconds));
      EXPECT_EQ(chosen.launch, dataflow.seconds < graph.seconds ? kcla::SweepLaunch::dataflow
                                                                : gpu.default_launch);
    }
    return chosen.launch;
  };
  EXPECT_EQ(check(m, 4), kcla::SweepLaunch::dataflow);  // 29 % of the model's levels saved
  check(m, 8);
  m.rows = 1;  // every symbol of C in one row: 2,500+ steps of one team
  m.sequence = std::max<std::int64_t>(m.sequence, 1 << 20);
  EXPECT_EQ(check(m, 4), gpu.default_launch);
  // Not a candidate: the default.
  auto no_dataflow = gpu;
  no_dataflow.dataflow_candidate = false;
  EXPECT_EQ(kcla::predict_sweep(kcla::compute_metrics(g), full, kcla::SweepLaunch::automatic, 1, 4,
                                no_dataflow)
                .launch,
            gpu.default_launch);
}

// Scattered reads are charged whole 32-byte sectors: a slot read per symbol of C and two
// per rule (per rule or pass-through, layered), 8-byte slots under dataflow, and the
// planned phases count one per walked and per materialized rule.
TEST(GrammarCostModel, GathersCostWholeSectors) {
  auto gen = kcla::test::rng();
  const auto g = kcla::compress(kcla::test::random_genotypes(gen, 120, 1500, 8, 6));
  const auto m = kcla::compute_metrics(g);
  auto without = kcla::SweepMachine::for_gpu();
  without.gather_sector_seconds = 0;
  auto with = without;
  with.gather_sector_seconds = 1e-3;
  ASSERT_EQ(kcla::SweepMachine::for_host().gather_sector_seconds, 0);
  const double sequence = static_cast<double>(m.sequence), rules = static_cast<double>(m.rules);
  auto added = [&](kcla::SweepSchedule schedule, kcla::SweepLaunch launch, std::int64_t B,
                   int value_bytes) {
    return kcla::predict_sweep(m, schedule, launch, B, value_bytes, with).seconds -
           kcla::predict_sweep(m, schedule, launch, B, value_bytes, without).seconds;
  };
  const auto full = kcla::SweepSchedule::full_array, layered = kcla::SweepSchedule::layered;
  const auto graph = kcla::SweepLaunch::graph, dataflow = kcla::SweepLaunch::dataflow;
  const double one = (2 * rules + sequence) * 1e-3;
  EXPECT_NEAR(added(full, graph, 1, 4), one, 1e-9 * one);
  EXPECT_NEAR(added(full, graph, 8, 4), one, 1e-9 * one);        // 32 bytes: one sector
  EXPECT_NEAR(added(full, graph, 9, 4), 2 * one, 1e-9 * one);    // 36 bytes: two
  EXPECT_NEAR(added(full, graph, 64, 8), 16 * one, 1e-9 * one);  // 512 bytes
  EXPECT_NEAR(added(full, dataflow, 4, 4), one, 1e-9 * one);     // 4 tagged values: 32 bytes
  EXPECT_NEAR(added(full, dataflow, 5, 4), 2 * one, 1e-9 * one);
  const double layered_one = (2 * (rules + static_cast<double>(m.pass_throughs)) + sequence) * 1e-3;
  EXPECT_NEAR(added(layered, graph, 1, 4), layered_one, 1e-9 * layered_one);
  // Planned phases: one gather per walked and per materialized rule (the plan with gathers
  // costs its gathers more than it would without them, and no less than the best plan
  // without them), then one per symbol of C.
  const auto levels = kcla::compute_levels(g);
  for (std::int32_t bound : {1, 3}) {
    const auto plain = kcla::plan_level_phases(g, levels, 1, 4, graph, without, bound);
    const auto planned = kcla::plan_level_phases(g, levels, 1, 4, graph, with, bound);
    const double gathers = static_cast<double>(planned.walked_rules + planned.computed_slots);
    ASSERT_GT(gathers, 0);
    if (bound == 1) {
      EXPECT_EQ(planned.tops, plain.tops);
      EXPECT_NEAR(planned.seconds - plain.seconds, gathers * 1e-3, 1e-9 * planned.seconds);
    } else {
      EXPECT_GE(planned.seconds - gathers * 1e-3, plain.seconds * (1 - 1e-12));
    }
    const double rows_added = kcla::predict_sweep(m, full, graph, 1, 4, with, &planned).seconds -
                              kcla::predict_sweep(m, full, graph, 1, 4, without, &planned).seconds;
    EXPECT_NEAR(rows_added, sequence * 1e-3, 1e-9 * planned.seconds);
  }
}

// A device's full array holds a slot per terminal and vector beside the rules' when C has at
// least twice as many symbols as there are terminals (its workspace budget counts them).
TEST(GrammarCostModel, WorkspaceCountsTheTerminalTable) {
  auto gen = kcla::test::rng();
  auto m = kcla::compute_metrics(kcla::compress(kcla::test::random_genotypes(gen, 60, 900, 8, 6)));
  ASSERT_GT(m.num_terminals, 0);
  ASSERT_GE(m.depth, 1);
  auto with = kcla::SweepMachine::for_gpu();
  ASSERT_TRUE(with.terminal_table);
  ASSERT_FALSE(kcla::SweepMachine::for_host().terminal_table);
  auto without = with;
  without.terminal_table = false;
  const auto full = kcla::SweepSchedule::full_array;
  for (const auto launch : {kcla::SweepLaunch::graph, kcla::SweepLaunch::dataflow}) {
    for (const std::int64_t B : {1, 5}) {
      const std::int64_t slot_bytes = launch == kcla::SweepLaunch::dataflow ? 8 : 4;
      m.sequence = 2 * m.num_terminals;  // the table is used
      EXPECT_EQ(kcla::predict_sweep(m, full, launch, B, 4, with).workspace_bytes -
                    kcla::predict_sweep(m, full, launch, B, 4, without).workspace_bytes,
                m.num_terminals * B * slot_bytes);
      m.sequence = 2 * m.num_terminals - 1;  // too few symbols for it to pay
      EXPECT_EQ(kcla::predict_sweep(m, full, launch, B, 4, with).workspace_bytes,
                kcla::predict_sweep(m, full, launch, B, 4, without).workspace_bytes);
    }
  }
  // The layered schedule has no table.
  m.sequence = 2 * m.num_terminals;
  EXPECT_EQ(
      kcla::predict_sweep(m, kcla::SweepSchedule::layered, kcla::SweepLaunch::graph, 1, 4, with)
          .workspace_bytes,
      kcla::predict_sweep(m, kcla::SweepSchedule::layered, kcla::SweepLaunch::graph, 1, 4, without)
          .workspace_bytes);
}

TEST(GrammarCostModel, MachineFollowsTheMemorySpace) {
  using memory = Kokkos::DefaultExecutionSpace::memory_space;
  const auto g = kcla::test::paper_grammar();
  kcla::GrammarMatrix<float, Kokkos::HostSpace> on_host(g);
  EXPECT_EQ(on_host.prediction().launch, kcla::SweepMachine::for_host().default_launch);
  const bool device = !Kokkos::SpaceAccessibility<Kokkos::HostSpace, memory>::accessible;
  kcla::GrammarMatrix<float, memory> here(g);
  if (device) {  // the GPU's default, or dataflow where the model predicts it faster
    EXPECT_TRUE(here.prediction().launch == kcla::SweepMachine::for_gpu().default_launch ||
                here.prediction().launch == kcla::SweepLaunch::dataflow);
  } else {
    EXPECT_EQ(here.prediction().launch, kcla::SweepMachine::for_host().default_launch);
  }
  // An explicit machine wins.
  kcla::GrammarMatrixOptions options;
  auto machine = kcla::SweepMachine::for_host();
  machine.default_launch = kcla::SweepLaunch::per_level;
  options.tuning.machine = machine;
  kcla::GrammarMatrix<float, Kokkos::HostSpace> forced(g, options);
  EXPECT_EQ(forced.prediction().launch, kcla::SweepLaunch::per_level);
  // The two defaults differ where it matters (else the checks above check nothing).
  EXPECT_NE(kcla::SweepMachine::for_host().default_launch,
            kcla::SweepMachine::for_gpu().default_launch);
  EXPECT_LT(kcla::SweepMachine::for_host().bandwidth_bytes_per_second,
            kcla::SweepMachine::for_gpu().bandwidth_bytes_per_second);
}

// Phases are planned only for batches the machine allows: with boundaries that cost a
// second each the planner merges all it may, so the bound alone sets the phase count.
TEST(GrammarCostModel, PhasesOnlyForLargeEnoughBatches) {
  const auto g = kcla::test::paper_grammar();  // five levels
  auto machine = kcla::SweepMachine::for_host();
  machine.launch_seconds = machine.graph_node_seconds = machine.level_wait_seconds = 1.0;
  machine.max_phase_levels = 4;
  machine.phase_min_vectors = 8;
  kcla::GrammarMatrixOptions options;
  options.schedule = kcla::SweepSchedule::full_array;
  options.tuning.machine = machine;
  for (std::int64_t vectors : {1, 7, 8, 64}) {
    options.expected_vectors = vectors;
    kcla::GrammarMatrix<double, Kokkos::HostSpace> a(g, options);
    EXPECT_EQ(a.depth(), vectors < 8 ? 5 : 2) << vectors << " vectors";
    EXPECT_EQ(a.prediction().phases, a.depth());
  }
  options.tuning.max_phase_levels = 5;  // an explicit bound applies to every batch
  options.expected_vectors = 1;
  EXPECT_EQ(kcla::GrammarMatrix<double>(g, options).depth(), 1);
  // The GPU's default: one phase per level for a single vector, merged phases for batches.
  const auto gpu = kcla::SweepMachine::for_gpu();
  EXPECT_EQ(gpu.phase_levels_for(1), 1);
  EXPECT_EQ(gpu.phase_levels_for(64), kcla::kMaxPhaseLevels);
}

}  // namespace
