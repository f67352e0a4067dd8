// METIS graph files: hand-written graphs for every fmt variant, the reader's errors, and
// libmetis-doc's meshes (scripts/data/fetch.sh metis) checked for symmetry and counts.
#include <kcla/metis_graph.hpp>

#include <gtest/gtest.h>

#include "test_support.hpp"

namespace {

using kcla::FormatError;
using kcla::test::throws_with;

kcla::CsrMatrix<double> make_csr(std::int64_t n, std::vector<std::int64_t> offsets,
                                 std::vector<std::int32_t> columns, std::vector<double> values) {
  kcla::CsrMatrix<double> a;
  a.num_rows = a.num_cols = n;
  a.row_offsets = std::move(offsets);
  a.column_indices = std::move(columns);
  a.values = std::move(values);
  a.validate();
  return a;
}

TEST(MetisGraph, PlainGraphWithCommentsAndAnIsolatedVertex) {
  kcla::test::TempDir tmp;
  // Path 1-2-3 plus isolated vertex 4; neighbour lists unsorted.
  const auto path = tmp.write("g.graph",
                              "% a comment\n"
                              "4 2\n"
                              "2\n"
                              "3 1\n"
                              "% comment inside\n"
                              " 2 \n"
                              "\n");
  EXPECT_TRUE(kcla::test::csr_equal(kcla::read_metis_graph(path),
                                    make_csr(4, {0, 1, 3, 4, 4}, {1, 0, 2, 1}, {1, 1, 1, 1})));
}

TEST(MetisGraph, FormatFlags) {
  kcla::test::TempDir tmp;
  // fmt 1 (= 001): edge weights.
  const auto weighted = tmp.write("w.graph", "3 2 1\n2 5\n1 5 3 7\n2 7\n");
  EXPECT_TRUE(kcla::test::csr_equal(kcla::read_metis_graph(weighted),
                                    make_csr(3, {0, 1, 3, 4}, {1, 0, 2, 1}, {5, 5, 7, 7})));
  // fmt 011, ncon 2: two vertex weights to skip, then weighted neighbours.
  const auto both = tmp.write("b.graph", "3 2 011 2\n4 4 2 5\n1 1 1 5 3 7\n9 9 2 7\n");
  EXPECT_TRUE(
      kcla::test::csr_equal(kcla::read_metis_graph(both), kcla::read_metis_graph(weighted)));
  // fmt 010 without ncon: one vertex weight.
  const auto vertex = tmp.write("v.graph", "3 2 010\n4 2\n1 1 3\n9 2\n");
  // fmt 100: vertex sizes.
  const auto sizes = tmp.write("s.graph", "3 2 100\n4 2\n1 3 1\n9 2\n");
  const auto plain = make_csr(3, {0, 1, 3, 4}, {1, 0, 2, 1}, {1, 1, 1, 1});
  EXPECT_TRUE(kcla::test::csr_equal(kcla::read_metis_graph(vertex), plain));
  EXPECT_TRUE(kcla::test::csr_equal(kcla::read_metis_graph(sizes), plain));
  // libmetis-doc's test.mgraph header style: "n m 010 2" with two weights per vertex.
  const auto multi = tmp.write("m.graph", "%% c\n 3  2 010 2\n 1  1    2\n 2  2    1  3\n 1 1 2\n");
  EXPECT_TRUE(kcla::test::csr_equal(kcla::read_metis_graph(multi), plain));
}

TEST(MetisGraph, RejectsMalformedInput) {
  kcla::test::TempDir tmp;
  const struct {
    std::string content;
    std::string needle;
  } cases[] = {
      {"", "no header line"},
      {"% only\n", "no header line"},
      {"3\n", "line 1: the header must be"},
      {"3 x\n", "line 1: the header must be"},
      {"3 1 0 1 9\n", "line 1: the header must be"},
      {"-3 1\n", "line 1: negative"},
      {"3 1 2\n2\n1\n\n", "line 1: fmt '2' must be up to three digits"},
      {"3 1 0111\n2\n1\n\n", "fmt '0111'"},
      {"3 1 011 -1\n", "ncon must be an integer >= 0"},
      {"2 1\n2   \n", "line 2: the file ends after 1 of the 2 vertex lines"},
      {"2 1\n3\n1\n", "line 2: neighbour 3 outside [1, 2]"},
      {"2 1\n0\n1\n", "line 2: neighbour 0 outside [1, 2]"},
      {"2 1\n2\nx\n", "line 3: neighbour 'x' is not an integer"},
      {"2 1 1\n2      \n1 4\n", "line 2: neighbour 2 lacks its integer edge weight"},
      {"2 1 010\n\n1 1\n", "line 2: vertex 1 lacks its vertex size/weights"},
      {"2 1\n2\n\n", "line 3: the adjacency lists hold 1 entries, but the header's 1 edges need 2"},
      {"2 1\n2\n1 2\n", "line 3: more adjacency entries than the 2 x 1"},
      {"2 1\n2\n1\n1\n", "line 4: more vertex lines than the 2 declared"},
      {"3000000000 1\n", "kcla supports at most 2^31-1"},
      // Declared sizes the file cannot hold fail before anything is allocated.
      {"2000000000 1\n2\n1\n", "declares 2000000000 vertices, but the 4 bytes"},
      {"2 4611686018427387904\n2\n1\n", "declares 4611686018427387904 edges"},
  };
  for (const auto& c : cases) {
    const auto path = tmp.write("bad.graph", c.content);
    EXPECT_TRUE(throws_with<FormatError>([&] { kcla::read_metis_graph(path); }, {path, c.needle}))
        << c.content;
  }
}

/// True when a == transpose(a) exactly.
bool is_symmetric(const kcla::CsrMatrix<double>& a) {
  std::vector<std::int64_t> next(a.row_offsets.begin(), a.row_offsets.end() - 1);
  // For sorted rows, walking rows in order visits each column's entries in row order.
  for (std::int64_t r = 0; r < a.num_rows; ++r)
    for (auto k = a.row_offsets[r]; k < a.row_offsets[r + 1]; ++k) {
      const auto c = a.column_indices[k];
      const auto at = next[c]++;
      if (at >= a.row_offsets[c + 1] || a.column_indices[at] != r || a.values[at] != a.values[k])
        return false;
    }
  return true;
}

void check_mesh(const std::string& name, std::int64_t n, std::int64_t m) {
  const auto path = kcla::test::data_file(name);
  if (path.empty()) GTEST_SKIP() << name << " not in the data folder (scripts/data/fetch.sh metis)";
  const auto a = kcla::read_metis_graph(path);
  EXPECT_EQ(a.num_rows, n);
  EXPECT_EQ(a.nnz(), 2 * m);
  EXPECT_NO_THROW(a.validate());
  EXPECT_TRUE(is_symmetric(a));
}

TEST(MetisGraphRealData, Mdual) {
  check_mesh("mdual.graph", 258569, 513132);
}
TEST(MetisGraphRealData, Copter2) {
  check_mesh("copter2.graph", 55476, 352238);
}

}  // namespace
