// Matrix Market: round trips on random matrices, hand-written files with known content,
// and every error the reader promises.
#include <kcla/block_grammar.hpp>
#include <kcla/matrix_market.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "test_support.hpp"

namespace {

using kcla::FormatError;
using kcla::test::throws_with;

kcla::CsrMatrix<double> make_csr(std::int64_t rows, std::int64_t cols,
                                 std::vector<std::int64_t> offsets,
                                 std::vector<std::int32_t> columns, std::vector<double> values) {
  kcla::CsrMatrix<double> a;
  a.num_rows = rows;
  a.num_cols = cols;
  a.row_offsets = std::move(offsets);
  a.column_indices = std::move(columns);
  a.values = std::move(values);
  a.validate();
  return a;
}

TEST(MatrixMarket, RoundTripRandomMatrices) {
  kcla::test::TempDir tmp;
  auto gen = kcla::test::rng();
  const struct {
    std::int64_t rows, cols;
    double density;
    int levels;
  } cases[] = {{1, 1, 1.0, 0},       {0, 0, 0.5, 0},    {5, 0, 0.5, 0},    {200, 300, 0.05, 0},
               {50, 20000, 0.01, 3}, {3000, 7, 0.3, 0}, {100, 100, 0.0, 0}};
  for (const auto& c : cases) {
    auto a = kcla::test::random_csr(gen, c.rows, c.cols, c.density, c.levels);
    // Values of every magnitude and sign must come back bit for bit.
    std::uniform_int_distribution<int> exponent(-300, 300);
    for (auto& v : a.values)
      if (c.levels == 0) v = (v - 0.5 == 0 ? 0.25 : v - 0.5) * std::pow(10.0, exponent(gen));
    const auto path = tmp.path("a.mtx");
    kcla::write_matrix_market(path, a);
    EXPECT_TRUE(kcla::test::csr_equal(kcla::read_matrix_market(path), a))
        << c.rows << " x " << c.cols;
  }
}

TEST(MatrixMarket, ReadsKnownGeneralRealFile) {
  kcla::test::TempDir tmp;
  // Comments, blank lines, CRLF endings, unsorted entries, a duplicate (summed), an
  // explicit zero and a cancelling pair (both dropped), '+' signs and exponents.
  const auto path = tmp.write("known.mtx",
                              "%%MatrixMarket matrix coordinate real general\r\n"
                              "% a comment\n"
                              "\n"
                              "3 4 9\n"
                              "3 4 -2.5e1\n"
                              "1 2 1.5\n"
                              "1 1 +2\n"
                              "  2   3\t0.0  \n"
                              "% comment between entries\n"
                              "1 2 0.25\n"
                              "3 1 7\n"
                              "3 2 1e-3\n"
                              "3 2 -1e-3\n"
                              "1 4 4\n");
  const auto a = kcla::read_matrix_market(path);
  const auto expected = make_csr(3, 4, {0, 3, 3, 5}, {0, 1, 3, 0, 3}, {2.0, 1.75, 4.0, 7.0, -25.0});
  EXPECT_TRUE(kcla::test::csr_equal(a, expected));
}

TEST(MatrixMarket, ReadsIntegerPatternAndSymmetricFiles) {
  kcla::test::TempDir tmp;
  auto integer = tmp.write("int.mtx",
                           "%%MatrixMarket matrix coordinate integer general\n2 2 2\n2 1 -3\n1 2 "
                           "5\n");
  EXPECT_TRUE(kcla::test::csr_equal(kcla::read_matrix_market(integer),
                                    make_csr(2, 2, {0, 1, 2}, {1, 0}, {5, -3})));
  // Pattern: every entry is 1; a repeated position counts its occurrences.
  auto pattern = tmp.write("pat.mtx",
                           "%%MatrixMarket matrix coordinate pattern general\n2 3 4\n1 3\n2 1\n1 "
                           "1\n1 3\n");
  EXPECT_TRUE(kcla::test::csr_equal(kcla::read_matrix_market(pattern),
                                    make_csr(2, 3, {0, 2, 3}, {0, 2, 0}, {1, 2, 1})));
  // Symmetric: off-diagonal entries mirrored, the diagonal not doubled.
  auto symmetric = tmp.write("sym.mtx",
                             "%%MatrixMarket matrix coordinate real symmetric\n3 3 3\n1 1 4\n3 "
                             "1 2\n3 2 5\n");
  EXPECT_TRUE(
      kcla::test::csr_equal(kcla::read_matrix_market(symmetric),
                            make_csr(3, 3, {0, 2, 3, 5}, {0, 2, 2, 0, 1}, {4, 2, 5, 2, 5})));
  auto symmetric_pattern = tmp.write("sympat.mtx",
                                     "%%MatrixMarket matrix coordinate pattern symmetric\n2 2 "
                                     "2\n2 1\n2 2\n");
  EXPECT_TRUE(kcla::test::csr_equal(kcla::read_matrix_market(symmetric_pattern),
                                    make_csr(2, 2, {0, 1, 3}, {1, 0, 1}, {1, 1, 1})));
  // Skew-symmetric: the mirror is negated.
  auto skew =
      tmp.write("skew.mtx", "%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 1\n2 1 3\n");
  EXPECT_TRUE(kcla::test::csr_equal(kcla::read_matrix_market(skew),
                                    make_csr(2, 2, {0, 1, 2}, {1, 0}, {-3, 3})));
  // Keywords are case-insensitive.
  auto upper =
      tmp.write("upper.mtx", "%%MatrixMarket MATRIX Coordinate REAL General\n1 1 1\n1 1 9\n");
  EXPECT_TRUE(
      kcla::test::csr_equal(kcla::read_matrix_market(upper), make_csr(1, 1, {0, 1}, {0}, {9})));
}

TEST(MatrixMarket, LinesAcrossAndLongerThanTheReadBuffer) {
  kcla::test::TempDir tmp;
  // The reader streams through a 1 MiB buffer: a 3 MiB comment line must grow it, and a
  // file of a few MiB puts entry lines across buffer refills.
  auto gen = kcla::test::rng();
  const auto a = kcla::test::random_csr(gen, 2000, 2000, 0.05);
  const auto plain = tmp.path("plain.mtx");
  kcla::write_matrix_market(plain, a);
  std::ifstream in(plain);
  std::string banner, rest;
  std::getline(in, banner);
  rest.assign(std::istreambuf_iterator<char>(in), {});
  ASSERT_GT(rest.size(), std::size_t(3) << 20);
  const auto path = tmp.write("long.mtx", banner + "\n%" + std::string(3 << 20, 'c') + "\n" + rest);
  EXPECT_TRUE(kcla::test::csr_equal(kcla::read_matrix_market(path), a));
}

TEST(MatrixMarket, RejectsBadBannersNamingWhat) {
  kcla::test::TempDir tmp;
  const std::string tail = "\n2 2 1\n1 1 1\n";
  const struct {
    std::string banner;
    std::string needle;
  } cases[] = {
      {"", "empty file"},
      {"%MatrixMarket matrix coordinate real general", "not a Matrix Market file"},
      {"hello", "not a Matrix Market file"},
      {"%%MatrixMarket matrix coordinate real", "found 4 words"},
      {"%%MatrixMarket vector coordinate real general", "unsupported object 'vector'"},
      {"%%MatrixMarket matrix array real general", "'array' format is not supported"},
      {"%%MatrixMarket matrix coordinate complex general", "'complex' field is not supported"},
      {"%%MatrixMarket matrix coordinate real hermitian", "'hermitian' symmetry is not supported"},
      {"%%MatrixMarket matrix coordinate quaternion general", "unknown field 'quaternion'"},
      {"%%MatrixMarket matrix coordinate real upper", "unknown symmetry 'upper'"},
      {"%%MatrixMarket matrix sparse real general", "unknown format 'sparse'"},
  };
  for (const auto& c : cases) {
    const auto path = tmp.write("bad.mtx", c.banner.empty() ? "" : c.banner + tail);
    const std::string line = c.banner.empty() ? "" : "line 1: ";
    EXPECT_TRUE(
        throws_with<FormatError>([&] { kcla::read_matrix_market(path); }, {path, line, c.needle}))
        << c.banner;
  }
  EXPECT_TRUE(throws_with<FormatError>([&] { kcla::read_matrix_market(tmp.path("missing.mtx")); },
                                       {"missing.mtx", "cannot open"}));
}

TEST(MatrixMarket, RejectsMalformedLinesWithLineNumbers) {
  kcla::test::TempDir tmp;
  const std::string banner = "%%MatrixMarket matrix coordinate real general\n% c\n";
  const std::string ibanner = "%%MatrixMarket matrix coordinate integer general\n% c\n";
  const struct {
    std::string content;
    std::string needle;
  } cases[] = {
      {banner, "no size line"},
      {banner + "2 2\n", "line 3: the size line must be three integers"},
      {banner + "2 x 1\n", "line 3: the size line must be three integers"},
      {banner + "2 -2 1\n", "line 3: negative size"},
      {banner + "2 2 1\n1 1    \n", "line 4: expected 'row column value', found 2 fields"},
      {banner + "2 2 1\n1 1 1 1\n", "line 4: expected 'row column value', found 4 fields"},
      {banner + "2 2 1\n1 a 1\n", "line 4: the row and column indices must be integers"},
      {banner + "2 2 1\n1.5 1 1\n", "line 4: the row and column indices must be integers"},
      {banner + "2 2 1\n1 1 abc\n", "line 4: value 'abc' is not a number"},
      {banner + "2 2 1\n1 1 1.5x\n", "line 4: value '1.5x' is not a number"},
      {ibanner + "2 2 1\n1 1 1.5\n", "line 4: value '1.5' is not an integer"},
      {banner + "2 2 1\n0 1 1\n", "line 4: row index 0 outside [1, 2]"},
      {banner + "2 2 1\n3 1 1\n", "line 4: row index 3 outside [1, 2]"},
      {banner + "2 2 1\n1 0 1\n", "line 4: column index 0 outside [1, 2]"},
      {banner + "2 2 2\n1 1 1\n\n1 3 1\n", "line 6: column index 3 outside [1, 2]"},
      {banner + "2 2 3\n1 1 1\n2 2 1\n% padding\n",
       "line 6: the file ends after 2 of the 3 declared entries"},
      {banner + "2 2 3\n1 1 1\n2 2 1\n",
       "line 3: declares 3 entries, but the 12 bytes after the size line hold at most 2"},
      {banner + "2 2 1\n1 1 1\n2 2 1\n", "line 5: more entries than the 1 declared"},
      {banner + "2 2 0\n% nothing\n1 1 1\n", "line 5: more entries than the 0 declared"},
      {"%%MatrixMarket matrix coordinate real symmetric\n2 3 1\n1 1 1\n", "must be square"},
      {"%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 1\n1 1 1\n",
       "line 3: a skew-symmetric matrix has a zero diagonal"},
      {banner + "2 2147483648 1\n1 1 1\n", "2147483648 columns: kcla supports at most 2^31-1"},
  };
  for (const auto& c : cases) {
    const auto path = tmp.write("bad.mtx", c.content);
    EXPECT_TRUE(throws_with<FormatError>([&] { kcla::read_matrix_market(path); }, {path, c.needle}))
        << c.content;
  }
}

TEST(MatrixMarket, AbsurdDeclaredSizesFailBeforeAllocating) {
  kcla::test::TempDir tmp;
  // 2^62 entries cannot fit in a file of a few bytes: refused from the size line.
  const auto many = tmp.write("many.mtx",
                              "%%MatrixMarket matrix coordinate real general\n"
                              "10 10 4611686018427387904\n1 1 1\n");
  EXPECT_TRUE(throws_with<FormatError>(
      [&] { kcla::read_matrix_market(many); },
      {"line 2", "declares 4611686018427387904 entries", "hold at most 1"}));
  // 2^62 rows: the row offsets alone exceed any machine's memory.
  const auto tall = tmp.write("tall.mtx",
                              "%%MatrixMarket matrix coordinate pattern general\n"
                              "4611686018427387904 3 1\n1 1\n");
  EXPECT_TRUE(throws_with<FormatError>([&] { kcla::read_matrix_market(tall); },
                                       {"row offsets for 4611686018427387904 rows", "memory"}));
  const auto huge = tmp.write("huge.mtx",
                              "%%MatrixMarket matrix coordinate pattern general\n"
                              "9223372036854775807 1 0\n");
  EXPECT_TRUE(throws_with<FormatError>([&] { kcla::read_matrix_market(huge); }, {"memory"}));
  // Beyond int64: not an integer at all.
  const auto beyond = tmp.write("beyond.mtx",
                                "%%MatrixMarket matrix coordinate pattern general\n"
                                "99999999999999999999 1 0\n");
  EXPECT_TRUE(throws_with<FormatError>([&] { kcla::read_matrix_market(beyond); },
                                       {"line 2", "three integers"}));
}

TEST(MatrixMarket, WriteIsAtomicAndChecksItsInput) {
  kcla::test::TempDir tmp;
  const auto path = tmp.write("a.mtx", "old content");
  const auto a = make_csr(2, 2, {0, 1, 2}, {1, 0}, {0.1, 1e300});
  kcla::write_matrix_market(path, a);
  EXPECT_TRUE(kcla::test::csr_equal(kcla::read_matrix_market(path), a));
  // Nothing but the target is left in the folder (the temporary file was renamed).
  std::size_t files = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(tmp.dir())) ++files;
  EXPECT_EQ(files, 1u);

