// kcla multiply on a block grammar file (and on any file under mpirun): every block on
// the chosen back end, the ranks' partial results added up, checked on sampled rows
// against the grammar expanded on the host.
#include "cli_common.hpp"
#include "cli_mpi.hpp"

#include <kcla/block_grammar_multiply.hpp>
#include <kcla/block_grammar_reference.hpp>
#include <kcla/config.hpp>
#include <kcla/distributed_grammar_matrix.hpp>
#include <kcla/hdf5_block_grammar.hpp>
#include <kcla/hdf5_block_grammar_mpi.hpp>
#include <kcla/hdf5_grammar.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>

namespace kcla::cli {

namespace {

struct BlockOutcome {
  double median_seconds = 0;
  std::int64_t device_bytes = 0;  // this rank's
  std::int64_t held_blocks = 0;
  std::int64_t streamed_blocks = 0, streamed_bytes = 0;  // this rank's (--device-memory)
  std::string transport = "none (one process)";
  std::vector<double> y;
};

// The rows --verify checks: every row, or N spread over the matrix (fixed seed).
std::vector<std::int64_t> verify_rows(std::int64_t num_rows, std::int64_t wanted) {
  std::vector<std::int64_t> rows;
  if (wanted <= 0 || wanted >= num_rows) {
    for (std::int64_t r = 0; r < num_rows; ++r) rows.push_back(r);
    return rows;
  }
  std::mt19937_64 gen(12345);
  std::uniform_int_distribution<std::int64_t> pick(0, num_rows - 1);
  while (static_cast<std::int64_t>(rows.size()) < wanted) {
    rows.push_back(pick(gen));
    if (static_cast<std::int64_t>(rows.size()) == wanted) {
      std::sort(rows.begin(), rows.end());
      rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
    }
  }
  return rows;
}

template <class Semiring, class Exec>
BlockOutcome run_blocks(const BlockGrammar& g, const std::vector<double>& x, std::int64_t B,
                        const Arguments& args) {
  using T = typename Semiring::value_type;
  using memory = typename Exec::memory_space;
  using Scalar = std::conditional_t<std::is_same<T, bool>::value, float, T>;
  GrammarMatrixOptions options;
  options.schedule = parse_schedule(args.get("schedule", "auto"));
  options.expected_vectors = B;
  const bool transpose = args.has("transpose");  // one process, every block resident
  if (transpose) options.products = GrammarProducts::transpose;
  const std::int64_t in = transpose ? g.num_rows() : g.num_cols();
  const std::int64_t out_rows = transpose ? g.num_cols() : g.num_rows();
  BlockMatrixOptions block_options;
  if (args.has("device-memory"))
    block_options.device_budget_bytes = parse_bytes(args.get("device-memory"), "device-memory");
  Kokkos::View<T**, Kokkos::LayoutRight, memory> X("X", in, B), Y("Y", out_rows, B);
  auto Xh = Kokkos::create_mirror_view(X);
  for (std::int64_t i = 0; i < in * B; ++i) Xh.data()[i] = static_cast<T>(x[i]);
  Kokkos::deep_copy(X, Xh);
  Exec exec;
  BlockOutcome out;
  std::function<void()> product;
#if KCLA_HAVE_MPI
  std::unique_ptr<DistributedGrammarMatrix<Scalar, memory>> D;
#endif
  std::unique_ptr<BlockGrammarMatrix<Scalar, memory>> A;
  if (mpi_ranks() > 1) {
#if KCLA_HAVE_MPI
    D = std::make_unique<DistributedGrammarMatrix<Scalar, memory>>(MPI_COMM_WORLD, g, options,
                                                                   block_options);
    if (args.has("mpi-transport"))
      D->request_transport(parse_mpi_transport(args.get("mpi-transport")));
    product = [&] { multiply<Semiring>(exec, *D, X, Y); };
    out.device_bytes = D->local().device_bytes();
    out.held_blocks = static_cast<std::int64_t>(D->local().num_held_blocks());
    out.streamed_blocks = static_cast<std::int64_t>(D->local().num_streamed_blocks());
    out.streamed_bytes = D->local().streamed_bytes();
#endif
  } else {
    A = std::make_unique<BlockGrammarMatrix<Scalar, memory>>(g, options, block_options);
    if (transpose)
      product = [&] { multiply_transpose<Semiring>(exec, *A, X, Y); };
    else
      product = [&] { multiply<Semiring>(exec, *A, X, Y); };
    out.held_blocks = static_cast<std::int64_t>(A->num_held_blocks());
    out.streamed_blocks = static_cast<std::int64_t>(A->num_streamed_blocks());
    out.streamed_bytes = A->streamed_bytes();
  }
  const auto repeat = args.get_int("repeat", 20);
  if (repeat > 0) {
    product();  // warm-up: plans and workspace
    exec.fence();
  }
  std::vector<double> times;
  for (std::int64_t r = 0; r < std::max<std::int64_t>(1, repeat); ++r) {
#if KCLA_HAVE_MPI
    if (mpi_ranks() > 1) MPI_Barrier(MPI_COMM_WORLD);
#endif
    const auto start = std::chrono::steady_clock::now();
    product();
    exec.fence();
    times.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  out.median_seconds = times[times.size() / 2];
#if KCLA_HAVE_MPI
  if (D) {
    out.transport = to_string(D->last_transport());
    if (!D->transport_note().empty()) out.transport += " (" + D->transport_note() + ")";
  }
#endif
  if (A) out.device_bytes = A->device_bytes();
  auto Yh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), Y);
  out.y.assign(Yh.data(), Yh.data() + Yh.span());
  return out;
}

template <class Exec>
BlockOutcome dispatch_blocks(const BlockGrammar& g, const std::vector<double>& x, std::int64_t B,
                             const Arguments& args) {
  return with_semiring(
      args, [&](auto semiring) { return run_blocks<decltype(semiring), Exec>(g, x, B, args); });
}

}  // namespace

