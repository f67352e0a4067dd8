// kcla::multiply on the default execution space against SuiteSparse:GraphBLAS (GrB_mxv,
// host) and the plain CSR loop (reference::csr_multiply), issue 5. Boolean and min-plus
// must match bit for bit; plus-times (fp32) within 1e-5 of sum_j |a_ij| |x_j|, the bound
// on any summation order's rounding. B = 1 (rank-1 Views) and B = 8 (rank-2, each column
// its own GrB_mxv), every schedule x launch, on fresh random matrices every run and on the
// real graphs of scripts/data/fetch.sh when present.
#include <kcla/grammar_multiply.hpp>
#include <kcla/grammar_reference.hpp>
#include <kcla/repair.hpp>
#include <kcla/sparse_matrix_file.hpp>

#include <gtest/gtest.h>

#include <cstring>
#include <numeric>

#include "graphblas_reference.hpp"
#include "sweep_configs.hpp"
#include "test_support.hpp"

namespace {

namespace grb = kcla::test::graphblas;
using exec = Kokkos::DefaultExecutionSpace;
using memory = exec::memory_space;

// GraphBLAS is initialised once for the whole program (GrB_NONBLOCKING).
class GraphblasEnvironment : public ::testing::Environment {
 public:
  void SetUp() override { grb::initialize(); }
  void TearDown() override { grb::finalize(); }
};
::testing::Environment* const graphblas_environment =
    ::testing::AddGlobalTestEnvironment(new GraphblasEnvironment);

/// Bit-for-bit equality (floating point: the same bits, so +0 and -0 differ).
template <class T>
bool same_bits(T a, T b) {
  if constexpr (std::is_floating_point<T>::value) {
    return std::memcmp(&a, &b, sizeof(T)) == 0;
  } else {
    return a == b;
  }
}

/// x for `Semiring`: Boolean 30% true; min-plus [0, 10) with 20% +inf (no path, absent in
/// GraphBLAS' u); plus-times [-1, 1).
template <class Semiring>
std::vector<grb::host_value_t<Semiring>> random_input(std::mt19937_64& gen, std::size_t n) {
  using T = typename Semiring::value_type;
  std::vector<grb::host_value_t<Semiring>> x(n);
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
  return x;
}

// `got` against `want`: bit for bit when tolerance is 0, else within tolerance x magnitude.
template <class T>
::testing::AssertionResult agree(T got, T want, double tolerance, double magnitude) {
  if (tolerance == 0
          ? same_bits(got, want)
          : std::abs(static_cast<double>(got) - static_cast<double>(want)) <= tolerance * magnitude)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "got " << got << ", want " << want << " (tolerance " << tolerance * magnitude << ")";
}

// kcla (every schedule x launch, B vectors) against GraphBLAS, and GraphBLAS against the
// CSR loop (the reference checks itself), in `Semiring` with kcla matrices of `Scalar`.
template <class Semiring, class Scalar>
void check_semiring(const kcla::Grammar& g, const kcla::CsrMatrix<double>& a, std::int64_t B,
                    double tolerance, std::mt19937_64& gen) {
  using T = typename Semiring::value_type;
  using H = grb::host_value_t<Semiring>;
  const std::int64_t rows = a.num_rows, cols = a.num_cols;
  const auto x = random_input<Semiring>(gen, static_cast<std::size_t>(cols * B));

  // GraphBLAS, one GrB_mxv per column; the CSR loop and the magnitude sum on the same.
  const auto A_grb = grb::Matrix::for_semiring<Semiring>(a);
  grb::Mxv<Semiring> product(A_grb);
  auto abs_a = a;
  for (auto& v : abs_a.values) v = std::abs(v);
  std::vector<H> expected(static_cast<std::size_t>(rows * B));
  std::vector<double> magnitude(static_cast<std::size_t>(rows * B));
  for (std::int64_t b = 0; b < B; ++b) {
    std::vector<H> xb(cols), loop(rows);
    std::vector<double> xabs(cols), yabs(rows);
    for (std::int64_t j = 0; j < cols; ++j) {
      xb[j] = x[j * B + b];
      xabs[j] = std::isinf(static_cast<double>(xb[j])) ? 0 : std::abs(static_cast<double>(xb[j]));
    }
    product.set_input(xb);
    product.run();
    const auto w = product.result();
    kcla::reference::csr_multiply<Semiring>(a, xb, loop);
    kcla::reference::csr_multiply<kcla::PlusTimes<double>>(abs_a, xabs, yabs);
    for (std::int64_t r = 0; r < rows; ++r) {
      ASSERT_TRUE(agree(static_cast<T>(w[r]), static_cast<T>(loop[r]), tolerance, yabs[r]))
          << "GraphBLAS vs CSR loop, " << Semiring::name() << " row " << r << " vector " << b;
      expected[r * B + b] = w[r];
      magnitude[r * B + b] = yabs[r];
    }
  }

  // kcla.
  Kokkos::View<T**, Kokkos::LayoutRight, memory> X("X", cols, B), Y("Y", rows, B);
  {
    auto h = Kokkos::create_mirror_view(X);
    for (std::int64_t j = 0; j < cols; ++j)
      for (std::int64_t b = 0; b < B; ++b) h(j, b) = static_cast<T>(x[j * B + b]);
    Kokkos::deep_copy(X, h);
  }
  // B = 1 goes through rank-1 Views, as a single-vector user calls it.
  Kokkos::View<T*, memory> x1(X.data(), cols), y1(Y.data(), rows);
  for (const auto& c : kcla::test::kSweepConfigs) {
    if (!kcla::test::runs_on<exec>(c)) continue;
    auto options = kcla::test::sweep_options(c);
    options.expected_vectors = B;
    kcla::GrammarMatrix<Scalar, memory> A(g, options);
    ASSERT_EQ(A.schedule(), c.schedule);
    for (int repeat = 0; repeat < 2; ++repeat) {  // the second product reuses the plan
      Kokkos::deep_copy(Y, static_cast<T>(1));    // poison
      if (B == 1)
        kcla::multiply<Semiring>(exec(), A, x1, y1, c.launch);
      else
        kcla::multiply<Semiring>(exec(), A, X, Y, c.launch);
      exec().fence();
      const auto y = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), Y);
      for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t b = 0; b < B; ++b)
          ASSERT_TRUE(
              agree(y(r, b), static_cast<T>(expected[r * B + b]), tolerance, magnitude[r * B + b]))
              << "kcla vs GraphBLAS, " << Semiring::name() << " " << kcla::to_string(c.schedule)
              << "/" << kcla::to_string(c.launch) << " B=" << B << " row " << r << " vector " << b
              << " (repeat " << repeat << ")";
    }
  }
}