  // An invalid matrix is refused before the file is touched.
  auto broken = a;
  broken.column_indices[0] = 5;
  EXPECT_THROW(kcla::write_matrix_market(path, broken), kcla::InvalidArgument);
  EXPECT_TRUE(kcla::test::csr_equal(kcla::read_matrix_market(path), a));
  // A folder that does not exist: a FormatError naming the file.
  const auto nowhere = tmp.path("no/such/folder/a.mtx");
  EXPECT_TRUE(throws_with<FormatError>([&] { kcla::write_matrix_market(nowhere, a); },
                                       {nowhere, "cannot create a temporary file"}));
}

TEST(MatrixMarketRealData, PgpStrong2009) {
  const auto path = kcla::test::data_file("pgp-strong-2009.mtx");
  if (path.empty())
    GTEST_SKIP() << "pgp-strong-2009.mtx not in the data folder (scripts/data/fetch.sh graphs)";
  const auto a = kcla::read_matrix_market(path);
  EXPECT_EQ(a.num_rows, 39796);
  EXPECT_EQ(a.num_cols, 39796);
  EXPECT_NO_THROW(a.validate());
  // A pattern file: the values count each edge once (parallel edges sum).
  double edges = 0;
  for (double v : a.values) edges += v;
  EXPECT_EQ(edges, 301498.0);
}

