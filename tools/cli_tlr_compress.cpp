// kcla tlr compress: a kernel matrix on points or a dense matrix to a TLR file, tile by
// tile at a tolerance (single process, or the ranks of a grid under mpirun).
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
               1, std::int64_t{1} << 31)
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
      .integer("--tile-size", "B", "tile size (required); 16-bit products need a multiple of 8", 1,
               1 << 24)
      .real("--tolerance", "EPS", "per-tile truncation bound (default 1e-6)", 0.0)
      .flag("--relative", "||A_ij - U V^T||_F <= EPS ||A_ij||_F (the default)")
      .flag("--absolute", "||A_ij - U V^T||_F <= EPS")
      .integer("--max-rank", "R", "cap every tile's rank (default 0: none)", 0,
               std::numeric_limits<int>::max())
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

}  // namespace

int run_tlr_compress(int argc, char** argv) {
  auto command = tlr_compress_command();
  const auto args = command.parse(argc, argv, 3);
  if (args.has("help")) {
    std::cout << command.help();
    return ok;
  }
  if (args.has("grid") && mpi_ranks() < 2) throw UsageError("--grid goes with mpirun -np N, N > 1");
  if (args.has("kernel") == args.has("dense"))
    throw UsageError("give exactly one source: --kernel K --points N, or --dense FILE");
  if (!args.has("output")) throw UsageError("compress needs -o OUT.h5");
  if (!args.has("tile-size")) throw UsageError("compress needs --tile-size B");
  if (args.has("relative") && args.has("absolute"))
    throw UsageError("--relative and --absolute exclude each other");
  const auto tile = args.get_int("tile-size", 0);
  const double tolerance = args.get_double("tolerance", 1e-6);
  const auto max_rank = args.get_int("max-rank", 0);
  const ScalarKind kind = parse_precision(args.get("precision", "fp64"));
  const std::string method = args.get("method", "auto");
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
    const auto dim = args.get_int("dim", 2);
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

}  // namespace kcla::cli
