// kcla multiply FILE [--x FILE | --random] [--semiring S] [--batch B] [--transpose] ...
#include "cli_common.hpp"
#include "cli_mpi.hpp"

#include <kcla/config.hpp>
#include <kcla/hdf5_block_grammar.hpp>

#include <kcla/csr_spmv.hpp>
#include <kcla/detail/baseline_products.hpp>
#include <kcla/grammar_multiply.hpp>
#include <kcla/grammar_reference.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <future>
#include <iostream>
#include <memory>
#include <random>
#include <sstream>

namespace kcla::cli {

namespace {

Command multiply_command() {
  Command c("kcla multiply FILE [options]",
            "Multiplies a matrix by x (or B vectors X) with the grammar engine and times it. "
            "FILE is a kcla grammar (.h5), a block grammar file (kcla compress --block-cols) or "
            "anything `kcla compress` reads (compressed first).");
  c.positional("FILE", "the matrix")
      .flag("--transpose", "the left product z = A^T y (y: one value per row, z: one per column)")
      .text("--x", "FILE",
            "input values: text (whitespace separated) or .bin (float32); cols x B values "
            "(rows x B with --transpose), the B values of one column together")
      .flag("--random", "random input (the default when --x is absent)")
      .integer("--seed", "N", "seed of the random input (default 1)")
      .choice("--semiring", {"plus_times", "boolean", "min_plus"},
              "the semiring (default plus_times)")
      .choice("--precision", {"fp32", "fp64"}, "fp32 (default) or fp64 (plus_times and min_plus)")
      .integer("--batch", "B", "number of right-hand sides (default 1)", 1, 1 << 20)
      .choice("--schedule", {"auto", "full_array", "layered"},
              "the sweep (default auto: the cost model chooses)")
      .choice("--launch", {"auto", "per_level", "graph", "fused", "dataflow"},
              "auto (default), per_level, graph (per-level launches replayed as a CUDA graph), "
              "fused (one ticketed kernel, level waits), dataflow (one ticketed kernel, each "
              "value waits for its children; full array)")
      .choice("--slot-order", {"rule", "first_use"},
              "full array: a level's slots by rule index (default) or by first use")
      .choice("--leaf-table", {"auto", "always", "never"},
              "full array on a GPU: evaluate every terminal once per product into a table "
              "read by later levels and the rows (default auto: when C holds at least twice "
              "as many symbols as there are terminals)")
      .integer("--row-chunk", "N",
               "full array on a GPU, long rows: symbols of C per team of the row phase "
               "(default 0: automatic)",
               0)
      .choice("--row-tickets", {"auto", "rows", "chunks"},
              "full array on a GPU, dataflow and fused launches: the row phase's tickets, one "
              "team per row or chunks of C (default auto: rows where the mean row is longer "
              "than a warp reduces whole and no longer than a chunk)")
      .choice("--backend", {"cuda", "openmp", "serial"},
              "where the products run (default: the build's default device)")
      .integer("--repeat", "N",
               "timed products after a warm-up (default 20; the median is reported); 0: one "
               "product, timed cold (plan and workspace included)",
               0, 1 << 24)
      .bytes("--workspace",
             "bound on the sweep's value slots (e.g. 256M); a batch that needs more runs in "
             "chunks of vectors (default: no bound)")
      .flag("--verify",
            "check y against a CSR product of the decompressed matrix (A^T's with --transpose)")
      .flag("--compare",
            "also time what you could run instead, each in its best form (plus_times fp32): on "
            "CUDA every cuSPARSE SpMV/SpMM algorithm with and without preprocessing, dense "
            "cuBLAS GEMV/GEMM (fp32 and TF32) when the dense panel fits; on the host "
            "KokkosSparse::spmv; the 2-bit genotype kernels. With --transpose: all of these on "
            "an explicit transposed copy (CSC) and cuSPARSE/KokkosSparse with the transpose "
            "operation on the CSR matrix")
      .text("-o,--output", "FILE", "write y as text (one row per line)")
      .integer("--cols", "N", "column count, for mm-repair input", 1)
      .integer("--block-rows", "N", "RePair row-block size when FILE must be compressed (0: whole)",
               0)
      .integer("--threads", "N", "RePair threads when FILE must be compressed (0: all)", 0, 1 << 16)
      .integer("--verify-rows", "N",
               "block files: check N sampled rows against the grammar expanded on the host "
               "(default 1000; 0 checks every row)",
               0)
      .bytes("--device-memory",
             "device bytes the blocks' arrays may take (e.g. 40G; per rank under mpirun): "
             "blocks beyond it stay in pinned host memory and every product streams them "
             "through device slots, copies overlapped with the sweeps (block files; a single "
             "grammar runs as one block)")
      .choice("--mpi-transport", {"auto", "host", "mpi-device", "nccl"},
              "under mpirun, how device partials are added up: auto (default: NCCL, else "
              "CUDA-aware MPI, else through host memory), or that one (an error where it "
              "cannot run); the environment's KCLA_MPI_TRANSPORT sets the default")
      .flag("--quiet", "no progress display")
      .footer(
          "A block grammar file (kcla compress --block-cols) runs block by block; under mpirun "
          "each\nrank multiplies its own blocks and the ranks add up y (--compare is not "
          "available there).");
  return c;
}

/// One timed baseline of --compare.
struct Compared {
  std::string name;
  double median_seconds = 0;
  std::string failure;
};

struct Outcome {
  std::vector<Compared> compared;
  std::vector<double> y;  // rows x B, as doubles
  double median_seconds = 0;
  std::string schedule;
  std::int64_t device_bytes = 0;
  double predicted_seconds = 0;  // the cost model's time of the right product (0: none)
  double verify_error = -1;      // relative error (plus_times) or mismatches (others)
};

/// The matrix a product multiplies by: A, or A^T for --transpose (as CSR, for references).
CsrMatrix<double> product_matrix(const Grammar& g, bool transpose) {
  return transpose ? transposed(g.decompress()) : g.decompress();
}

/// Times every baseline product on the same X (each checked against kcla's Y first: a
/// baseline that disagrees is reported, not timed).
template <class Exec, class XView, class Timer>
std::vector<Compared> compare_baselines(const Grammar& g, const XView& X, std::int64_t B,
                                        bool transpose, const Timer& median_time) {
  using memory = typename Exec::memory_space;
  const auto csr = product_matrix(g, transpose);
  detail::CsrBaselines<Exec> baselines(csr);
  detail::BaselineOperands<memory> o;
  o.x = X;
  o.y = Kokkos::View<float**, Kokkos::LayoutRight, memory>("Y_baseline", csr.num_rows, B);
  o.x_columns = Kokkos::View<float**, Kokkos::LayoutLeft, memory>("X_columns", csr.num_cols, B);
  o.y_columns = Kokkos::View<float**, Kokkos::LayoutLeft, memory>("Y_columns", csr.num_rows, B);
  Kokkos::deep_copy(o.x_columns, X);  // the same values, each vector contiguous
  // The reference for the checks: a plain product of the decompressed matrix on the host.
  auto xh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), X);
  std::vector<double> reference(static_cast<std::size_t>(csr.num_rows * B), 0.0);
  for (std::int64_t r = 0; r < csr.num_rows; ++r)
    for (auto k = csr.row_offsets[r]; k < csr.row_offsets[r + 1]; ++k)
      for (std::int64_t b = 0; b < B; ++b)
        reference[r * B + b] += csr.values[k] * static_cast<double>(xh(csr.column_indices[k], b));
  std::vector<Compared> out;
  auto products = baselines.products(o, B);
  // For --transpose: the explicit copy's products, then the transpose operation on A's own
  // CSR arrays (which `original` owns: it lives until every product has run).
  std::unique_ptr<detail::CsrBaselines<Exec>> original;
  if (transpose) {
    for (auto& p : products) p.family = "A^T copy: " + p.family;
    original = std::make_unique<detail::CsrBaselines<Exec>>(g.decompress(), false);
    for (auto& p : original->transposed_products(o, B)) products.push_back(p);
  }
  for (const auto& p : products) {
    Compared c;
    c.name = p.family + " " + p.variant;
    try {
      p.run();
      Exec().fence();
      auto yh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), o.y);
      auto ych = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), o.y_columns);
      double num = 0, den = 0;
      for (std::int64_t r = 0; r < csr.num_rows; ++r)
        for (std::int64_t b = 0; b < B; ++b) {
          const double got = p.column_major ? ych(r, b) : yh(r, b);
          const double want = reference[r * B + b];
          num += (got - want) * (got - want);
          den += want * want;
        }
      const double error = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
      if (!(error <= p.tolerance))
        c.failure =
            "disagrees with the host product (relative error " + std::to_string(error) + ")";
      else
        c.median_seconds = median_time(p.run);
    } catch (const std::exception& e) {
      c.failure = std::string("unavailable: ") + e.what();
    }
    out.push_back(c);
  }
  return out;
}