// Blocks, each a pass over the whole file: read_matrix_market's matrix for unsorted,
// duplicated, symmetric, skew-symmetric, pattern and integer files and any width; a fault
// in an entry surfaces from the pass that meets it.
TEST(MatrixMarket, BlocksGiveTheMatrixReadWholeGives) {
  kcla::test::TempDir tmp;
  auto gen = kcla::test::rng();
  auto random_file = [&](const std::string& name, const char* field, const char* symmetry, int n,
                         int entries) {
    std::string t = std::string("%%MatrixMarket matrix coordinate ") + field + " " + symmetry +
                    "\n% a comment\n" + std::to_string(n) + " " +
                    std::to_string(std::string(symmetry) == "general" ? n + 3 : n) + " " +
                    std::to_string(entries) + "\n";
    const int cols = std::string(symmetry) == "general" ? n + 3 : n;
    for (int k = 0; k < entries; ++k) {
      int i = 1 + static_cast<int>(gen() % n), j = 1 + static_cast<int>(gen() % cols);
      if (std::string(symmetry) != "general" && j > i) std::swap(i, j);  // lower triangle
      if (std::string(symmetry) == "skew-symmetric" && i == j) i = i % n + 1, j = 1;
      if (std::string(symmetry) == "skew-symmetric" && i <= j) std::swap(i, j);
      if (std::string(symmetry) == "skew-symmetric" && i == j) continue;
      t += std::to_string(i) + " " + std::to_string(j);
      if (std::string(field) == "real")
        t += " " + std::to_string(static_cast<int>(gen() % 9) - 4) + ".5";
      if (std::string(field) == "integer") t += " " + std::to_string(static_cast<int>(gen() % 5));
      t += "\n";
    }
    return tmp.write(name, t);
  };
  std::vector<std::string> files = {
      random_file("g.mtx", "real", "general", 23, 140),
      random_file("i.mtx", "integer", "general", 17, 90),  // zeros and duplicates
      random_file("p.mtx", "pattern", "general", 19, 60),
      random_file("s.mtx", "real", "symmetric", 21, 80),
  };
  // Skew-symmetric: strictly lower entries only.
  std::string skew =
      "%%MatrixMarket matrix coordinate real skew-symmetric\n5 5 3\n2 1 1.5\n4 2 -2\n5 3 3\n";
  files.push_back(tmp.write("k.mtx", skew));
  for (const auto& path : files) {
    const auto whole = kcla::read_matrix_market(path);
    for (std::int64_t width : {1, 3, 7, 1000}) {
      std::int64_t declared = -1;
      auto source = kcla::open_matrix_market_blocks(path, &declared);
      EXPECT_GE(declared, 0);
      EXPECT_EQ(source->num_rows(), whole.num_rows);
      EXPECT_EQ(source->num_cols(), whole.num_cols);
      kcla::CsrMatrix<double> block;
      std::int64_t at = 0;
      while (source->next_block(width, block)) {
        EXPECT_TRUE(
            kcla::test::csr_equal(block, kcla::column_slice(whole, at, at + block.num_cols)))
            << path << " width " << width << " at " << at;
        at += block.num_cols;
      }
      EXPECT_EQ(at, whole.num_cols) << path;
    }
    auto source = kcla::open_matrix_market_blocks(path);
    source->skip_columns(whole.num_cols - 2);
    kcla::CsrMatrix<double> last;
    ASSERT_TRUE(source->next_block(10, last));
    EXPECT_TRUE(
        kcla::test::csr_equal(last, kcla::column_slice(whole, whole.num_cols - 2, whole.num_cols)));
    EXPECT_THROW(source->next_block(0, last), kcla::InvalidArgument);
  }
  // A bad entry: the header reads, the pass that meets it fails naming the line.
  const auto bad =
      tmp.write("bad.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1\n2 x 1\n");
  auto source = kcla::open_matrix_market_blocks(bad);
  kcla::CsrMatrix<double> block;
  EXPECT_TRUE(kcla::test::throws_with<kcla::FormatError>([&] { source->next_block(2, block); },
                                                         {"bad.mtx", "line 4"}));
  EXPECT_THROW(kcla::open_matrix_market_blocks(tmp.write("banner.mtx", "hello\n")),
               kcla::FormatError);
}

}  // namespace
