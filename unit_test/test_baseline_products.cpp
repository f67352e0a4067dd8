// The baseline suite (what kcla is compared against): every product it offers on this
// back end (cuSPARSE SpMV/SpMM variants and dense cuBLAS on CUDA, KokkosSparse on the
// host, the 2-bit packed product everywhere) computes A X, checked against a plain
// double loop on random matrices.
#include <kcla/detail/baseline_products.hpp>

#include <gtest/gtest.h>

#include "test_support.hpp"

#include <cmath>
#include <set>
#include <string>

namespace {

using exec = Kokkos::DefaultExecutionSpace;
using memory = exec::memory_space;

/// Runs every product of the suite for B vectors and checks each output; returns the
/// families seen.
std::set<std::string> check_every_product(const kcla::CsrMatrix<double>& a, std::int64_t B) {
  auto gen = kcla::test::rng(static_cast<std::uint64_t>(a.num_rows * 7 + B));
  const auto x = kcla::test::random_vector(gen, a.num_cols * B);  // row-major cols x B
  std::vector<double> expected(static_cast<std::size_t>(a.num_rows * B), 0.0);
  for (std::int64_t r = 0; r < a.num_rows; ++r)
    for (auto k = a.row_offsets[r]; k < a.row_offsets[r + 1]; ++k)
      for (std::int64_t b = 0; b < B; ++b)
        expected[r * B + b] += a.values[k] * x[a.column_indices[k] * B + b];

  kcla::detail::CsrBaselines<exec> suite(a);
  kcla::detail::BaselineOperands<memory> o;
  o.x = decltype(o.x)("x", a.num_cols, B);
  o.y = decltype(o.y)("y", a.num_rows, B);
  o.x_columns = decltype(o.x_columns)("xc", a.num_cols, B);
  o.y_columns = decltype(o.y_columns)("yc", a.num_rows, B);
  auto xh = Kokkos::create_mirror_view(o.x);
  for (std::int64_t j = 0; j < a.num_cols; ++j)
    for (std::int64_t b = 0; b < B; ++b) xh(j, b) = static_cast<float>(x[j * B + b]);
  Kokkos::deep_copy(o.x, xh);
  Kokkos::deep_copy(o.x_columns, o.x);

  std::set<std::string> families;
  const auto products = suite.products(o, B);
  EXPECT_FALSE(products.empty());
  for (const auto& p : products) {
    Kokkos::deep_copy(o.y, std::nanf(""));  // poison: every entry must be written
    Kokkos::deep_copy(o.y_columns, std::nanf(""));
    try {
      p.run();
    } catch (const kcla::BackendError& e) {
      // cuSPARSE may refuse an algorithm for a layout (CUSPARSE_STATUS_NOT_SUPPORTED):
      // the suite reports that instead of a time; anything else is a failure.
      EXPECT_NE(std::string(e.what()).find("NOT_SUPPORTED"), std::string::npos)
          << p.family << " " << p.variant << ": " << e.what();
      continue;
    }
    exec().fence();
    auto yh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), o.y);
    auto ych = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), o.y_columns);
    std::vector<double> got(expected.size());
    for (std::int64_t r = 0; r < a.num_rows; ++r)
      for (std::int64_t b = 0; b < B; ++b) got[r * B + b] = p.column_major ? ych(r, b) : yh(r, b);
    EXPECT_LE(kcla::test::relative_error(got.data(), expected.data(), got.size()), p.tolerance)
        << p.family << " " << p.variant << ", B = " << B << ", seed " << kcla::test::base_seed();
    families.insert(p.family);
  }
  return families;
}

TEST(BaselineProducts, GenotypePanelEveryProductGivesAX) {
  auto gen = kcla::test::rng();
  const auto a = kcla::test::random_genotypes(gen, 203, 1501);
  for (std::int64_t B : {1, 3, 16}) {
    const auto families = check_every_product(a, B);
    EXPECT_EQ(families.count("2-bit"), 1u) << "a 0/1/2 panel has a 2-bit baseline";
#if KCLA_HAVE_CUDA
    EXPECT_EQ(families.count("cuSPARSE"), 1u);
    EXPECT_EQ(families.count("cuBLAS"), 1u) << "a small panel fits as a dense matrix";
#else
    EXPECT_EQ(families.count("KokkosSparse"), 1u);
#endif
  }
}

TEST(BaselineProducts, GeneralMatrixHasNo2BitBaseline) {
  auto gen = kcla::test::rng();
  const auto a = kcla::test::random_csr(gen, 120, 300, 0.05);  // values in (0, 1]
  for (std::int64_t B : {1, 4}) {
    const auto families = check_every_product(a, B);
    EXPECT_EQ(families.count("2-bit"), 0u);
  }
}

}  // namespace
