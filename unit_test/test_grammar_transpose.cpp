// kcla::multiply_transpose (z = A^T y) on the default execution space against the CSR and
// dense references, in every semiring and launch form; the transpose schedule's invariants.
#include <kcla/grammar_metrics.hpp>
#include <kcla/grammar_multiply.hpp>
#include <kcla/grammar_reference.hpp>
#include <kcla/repair.hpp>
#include <kcla/sweep_cost_model.hpp>
#include <kcla/transpose_schedule.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <initializer_list>

#include "grammar_fixtures.hpp"
#include "test_support.hpp"

namespace {

using exec = Kokkos::DefaultExecutionSpace;
using memory = exec::memory_space;

constexpr kcla::SweepLaunch kLaunches[] = {kcla::SweepLaunch::automatic,
                                           kcla::SweepLaunch::per_level, kcla::SweepLaunch::graph,
                                           kcla::SweepLaunch::dataflow};

kcla::GrammarMatrixOptions with_products(kcla::GrammarProducts p) {
  kcla::GrammarMatrixOptions o;
  o.products = p;
  return o;
}

template <class T, class H>
Kokkos::View<T**, Kokkos::LayoutRight, memory> to_device_2d(const std::vector<H>& host,
                                                            std::int64_t n, std::int64_t b) {
  Kokkos::View<T**, Kokkos::LayoutRight, memory> d("v", n, b);
  auto h = Kokkos::create_mirror_view(d);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < b; ++j) h(i, j) = static_cast<T>(host[i * b + j]);
  Kokkos::deep_copy(d, h);
  return d;
}

// Every launch form for B vectors (and under a workspace budget that forces chunks of
// vectors) against the CSR reference of A^T y; tolerance 0 means bit-for-bit.
template <class Semiring, class Scalar>
void check_semiring(const kcla::Grammar& g, const kcla::CsrMatrix<double>& a, std::int64_t B,
                    double tolerance, std::mt19937_64& gen) {
  using T = typename Semiring::value_type;
  using H = std::conditional_t<std::is_same<T, bool>::value, char, T>;
  const std::int64_t rows = a.num_rows, cols = a.num_cols;
  std::vector<H> y(rows * B);
  std::uniform_real_distribution<double> u(0, 1);
  for (auto& v : y) {
    const double r = u(gen);
    if constexpr (std::is_same<T, bool>::value)
      v = r < 0.3;
    else if constexpr (std::is_same<Semiring, kcla::MinPlus<T>>::value)
      v = r < 0.2 ? static_cast<T>(INFINITY) : static_cast<T>(r * 10);
    else
      v = static_cast<T>(2 * r - 1);
  }
  // Reference per vector, and sum |a_ij| |y_i|, which bounds any summation order's error.
  std::vector<H> expected(cols * B);
  std::vector<double> magnitude(cols * B);
  auto abs_a = a;
  for (auto& v : abs_a.values) v = std::abs(v);
  for (std::int64_t b = 0; b < B; ++b) {
    std::vector<H> yb(rows), zb(cols), zg(cols);
    std::vector<double> yabs(rows), zabs(cols);
    for (std::int64_t r = 0; r < rows; ++r) {
      yb[r] = y[r * B + b];
      yabs[r] = std::abs(static_cast<double>(yb[r]));
    }
    kcla::reference::csr_multiply_transpose<Semiring>(a, yb, zb);
    kcla::reference::csr_multiply_transpose<kcla::PlusTimes<double>>(abs_a, yabs, zabs);
    // The grammar's own serial reference agrees with the CSR one.
    kcla::reference::grammar_multiply_transpose<Semiring>(g, yb, zg);
    for (std::int64_t j = 0; j < cols; ++j) {
      expected[j * B + b] = zb[j];
      magnitude[j * B + b] = zabs[j];
      if (tolerance == 0)
        ASSERT_EQ(zg[j], zb[j]) << "grammar reference, column " << j;
      else
        ASSERT_NEAR(static_cast<double>(zg[j]), static_cast<double>(zb[j]),
                    tolerance * zabs[j] + 1e-300);
    }
  }
  const auto y_dev = to_device_2d<T>(y, rows, B);
  // Budgets: none, and one that fits a single vector's node values (chunks of 1).
  const std::int64_t one_vector = std::max<std::int64_t>(1, g.num_rules()) * sizeof(T);
  for (std::int64_t budget : {std::int64_t(0), one_vector}) {
    auto options = with_products(kcla::GrammarProducts::both);
    options.workspace_budget_bytes = budget;
    kcla::GrammarMatrix<Scalar, memory> A(g, options);
    for (auto launch : kLaunches) {
      Kokkos::View<T**, Kokkos::LayoutRight, memory> z("z", cols, B);
      for (int repeat = 0; repeat < 2; ++repeat) {  // the second run reuses the workspace
        Kokkos::deep_copy(z, static_cast<T>(7));    // poison
        kcla::multiply_transpose<Semiring>(exec(), A, y_dev, z, launch);
        exec().fence();
        auto zh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), z);
        for (std::int64_t j = 0; j < cols; ++j)
          for (std::int64_t b = 0; b < B; ++b) {
            const T got = zh(j, b), want = static_cast<T>(expected[j * B + b]);
            if (tolerance == 0)
              ASSERT_EQ(got, want) << Semiring::name() << " " << kcla::to_string(launch)
                                   << " budget " << budget << " column " << j << " vector " << b;
            else
              ASSERT_NEAR(static_cast<double>(got), static_cast<double>(want),
                          tolerance * magnitude[j * B + b])
                  << kcla::to_string(launch) << " budget " << budget << " column " << j
                  << " vector " << b;
          }
      }
    }
  }
}

