// Dense Matrix Market ("array") files: round trips bit for bit, symmetric and
// skew-symmetric triangles, coordinate files expanded, and the errors the reader promises.
#include <kcla/dense_matrix_market.hpp>
#include <kcla/error.hpp>

#include <gtest/gtest.h>

#include <cstring>

#include "test_support.hpp"

namespace {

using kcla::FormatError;
using kcla::test::throws_with;

TEST(DenseMatrixMarket, RoundTripsBitForBit) {
  kcla::test::TempDir tmp;
  auto gen = kcla::test::rng();
  std::normal_distribution<double> normal;
  for (const auto& [rows, cols] :
       {std::pair<std::int64_t, std::int64_t>{1, 1}, {0, 4}, {4, 0}, {17, 5}, {3, 40}}) {
    kcla::DenseMatrix a{rows, cols, {}};
    for (std::int64_t e = 0; e < rows * cols; ++e) a.values.push_back(normal(gen) * 1e-3);
    if (!a.values.empty()) a.values[0] = -0.0;
    const auto path = tmp.path("a.mtx");
    kcla::write_dense_matrix_market(path, a);
    const auto b = kcla::read_dense_matrix_market(path);
    EXPECT_EQ(b.rows, rows);
    EXPECT_EQ(b.cols, cols);
    ASSERT_EQ(b.values.size(), a.values.size());
    for (std::size_t e = 0; e < a.values.size(); ++e)
      EXPECT_EQ(std::memcmp(&a.values[e], &b.values[e], sizeof(double)), 0) << e;
  }
  EXPECT_THROW(kcla::write_dense_matrix_market(tmp.path("x.mtx"), kcla::DenseMatrix{2, 2, {1.0}}),
               kcla::InvalidArgument);
}

TEST(DenseMatrixMarket, TrianglesCoordinatesAndLayouts) {
  kcla::test::TempDir tmp;
  // Symmetric: the lower triangle column by column.
  auto s = kcla::read_dense_matrix_market(tmp.write(
      "s.mtx", "%%MatrixMarket matrix array real symmetric\n% c\n3 3\n1\n2\n3\n4\n5\n6\n"));
  EXPECT_EQ(s.values, (std::vector<double>{1, 2, 3, 2, 4, 5, 3, 5, 6}));
  auto k = kcla::read_dense_matrix_market(
      tmp.write("k.mtx", "%%MatrixMarket matrix array integer skew-symmetric\n3 3\n1\n2\n3\n"));
  EXPECT_EQ(k.values, (std::vector<double>{0, 1, 2, -1, 0, 3, -2, -3, 0}));
  // Several values on a line, blank lines and comments in between, a '+' sign.
  auto g = kcla::read_dense_matrix_market(tmp.write(
      "g.mtx", "%%MatrixMarket MATRIX Array Real General\n2 3\n1 2\n\n% x\n+3 4e0\n5 -6.5\n"));
  EXPECT_EQ(g.rows, 2);
  EXPECT_EQ(g(1, 2), -6.5);
  EXPECT_EQ(g(0, 1), 3);
  // Coordinate files are expanded (absent entries zero).
  auto c = kcla::read_dense_matrix_market(
      tmp.write("c.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 2 7\n2 1 -1\n"));
  EXPECT_EQ(c.values, (std::vector<double>{0, -1, 7, 0}));
}

TEST(DenseMatrixMarket, Errors) {
  kcla::test::TempDir tmp;
  auto read = [&](const std::string& content) {
    return [&tmp, content] { kcla::read_dense_matrix_market(tmp.write("e.mtx", content)); };
  };
  const std::string h = "%%MatrixMarket matrix array real general\n";
  EXPECT_TRUE(throws_with<FormatError>(read(""), {"e.mtx", "empty file"}));
  EXPECT_TRUE(throws_with<FormatError>(read("1 2\n"), {"not a Matrix Market file"}));
  EXPECT_TRUE(throws_with<FormatError>(read("%%MatrixMarket matrix array complex general\n1 1\n"),
                                       {"unsupported field 'complex'"}));
  EXPECT_TRUE(throws_with<FormatError>(read("%%MatrixMarket matrix array real hermitian\n1 1\n"),
                                       {"unsupported symmetry"}));
  EXPECT_TRUE(throws_with<FormatError>(read(h), {"no size line"}));
  EXPECT_TRUE(throws_with<FormatError>(read(h + "2 2 4\n"), {"line 2", "two integers"}));
  EXPECT_TRUE(throws_with<FormatError>(read(h + "-2 2\n"), {"negative size"}));
  EXPECT_TRUE(throws_with<FormatError>(read("%%MatrixMarket matrix array real symmetric\n2 3\n"),
                                       {"square"}));
  EXPECT_TRUE(throws_with<FormatError>(read(h + "2 2\n1.000\n2.000\n3.000\n"),
                                       {"ends after 3 of the 4 values"}));
  EXPECT_TRUE(throws_with<FormatError>(read(h + "1 2\n1\n2\n3\n"), {"line 5", "more values"}));
  EXPECT_TRUE(throws_with<FormatError>(read(h + "1 2\n1 2 3\n"), {"line 3", "more values"}));
  EXPECT_TRUE(throws_with<FormatError>(read(h + "1 2\n1\nx\n"), {"line 4", "'x' is not a number"}));
  EXPECT_TRUE(throws_with<FormatError>(
      read("%%MatrixMarket matrix array integer general\n1 1\n1.5\n"), {"not an integer"}));
  // Declared sizes the file cannot hold are refused before allocating.
  EXPECT_TRUE(throws_with<FormatError>(read(h + "3037000499 3037000499\n1\n"), {"more than the"}));
  EXPECT_TRUE(throws_with<FormatError>(read(h + "4611686018427387904 4\n"), {"absurd size"}));
  EXPECT_THROW(kcla::read_dense_matrix_market(tmp.path("missing.mtx")), FormatError);
}

}  // namespace
