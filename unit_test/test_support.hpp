// Helpers shared by kcla's unit tests: fresh random inputs every run (the seed is printed
// and can be replayed with KCLA_TEST_SEED), random sparse matrices, error norms, and the
// data sets of scripts/data/fetch.sh.
#pragma once

#include <kcla/csr_matrix.hpp>
#include <kcla/synthetic.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <sys/stat.h>

namespace kcla::test {

inline std::uint64_t base_seed() {
  static const std::uint64_t seed = []() -> std::uint64_t {
    if (const char* s = std::getenv("KCLA_TEST_SEED")) return std::strtoull(s, nullptr, 10);
    std::random_device rd;
    return (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
  }();
  return seed;
}

/// A generator seeded from the run's base seed and the current test's name.
inline std::mt19937_64 rng(std::uint64_t salt = 0) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::uint64_t h = base_seed() ^ (salt * 0x9e3779b97f4a7c15ULL);
  if (info)
    for (char c : std::string(info->test_suite_name()) + "." + info->name())
      h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
  return std::mt19937_64(h);
}

/// Random CSR: each entry nonzero with probability `density`; values drawn from
/// `num_distinct_values` levels (1..n) so repetition exists, or uniform (0,1] when 0.
inline CsrMatrix<double> random_csr(std::mt19937_64& gen, std::int64_t rows, std::int64_t cols,
                                    double density, int num_distinct_values = 0) {
  CsrMatrix<double> a;
  a.num_rows = rows;
  a.num_cols = cols;
  a.row_offsets.assign(1, 0);
  if (density <= 0) {  // the geometric skip below needs log(1 - density) < 0
    a.row_offsets.assign(static_cast<std::size_t>(rows) + 1, 0);
    return a;
  }
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::uniform_int_distribution<int> level(1, std::max(1, num_distinct_values));
  // Geometric skipping keeps very sparse, very wide matrices cheap to generate.
  const double log_q = density < 1.0 ? std::log(1.0 - density) : 0.0;
  for (std::int64_t r = 0; r < rows; ++r) {
    if (density <= 0) {
      a.row_offsets.push_back(a.nnz());
      continue;
    }
    std::int64_t c = -1;
    while (true) {
      if (density >= 1.0) {
        ++c;
      } else {
        double u = unit(gen);
        if (u <= 0) u = 1e-300;
        c += 1 + static_cast<std::int64_t>(std::floor(std::log(u) / log_q));
      }
      if (c >= cols) break;
      a.column_indices.push_back(static_cast<std::int32_t>(c));
      a.values.push_back(num_distinct_values > 0 ? level(gen) : 1.0 - unit(gen));
    }
    a.row_offsets.push_back(a.nnz());
  }
  return a;
}

/// Genotype-like matrix (individuals x SNPs, values 0/1/2) with shared haplotype
/// segments: about `segments` founder switches per haplotype over the row.
inline CsrMatrix<double> random_genotypes(std::mt19937_64& gen, std::int64_t rows,
                                          std::int64_t cols, int founders = 8, int segments = 6,
                                          double allele_frequency = 0.3) {
  SyntheticPanelOptions options;
  options.founders = founders;
  options.switch_rate =
      std::min(1.0, segments / static_cast<double>(std::max<std::int64_t>(cols, 1)));
  options.allele_frequency = allele_frequency;
  options.seed = gen();
  return synthetic_genotype_panel(rows, cols, options);
}

inline std::vector<double> random_vector(std::mt19937_64& gen, std::int64_t n, double lo = -1.0,
                                         double hi = 1.0) {
  std::uniform_real_distribution<double> d(lo, hi);
  std::vector<double> v(static_cast<std::size_t>(n));
  for (auto& e : v) e = d(gen);
  return v;
}

/// ||a - b|| / ||b|| (0 when both are zero).
template <class A, class B>
double relative_error(const A& a, const B& b, std::size_t n) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double d = static_cast<double>(a[i]) - static_cast<double>(b[i]);
    num += d * d;
    den += static_cast<double>(b[i]) * static_cast<double>(b[i]);
  }
  if (den == 0) return std::sqrt(num);
  return std::sqrt(num / den);
}