void check_matrix(const kcla::CsrMatrix<double>& a, std::uint64_t salt,
                  std::initializer_list<std::int64_t> batches = {1, 3, 64}) {
  auto gen = kcla::test::rng(salt);
  const auto g = kcla::compress(a);
  const auto s = kcla::build_transpose_schedule(g);
  ASSERT_NO_THROW(s.validate());
  ASSERT_EQ(s.num_nodes(), g.num_rules());
  ASSERT_EQ(s.num_references(), 2 * g.num_rules() + static_cast<std::int64_t>(g.sequence.size()));
  for (std::int64_t B : batches) {
    check_semiring<kcla::PlusTimes<double>, double>(g, a, B, 1e-12, gen);
    check_semiring<kcla::PlusTimes<float>, float>(g, a, B, 1e-5, gen);
    check_semiring<kcla::Boolean, float>(g, a, B, 0, gen);
    check_semiring<kcla::MinPlus<float>, float>(g, a, B, 0, gen);
  }
}

TEST(GrammarTranspose, PaperExampleAgainstDense) {
  // z = A^T y by hand over the dense paper matrix (independent of every grammar path).
  const auto g = kcla::test::paper_grammar();
  const auto a = kcla::test::paper_matrix();
  std::vector<double> y(static_cast<std::size_t>(a.num_rows));
  for (std::int64_t r = 0; r < a.num_rows; ++r) y[r] = 0.5 + static_cast<double>(r) * 1.25;
  std::vector<double> want(static_cast<std::size_t>(a.num_cols), 0.0);
  for (std::int64_t r = 0; r < a.num_rows; ++r)
    for (auto k = a.row_offsets[r]; k < a.row_offsets[r + 1]; ++k)
      want[a.column_indices[k]] += a.values[k] * y[r];
  kcla::GrammarMatrix<double, memory> A(g, with_products(kcla::GrammarProducts::both));
  Kokkos::View<double*, memory> yd("y", a.num_rows), zd("z", a.num_cols);
  auto yh = Kokkos::create_mirror_view(yd);
  for (std::int64_t r = 0; r < a.num_rows; ++r) yh(r) = y[r];
  Kokkos::deep_copy(yd, yh);
  for (auto launch : kLaunches) {
    kcla::multiply_transpose(exec(), A, yd, zd, launch);
    auto zh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), zd);
    for (std::int64_t j = 0; j < a.num_cols; ++j) EXPECT_NEAR(zh(j), want[j], 1e-12) << j;
  }
  check_matrix(a, 21);
}

TEST(GrammarTranspose, GenotypeLikeMatrices) {
  auto gen = kcla::test::rng();
  check_matrix(kcla::test::random_genotypes(gen, 120, 900, 6, 5), 22);
  check_matrix(kcla::test::random_genotypes(gen, 7, 3000, 3, 2), 23);
}

TEST(GrammarTranspose, RandomSparseAndEdgeCases) {
  auto gen = kcla::test::rng();
  check_matrix(kcla::test::random_csr(gen, 300, 200, 0.02, 3), 24);
  check_matrix(kcla::test::random_csr(gen, 50, 1, 0.7, 2), 25);    // one column
  check_matrix(kcla::test::random_csr(gen, 40, 60, 0.0, 0), 26);   // all zero
  check_matrix(kcla::test::random_csr(gen, 1, 1, 1.0, 1), 27);     // 1 x 1
  check_matrix(kcla::test::random_csr(gen, 30, 500, 0.6, 0), 28);  // dense, no repetition
  check_matrix(kcla::test::random_csr(gen, 2000, 40, 0.5, 2), 29, {3, 70});
}