// Every semiring the issue names, B = 1 and 8; with fp64 too unless `fp32_only`.
void check_matrix(const kcla::CsrMatrix<double>& a, std::uint64_t salt, bool fp32_only = false) {
  SCOPED_TRACE("matrix " + std::to_string(a.num_rows) + " x " + std::to_string(a.num_cols) +
               ", nnz " + std::to_string(a.nnz()));
  auto gen = kcla::test::rng(salt);
  const auto g = kcla::compress(a);
  for (std::int64_t B : {1, 8}) {
    check_semiring<kcla::Boolean, float>(g, a, B, 0, gen);
    check_semiring<kcla::MinPlus<float>, float>(g, a, B, 0, gen);
    check_semiring<kcla::PlusTimes<float>, float>(g, a, B, 1e-5, gen);
    if (fp32_only) continue;
    check_semiring<kcla::MinPlus<double>, double>(g, a, B, 0, gen);
    check_semiring<kcla::PlusTimes<double>, double>(g, a, B, 1e-12, gen);
  }
}

/// A square graph whose nodes copy the neighbourhood of one of `templates` prototype nodes
/// (with probability `keep` per edge) plus a few edges of their own: the recurring column
/// pairs of real social graphs, so RePair finds rules. Weights 1..levels.
kcla::CsrMatrix<double> repetitive_graph(std::mt19937_64& gen, std::int64_t n, int templates,
                                         int degree, double keep, int levels) {
  std::uniform_int_distribution<std::int32_t> node(0, static_cast<std::int32_t>(n - 1));
  std::uniform_int_distribution<int> pick(0, templates - 1), weight(1, levels);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<std::vector<std::int32_t>> prototype(templates);
  for (auto& p : prototype)
    for (int k = 0; k < degree; ++k) p.push_back(node(gen));
  kcla::CsrMatrix<double> a;
  a.num_rows = a.num_cols = n;
  for (std::int64_t r = 0; r < n; ++r) {
    std::vector<std::int32_t> cols;
    for (auto c : prototype[pick(gen)])
      if (u(gen) < keep) cols.push_back(c);
    for (int k = 0; k < 2; ++k)
      if (u(gen) < 0.5) cols.push_back(node(gen));
    std::sort(cols.begin(), cols.end());
    cols.erase(std::unique(cols.begin(), cols.end()), cols.end());
    for (auto c : cols) {
      a.column_indices.push_back(c);
      a.values.push_back(weight(gen));
    }
    a.row_offsets.push_back(a.nnz());
  }
  return a;
}

