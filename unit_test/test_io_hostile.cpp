// Hostile input for every reader (issue 6, docs/fuzzing.md): truncated files, flipped
// bytes, absurd sizes, files that are pipes or too long a name. Each case must give a
// kcla::FormatError naming the file, never a crash, an OOM kill or another exception.
// The first part holds the regression tests of what the audit and the fuzz targets found;
// the second the PLINK and mm-repair cases the other suites lacked.
#include <kcla/config.hpp>
#include <kcla/hdf5_grammar.hpp>
#include <kcla/matrix_market.hpp>
#include <kcla/metis_graph.hpp>
#include <kcla/mm_repair.hpp>
#include <kcla/ms_format.hpp>
#include <kcla/plink.hpp>

#include <gtest/gtest.h>

#include <sys/resource.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <stdexcept>

#if KCLA_HAVE_HDF5
#include <hdf5.h>
#endif

#include "grammar_fixtures.hpp"
#include "test_support.hpp"

namespace {

using kcla::FormatError;
using kcla::test::throws_with;

const std::string example = kcla::test::fixture_dir() + "/mm-repair-example/";

/// A file of `bytes` bytes that takes no space on disk: `head`, then zeros (no newline).
std::string sparse_file(const kcla::test::TempDir& tmp, const std::string& name,
                        std::uintmax_t bytes, const std::string& head = "") {
  const auto path = tmp.write(name, head);
  std::filesystem::resize_file(path, bytes);
  return path;
}

/// Replaces the file at `path` with a new one holding `bytes`. (Truncating a file that has
/// data and rewriting it makes ext4 flush at close: milliseconds per case.)
void rewrite(const std::string& path, const std::string& bytes) {
  std::filesystem::remove(path);
  std::ofstream(path, std::ios::binary) << bytes;
}

/// Sets KCLA_MEMORY_LIMIT_MB for the scope (kcla::detail::check_allocation's limit).
class MemoryLimit {
 public:
  explicit MemoryLimit(const char* mib) {
    if (const char* old = std::getenv("KCLA_MEMORY_LIMIT_MB")) old_ = old;
    setenv("KCLA_MEMORY_LIMIT_MB", mib, 1);
  }
  ~MemoryLimit() {
    if (old_)
      setenv("KCLA_MEMORY_LIMIT_MB", old_->c_str(), 1);
    else
      unsetenv("KCLA_MEMORY_LIMIT_MB");
  }
  MemoryLimit(const MemoryLimit&) = delete;
  MemoryLimit& operator=(const MemoryLimit&) = delete;

 private:
  std::optional<std::string> old_;
};

/// `content` (a few bytes: it must fit the pipe's buffer) readable as "/dev/fd/N" of a
/// pipe, a file without a size.
class Pipe {
 public:
  explicit Pipe(const std::string& content) {
    int fds[2];
    if (content.size() > 4096 || pipe(fds) != 0) throw std::runtime_error("pipe failed");
    read_end_ = fds[0];
    const bool written =
        ::write(fds[1], content.data(), content.size()) == static_cast<ssize_t>(content.size());
    close(fds[1]);
    if (!written) throw std::runtime_error("pipe write failed");
  }
  ~Pipe() { close(read_end_); }
  Pipe(const Pipe&) = delete;
  Pipe& operator=(const Pipe&) = delete;
  std::string path() const { return "/dev/fd/" + std::to_string(read_end_); }