template <class Semiring, class Exec>
Outcome run(const Grammar& g, const std::vector<double>& x, std::int64_t B, const Arguments& args) {
  using T = typename Semiring::value_type;
  using memory = typename Exec::memory_space;
  using Scalar = std::conditional_t<std::is_same<T, bool>::value, float, T>;
  GrammarMatrixOptions options;
  options.schedule = parse_schedule(args.get("schedule", "auto"));
  const auto launch_name = args.get("launch", "auto");
  options.tuning.launch =
      launch_name == "fused"       ? SweepLaunch::fused
      : launch_name == "dataflow"  ? SweepLaunch::dataflow
      : launch_name == "graph"     ? SweepLaunch::graph
      : launch_name == "per_level" ? SweepLaunch::per_level
      : launch_name == "auto"
          ? SweepLaunch::automatic
          : throw UsageError("--launch: auto, per_level, graph, fused or dataflow");
  options.tuning.slot_order =
      args.get("slot-order", "rule") == "first_use" ? SlotOrder::first_use : SlotOrder::rule;
  const auto leaf_table = args.get("leaf-table", "auto");
  options.tuning.leaf_table = leaf_table == "always"  ? LeafTable::always
                              : leaf_table == "never" ? LeafTable::never
                                                      : LeafTable::automatic;
  options.tuning.row_chunk_symbols = args.get_int("row-chunk", 0);
  const auto row_tickets = args.get("row-tickets", "auto");
  options.tuning.row_tickets = row_tickets == "rows"     ? RowTickets::rows
                               : row_tickets == "chunks" ? RowTickets::chunks
                                                         : RowTickets::automatic;
  options.expected_vectors = B;
  if (args.has("workspace"))
    options.workspace_budget_bytes = parse_bytes(args.get("workspace"), "workspace");
  const bool transpose = args.has("transpose");
  if (transpose) options.products = GrammarProducts::transpose;
  GrammarMatrix<Scalar, memory> A(g, options);
  // in / out: the lengths of x and y (A x), or of y and z (A^T y).
  const std::int64_t in = transpose ? g.num_rows : g.num_cols;
  const std::int64_t out_rows = transpose ? g.num_cols : g.num_rows;
  Kokkos::View<T**, Kokkos::LayoutRight, memory> X(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "X"), in, B),
      Y("Y", out_rows, B);  // X: every value set below
  auto Xh = Kokkos::create_mirror_view(X);
  for (std::int64_t i = 0; i < in * B; ++i) Xh.data()[i] = static_cast<T>(x[i]);
  Kokkos::deep_copy(X, Xh);
  Exec exec;
  auto kcla_product = [&] {
    if (transpose)
      multiply_transpose<Semiring>(exec, A, X, Y, options.tuning.launch);
    else
      multiply<Semiring>(exec, A, X, Y);
  };
  const auto repeat = args.get_int("repeat", 20);
  if (repeat > 0) {
    kcla_product();  // warm-up: plan and workspace
    exec.fence();
  }
  auto median_time = [&](const std::function<void()>& product) {
    std::vector<double> times;
    for (std::int64_t r = 0; r < std::max<std::int64_t>(1, repeat); ++r) {
      const auto start = std::chrono::steady_clock::now();
      product();
      exec.fence();
      times.push_back(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    std::sort(times.begin(), times.end());
    return times[times.size() / 2];
  };
  Outcome out;
  out.median_seconds = median_time(kcla_product);
  if (args.has("compare")) {
    if constexpr (std::is_same<Semiring, PlusTimes<float>>::value)
      out.compared = compare_baselines<Exec>(g, X, B, transpose, median_time);
    else
      throw UsageError("--compare measures plus_times fp32 products only");
  }
  const bool host = Kokkos::SpaceAccessibility<Kokkos::HostSpace, memory>::accessible;
  // The left product's launch as it runs: the automatic one is the matrix's, dataflow
  // needs values of at most 4 bytes (wider ones run the graph), host spaces run per level.
  SweepLaunch left = A.options().tuning.launch != SweepLaunch::automatic
                         ? A.options().tuning.launch
                         : (host ? SweepLaunch::per_level : A.transpose_launch());
  if (left == SweepLaunch::dataflow)
    left = host ? SweepLaunch::per_level : sizeof(T) > 4 ? SweepLaunch::graph : left;
  out.schedule =
      transpose ? std::string("transpose/") + to_string(left)
                : std::string(to_string(A.schedule())) + "/" + to_string(A.prediction().launch);
  out.device_bytes = A.device_bytes();
  if (!transpose) out.predicted_seconds = A.prediction().seconds;
  auto Yh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), Y);
  out.y.assign(Yh.data(), Yh.data() + Yh.span());
  if (args.has("verify")) {
    const auto csr = product_matrix(g, transpose);
    if constexpr (std::is_same<Semiring, PlusTimes<T>>::value) {
      // Against the vendor CSR product (cuSPARSE on CUDA, KokkosSparse on host).
      const auto csr_device = to_device_csr<T, memory>(csr);
      double num = 0, den = 0;
      for (std::int64_t b = 0; b < B; ++b) {
        Kokkos::View<T*, memory> xb("xb", in), yb("yb", out_rows);
        auto xbh = Kokkos::create_mirror_view(xb);
        for (std::int64_t j = 0; j < in; ++j) xbh(j) = static_cast<T>(x[j * B + b]);
        Kokkos::deep_copy(xb, xbh);
        csr_spmv(exec, csr_device, xb, yb);
        auto ybh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), yb);
        for (std::int64_t r = 0; r < out_rows; ++r) {
          const double d = out.y[r * B + b] - static_cast<double>(ybh(r));
          num += d * d;
          den += static_cast<double>(ybh(r)) * static_cast<double>(ybh(r));
        }
      }
      out.verify_error = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
    } else {
      std::int64_t mismatches = 0;
      for (std::int64_t b = 0; b < B; ++b) {
        std::vector<T> xb(in);
        std::vector<T> yb(out_rows);
        for (std::int64_t j = 0; j < in; ++j) xb[j] = static_cast<T>(x[j * B + b]);
        reference::csr_multiply<Semiring>(csr, xb, yb);
        for (std::int64_t r = 0; r < out_rows; ++r)
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
  return with_semiring(args,
                       [&](auto semiring) { return run<decltype(semiring), Exec>(g, x, B, args); });
}

}  // namespace