TEST(GrammarTranspose, SameBitsOnEveryRun) {
  // Pulls in a fixed order: two products of the same y agree bit for bit.
  auto gen = kcla::test::rng();
  const auto a = kcla::test::random_genotypes(gen, 300, 2000, 8, 6);
  kcla::GrammarMatrix<float, memory> A(kcla::compress(a),
                                       with_products(kcla::GrammarProducts::transpose));
  const auto yh = kcla::test::random_vector(gen, a.num_rows);
  Kokkos::View<float*, memory> y("y", a.num_rows), z1("z1", a.num_cols), z2("z2", a.num_cols),
      z3("z3", a.num_cols);
  auto ym = Kokkos::create_mirror_view(y);
  for (std::int64_t r = 0; r < a.num_rows; ++r) ym(r) = static_cast<float>(yh[r]);
  Kokkos::deep_copy(y, ym);
  kcla::multiply_transpose(exec(), A, y, z1);
  kcla::multiply_transpose(exec(), A, y, z2, kcla::SweepLaunch::per_level);
  kcla::multiply_transpose(exec(), A, y, z3, kcla::SweepLaunch::dataflow);
  auto h1 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), z1);
  auto h2 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), z2);
  auto h3 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), z3);
  EXPECT_EQ(std::memcmp(h1.data(), h2.data(), sizeof(float) * a.num_cols), 0);
  EXPECT_EQ(std::memcmp(h1.data(), h3.data(), sizeof(float) * a.num_cols), 0);
}

TEST(GrammarTranspose, AutomaticLaunchIsTheMachines) {
  // The automatic left product takes the machine's transpose_launch (on a device; host
  // spaces run per level), and gives the same bits either way. Automatic there: the launch
  // the cost model gives the grammar's full-array right product (dataflow or else graph).
  auto gen = kcla::test::rng();
  const auto a = kcla::test::random_genotypes(gen, 120, 900, 6, 5);
  const auto g = kcla::compress(a);
  auto options = with_products(kcla::GrammarProducts::transpose);
  auto machine = kcla::SweepMachine::for_memory_space<memory>();
  EXPECT_EQ(machine.transpose_launch, kcla::SweepLaunch::automatic);
  const auto metrics = kcla::compute_metrics(g);
  for (auto right : {kcla::SweepLaunch::automatic, kcla::SweepLaunch::dataflow,
                     kcla::SweepLaunch::graph, kcla::SweepLaunch::per_level}) {
    options.tuning.launch = right;
    const kcla::GrammarMatrix<float, memory> plain(g, options);
    const auto predicted = kcla::predict_sweep(metrics, kcla::SweepSchedule::full_array, right,
                                               options.expected_vectors, 4, machine);
    EXPECT_EQ(plain.transpose_launch(), predicted.launch == kcla::SweepLaunch::dataflow
                                            ? kcla::SweepLaunch::dataflow
                                            : kcla::SweepLaunch::graph)
        << kcla::to_string(right);
  }
  options.tuning.launch = kcla::SweepLaunch::automatic;
  machine.transpose_launch = kcla::SweepLaunch::graph;
  options.tuning.machine = machine;
  EXPECT_EQ((kcla::GrammarMatrix<float, memory>(g, options).transpose_launch()),
            kcla::SweepLaunch::graph);
  machine.transpose_launch = kcla::SweepLaunch::dataflow;
  options.tuning.machine = machine;
  kcla::GrammarMatrix<float, memory> A(g, options);
  EXPECT_EQ(A.transpose_launch(), kcla::SweepLaunch::dataflow);
  const auto yh = kcla::test::random_vector(gen, a.num_rows);
  Kokkos::View<float*, memory> y("y", a.num_rows), z1("z1", a.num_cols), z2("z2", a.num_cols);
  auto ym = Kokkos::create_mirror_view(y);
  for (std::int64_t r = 0; r < a.num_rows; ++r) ym(r) = static_cast<float>(yh[r]);
  Kokkos::deep_copy(y, ym);
  kcla::multiply_transpose(exec(), A, y, z1);
  kcla::multiply_transpose(exec(), A, y, z2, kcla::SweepLaunch::per_level);
  auto h1 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), z1);
  auto h2 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), z2);
  EXPECT_EQ(std::memcmp(h1.data(), h2.data(), sizeof(float) * a.num_cols), 0);
}