TEST(GrammarGraphblas, GenotypeLikeMatrices) {
  auto gen = kcla::test::rng();
  check_matrix(kcla::test::random_genotypes(gen, 120, 900, 6, 5), 1);
  check_matrix(kcla::test::random_genotypes(gen, 7, 3000, 3, 2), 2);
  check_matrix(kcla::test::random_genotypes(gen, 40, 10000, 8, 12, 0.1), 3);  // long rows
}

TEST(GrammarGraphblas, RandomSparseGraphs) {
  auto gen = kcla::test::rng();
  check_matrix(repetitive_graph(gen, 600, 12, 20, 0.9, 1), 4);       // unweighted
  check_matrix(repetitive_graph(gen, 400, 6, 40, 0.8, 5), 5);        // weighted
  check_matrix(kcla::test::random_csr(gen, 500, 500, 0.01, 3), 6);   // Erdős–Rényi, empty rows
  check_matrix(kcla::test::random_csr(gen, 300, 300, 0.003, 0), 7);  // mostly empty rows
}

TEST(GrammarGraphblas, EdgeCases) {
  auto gen = kcla::test::rng();
  check_matrix(kcla::test::random_csr(gen, 40, 60, 0.0, 0), 8);  // no entries: all absent
  check_matrix(kcla::test::random_csr(gen, 1, 1, 1.0, 1), 9);    // 1 x 1
  check_matrix(kcla::test::random_csr(gen, 50, 1, 0.7, 2), 10);  // one column
  // Explicit zeros are entries: false in Boolean, 0 + x_j in min-plus.
  auto a = kcla::test::random_csr(gen, 80, 80, 0.05, 2);
  for (std::size_t k = 0; k < a.values.size(); k += 3) a.values[k] = 0;
  check_matrix(a, 11);
}

TEST(GrammarGraphblas, MinPlusRowReachingOnlyInfinity) {
  // Row 0 reaches only columns whose x is +inf: absent in GraphBLAS' w, +inf in kcla's;
  // row 1 takes the smaller of two paths; row 2 is empty.
  kcla::CsrMatrix<double> a;
  a.num_rows = 3;
  a.num_cols = 4;
  a.row_offsets = {0, 2, 4, 4};
  a.column_indices = {1, 3, 0, 2};
  a.values = {2, 5, 1, 3};
  const float inf = INFINITY;
  const auto A = grb::Matrix::for_semiring<kcla::MinPlus<float>>(a);
  const auto w = grb::mxv<kcla::MinPlus<float>>(A, {4.0f, inf, 0.5f, inf});
  EXPECT_EQ(w, (std::vector<float>{inf, 3.5f, inf}));
  const auto g = kcla::compress(a);
  kcla::GrammarMatrix<float, memory> K(g);
  Kokkos::View<float*, memory> x("x", 4), y("y", 3);
  auto xh = Kokkos::create_mirror_view(x);
  xh(0) = 4, xh(1) = inf, xh(2) = 0.5f, xh(3) = inf;
  Kokkos::deep_copy(x, xh);
  kcla::multiply<kcla::MinPlus<float>>(exec(), K, x, y);
  const auto yh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y);
  for (int r = 0; r < 3; ++r) EXPECT_TRUE(same_bits(yh(r), w[r])) << r;
}

void check_data_file(const std::string& name, std::uint64_t salt) {
  const auto path = kcla::test::data_file(name);
  if (path.empty())
    GTEST_SKIP() << name << " not in $KCLA_DATA_DIR (scripts/data/fetch.sh graphs metis)";
  check_matrix(kcla::read_sparse_matrix(path), salt, /*fp32_only=*/true);
}

TEST(GrammarGraphblas, PgpStrong2009) {
  check_data_file("pgp-strong-2009.mtx", 12);
}

TEST(GrammarGraphblas, Copter2Mesh) {
  check_data_file("copter2.graph", 13);
}

}  // namespace