int run_multiply(int argc, char** argv) {
  auto command = multiply_command();
  const auto args = command.parse(argc, argv, 2);
  if (args.has("help")) {
    std::cout << command.help();
    return ok;
  }
  const auto path = args.positional()[0];
  const auto B = args.get_int("batch", 1);
  if (args.has("compare") && args.get_int("repeat", 20) == 0)
    throw UsageError("--compare times every product after a warm-up: --repeat 1 or more");
  if (is_block_grammar_hdf5(path) || mpi_ranks() > 1 || args.has("device-memory")) {
    if (args.has("transpose") && (mpi_ranks() > 1 || args.has("device-memory")))
      throw UsageError(
          "--transpose is not available with --device-memory (streamed blocks have right "
          "products only) or under mpirun (the distributed matrix has right products only); "
          "block grammar files take it in one process");
    return run_multiply_blocks(args);
  }
  // The input values are read while the grammar loads (both mostly wait on one core).
  std::future<std::vector<double>> x_read;
  if (args.has("x")) x_read = std::async(std::launch::async, read_values, args.get("x"));
  const Grammar g = load_grammar(path, args, !args.has("quiet") && stderr_is_terminal());
  const bool transpose = args.has("transpose");
  const std::int64_t in = transpose ? g.num_rows : g.num_cols;
  const std::int64_t out_rows = transpose ? g.num_cols : g.num_rows;
  std::vector<double> x;
  const bool boolean = args.get("semiring", "plus_times") == "boolean";
  if (args.has("x")) {
    x = x_read.get();
    if (static_cast<std::int64_t>(x.size()) != in * B)
      throw FormatError(args.get("x"), "holds " + std::to_string(x.size()) + " values, expected " +
                                           (transpose ? "rows" : "cols") +
                                           " x B = " + std::to_string(in * B));
  } else {
    std::mt19937_64 gen(static_cast<std::uint64_t>(args.get_int("seed", 1)));
    std::uniform_real_distribution<double> u(0, 1);
    x.resize(static_cast<std::size_t>(in * B));
    for (auto& v : x) v = boolean ? (u(gen) < 0.1 ? 1.0 : 0.0) : u(gen);
  }
  Outcome out;
  std::string backend;
  with_backend(args.get("backend"), [&](const std::string& name) {
    backend = name;
#if KCLA_HAVE_CUDA
    if (name == "cuda") out = dispatch<Kokkos::Cuda>(g, x, B, args);
#endif
#if defined(KOKKOS_ENABLE_OPENMP)
    if (name == "openmp") out = dispatch<Kokkos::OpenMP>(g, x, B, args);
#endif
#if defined(KOKKOS_ENABLE_SERIAL)
    if (name == "serial") out = dispatch<Kokkos::Serial>(g, x, B, args);
#endif
  });
  std::printf("multiply%s: %lld x %lld, B=%lld, semiring %s, back end %s, schedule %s\n",
              transpose ? " (transposed, z = A^T y)" : "", static_cast<long long>(g.num_rows),
              static_cast<long long>(g.num_cols), static_cast<long long>(B),
              args.get("semiring", "plus_times").c_str(), backend.c_str(), out.schedule.c_str());
  std::printf("time: %.4f ms per product (%s), %.4f ms per vector; device %.2f MB\n",
              out.median_seconds * 1e3, timing_label(args).c_str(),
              out.median_seconds * 1e3 / static_cast<double>(B), out.device_bytes / 1e6);
  if (out.predicted_seconds > 0)
    std::printf("model: %.4f ms predicted (%+.0f %% of the measured time)\n",
                out.predicted_seconds * 1e3,
                100.0 * (out.predicted_seconds - out.median_seconds) / out.median_seconds);
  if (!out.compared.empty()) {
    std::printf("compare: the same product by what you could run instead (median of %lld)\n",
                static_cast<long long>(std::max<std::int64_t>(1, args.get_int("repeat", 20))));
    const Compared* best = nullptr;
    for (const auto& c : out.compared) {
      if (!c.failure.empty()) {
        std::printf("  %-44s %s\n", c.name.c_str(), c.failure.c_str());
        continue;
      }
      const double ratio = c.median_seconds / out.median_seconds;
      std::printf("  %-44s %10.4f ms   kcla is %.2fx %s\n", c.name.c_str(), c.median_seconds * 1e3,
                  ratio >= 1 ? ratio : 1 / ratio, ratio >= 1 ? "faster" : "slower");
      if (!best || c.median_seconds < best->median_seconds) best = &c;
    }
    for (const auto& c : out.compared)
      if (c.failure.rfind("disagrees", 0) == 0) return failure;  // a bug, not a timing
    if (best) {
      const double ratio = best->median_seconds / out.median_seconds;
      std::printf("best baseline: %s, %.4f ms: kcla is %.2fx %s\n", best->name.c_str(),
                  best->median_seconds * 1e3, ratio >= 1 ? ratio : 1 / ratio,
                  ratio >= 1 ? "faster" : "slower");
    }
  }
  if (args.has("output")) {
    std::ofstream o(args.get("output"));
    if (!o) throw FormatError(args.get("output"), "cannot write");
    o.precision(9);
    for (std::int64_t r = 0; r < out_rows; ++r) {
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
