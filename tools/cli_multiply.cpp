// kcla multiply FILE [--x FILE | --random] [--semiring S] [--batch B] [--verify] ...
#include "cli_common.hpp"

#include <kcla/csr_spmv.hpp>
#include <kcla/grammar_multiply.hpp>
#include <kcla/grammar_reference.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>

namespace kcla::cli {

namespace {

const char* kHelp = R"(usage: kcla multiply FILE [options]

Multiplies a matrix by x (or B vectors X) with the grammar engine and times it.
FILE is a kcla grammar (.h5) or anything `kcla compress` reads (compressed first).

options:
  --x FILE             input values: text (whitespace separated) or .bin (float32);
                       cols x B values, the B values of one column together
  --random             random input (default when --x is absent); --seed N to repeat
  --semiring S         plus_times (default), boolean, min_plus
  --precision P        fp32 (default) or fp64 (plus_times and min_plus)
  --batch B            number of right-hand sides (default 1)
  --schedule S         auto (default), full_array, layered
  --launch L           auto (default), per_level, graph (per-level launches replayed as a
                       CUDA graph), fused (one ticketed kernel)
  --backend B          cuda, openmp or serial (default: the build's default device)
  --repeat N           timed products (default 20; the median is reported)
  --verify             check y against a CSR product of the decompressed matrix
  -o, --output FILE    write y as text (one row per line)
  --cols N             column count, for mm-repair input
  --block-rows N, --threads N   RePair options when FILE must be compressed
)";

std::vector<double> read_values(const std::string& path) {
  std::vector<double> values;
  if (path.size() > 4 && path.substr(path.size() - 4) == ".bin") {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw FormatError(path, "cannot open");
    float v;
    while (in.read(reinterpret_cast<char*>(&v), sizeof v)) values.push_back(v);
    if (in.gcount() != 0) throw FormatError(path, "size is not a multiple of 4 bytes (float32)");
    return values;
  }
  std::ifstream in(path);
  if (!in) throw FormatError(path, "cannot open");
  std::string token;
  std::int64_t index = 0;
  while (in >> token) {
    ++index;
    try {
      std::size_t used = 0;
      values.push_back(std::stod(token, &used));
      if (used != token.size()) throw std::invalid_argument(token);
    } catch (const std::exception&) {
      throw FormatError(path,
                        "value " + std::to_string(index) + " ('" + token + "') is not a number");
    }
  }
  return values;
}

struct Outcome {
  std::vector<double> y;  // rows x B, as doubles
  double median_seconds = 0;
  std::string schedule;
  std::int64_t device_bytes = 0;
  double verify_error = -1;  // relative error (plus_times) or mismatches (others)
};

template <class Semiring, class Exec>
Outcome run(const Grammar& g, const std::vector<double>& x, std::int64_t B, const Arguments& args) {
  using T = typename Semiring::value_type;
  using memory = typename Exec::memory_space;
  using Scalar = std::conditional_t<std::is_same<T, bool>::value, float, T>;
  GrammarMatrixOptions options;
  options.schedule = parse_schedule(args.get("schedule", "auto"));
  const auto launch_name = args.get("launch", "auto");
  options.launch = launch_name == "fused"       ? SweepLaunch::fused
                   : launch_name == "graph"     ? SweepLaunch::graph
                   : launch_name == "per_level" ? SweepLaunch::per_level
                   : launch_name == "auto"      ? SweepLaunch::automatic
                                           : throw UsageError("--launch: auto, fused or per_level");
  options.expected_vectors = B;
  GrammarMatrix<Scalar, memory> A(g, options);
  Kokkos::View<T**, Kokkos::LayoutRight, memory> X("X", g.num_cols, B), Y("Y", g.num_rows, B);
  auto Xh = Kokkos::create_mirror_view(X);
  for (std::int64_t i = 0; i < g.num_cols * B; ++i) Xh.data()[i] = static_cast<T>(x[i]);
  Kokkos::deep_copy(X, Xh);
  Exec exec;
  multiply<Semiring>(exec, A, X, Y);  // warm-up: plan and workspace
  exec.fence();
  const auto repeat = std::max<std::int64_t>(1, args.get_int("repeat", 20));
  std::vector<double> times;
  for (std::int64_t r = 0; r < repeat; ++r) {
    const auto start = std::chrono::steady_clock::now();
    multiply<Semiring>(exec, A, X, Y);
    exec.fence();
    times.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  Outcome out;
  out.median_seconds = times[times.size() / 2];
  out.schedule = std::string(to_string(A.schedule())) + "/" + to_string(A.prediction().launch);
  out.device_bytes = A.device_bytes();
  auto Yh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), Y);
  out.y.assign(Yh.data(), Yh.data() + Yh.span());
  if (args.has("verify")) {
    const auto csr = g.decompress();
    if constexpr (std::is_same<Semiring, PlusTimes<T>>::value) {
      // Against the vendor CSR product (cuSPARSE on CUDA, KokkosSparse on host).
      const auto csr_device = to_device_csr<T, memory>(csr);
      double num = 0, den = 0;
      for (std::int64_t b = 0; b < B; ++b) {
        Kokkos::View<T*, memory> xb("xb", g.num_cols), yb("yb", g.num_rows);
        auto xbh = Kokkos::create_mirror_view(xb);
        for (std::int64_t j = 0; j < g.num_cols; ++j) xbh(j) = static_cast<T>(x[j * B + b]);
        Kokkos::deep_copy(xb, xbh);
        csr_spmv(exec, csr_device, xb, yb);
        auto ybh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), yb);
        for (std::int64_t r = 0; r < g.num_rows; ++r) {
          const double d = out.y[r * B + b] - static_cast<double>(ybh(r));
          num += d * d;
          den += static_cast<double>(ybh(r)) * static_cast<double>(ybh(r));
        }
      }
      out.verify_error = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
    } else {
      std::int64_t mismatches = 0;
      for (std::int64_t b = 0; b < B; ++b) {
        std::vector<T> xb(g.num_cols);
        std::vector<T> yb(g.num_rows);
        for (std::int64_t j = 0; j < g.num_cols; ++j) xb[j] = static_cast<T>(x[j * B + b]);
        reference::csr_multiply<Semiring>(csr, xb, yb);
        for (std::int64_t r = 0; r < g.num_rows; ++r)
          if (static_cast<double>(yb[r]) != out.y[r * B + b]) ++mismatches;
      }
      out.verify_error = static_cast<double>(mismatches);
    }
  }
  return out;
}