 private:
  int read_end_ = -1;
};

// ---- regressions: what the audit and the fuzz targets found ---------------------------

// A 'pattern skew-symmetric' banner was accepted (mirrored entries became -1), and a
// diagonal entry's error message then quoted the size line's third field through a
// string_view into the line buffer, stale once a longer line had reallocated it.
TEST(HostileInput, MatrixMarketPatternCannotBeSkewSymmetric) {
  kcla::test::TempDir tmp;
  const auto path = tmp.write("p.mtx",
                              "%%MatrixMarket matrix coordinate pattern skew-symmetric\n"
                              "3 3 1\n1 1\n");
  EXPECT_TRUE(throws_with<FormatError>([&] { kcla::read_matrix_market(path); },
                                       {path, "line 1", "cannot be 'skew-symmetric'"}));
}

// Reading from a pipe, LineReader::remaining_bytes() was 2^64 - 1 minus the bytes read,
// which the readers' "size unknown" test (== 2^64 - 1) missed: the declared counts were
// checked against an exabyte file. Matrix Market then reserved what a 2^62-entry size line
// asked (std::length_error escaped), METIS computed 2m in overflowing int64 arithmetic and
// reserved 16 GiB for 2^31-1 declared vertices.
TEST(HostileInput, MatrixMarketFromAPipe) {
  {
    Pipe pipe("%%MatrixMarket matrix coordinate real symmetric\n3 3 2\n2 1 4\n3 3 1\n");
    const auto a = kcla::read_matrix_market(pipe.path());
    EXPECT_EQ(a.num_rows, 3);
    EXPECT_EQ(a.nnz(), 3);
  }
  {
    Pipe pipe("%%MatrixMarket matrix coordinate real general\n3 3 4611686018427387904\n1 1 1\n");
    EXPECT_TRUE(throws_with<FormatError>(
        [&] { kcla::read_matrix_market(pipe.path()); },
        {pipe.path(), "line 3", "the file ends after 1 of the 4611686018427387904"}));
  }
}

TEST(HostileInput, MetisGraphFromAPipe) {
  {
    Pipe pipe("% from a pipe\n3 2\n2\n1 3\n2\n");
    const auto a = kcla::read_metis_graph(pipe.path());
    EXPECT_EQ(a.num_rows, 3);
    EXPECT_EQ(a.nnz(), 4);
  }
  {
    // 2^31-1 vertices and 2^62-1 edges declared, three lines given: no 16 GiB reservation,
    // an error at the end of the input.
    Pipe pipe("2147483647 4611686018427387903\n2\n1\n");
    EXPECT_TRUE(throws_with<FormatError>([&] { kcla::read_metis_graph(pipe.path()); },
                                         {"the file ends after 2 of the 2147483647"}));
  }
  {
    Pipe pipe("3 4611686018427387904\n2\n1\n");  // 2m would overflow an int64
    EXPECT_TRUE(throws_with<FormatError>([&] { kcla::read_metis_graph(pipe.path()); },
                                         {"declares 4611686018427387904 edges", "at most"}));
  }
}

// The mm-repair reader allocated whatever a file's size said: a sparse 1 TiB .val threw
// std::bad_alloc (or, below the machine's RAM + swap, was zero-filled until the OOM kill).
TEST(HostileInput, MmRepairFileLargerThanMemory) {
  kcla::test::TempDir tmp;
  const auto base = tmp.path("m");
  for (const char* ext : {".val", ".vc.R", ".vc.C"})
    std::filesystem::copy_file(example + "M.csv" + ext, base + ext);
  for (const char* ext : {".val", ".vc.R", ".vc.C"}) {
    const auto saved = kcla::test::read_bytes(base + ext);
    sparse_file(tmp, std::string("m") + ext, std::uintmax_t(1) << 40);
    EXPECT_TRUE(throws_with<FormatError>([&] { kcla::read_mm_repair(base, 7); },
                                         {base + ext, "content", "memory"}));
    tmp.write(std::string("m") + ext, saved);
  }
  EXPECT_NO_THROW(kcla::read_mm_repair(base, 7));
}

// A line longer than memory (a sparse file without a newline) grew the line buffer until
// std::bad_alloc, after reading as many bytes as the machine has memory.
TEST(HostileInput, LineLongerThanMemory) {
  kcla::test::TempDir tmp;
  const MemoryLimit limit("16");
  const auto mtx = sparse_file(tmp, "zeros.mtx", std::uintmax_t(1) << 40);
  EXPECT_TRUE(throws_with<FormatError>([&] { kcla::read_matrix_market(mtx); },
                                       {mtx, "line 1 would need", "memory"}));
  const auto graph = sparse_file(tmp, "zeros.graph", std::uintmax_t(1) << 40);
  EXPECT_TRUE(throws_with<FormatError>([&] { kcla::read_metis_graph(graph); }, {graph, "line 1"}));
  const auto ms = sparse_file(tmp, "zeros.ms", std::uintmax_t(1) << 40);
  EXPECT_TRUE(throws_with<FormatError>([&] { kcla::read_ms(ms); }, {ms, "line 1"}));
  tmp.write("z.bim", "1 rs1 0 1 A G\n");
  tmp.write("z.bed", "\x6c\x1b\x01");
  const auto fam = sparse_file(tmp, "z.fam", std::uintmax_t(1) << 40);
  EXPECT_TRUE(throws_with<FormatError>([&] { kcla::read_plink(tmp.path("z")); }, {fam, "line 1"}));
}

// KCLA_MEMORY_LIMIT_MB lowers the limit that declared sizes are checked against (the fuzz
// targets use it); values that are not a positive whole number are ignored.
TEST(HostileInput, MemoryLimitFromTheEnvironment) {
  kcla::test::TempDir tmp;
  const auto path =
      tmp.write("tall.mtx", "%%MatrixMarket matrix coordinate real general\n1000000 1 0\n");
  {
    const MemoryLimit limit("8");  // 10^6 rows x 16 bytes > 8 MiB
    EXPECT_TRUE(throws_with<FormatError>([&] { kcla::read_matrix_market(path); },
                                         {path, "row offsets for 1000000 rows", "8 MiB"}));
  }
  for (const char* ignored : {"", "0", "-5", "12abc", "99999999999999999999"}) {
    const MemoryLimit limit(ignored);
    EXPECT_EQ(kcla::read_matrix_market(path).num_rows, 1000000) << "'" << ignored << "'";
  }
}

/// In a death-test child: reads `path` with 1 GiB of address space to spare; exits 0 for
/// a FormatError naming the file and the memory, non-zero for anything else.
[[noreturn]] void read_with_little_memory(const std::string& path) {
  std::ifstream statm("/proc/self/statm");
  rlim_t pages = 0;
  statm >> pages;
  const rlim_t limit = pages * static_cast<rlim_t>(sysconf(_SC_PAGESIZE)) + (rlim_t(1) << 30);
  const rlimit address_space{limit, limit};
  if (setrlimit(RLIMIT_AS, &address_space) != 0) std::_Exit(3);
  try {
    kcla::read_matrix_market(path);
  } catch (const FormatError& e) {
    const std::string what = e.what();
    const bool named = what.find(path) != std::string::npos;
    std::_Exit(named && what.find("memory") != std::string::npos ? 0 : 4);
  } catch (...) {
    std::_Exit(5);
  }
  std::_Exit(6);
}

// Running out of memory anyway (a legitimately huge file) is a FormatError naming the
// file, not std::bad_alloc: checked in a child process with a small address space.
TEST(HostileInput, OutOfMemoryIsAFormatError) {
#if defined(__SANITIZE_ADDRESS__)
#define KCLA_TEST_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KCLA_TEST_UNDER_ASAN 1
#endif
#endif
#ifdef KCLA_TEST_UNDER_ASAN
  GTEST_SKIP() << "AddressSanitizer's shadow memory cannot live in the small address space "
                  "this test gives its child process";
#endif
  kcla::test::TempDir tmp;
  // 2^28 rows: 4 GiB of row offsets, under the check on machines with over 4 GiB of RAM.
  const auto path =
      tmp.write("tall.mtx", "%%MatrixMarket matrix coordinate real general\n268435456 1 0\n");
  EXPECT_EXIT(read_with_little_memory(path), ::testing::ExitedWithCode(0), "");
}

/// 64 rules, each doubling the one before: 2^64 terminals in one row of 1000 columns.
kcla::Grammar grammar_bomb() {
  kcla::Grammar g;
  g.num_rows = 1;
  g.num_cols = 1000;
  g.values = {1.0};
  g.terminal_values = {0};
  g.terminal_columns = {0};
  g.rule_left = {0};
  g.rule_right = {0};
  for (kcla::symbol_t i = 1; i < 64; ++i) {
    g.rule_left.push_back(i);
    g.rule_right.push_back(i);
  }
  g.sequence = {64};
  g.row_offsets = {0, 1};
  return g;
}

// A grammar bomb passes Grammar::validate, and the readers returned it; expansion_lengths
// and decompress then overflowed int64 (`kcla info` showed nnz 0, `kcla multiply --verify`
// died writing 2^64 entries into an empty array). No rule or row of a matrix grammar
// expands to more terminals than there are columns.
TEST(HostileInput, GrammarBomb) {
  kcla::test::TempDir tmp;
  const auto bomb = grammar_bomb();
  ASSERT_NO_THROW(bomb.validate());
  const auto base = tmp.path("bomb");
  kcla::write_mm_repair(base, bomb);
  EXPECT_TRUE(throws_with<FormatError>(
      [&] { kcla::read_mm_repair(base, 1000); },
      {base + ".vc.R", "rule 9 expands to more than 1000 terminals, the column count"}));
  // Short rules, but a row longer than the matrix is wide.
  auto wide_row = kcla::test::paper_grammar();
  wide_row.sequence.insert(wide_row.sequence.begin(), wide_row.sequence.front());
  for (std::size_t r = 1; r < wide_row.row_offsets.size(); ++r) ++wide_row.row_offsets[r];
  kcla::write_mm_repair(base, wide_row);
  EXPECT_TRUE(throws_with<FormatError>([&] { kcla::read_mm_repair(base, 7); },
                                       {base + ".vc.C", "row 0 expands to more than 7"}));
#if KCLA_HAVE_HDF5
  const auto h5 = tmp.path("bomb.h5");
  kcla::write_grammar_hdf5(h5, bomb);
  EXPECT_TRUE(throws_with<FormatError>([&] { kcla::read_grammar_hdf5(h5); },
                                       {h5, "rule 9 expands to more than 1000 terminals"}));
#endif
}

#if KCLA_HAVE_HDF5
/// The grammar layout of docs/format.md with `defect` applied (cf. test_hdf5_grammar.cpp).
void write_hostile_hdf5(const std::string& path, const std::string& defect) {
  const auto g = kcla::test::paper_grammar();
  hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  hid_t group = H5Gcreate2(file, "/kcla_grammar", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  const hsize_t array_length = 64;
  auto str_attr = [&](const char* name, std::string v) {
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, v.size());
    const bool array = defect == std::string("array ") + name;
    std::string data = v;
    if (array) data = std::string(v.size() * array_length, 'x');
    hid_t s = array ? H5Screate_simple(1, &array_length, nullptr) : H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(group, name, t, s, H5P_DEFAULT, H5P_DEFAULT);
    H5Awrite(a, t, data.data());
    H5Aclose(a), H5Sclose(s), H5Tclose(t);
  };
  auto int_attr = [&](const char* name, std::int64_t v) {
    const bool array = defect == std::string("array ") + name;
    std::vector<std::int64_t> data(array ? array_length : 1, v);
    hid_t s = array ? H5Screate_simple(1, &array_length, nullptr) : H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(group, name, H5T_NATIVE_INT64, s, H5P_DEFAULT, H5P_DEFAULT);
    H5Awrite(a, H5T_NATIVE_INT64, data.data());
    H5Aclose(a), H5Sclose(s);
  };
  auto dataset = [&](const char* name, hid_t type, const void* data, hsize_t n) {
    hid_t s = H5Screate_simple(1, &n, nullptr);
    hid_t d = H5Dcreate2(group, name, type, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (n) H5Dwrite(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data);
    H5Dclose(d), H5Sclose(s);
  };
  str_attr("format", "kcla-grammar");
  int_attr("version", 1);
  int_attr("rows", g.num_rows);
  int_attr("cols", g.num_cols);
  if (defect == "unallocated values") {
    // 2^39 doubles (4 TiB) declared, nothing stored: HDF5 reads fill values.
    hsize_t n = hsize_t(1) << 39, chunk = 1024;
    hid_t s = H5Screate_simple(1, &n, nullptr);
    hid_t p = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(p, 1, &chunk);
    hid_t d = H5Dcreate2(group, "values", H5T_NATIVE_DOUBLE, s, H5P_DEFAULT, p, H5P_DEFAULT);
    H5Dclose(d), H5Pclose(p), H5Sclose(s);
  } else {
    dataset("values", H5T_NATIVE_DOUBLE, g.values.data(), g.values.size());
  }
  dataset("terminal_values", H5T_NATIVE_INT32, g.terminal_values.data(), g.terminal_values.size());
  dataset("terminal_columns", H5T_NATIVE_INT32, g.terminal_columns.data(),
          g.terminal_columns.size());
  dataset("rule_left", H5T_NATIVE_INT32, g.rule_left.data(), g.rule_left.size());
  dataset("rule_right", H5T_NATIVE_INT32, g.rule_right.data(), g.rule_right.size());
  dataset("row_offsets", H5T_NATIVE_INT64, g.row_offsets.data(), g.row_offsets.size());
  dataset("sequence", H5T_NATIVE_INT32, g.sequence.data(), g.sequence.size());
  H5Gclose(group);
  H5Fclose(file);
}

// H5Aread writes every element of an attribute: an array attribute where one value is
// expected overflowed the reader's int64 (stack) or string (heap) buffer.
TEST(HostileInput, Hdf5ArrayAttributes) {
  kcla::test::TempDir tmp;
  for (const char* attribute : {"format", "version", "rows", "cols"}) {
    const auto path = tmp.path(std::string("array_") + attribute + ".h5");
    write_hostile_hdf5(path, std::string("array ") + attribute);
    EXPECT_TRUE(throws_with<FormatError>([&] { kcla::read_grammar_hdf5(path); },
                                         {path, attribute, "not a single value"}));
  }
  const auto good = tmp.path("good.h5");
  write_hostile_hdf5(good, "none");
  EXPECT_NO_THROW(kcla::read_grammar_hdf5(good));
}

// A few KiB can declare 2^39 elements: refused by memory, not allocated (an
// overcommitting kernel used to grant such a vector and kill the process filling it).
TEST(HostileInput, Hdf5UnallocatedHugeDataset) {
  kcla::test::TempDir tmp;
  const auto path = tmp.path("huge.h5");
  write_hostile_hdf5(path, "unallocated values");
  EXPECT_TRUE(throws_with<FormatError>([&] { kcla::read_grammar_hdf5(path); },
                                       {path, "'values' would need 549755813888 x 8", "memory"}));
}

// std::filesystem::exists threw std::filesystem::filesystem_error for a path it could
// not stat (here ENAMETOOLONG) instead of reporting the file.
TEST(HostileInput, Hdf5PathThatCannotBeChecked) {
  kcla::test::TempDir tmp;
  const auto path = tmp.path(std::string(300, 'x') + ".h5");
  EXPECT_TRUE(throws_with<FormatError>([&] { kcla::read_grammar_hdf5(path); }, {path}));
}
#endif

// ---- PLINK: truncated, flipped, absurd -------------------------------------------------

class HostilePlink : public ::testing::Test {
 protected:
  void SetUp() override {
    // 6 individuals x 5 SNPs: 2 bytes per SNP, the last with 4 padding bits.
    fam = tmp.write("g.fam",
                    "f1 a 0 0 1 -9\nf1 b 0 0 2 -9\nf2 c a b 1 1\nf2 d 0 0 0 2\nf3 e 0 0 1 -9\n"
                    "f3 f 0 0 2 -9\n");
    bim = tmp.write("g.bim",
                    "1\trs1\t0\t100\tA\tG\n1\trs2\t0\t200\tC\tT\n1\trs3\t0\t300\tG\tA\n"
                    "2\trs4\t0\t100\tT\tC\n2\trs5\t0\t200\tA\tC\n");
    bed =
        tmp.write("g.bed", std::string("\x6c\x1b\x01\x1b\xf2\x00\x01\xff\x0f\xe4\x09\x55\x05", 13));
  }
  /// Reads the fileset: true when it was valid, false for a FormatError naming one of
  /// its files; anything else fails the test.
  ::testing::AssertionResult reads_or_rejects() {
    try {
      const auto r = kcla::read_plink(base);
      r.matrix.validate();
      if (r.matrix.num_rows != static_cast<std::int64_t>(r.individual_ids.size()) ||
          r.matrix.num_cols != static_cast<std::int64_t>(r.snp_ids.size()))
        return ::testing::AssertionFailure() << "shape disagrees with the id lists";
      return ::testing::AssertionSuccess() << "read";
    } catch (const FormatError& e) {
      if (e.file().rfind(base, 0) != 0)
        return ::testing::AssertionFailure() << "error names another file: " << e.what();
      return ::testing::AssertionSuccess() << e.what();
    } catch (const std::exception& e) {
      return ::testing::AssertionFailure() << "other exception: " << e.what();
    }
  }
  kcla::test::TempDir tmp;
  const std::string base = tmp.path("g");
  std::string fam, bim, bed;
};

TEST_F(HostilePlink, TruncatedAtEveryLength) {
  ASSERT_NO_THROW(kcla::read_plink(base));
  for (const auto& path : {bed, fam, bim}) {
    const auto bytes = kcla::test::read_bytes(path);
    for (std::size_t n = 0; n < bytes.size(); ++n) {
      rewrite(path, bytes.substr(0, n));
      EXPECT_TRUE(reads_or_rejects()) << path << " cut to " << n << " bytes";
    }
    rewrite(path, bytes);
  }
  // A cut .bed is always an error: its size no longer matches.
  const auto bytes = kcla::test::read_bytes(bed);
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    rewrite(bed, bytes.substr(0, n));
    EXPECT_THROW(kcla::read_plink(base), FormatError) << n;
  }
}

TEST_F(HostilePlink, EveryBitFlipped) {
  for (const auto& path : {bed, fam, bim}) {
    const auto bytes = kcla::test::read_bytes(path);
    for (std::size_t at = 0; at < bytes.size(); ++at)
      for (int bit = 0; bit < 8; ++bit) {
        auto flipped = bytes;
        flipped[at] = static_cast<char>(flipped[at] ^ (1 << bit));
        rewrite(path, flipped);
        EXPECT_TRUE(reads_or_rejects()) << path << " byte " << at << " bit " << bit;
      }
    rewrite(path, bytes);
  }
}

TEST_F(HostilePlink, AbsurdSizes) {
  // A 1 TiB .bed (sparse) for 6 x 5 genotypes: refused from its size, nothing allocated.
  sparse_file(tmp, "g.bed", std::uintmax_t(1) << 40, "\x6c\x1b\x01");
  EXPECT_TRUE(throws_with<FormatError>([&] { kcla::read_plink(base); },
                                       {bed, "size is 1099511627776 bytes", "= 13 bytes"}));
  // A .bim of 100,000 SNPs against the 13-byte .bed.
  std::string many;
  for (int k = 0; k < 100000; ++k) many += "1 rs" + std::to_string(k) + " 0 1 A G\n";
  tmp.write("g.bim", many);
  tmp.write("g.bed", std::string("\x6c\x1b\x01", 3) + std::string(10, '\0'));
  EXPECT_TRUE(throws_with<FormatError>([&] { kcla::read_plink(base); },
                                       {bed, "100000 SNPs", "3 + 100000 * 2 = 200003 bytes"}));
  // A .bed that is not a regular file.
  std::filesystem::remove(bed);
  std::filesystem::create_directory(bed);
  EXPECT_TRUE(throws_with<FormatError>([&] { kcla::read_plink(base); }, {bed}));
}

// ---- mm-repair: truncated, flipped, absurd ---------------------------------------------

/// Reads BASE as 7 columns: true when valid, false for a FormatError naming one of the
/// three files; anything else fails the test.
::testing::AssertionResult mm_repair_reads_or_rejects(const std::string& base) {
  try {
    kcla::read_mm_repair(base, 7).validate();
    return ::testing::AssertionSuccess() << "read";
  } catch (const FormatError& e) {
    if (e.file().rfind(base, 0) != 0)
      return ::testing::AssertionFailure() << "error names another file: " << e.what();
    return ::testing::AssertionSuccess() << e.what();
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "other exception: " << e.what();
  }
}

TEST(HostileMmRepair, TruncatedAndFlippedEverywhere) {
  kcla::test::TempDir tmp;
  const auto base = tmp.path("m");
  for (const char* ext : {".val", ".vc.R", ".vc.C"})
    std::filesystem::copy_file(example + "M.csv" + ext, base + ext);
  ASSERT_NO_THROW(kcla::read_mm_repair(base, 7));
  for (const char* ext : {".val", ".vc.R", ".vc.C"}) {
    const auto path = base + ext;
    const auto bytes = kcla::test::read_bytes(path);
    for (std::size_t n = 0; n < bytes.size(); ++n) {
      rewrite(path, bytes.substr(0, n));
      EXPECT_TRUE(mm_repair_reads_or_rejects(base)) << path << " cut to " << n;
    }
    for (std::size_t at = 0; at < bytes.size(); ++at)
      for (int bit = 0; bit < 8; ++bit) {
        auto flipped = bytes;
        flipped[at] = static_cast<char>(flipped[at] ^ (1 << bit));
        rewrite(path, flipped);
        EXPECT_TRUE(mm_repair_reads_or_rejects(base)) << path << " byte " << at << " bit " << bit;
      }
    rewrite(path, bytes);
  }
  // Cut inside an int32 or a float64: always an error.
  rewrite(base + ".vc.C", kcla::test::read_bytes(example + "M.csv.vc.C").substr(0, 7));
  EXPECT_TRUE(throws_with<FormatError>([&] { kcla::read_mm_repair(base, 7); },
                                       {base + ".vc.C", "not a multiple of 4"}));
}

TEST(HostileMmRepair, AbsurdSymbolsAndSizes) {
  kcla::test::TempDir tmp;
  const auto base = tmp.path("a");
  auto write = [&](const std::vector<double>& val, const std::vector<std::int32_t>& rules,
                   const std::vector<std::int32_t>& seq) {
    tmp.write("a.val", std::string(reinterpret_cast<const char*>(val.data()), val.size() * 8));
    tmp.write("a.vc.R", std::string(reinterpret_cast<const char*>(rules.data()), rules.size() * 4));
    tmp.write("a.vc.C", std::string(reinterpret_cast<const char*>(seq.data()), seq.size() * 4));
  };
  const std::int32_t max = 2147483647, min = -2147483647 - 1;
  const struct {
    std::vector<std::int32_t> rules, seq;
    std::string needle;
  } cases[] = {
      {{min}, {0}, "alpha -2147483648 < 1"},
      {{max, 1, max}, {0}, "has child 2147483647"},
      {{max}, {max, 0}, "outside [0, 2147483647)"},
      {{max}, {max - 1, 0}, "invalid terminal code 2147483646"},
      {{3, min, 1}, {3, 0}, "has child -2147483648"},
      {{3, 1, 2}, {min, 0}, "is -2147483648"},
  };
  for (const auto& c : cases) {
    write({1.0, 2.0}, c.rules, c.seq);
    EXPECT_TRUE(throws_with<FormatError>([&] { kcla::read_mm_repair(base, 7); }, {base, c.needle}))
        << c.needle;
  }
  // Huge alpha with few codes in use is valid: unused codes are dropped.
  write({1.0}, {max - 1, 7, 7}, {max - 1, 0});
  EXPECT_EQ(kcla::read_mm_repair(base, 7).num_terminals(), 1);
}

}  // namespace
