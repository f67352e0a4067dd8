#include "cli_common.hpp"

#include <kcla/hdf5_grammar.hpp>
#include <kcla/mm_repair.hpp>
#include <kcla/repair.hpp>
#include <kcla/sparse_matrix_file.hpp>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

namespace kcla::cli {

Arguments::Arguments(int argc, char** argv, int first, const std::vector<std::string>& flags) {
  for (int i = first; i < argc; ++i) {
    std::string a = argv[i];
    if (a.size() > 2 && a.compare(0, 2, "--") == 0) {
      auto eq = a.find('=');
      std::string name = a.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
      if (eq != std::string::npos) {
        options_[name] = a.substr(eq + 1);
      } else if (std::find(flags.begin(), flags.end(), name) != flags.end()) {
        options_[name] = "1";
      } else {
        if (i + 1 >= argc) throw UsageError("option --" + name + " needs a value");
        options_[name] = argv[++i];
      }
    } else if (a == "-o") {
      if (i + 1 >= argc) throw UsageError("option -o needs a value");
      options_["output"] = argv[++i];
    } else if (a == "-h") {
      options_["help"] = "1";
    } else {
      positional_.push_back(a);
    }
  }
}

std::string Arguments::get(const std::string& name, const std::string& fallback) const {
  auto it = options_.find(name);
  return it == options_.end() ? fallback : it->second;
}

std::int64_t Arguments::get_int(const std::string& name, std::int64_t fallback) const {
  if (!has(name)) return fallback;
  const auto& v = options_.at(name);
  try {
    std::size_t used = 0;
    const auto n = std::stoll(v, &used);
    if (used != v.size()) throw std::invalid_argument(v);
    return n;
  } catch (const std::exception&) {
    throw UsageError("--" + name + " expects an integer, got '" + v + "'");
  }
}

double Arguments::get_double(const std::string& name, double fallback) const {
  if (!has(name)) return fallback;
  const auto& v = options_.at(name);
  try {
    std::size_t used = 0;
    const double d = std::stod(v, &used);
    if (used != v.size()) throw std::invalid_argument(v);
    return d;
  } catch (const std::exception&) {
    throw UsageError("--" + name + " expects a number, got '" + v + "'");
  }
}

void Arguments::allow_only(const std::vector<std::string>& known) const {
  for (const auto& [name, value] : options_)
    if (std::find(known.begin(), known.end(), name) == known.end())
      throw UsageError("unknown option --" + name + " (see --help)");
}

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
  auto g = compress(matrix, options);
  if (show_progress) std::fprintf(stderr, "\n");
  return g;
}

void with_backend(const std::string& name, const std::function<void(const std::string&)>& run) {
  std::string chosen = name;
  if (chosen.empty()) {
#if defined(KOKKOS_ENABLE_CUDA)
    chosen = "cuda";
#elif defined(KOKKOS_ENABLE_OPENMP)
    chosen = "openmp";
#else
    chosen = "serial";
#endif
  }
  bool available = false;
#if defined(KOKKOS_ENABLE_CUDA)
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
