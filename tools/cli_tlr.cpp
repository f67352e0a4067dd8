// kcla tlr compress | gemm | info: tile-low-rank matrices from the command line.
#include "cli_common.hpp"
#include "cli_mpi.hpp"
#include "cli_tlr_grid.hpp"
#include "cli_tlr_support.hpp"

#include <kcla/config.hpp>
#include <kcla/dense_matrix_market.hpp>
#include <kcla/hdf5_tlr.hpp>
#include <kcla/tlr_compress.hpp>
#include <kcla/tlr_compress_randomized.hpp>
#include <kcla/tlr_gemm.hpp>
#include <kcla/tlr_random.hpp>
#include <kcla/tlr_to_dense.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <limits>
#include <numeric>
#include <random>
#include <type_traits>

namespace kcla::cli {

namespace {

const char* kTlrHelp =
    R"(usage: kcla tlr SUBCOMMAND [options]      (kcla tlr SUBCOMMAND --help for details)

Tile-low-rank (TLR) matrices: a dense matrix stored as a grid of low-rank tiles, in kcla
TLR files (HDF5; docs/format.md, "TLR matrix").

subcommands:
  compress -o OUT.h5      compress a kernel matrix on random points, or a dense matrix
                          (Matrix Market), tile by tile at a tolerance
  info FILE.h5            shape, tiling, precision, rank statistics, bytes vs dense
  gemm A.h5 [B.h5]        C = alpha op(A) op(B) + beta C (B TLR or dense), timed;
                          --verify checks it against a dense product
)";

Command tlr_compress_command() {
  Command c(
      "kcla tlr compress (--kernel K --points N | --dense FILE) --tile-size B -o OUT.h5 "
      "[options]",
      "Compresses every tile at a tolerance and writes a kcla TLR file: by a truncated SVD "
      "on the host, or (kernel sources) by randomized range finding on the build's default "
      "device, every tile's error measured there against its bound.");
  c.group("Source (one of)")
      .choice("--kernel",
              {"exponential", "matern12", "matern32", "matern52", "gaussian", "inverse_distance"},
              "K_pq = k(|x_p - x_q|) on N random points")
      .integer("--points", "N",
               "number of points (uniform in the unit square / cube, ordered along a Z-order "
               "curve so that tiles are spatial clusters)",
               1)
      .integer("--dim", "D", "2 (default) or 3", 2, 3)
      .real("--length-scale", "L",
            "kernel length scale (default 0.1); variance 1; inverse_distance uses k(0) = the "
            "kernel at half the mean point spacing")
      .integer("--seed", "S", "random points (default 1)")
      .text("--dense", "FILE",
            "a dense matrix: Matrix Market, \"array\" format (column-major values; real or "
            "integer; general, symmetric or skew-symmetric), or \"coordinate\" format (absent "
            "entries are zero)")
      .group("Options")
      .integer("--tile-size", "B", "tile size (required); 16-bit products need a multiple of 8", 1)
      .real("--tolerance", "EPS", "per-tile truncation bound (default 1e-6)")
      .flag("--relative", "||A_ij - U V^T||_F <= EPS ||A_ij||_F (the default)")
      .flag("--absolute", "||A_ij - U V^T||_F <= EPS")
      .integer("--max-rank", "R", "cap every tile's rank (default 0: none)", 0)
      .choice("--method", {"auto", "svd", "randomized"},
              "svd: LAPACK gesdd per tile on the host cores; randomized: tiles generated and "
              "compressed on the default device (kernel sources only; a tile found over its "
              "bound is redone by the SVD); auto (the default): randomized for a kernel source "
              "in GPU builds, else svd")
      .choice("--precision", {"fp64", "fp32", "fp16", "bf16"}, "the stored factors (default fp64)")
      .flag("--check",
            "measure ||A - TLR||_F / ||A||_F of what was stored (done anyway when the matrix "
            "has at most 2^22 entries; --no-check skips it)")
      .flag("--no-check", "never measure it")
      .text("-o,--output", "FILE", "the TLR file to write (required; written atomically)")
      .text("--grid", "PxQ", "under mpirun: the process grid shape (P Q = N)")
      .footer(
          R"(Under mpirun -np N (N > 1) the ranks form a P x Q grid (the most square one, or --grid PxQ),
tile (i, j) belongs to rank (i mod P, j mod Q), each rank compresses only its own tiles and
the ranks write the one file together (parallel HDF5); any number of processes reads it.)");
  return c;
}

Command tlr_info_command() {
  Command c("kcla tlr info FILE.h5",
            "Reads a kcla TLR file completely (every check of the format, checksums included) "
            "and prints its shape, tiling, precision, rank statistics (logical and stored) and "
            "its size next to the dense matrix's in the same precision.");
  c.positional("FILE.h5", "a kcla TLR file");
  return c;
}

Command tlr_gemm_command() {
  Command c("kcla tlr gemm A.h5 [B.h5 | --dense-cols K] [options]",
            "C = alpha op(A) op(B) + beta C with A a kcla TLR file and B another one or a random "
            "dense matrix with K columns in op(B) (default K = 64); C is random, or read with "
            "--c. Timed over --repeat products (median); prints time, GFLOP/s executed, and the "
            "workspace.");
  c.positional("A.h5", "the TLR matrix A")
      .positional("B.h5", "a TLR matrix B (else B is dense and random)", false)
      .integer("--dense-cols", "K",
               "dense random B, op(B) of size k x K (without B.h5; default 64)", 1, 1 << 24)
      .flag("--transa", "op(A) = A^T")
      .flag("--transb", "op(B) = B^T")
      .real("--alpha", "A", "scalar alpha (default 1)")
      .real("--beta", "B", "scalar beta (default 0)")
      .text("--c", "FILE", "initial C (Matrix Market, m x n); default random")
      .choice("--precision", {"fp64", "fp32", "fp16", "bf16"},
              "compute in this precision (default: A's file precision; operands in other "
              "precisions are converted on reading)")
      .flag("--tf32", "fp32 storage, TF32 tensor-core math (CUDA; fp32 on the host)")
      .integer("--workspace", "BYTES", "workspace budget (default 0: see --rectangles)", 0)
      .integer("--rectangles", "N",
               "without --workspace: split C into at most N rectangles, pipelined (less "
               "workspace; default 1, all of C at once)",
               1, 1 << 20)
      .choice("--backend", {"cuda", "openmp", "serial"},
              "where the product runs (default: the build's default device)")
      .integer("--repeat", "N", "timed products (default 10; the median is reported)", 1, 1 << 24)
      .integer("--seed", "S", "random B and C (default 1)")
      .flag("--verify",
            "compare with alpha op(A) op(B) + beta C computed in double from the decompressed "
            "operands; exit 1 when the relative Frobenius error exceeds the precision's "
            "tolerance")
      .text("-o,--output", "FILE",
            "write the result C (one product from the initial C) as Matrix Market array")
      .text("--grid", "PxQ", "under mpirun: the process grid shape (P Q = N)")
      .footer(
          R"(Under mpirun -np N (N > 1) each rank of a P x Q grid reads its tiles of A (and B) and the
product runs SUMMA-style (panels of A broadcast along grid rows, of B along grid columns);
B and C are dense 2D block-cyclic in blocks of A's tile size, with the values one process
would draw. Times are the slowest rank's; the panel bytes received are printed next to the
SUMMA model. --verify and --output gather C on rank 0.)");
  return c;
}

int run_tlr_compress(int argc, char** argv) {
  auto command = tlr_compress_command();
  const auto args = command.parse(argc, argv, 3);
  if (args.has("help")) {
    std::cout << command.help();
    return ok;
  }
  if (args.has("grid") && mpi_ranks() < 2) throw UsageError("--grid goes with mpirun -np N, N > 1");
  if (!args.positional().empty())
    throw UsageError("unexpected argument '" + args.positional()[0] + "' (see --help)");
  if (args.has("kernel") == args.has("dense"))
    throw UsageError("give exactly one source: --kernel K --points N, or --dense FILE");
  if (!args.has("output")) throw UsageError("compress needs -o OUT.h5");
  if (!args.has("tile-size")) throw UsageError("compress needs --tile-size B");
  if (args.has("relative") && args.has("absolute"))
    throw UsageError("--relative and --absolute exclude each other");
  const auto tile = args.get_int("tile-size", 0);
  if (tile < 1 || tile > (1 << 24)) throw UsageError("--tile-size must be in [1, 2^24]");
  const double tolerance = args.get_double("tolerance", 1e-6);
  if (!(tolerance >= 0)) throw UsageError("--tolerance must be a non-negative number");
  const auto max_rank = args.get_int("max-rank", 0);
  if (max_rank < 0 || max_rank > std::numeric_limits<int>::max())
    throw UsageError("--max-rank must be non-negative");
  const ScalarKind kind = parse_precision(args.get("precision", "fp64"));
  const std::string method = args.get("method", "auto");
  if (method != "auto" && method != "svd" && method != "randomized")
    throw UsageError("--method: auto, svd or randomized (not '" + method + "')");
  if (method == "randomized" && !args.has("kernel"))
    throw UsageError(
        "--method randomized compresses kernel sources (--kernel); use svd for --dense");
  const bool randomized =
      args.has("kernel") &&
      (method == "randomized" ||
       (method == "auto" &&
        !Kokkos::SpaceAccessibility<Kokkos::HostSpace,
                                    Kokkos::DefaultExecutionSpace::memory_space>::accessible));

  Source src;
  std::string description;
  if (args.has("kernel")) {
    src.is_kernel = true;
    src.kernel.type = parse_kernel(args.get("kernel"));
    if (!args.has("points")) throw UsageError("--kernel needs --points N");
    const auto n = args.get_int("points", 0);
    if (n < 1 || n > (std::int64_t(1) << 31)) throw UsageError("--points must be in [1, 2^31]");
    const auto dim = args.get_int("dim", 2);
    if (dim != 2 && dim != 3) throw UsageError("--dim must be 2 or 3");
    src.kernel.length_scale = args.get_double("length-scale", 0.1);
    if (!(src.kernel.length_scale > 0)) throw UsageError("--length-scale must be positive");
    src.points = morton_points(n, static_cast<int>(dim),
                               static_cast<std::uint64_t>(args.get_int("seed", 1)));
    const double spacing = std::pow(static_cast<double>(n), -1.0 / static_cast<double>(dim));
    src.kernel.self_value = src.kernel.variance * src.kernel.length_scale / (0.5 * spacing);
    description = std::string(to_string(src.kernel.type)) + " kernel on " + std::to_string(n) +
                  " points in " + std::to_string(dim) + "D (length scale " +
                  args.get("length-scale", "0.1") + ")";
  } else {
    if (args.has("points") || args.has("dim") || args.has("length-scale") || args.has("seed"))
      throw UsageError("--points, --dim, --length-scale and --seed go with --kernel");
    src.dense = read_dense_matrix_market(args.get("dense"));
    description = args.get("dense");
  }

  TlrCompressOptions options;
  if (args.has("absolute")) {
    options.relative_tolerance = 0;
    options.absolute_tolerance = tolerance;
  } else {
    options.relative_tolerance = tolerance;
  }
  options.max_rank = static_cast<int>(max_rank);

  const auto output = args.get("output");
  const bool check =
      args.has("check") ||
      (!args.has("no-check") &&
       static_cast<double>(src.rows()) * static_cast<double>(src.cols()) <= double(1 << 22));
  if (mpi_ranks() > 1) {
    compress_on_grid(src, description, static_cast<int>(tile), options, kind, output, check,
                     args.get("grid"), randomized);
    return ok;
  }
  double seconds = 0, error = -1;
  ScalarKind used = kind;
  TlrCompressReport report;
  with_scalar(kind, [&](auto tag) {
    using Scalar = typename decltype(tag)::type;
    used = TlrScalarTraits<Scalar>::kind;
    const auto start = std::chrono::steady_clock::now();
    const auto a =
        randomized ? compress_kernel<Scalar, Kokkos::HostSpace>(
                         Kokkos::DefaultExecutionSpace(), src.points, src.points, src.kernel,
                         static_cast<int>(tile), options, &report)
        : src.is_kernel
            ? compress_kernel<Scalar, Kokkos::HostSpace>(src.points, src.points, src.kernel,
                                                         static_cast<int>(tile), options)
            : compress<Scalar, Kokkos::HostSpace>(
                  src.dense.values.data(), src.dense.rows, src.dense.cols,
                  std::max<std::int64_t>(1, src.dense.rows), static_cast<int>(tile), options);
    seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    write_tlr_hdf5(output, a, kind);
  });
  // What the file holds (in the requested precision, fp16 included on host builds).
  if (check) error = compression_error(src, read_tlr_hdf5<double, Kokkos::HostSpace>(output));
  const std::string cap = max_rank > 0 ? ", max rank " + std::to_string(max_rank) : "";
  std::printf("compressed %s -> %s in %.2f s (%s tolerance %g%s)\n", description.c_str(),
              output.c_str(), seconds, args.has("absolute") ? "absolute" : "relative", tolerance,
              cap.c_str());
  print_method(randomized, report);
  const auto info = read_tlr_hdf5_info(output);
  print_summary(*info.layout, info.value_type);
  if (kind != used)
    std::printf("note       compressed as %s and stored as %s: this build has no 16-bit %s type\n",
                to_string(used), to_string(kind), to_string(kind));
  if (error >= 0)
    std::printf("error      ||A - TLR||_F / ||A||_F = %.3g (as stored in %s)\n", error,
                to_string(kind));
  if ((kind == ScalarKind::f16 || kind == ScalarKind::bf16) && tile % 8 != 0)
    std::printf("note       16-bit products need a tile size that is a multiple of 8\n");
  return ok;
}

// ------------------------------------------------------------------------------------
// info

int run_tlr_info(int argc, char** argv) {
  auto command = tlr_info_command();
  const auto args = command.parse(argc, argv, 3);
  if (args.has("help")) {
    std::cout << command.help();
    return ok;
  }
  if (args.positional().size() != 1)
    throw UsageError("info needs exactly one FILE.h5 (see --help)");
  const auto path = args.positional()[0];
  const auto info = read_tlr_hdf5_info(path);
  // Everything else the reader checks (checksums, padding) needs the factors.
  with_scalar(info.value_type, [&](auto tag) {
    using Scalar = typename decltype(tag)::type;
    (void)read_tlr_hdf5<Scalar, Kokkos::HostSpace>(path);
  });
  std::printf("%s: kcla TLR matrix (%s, version %d)\n", path.c_str(), kTlrFormatName,
              kTlrFormatVersion);
  print_summary(*info.layout, info.value_type);
  return ok;
}

// ------------------------------------------------------------------------------------
// gemm

struct GemmResult {
  std::int64_t m = 0, n = 0, k = 0;
  double median_seconds = 0, flops = 0;
  std::size_t workspace = 0;
  int rectangles = 0;
  double verify_error = -1, tolerance = 0;
  std::string a_desc, b_desc;
};

template <class Scalar, class Exec>
GemmResult run_gemm(const Arguments& args) {
  using memory = typename Exec::memory_space;
  using traits = TlrScalarTraits<Scalar>;
  const bool transa = args.has("transa"), transb = args.has("transb");
  const Op op_a = transa ? Op::T : Op::N, op_b = transb ? Op::T : Op::N;
  const double alpha = args.get_double("alpha", 1.0), beta = args.get_double("beta", 0.0);
  const auto seed = static_cast<std::uint64_t>(args.get_int("seed", 1));
  const auto repeat = std::max<std::int64_t>(1, args.get_int("repeat", 10));
  Exec exec;
  GemmResult res;

  const auto& files = args.positional();
  const auto a = read_tlr_hdf5<Scalar, memory>(files[0]);
  res.m = transa ? a.num_cols() : a.num_rows();
  res.k = transa ? a.num_rows() : a.num_cols();
  // Operands stored in another precision are converted on reading: say so.
  auto describe = [](const std::string& path) {
    const ScalarKind stored = read_tlr_hdf5_info(path).value_type;
    return stored == traits::kind ? path
                                  : path + " (" + to_string(stored) + ", converted on reading)";
  };
  res.a_desc = describe(files[0]);

  TlrGemmOptions options;
  options.workspace_bytes = static_cast<std::size_t>(args.get_int("workspace", 0));
  options.tuning.rectangles = static_cast<int>(args.get_int("rectangles", 0));
  if (args.has("tf32")) options.math = TlrMath::tf32;

  auto run = [&](const auto& b, std::int64_t b_rows, std::int64_t b_cols) {
    const std::int64_t bk = transb ? b_cols : b_rows;
    res.n = transb ? b_rows : b_cols;
    if (bk != res.k)
      throw InvalidArgument("op(A) is " + std::to_string(res.m) + " x " + std::to_string(res.k) +
                            " but op(B) has " + std::to_string(bk) + " rows");
    PaddedMatrix<Scalar, memory> c("kcla::cli::C", res.m, res.n), c0("kcla::cli::C0", res.m, res.n);
    if (args.has("c")) {
      const auto given = read_initial_c(args.get("c"), res.m, res.n);
      auto h = Kokkos::create_mirror_view(c0.full);
      for (std::int64_t col = 0; col < res.n; ++col)
        for (std::int64_t r = 0; r < res.m; ++r) h(r, col) = traits::narrow(given(r, col));
      Kokkos::deep_copy(c0.full, h);
    } else {
      fill_random(exec, c0.view, seed + 2);
    }
    Kokkos::deep_copy(exec, c.full, c0.full);
    const TlrGemmPlan plan = analyze(op_a, a, op_b, b, options);
    res.flops = plan.flops();
    res.workspace = plan.workspace_bytes();
    res.rectangles = plan.num_rectangles();
    gemm(exec, plan, a, b, alpha, beta, c.view);  // warm-up: backend state, workspace
    exec.fence();
    std::vector<double> times;
    for (std::int64_t r = 0; r < repeat; ++r) {
      const auto start = std::chrono::steady_clock::now();
      gemm(exec, plan, a, b, alpha, beta, c.view);
      exec.fence();
      times.push_back(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    std::sort(times.begin(), times.end());
    res.median_seconds = times[times.size() / 2];
    if (!args.has("verify") && !args.has("output")) return;
    // One product from the initial C: what --output writes and --verify checks.
    Kokkos::deep_copy(exec, c.full, c0.full);
    gemm(exec, plan, a, b, alpha, beta, c.view);
    exec.fence();
    const DenseMatrix result = dense_to_host(c.view);
    if (args.has("output")) write_dense_matrix_market(args.get("output"), result);
    if (!args.has("verify")) return;
    const DenseMatrix ha = tlr_to_host(a);
    DenseMatrix hb;
    if constexpr (std::is_same<std::decay_t<decltype(b)>, TlrMatrix<Scalar, memory>>::value)
      hb = tlr_to_host(b);
    else
      hb = dense_to_host(b);
    DenseMatrix ref = dense_to_host(c0.view);
    res.verify_error = product_error(transa, transb, alpha, beta, ha, hb, ref, result);
    res.tolerance = product_tolerance(traits::kind, args.has("tf32"), res.k);
  };

  if (files.size() == 2) {
    const auto b = read_tlr_hdf5<Scalar, memory>(files[1]);
    res.b_desc = describe(files[1]);
    run(b, b.num_rows(), b.num_cols());
  } else {
    const auto cols = args.get_int("dense-cols", 64);
    if (cols < 1 || cols > (std::int64_t(1) << 31)) throw UsageError("--dense-cols must be >= 1");
    const std::int64_t rows = transb ? cols : res.k, width = transb ? res.k : cols;
    PaddedMatrix<Scalar, memory> b("kcla::cli::B", rows, width);
    fill_random(exec, b.view, seed + 1);
    res.b_desc = "dense random " + std::to_string(rows) + " x " + std::to_string(width);
    run(b.view, rows, width);
  }
  return res;
}

template <class Scalar>
GemmResult dispatch_gemm(const std::string& backend, const Arguments& args) {
  GemmResult res;
  with_backend(backend, [&](const std::string& name) {
#if KCLA_HAVE_CUDA
    if (name == "cuda") res = run_gemm<Scalar, Kokkos::Cuda>(args);
#endif
#if defined(KOKKOS_ENABLE_OPENMP)
    if (name == "openmp") res = run_gemm<Scalar, Kokkos::OpenMP>(args);
#endif
#if defined(KOKKOS_ENABLE_SERIAL)
    if (name == "serial") res = run_gemm<Scalar, Kokkos::Serial>(args);
#endif
    (void)name;
  });
  return res;
}

int run_tlr_gemm(int argc, char** argv) {
  auto command = tlr_gemm_command();
  const auto args = command.parse(argc, argv, 3);
  if (args.has("help")) {
    std::cout << command.help();
    return ok;
  }
  if (args.has("grid") && mpi_ranks() < 2) throw UsageError("--grid goes with mpirun -np N, N > 1");
  const auto& files = args.positional();
  if (files.empty() || files.size() > 2)
    throw UsageError("gemm needs A.h5 and optionally B.h5 (see --help)");
  if (files.size() == 2 && args.has("dense-cols"))
    throw UsageError("give B.h5 or --dense-cols K, not both");
  const auto backend = args.get("backend");
  // The precision: A's file's unless --precision says otherwise.
  const auto info = read_tlr_hdf5_info(files[0]);
  const ScalarKind kind =
      args.has("precision") ? parse_precision(args.get("precision")) : info.value_type;
  if (args.has("tf32") && kind != ScalarKind::f32)
    throw UsageError("--tf32 needs fp32 (this product is " + std::string(to_string(kind)) + ")");
  if (mpi_ranks() > 1) return gemm_on_grid(args, kind, backend);
  GemmResult res;
  ScalarKind used = kind;
  with_scalar(kind, [&](auto tag) {
    using Scalar = typename decltype(tag)::type;
    used = TlrScalarTraits<Scalar>::kind;
    res = dispatch_gemm<Scalar>(backend, args);
  });
  std::string backend_name = backend;
  if (backend_name.empty()) with_backend("", [&](const std::string& n) { backend_name = n; });
  std::printf("tlr gemm: C (%lld x %lld) = %g op(A) op(B) + %g C, k = %lld, ops %s%s\n",
              static_cast<long long>(res.m), static_cast<long long>(res.n),
              args.get_double("alpha", 1.0), args.get_double("beta", 0.0),
              static_cast<long long>(res.k), args.has("transa") ? "T" : "N",
              args.has("transb") ? "T" : "N");
  std::printf("operands  A %s, B %s; precision %s%s; back end %s\n", res.a_desc.c_str(),
              res.b_desc.c_str(), precision_note(kind, used).c_str(),
              args.has("tf32") ? " (tf32 math)" : "", backend_name.c_str());
  const double dense_flops =
      2.0 * static_cast<double>(res.m) * static_cast<double>(res.n) * static_cast<double>(res.k);
  std::printf(
      "time      %.4f ms (median of %lld); %.2f GFLOP/s executed (%.3g GFLOP), %.2f GFLOP/s "
      "dense-equivalent\n",
      res.median_seconds * 1e3,
      static_cast<long long>(std::max<std::int64_t>(1, args.get_int("repeat", 10))),
      res.median_seconds > 0 ? res.flops / res.median_seconds / 1e9 : 0.0, res.flops / 1e9,
      res.median_seconds > 0 ? dense_flops / res.median_seconds / 1e9 : 0.0);
  std::printf("workspace %s (%zu bytes), %d rectangle%s\n",
              megabytes(static_cast<double>(res.workspace)).c_str(), res.workspace, res.rectangles,
              res.rectangles == 1 ? "" : "s");
  if (args.has("verify")) {
    const bool passed = res.verify_error <= res.tolerance;
    std::printf(
        "verify    relative Frobenius error vs dense double product %.3g (tolerance %.3g): %s\n",
        res.verify_error, res.tolerance, passed ? "OK" : "FAILED");
    if (!passed) return failure;
  }
  return ok;
}

}  // namespace

int run_tlr(int argc, char** argv) {
  if (argc < 3 || std::string(argv[2]) == "--help" || std::string(argv[2]) == "-h" ||
      std::string(argv[2]) == "help") {
    std::cout << kTlrHelp;
    return argc < 3 ? usage : ok;
  }
  const std::string sub = argv[2];
  if (sub == "compress") return run_tlr_compress(argc, argv);
  if (sub == "info") return run_tlr_info(argc, argv);
  if (sub == "gemm") return run_tlr_gemm(argc, argv);
  throw UsageError("unknown subcommand '" + sub +
                   "' (compress, info or gemm; see kcla tlr --help)");
}

}  // namespace kcla::cli
