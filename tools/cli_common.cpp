#include "cli_common.hpp"

#include <kcla/block_compress.hpp>
#include <kcla/config.hpp>
#include <kcla/hdf5_grammar.hpp>
#include <kcla/matrix_market.hpp>
#include <kcla/mm_repair.hpp>
#include <kcla/ms_format.hpp>
#include <kcla/plink.hpp>
#include <kcla/repair.hpp>
#include <kcla/sparse_matrix_file.hpp>
#include <kcla/vcf.hpp>

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace kcla::cli {

bool stderr_is_terminal() {
  return ::isatty(STDERR_FILENO) == 1;
}

Grammar load_grammar(const std::string& path, const Arguments& args, bool show_progress) {
  namespace fs = std::filesystem;
  if (fs::exists(path) && is_hdf5_file(path)) return read_grammar_hdf5(path);
  if (fs::exists(path + ".vc.R") && fs::exists(path + ".vc.C")) {
    if (!args.has("cols"))
      throw UsageError(path + " is an mm-repair base name: give the column count with --cols");
    return read_mm_repair(path, args.get_int("cols", 0));
  }
  const auto matrix = read_sparse_matrix(path);
  auto g = compress(matrix, repair_options_from(args, show_progress));
  if (show_progress) std::fprintf(stderr, "\n");
  return g;
}

RepairOptions repair_options_from(const Arguments& args, bool show_progress) {
  RepairOptions options;
  options.block_rows = args.get_int("block-rows", 0);
  options.threads = static_cast<int>(args.get_int("threads", 0));
  if (show_progress) {
    options.progress = [](const RepairProgress& p) {
      const double done = p.input_symbols > 0 ? static_cast<double>(p.symbols_replaced) /
                                                    static_cast<double>(p.input_symbols)
                                              : 1.0;
      std::fprintf(stderr, "\rRePair: %lld rules, %lld/%lld blocks, %5.1f%% of symbols replaced",
                   static_cast<long long>(p.rules), static_cast<long long>(p.blocks_done),
                   static_cast<long long>(p.blocks_total), 100.0 * std::min(1.0, done));
      std::fflush(stderr);
    };
  }
  return options;
}

std::string timing_label(const Arguments& args) {
  const auto repeat = args.get_int("repeat", 20);
  return repeat == 0 ? "one product, cold: plan and workspace included"
                     : "median of " + std::to_string(repeat);
}

std::vector<double> read_values(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw FormatError(path, "cannot open");
  // The whole file in one read: value files hold cols x B values (tens of millions for a
  // biobank batch), and a read per value took longer than the product.
  std::string bytes;
  in.seekg(0, std::ios::end);
  const auto size = static_cast<std::streamoff>(in.tellg());
  if (size < 0) throw FormatError(path, "cannot determine its size");
  in.seekg(0, std::ios::beg);
  bytes.resize(static_cast<std::size_t>(size));
  if (size > 0 && !in.read(bytes.data(), size)) throw FormatError(path, "read failed");
  std::vector<double> values;
  if (path.size() > 4 && path.substr(path.size() - 4) == ".bin") {
    if (bytes.size() % sizeof(float) != 0)
      throw FormatError(path, "size is not a multiple of 4 bytes (float32)");
    values.resize(bytes.size() / sizeof(float));
    for (std::size_t i = 0; i < values.size(); ++i) {
      float v;
      std::memcpy(&v, bytes.data() + i * sizeof(float), sizeof v);
      values[i] = v;
    }
    return values;
  }
  const char* p = bytes.c_str();  // NUL-terminated: strtod stops at the end
  const char* const end = p + bytes.size();
  std::int64_t index = 0;
  auto is_space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  while (true) {
    while (p < end && is_space(*p)) ++p;
    if (p >= end) break;
    ++index;
    const char* token_end = p;
    while (token_end < end && !is_space(*token_end)) ++token_end;
    char* used = nullptr;
    errno = 0;
    const double v = std::strtod(p, &used);
    // Out of range (ERANGE) is an error as it was with std::stod; an embedded NUL ends the
    // number early and is caught by the length check.
    if (used != token_end || errno == ERANGE)
      throw FormatError(path, "value " + std::to_string(index) + " ('" +
                                  std::string(p, static_cast<std::size_t>(token_end - p)) +
                                  "') is not a number");
    values.push_back(v);
    p = token_end;
  }
  return values;
}

namespace {

// A matrix read whole, delivered in column blocks.
class WholeMatrixSource : public ColumnBlockSource {
 public:
  WholeMatrixSource(CsrMatrix<double> a, const std::string& name)
      : a_(std::move(a)), blocks_(a_, name) {}
  std::int64_t num_rows() const override { return blocks_.num_rows(); }
  std::int64_t num_cols() const override { return blocks_.num_cols(); }
  std::string name() const override { return blocks_.name(); }
  bool next_block(std::int64_t max_cols, CsrMatrix<double>& block) override {
    return blocks_.next_block(max_cols, block);
  }
  void skip_columns(std::int64_t count) override { blocks_.skip_columns(count); }

 private:
  CsrMatrix<double> a_;
  CsrColumnBlockSource blocks_;
};

// What reading a Matrix Market file whole holds per declared entry: the coordinate triple
// (and its mirror) while reading, then the CSR.
constexpr std::int64_t kMatrixMarketBytesPerEntry = 48;

bool has_suffix(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

std::unique_ptr<ColumnBlockSource> open_column_source(const std::string& path,
                                                      bool ranks_split_columns,
                                                      std::int64_t memory_limit_bytes) {
  namespace fs = std::filesystem;
  const auto base = plink_base_name(path);
  if ((has_suffix(path, ".bed") || has_suffix(path, ".bim") || has_suffix(path, ".fam") ||
       !fs::exists(path)) &&
      fs::exists(base + ".bed"))
    return open_plink_blocks(path);
  if (is_vcf_file_name(path) && !ranks_split_columns) return open_vcf_blocks(path);
  if ((has_suffix(path, ".ms") || has_suffix(path, ".scrm")) && fs::is_regular_file(path))
    return open_ms_blocks(path);
  if (has_suffix(path, ".mtx") && fs::is_regular_file(path) && memory_limit_bytes > 0) {
    // Read whole (one pass) when the entries fit the budget; else one pass per block.
    std::int64_t declared = 0;
    auto blocks = open_matrix_market_blocks(path, &declared);
    if (declared > memory_limit_bytes / kMatrixMarketBytesPerEntry) return blocks;
  }
  return std::make_unique<WholeMatrixSource>(read_sparse_matrix(path), path);
}

std::int64_t peak_rss_bytes() {
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<std::int64_t>(usage.ru_maxrss) * 1024;
}

void with_backend(const std::string& name, const std::function<void(const std::string&)>& run) {
  std::string chosen = name;
  if (chosen.empty()) {
#if KCLA_HAVE_CUDA
    chosen = "cuda";
#elif defined(KOKKOS_ENABLE_OPENMP)
    chosen = "openmp";
#else
    chosen = "serial";
#endif
  }
  bool available = false;
#if KCLA_HAVE_CUDA
  available |= chosen == "cuda";
#endif
#if defined(KOKKOS_ENABLE_OPENMP)
  available |= chosen == "openmp";
#endif
#if defined(KOKKOS_ENABLE_SERIAL)
  available |= chosen == "serial";
#endif
  if (!available)
    throw UsageError("back end '" + chosen + "' is not in this build (Kokkos devices: " +
                     std::string(Kokkos::DefaultExecutionSpace::name()) + ", " +
                     Kokkos::DefaultHostExecutionSpace::name() + ")");
  run(chosen);
}

}  // namespace kcla::cli