int run_multiply_blocks(const Arguments& args) {
  if (args.has("compare"))
    throw UsageError("--compare needs one grammar (not a block file, not mpirun)");
  const auto path = args.positional()[0];
  const auto B = args.get_int("batch", 1);
  const int rank = mpi_rank(), ranks = mpi_ranks();
  BlockGrammar g;
#if KCLA_HAVE_MPI
  if (ranks > 1) {
    g = is_hdf5_file(path)
            ? read_block_grammar_hdf5(MPI_COMM_WORLD, path)
            : throw UsageError("under mpirun, multiply reads a kcla .h5 file (compress first)");
  } else
#endif
  {
    g = is_hdf5_file(path) ? read_block_grammar_hdf5(path)
                           : BlockGrammar::single(load_grammar(path, args, false));
  }
  std::vector<double> x;
  const bool boolean = args.get("semiring", "plus_times") == "boolean";
  const bool transpose = args.has("transpose");
  const std::int64_t in = transpose ? g.num_rows() : g.num_cols();
  const std::int64_t out_rows = transpose ? g.num_cols() : g.num_rows();
  if (args.has("x")) {
    x = read_values(args.get("x"));
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
  BlockOutcome out;
  std::string backend;
  with_backend(args.get("backend"), [&](const std::string& name) {
    backend = name;
#if KCLA_HAVE_CUDA
    if (name == "cuda") out = dispatch_blocks<Kokkos::Cuda>(g, x, B, args);
#endif
#if defined(KOKKOS_ENABLE_OPENMP)
    if (name == "openmp") out = dispatch_blocks<Kokkos::OpenMP>(g, x, B, args);
#endif
#if defined(KOKKOS_ENABLE_SERIAL)
    if (name == "serial") out = dispatch_blocks<Kokkos::Serial>(g, x, B, args);
#endif
  });
  // Every rank checks the sampled rows over its own blocks' share of the reference: the
  // check of y needs the sum over all blocks, so the per-rank references are reduced.
  double verify_error = -1;
  const bool plus = args.get("semiring", "plus_times") == "plus_times";
  if (args.has("verify")) {
    // The left product is checked in every column (the host expands every row anyway).
    const auto rows = transpose ? verify_rows(out_rows, 0)
                                : verify_rows(g.num_rows(), args.get_int("verify-rows", 1000));
    const auto semiring = args.get("semiring", "plus_times");
    auto reference_of = [&](auto tag) {
      using S = decltype(tag);
      const auto part = transpose ? reference::block_transpose_multiply<S>(g, x, B)
                                  : reference::block_rows_multiply<S>(g, rows, x, B);
      std::vector<double> r(part.begin(), part.end());
#if KCLA_HAVE_MPI
      if (ranks > 1) {
        const MPI_Op op = semiring == "plus_times" ? MPI_SUM
                          : semiring == "boolean"  ? MPI_MAX
                                                   : MPI_MIN;
        MPI_Allreduce(MPI_IN_PLACE, r.data(), static_cast<int>(r.size()), MPI_DOUBLE, op,
                      MPI_COMM_WORLD);
      }
#endif
      return r;
    };
    std::vector<double> ref;
    if (semiring == "plus_times")
      ref = reference_of(PlusTimes<double>{});
    else if (semiring == "boolean")
      ref = reference_of(Boolean{});
    else if (args.get("precision", "fp32") == "fp64")
      ref = reference_of(MinPlus<double>{});
    else
      ref = reference_of(MinPlus<float>{});  // min and + in the product's own precision
    double scale = 0;
    for (double v : ref) scale = std::max(scale, std::abs(v));
    verify_error = 0;
    for (std::size_t k = 0; k < rows.size(); ++k)
      for (std::int64_t b = 0; b < B; ++b) {
        const double want = ref[k * B + b], got = out.y[rows[k] * B + b];
        if (plus)
          verify_error = std::max(verify_error,
                                  std::abs(got - want) / (std::abs(want) + 1e-6 * scale + 1e-300));
        else if (!(got == want) && !(std::isinf(got) && std::isinf(want)))
          verify_error += 1;
      }
  }
  std::int64_t totals[3] = {out.device_bytes, out.streamed_blocks, out.streamed_bytes};
#if KCLA_HAVE_MPI
  if (ranks > 1) {
    const std::int64_t mine[3] = {out.device_bytes, out.streamed_blocks, out.streamed_bytes};
    MPI_Reduce(mine, totals, 3, MPI_INT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
  }
#endif
  const std::int64_t total_device_bytes = totals[0];
  if (rank == 0) {
    std::printf(
        "multiply%s: %lld x %lld in %lld blocks, B=%lld, semiring %s, back end %s, %d rank%s\n",
        transpose ? " (transposed, z = A^T y)" : "", static_cast<long long>(g.num_rows()),
        static_cast<long long>(g.num_cols()), static_cast<long long>(g.layout.num_blocks()),
        static_cast<long long>(B), args.get("semiring", "plus_times").c_str(), backend.c_str(),
        ranks, ranks > 1 ? "s" : "");
    std::printf(
        "time: %.4f ms per product (%s), %.4f ms per vector; device %.2f MB "
        "(all ranks); reduction %s\n",
        out.median_seconds * 1e3, timing_label(args).c_str(),
        out.median_seconds * 1e3 / static_cast<double>(B), total_device_bytes / 1e6,
        out.transport.c_str());
    if (args.has("device-memory") && parse_bytes(args.get("device-memory"), "device-memory") > 0)
      std::printf(
          "streamed: %lld of %lld blocks from host memory through device slots, %.2f MB per "
          "product (%.1f GB/s at the median time)\n",
          static_cast<long long>(totals[1]), static_cast<long long>(g.layout.num_blocks()),
          totals[2] / 1e6, totals[2] / out.median_seconds / 1e9);
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
  }
  if (args.has("verify")) {
    const double tol = args.get("precision", "fp32") == "fp64" ? 1e-10 : 1e-4;
    const bool passed = plus ? verify_error <= tol : verify_error == 0;
    if (rank == 0) {
      const auto checked =
          transpose ? static_cast<std::size_t>(out_rows)
                    : verify_rows(g.num_rows(), args.get_int("verify-rows", 1000)).size();
      const char* what = transpose ? "columns" : "rows";
      if (plus)
        std::printf(
            "verify: %zu %s x %lld vectors against the grammar expanded on the host: "
            "worst relative error %.3g (tolerance %.0g): %s\n",
            checked, what, static_cast<long long>(B), verify_error, tol, passed ? "OK" : "FAILED");
      else
        std::printf("verify: %zu %s x %lld vectors, %lld entries differ: %s\n", checked, what,
                    static_cast<long long>(B), static_cast<long long>(verify_error),
                    passed ? "OK" : "FAILED");
    }
    if (!passed) return failure;
  }
  return ok;
}

}  // namespace kcla::cli