/// ||a - b|| / ||scale|| over n entries: for sums of signed terms, `scale` the same sums
/// of the terms' magnitudes, which bounds the rounding error where the result itself can
/// be cancelled to nothing.
template <class A, class B, class S>
double error_relative_to(const A& a, const B& b, const S& scale, std::size_t n) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double d = static_cast<double>(a[i]) - static_cast<double>(b[i]);
    num += d * d;
    den += static_cast<double>(scale[i]) * static_cast<double>(scale[i]);
  }
  return den == 0 ? std::sqrt(num) : std::sqrt(num / den);
}

/// Exact equality of two CSR matrices (shape, structure, values bit for bit), naming the
/// first difference.
template <class Scalar>
::testing::AssertionResult csr_equal(const CsrMatrix<Scalar>& a, const CsrMatrix<Scalar>& b) {
  if (a.num_rows != b.num_rows || a.num_cols != b.num_cols)
    return ::testing::AssertionFailure() << "shape " << a.num_rows << " x " << a.num_cols << " vs "
                                         << b.num_rows << " x " << b.num_cols;
  if (a.row_offsets != b.row_offsets) return ::testing::AssertionFailure() << "row_offsets differ";
  for (std::int64_t k = 0; k < a.nnz(); ++k)
    if (a.column_indices[k] != b.column_indices[k] || !(a.values[k] == b.values[k]))
      return ::testing::AssertionFailure()
             << "entry " << k << ": (" << a.column_indices[k] << ", " << a.values[k] << ") vs ("
             << b.column_indices[k] << ", " << b.values[k] << ")";
  return ::testing::AssertionSuccess();
}

/// Success when `f()` throws an E whose what() contains every one of `needles`:
/// `EXPECT_TRUE(throws_with<kcla::FormatError>([&] { ... }, {"line 3", "outside"}));`
template <class E, class F>
::testing::AssertionResult throws_with(F&& f, std::initializer_list<std::string> needles) {
  try {
    f();
  } catch (const E& e) {
    const std::string what = e.what();
    for (const auto& needle : needles)
      if (what.find(needle) == std::string::npos)
        return ::testing::AssertionFailure()
               << "message \"" << what << "\" lacks \"" << needle << "\"";
    return ::testing::AssertionSuccess() << what;
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "threw another exception: " << e.what();
  }
  return ::testing::AssertionFailure() << "did not throw";
}

/// A fresh folder for a test's files, removed with everything in it at scope exit.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "kcla-test-XXXXXX").string();
    if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
    dir_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& dir() const { return dir_; }
  std::string path(const std::string& name) const { return dir_ + "/" + name; }
  /// Writes `content` (bytes as given) to the file `name`; returns its path.
  std::string write(const std::string& name, const std::string& content) const {
    std::ofstream out(path(name), std::ios::binary);
    out << content;
    if (!out) throw std::runtime_error("cannot write " + path(name));
    return path(name);
  }

 private:
  std::string dir_;
};

/// Path of the data set file `name` (e.g. "mouse_hs1940.bed") in $KCLA_DATA_DIR, or in
/// ~/.cache/kcla/data when that is unset; "" when the file is absent, so the test can
/// skip: `if (path.empty()) GTEST_SKIP() << "...";` (scripts/data/fetch.sh fetches it).
inline std::string data_file(const std::string& name) {
  std::string dir;
  if (const char* env = std::getenv("KCLA_DATA_DIR"); env && *env) {
    dir = env;
  } else if (const char* home = std::getenv("HOME")) {
    dir = std::string(home) + "/.cache/kcla/data";
  }
  const std::string path = dir + "/" + name;
  struct stat info {};
  return !dir.empty() && stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode) ? path : "";
}

#ifdef KCLA_TEST_FIXTURE_DIR
/// The folder of the small fixtures committed with the tests (unit_test/data):
/// $KCLA_TEST_FIXTURE_DIR when set (a GPU bundle carries them next to the programs),
/// else the source tree's folder compiled in.
inline std::string fixture_dir() {
  if (const char* env = std::getenv("KCLA_TEST_FIXTURE_DIR"); env && *env) return env;
  return KCLA_TEST_FIXTURE_DIR;
}
#endif

/// The whole content of a file, bytes as they are.
inline std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace kcla::test