// squared_coefficients: the same schedule with squared values, both directions, every
// launch form; using it leaves the original's products (and launch cache) as they were.
TEST(GrammarTranspose, SquaredCoefficientsShareTheSchedule) {
  auto gen = kcla::test::rng();
  auto a = kcla::test::random_csr(gen, 150, 90, 0.2, 3);
  for (auto& v : a.values) v = std::round(4 * v) / 4;  // exact squares in double
  auto a2 = a;
  for (auto& v : a2.values) v *= v;
  const kcla::GrammarMatrix<double, memory> A(kcla::compress(a),
                                              with_products(kcla::GrammarProducts::both));
  const auto A2 = A.squared_coefficients();
  const std::int64_t B = 3;
  const auto yh = kcla::test::random_vector(gen, a.num_rows * B);
  const auto xh = kcla::test::random_vector(gen, a.num_cols * B);
  const auto y = to_device_2d<double>(yh, a.num_rows, B);
  const auto x = to_device_2d<double>(xh, a.num_cols, B);
  Kokkos::View<double**, Kokkos::LayoutRight, memory> z("z", a.num_cols, B), r("r", a.num_rows, B);
  auto check = [&](const kcla::CsrMatrix<double>& m, const auto& M, const char* what) {
    for (auto launch : kLaunches) {
      kcla::multiply_transpose(exec(), M, y, z, launch);
      kcla::multiply(exec(), M, x, r, launch);
      auto zh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), z);
      auto rh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), r);
      for (std::int64_t b = 0; b < B; ++b) {
        std::vector<double> yb(a.num_rows), zb(a.num_cols), xb(a.num_cols), rb(a.num_rows);
        for (std::int64_t i = 0; i < a.num_rows; ++i) yb[i] = yh[i * B + b];
        for (std::int64_t j = 0; j < a.num_cols; ++j) xb[j] = xh[j * B + b];
        kcla::reference::csr_multiply_transpose<kcla::PlusTimes<double>>(m, yb, zb);
        kcla::reference::csr_multiply<kcla::PlusTimes<double>>(m, xb, rb);
        for (std::int64_t j = 0; j < a.num_cols; ++j)
          ASSERT_NEAR(zh(j, b), zb[j], 1e-12 * (1 + std::abs(zb[j]))) << what << " column " << j;
        for (std::int64_t i = 0; i < a.num_rows; ++i)
          ASSERT_NEAR(rh(i, b), rb[i], 1e-12 * (1 + std::abs(rb[i]))) << what << " row " << i;
      }
    }
  };
  check(a, A, "original");
  check(a2, A2, "squared");
  check(a, A, "original after the squared");
  EXPECT_EQ(A2.num_rows(), A.num_rows());
  EXPECT_EQ(A2.schedule(), A.schedule());
}

TEST(GrammarTranspose, RejectsWrongDirectionsAndShapes) {
  const auto g = kcla::test::paper_grammar();  // 8 x 7
  kcla::GrammarMatrix<float, memory> right_only(g);
  EXPECT_FALSE(right_only.has_transpose_product());
  Kokkos::View<float*, memory> y("y", 8), z("z", 7), x("x", 7), yr("yr", 8);
  EXPECT_THROW(kcla::multiply_transpose(exec(), right_only, y, z), kcla::InvalidArgument);
  kcla::GrammarMatrix<float, memory> left_only(g, with_products(kcla::GrammarProducts::transpose));
  EXPECT_FALSE(left_only.has_right_product());
  EXPECT_THROW(kcla::multiply(exec(), left_only, x, yr), kcla::InvalidArgument);
  EXPECT_NO_THROW(kcla::multiply_transpose(exec(), left_only, y, z));
  Kokkos::View<float*, memory> y_short("y", 7), z_long("z", 8);
  EXPECT_THROW(kcla::multiply_transpose(exec(), left_only, y_short, z), kcla::InvalidArgument);
  EXPECT_THROW(kcla::multiply_transpose(exec(), left_only, y, z_long), kcla::InvalidArgument);
  EXPECT_THROW(kcla::multiply_transpose(exec(), left_only, y, z, kcla::SweepLaunch::fused),
               kcla::InvalidArgument);
  Kokkos::View<float**, Kokkos::LayoutRight, memory> Y("Y", 8, 2), Z("Z", 7, 3);
  EXPECT_THROW(kcla::multiply_transpose(exec(), left_only, Y, Z), kcla::InvalidArgument);
  exec().fence();
}

TEST(GrammarTranspose, ScheduleRejectsBrokenInvariants) {
  auto gen = kcla::test::rng();
  const auto g = kcla::compress(kcla::test::random_genotypes(gen, 40, 300, 4, 3));
  const auto good = kcla::build_transpose_schedule(g);
  ASSERT_GT(good.depth, 1);
  auto s = good;
  // A node of the first group reading a node evaluated later.
  s.in_sources[s.in_offsets[0]] = static_cast<std::int32_t>(s.num_nodes() - 1);
  EXPECT_THROW(s.validate(), kcla::InvalidArgument);
  s = good;
  s.terminal_sources.back() = kcla::encode_row(s.num_rows);  // a row out of range
  EXPECT_THROW(s.validate(), kcla::InvalidArgument);
  s = good;
  s.column_offsets.pop_back();
  EXPECT_THROW(s.validate(), kcla::InvalidArgument);
}

}  // namespace