template <class Exec>
Outcome dispatch(const Grammar& g, const std::vector<double>& x, std::int64_t B,
                 const Arguments& args) {
  const auto semiring = args.get("semiring", "plus_times");
  const auto precision = args.get("precision", "fp32");
  if (precision != "fp32" && precision != "fp64") throw UsageError("--precision: fp32 or fp64");
  if (semiring == "plus_times")
    return precision == "fp64" ? run<PlusTimes<double>, Exec>(g, x, B, args)
                               : run<PlusTimes<float>, Exec>(g, x, B, args);
  if (semiring == "min_plus")
    return precision == "fp64" ? run<MinPlus<double>, Exec>(g, x, B, args)
                               : run<MinPlus<float>, Exec>(g, x, B, args);
  if (semiring == "boolean") return run<Boolean, Exec>(g, x, B, args);
  throw UsageError("--semiring: plus_times, boolean or min_plus (not '" + semiring + "')");
}

}  // namespace

int run_multiply(int argc, char** argv) {
  Arguments args(argc, argv, 2, {"random", "verify", "help", "quiet"});
  if (args.has("help")) {
    std::cout << kHelp;
    return ok;
  }
  args.allow_only({"x", "random", "seed", "semiring", "precision", "batch", "schedule", "launch",
                   "backend", "repeat", "verify", "output", "cols", "block-rows", "threads", "help",
                   "quiet"});
  if (args.positional().size() != 1)
    throw UsageError("multiply needs exactly one FILE (see --help)");
  const auto path = args.positional()[0];
  const auto B = args.get_int("batch", 1);
  if (B < 1) throw UsageError("--batch must be at least 1");
  const Grammar g = load_grammar(path, args, !args.has("quiet") && stderr_is_terminal());
  std::vector<double> x;
  const bool boolean = args.get("semiring", "plus_times") == "boolean";
  if (args.has("x")) {
    x = read_values(args.get("x"));
    if (static_cast<std::int64_t>(x.size()) != g.num_cols * B)
      throw FormatError(args.get("x"),
                        "holds " + std::to_string(x.size()) +
                            " values, expected cols x B = " + std::to_string(g.num_cols * B));
  } else {
    std::mt19937_64 gen(static_cast<std::uint64_t>(args.get_int("seed", 1)));
    std::uniform_real_distribution<double> u(0, 1);
    x.resize(static_cast<std::size_t>(g.num_cols * B));
    for (auto& v : x) v = boolean ? (u(gen) < 0.1 ? 1.0 : 0.0) : u(gen);
  }
  Outcome out;
  std::string backend;
  with_backend(args.get("backend"), [&](const std::string& name) {
    backend = name;
#if defined(KOKKOS_ENABLE_CUDA)
    if (name == "cuda") out = dispatch<Kokkos::Cuda>(g, x, B, args);
#endif
#if defined(KOKKOS_ENABLE_OPENMP)
    if (name == "openmp") out = dispatch<Kokkos::OpenMP>(g, x, B, args);
#endif
#if defined(KOKKOS_ENABLE_SERIAL)
    if (name == "serial") out = dispatch<Kokkos::Serial>(g, x, B, args);
#endif
  });
  std::printf("multiply: %lld x %lld, B=%lld, semiring %s, back end %s, schedule %s\n",
              static_cast<long long>(g.num_rows), static_cast<long long>(g.num_cols),
              static_cast<long long>(B), args.get("semiring", "plus_times").c_str(),
              backend.c_str(), out.schedule.c_str());
  std::printf("time: %.4f ms per product (median of %lld), %.4f ms per vector; device %.2f MB\n",
              out.median_seconds * 1e3,
              static_cast<long long>(std::max<std::int64_t>(1, args.get_int("repeat", 20))),
              out.median_seconds * 1e3 / static_cast<double>(B), out.device_bytes / 1e6);
  if (args.has("output")) {
    std::ofstream o(args.get("output"));
    if (!o) throw FormatError(args.get("output"), "cannot write");
    o.precision(9);
    for (std::int64_t r = 0; r < g.num_rows; ++r) {
      for (std::int64_t b = 0; b < B; ++b) o << (b ? " " : "") << out.y[r * B + b];
      o << "\n";
    }
    if (!o) throw FormatError(args.get("output"), "write failed");
  }
  if (args.has("verify")) {
    const bool plus = args.get("semiring", "plus_times") == "plus_times";
    const double tol = args.get("precision", "fp32") == "fp64" ? 1e-12 : 1e-5;
    const bool passed = plus ? out.verify_error <= tol : out.verify_error == 0;
    if (plus)
      std::printf("verify: relative error vs CSR product %.3g (tolerance %.0g): %s\n",
                  out.verify_error, tol, passed ? "OK" : "FAILED");
    else
      std::printf("verify: %lld entries differ from the CSR product: %s\n",
                  static_cast<long long>(out.verify_error), passed ? "OK" : "FAILED");
    if (!passed) return failure;
  }
  return ok;
}

}  // namespace kcla::cli
