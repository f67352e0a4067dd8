#include "cli_tlr_grid.hpp"

#include <kcla/config.hpp>

#if KCLA_HAVE_MPI
#include <kcla/distributed_tlr_gemm.hpp>

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <vector>
#endif

namespace kcla::cli {

#if KCLA_HAVE_MPI
namespace {

int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

/// "PxQ" (--grid), or the most square grid for an empty shape.
ProcessGrid make_grid(const std::string& shape) {
  if (shape.empty()) return ProcessGrid(MPI_COMM_WORLD);
  const auto x = shape.find('x');
  int rows = 0, cols = 0;
  try {
    if (x == std::string::npos) throw UsageError("");
    rows = std::stoi(shape.substr(0, x));
    cols = std::stoi(shape.substr(x + 1));
  } catch (const std::exception&) {
    throw UsageError("--grid: PxQ, e.g. 2x4 (not '" + shape + "')");
  }
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (rows < 1 || cols < 1 || rows * cols != size)
    throw UsageError("--grid " + shape + " needs " + std::to_string(rows * cols) +
                     " ranks; mpirun started " + std::to_string(size));
  return ProcessGrid(MPI_COMM_WORLD, rows, cols);
}

double max_over_ranks(double v) {
  MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return v;
}

/// min, mean and max of a per-rank value.
struct Spread {
  double min = 0, mean = 0, max = 0;
};
Spread spread(double v) {
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  Spread s;
  MPI_Allreduce(&v, &s.min, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&v, &s.max, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(&v, &s.mean, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  s.mean /= size;
  return s;
}

/// "grid P x Q ranks; tiles per rank ..; factor bytes per rank .." (collective).
template <class Matrix>
std::string distribution(const Matrix& a) {
  const Spread tiles = spread(static_cast<double>(a.local().tile_rows()) * a.local().tile_cols());
  const Spread bytes = spread(static_cast<double>(a.local_bytes()));
  char line[256];
  std::snprintf(line, sizeof line,
                "grid       %d x %d ranks; tiles per rank %.0f..%.0f; factor bytes per rank "
                "%s..%s (mean %s)\n",
                a.grid().rows(), a.grid().cols(), tiles.min, tiles.max,
                megabytes(bytes.min).c_str(), megabytes(bytes.max).c_str(),
                megabytes(bytes.mean).c_str());
  return line;
}

}  // namespace

void compress_on_grid(const Source& src, const std::string& description, int tile,
                      const TlrCompressOptions& options, ScalarKind kind, const std::string& output,
                      bool check, const std::string& grid_shape, bool randomized) {
  const ProcessGrid grid = make_grid(grid_shape);
  ScalarKind used = kind;
  TlrCompressReport report;
  with_scalar(kind, [&](auto tag) {
    using Scalar = typename decltype(tag)::type;
    used = TlrScalarTraits<Scalar>::kind;
    MPI_Barrier(MPI_COMM_WORLD);
    const auto start = std::chrono::steady_clock::now();
    const auto a =
        randomized ? compress_kernel<Scalar, Kokkos::HostSpace>(Kokkos::DefaultExecutionSpace(),
                                                                grid, src.points, src.points,
                                                                src.kernel, tile, options, &report)
        : src.is_kernel ? compress_kernel<Scalar, Kokkos::HostSpace>(grid, src.points, src.points,
                                                                     src.kernel, tile, options)
                        : compress<Scalar, Kokkos::HostSpace>(
                              grid, src.dense.values.data(), src.dense.rows, src.dense.cols,
                              std::max<std::int64_t>(1, src.dense.rows), tile, options);
    const double seconds = max_over_ranks(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    write_tlr_hdf5(output, a);
    if (world_rank() == 0)
      std::printf(
          "compressed %s -> %s in %.2f s on %d ranks (%s tolerance %g%s)\n", description.c_str(),
          output.c_str(), seconds, grid.size(),
          options.relative_tolerance > 0 ? "relative" : "absolute",
          options.relative_tolerance > 0 ? options.relative_tolerance : options.absolute_tolerance,
          options.max_rank > 0 ? (", max rank " + std::to_string(options.max_rank)).c_str() : "");
    const std::string grid_line = distribution(a);
    if (world_rank() == 0) std::fputs(grid_line.c_str(), stdout);
  });
  // The ranks' reports summed (the largest error ratio: the maximum).
  long long counts[5] = {report.tiles, report.batches, report.sample_columns, report.fallback_tiles,
                         report.capped_tiles};
  MPI_Allreduce(MPI_IN_PLACE, counts, 5, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  double ratio = report.max_error_ratio;
  MPI_Allreduce(MPI_IN_PLACE, &ratio, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  if (world_rank() != 0) return;
  report.tiles = static_cast<int>(counts[0]);
  report.batches = static_cast<int>(counts[1]);
  report.sample_columns = counts[2];
  report.fallback_tiles = static_cast<int>(counts[3]);
  report.capped_tiles = static_cast<int>(counts[4]);
  report.max_error_ratio = ratio;
  print_method(randomized, report);
  const auto info = read_tlr_hdf5_info(output);
  print_summary(*info.layout, info.value_type);
  if (kind != used)
    std::printf("note       compressed and stored as %s: this build has no 16-bit %s type\n",
                to_string(used), to_string(kind));
  if (check)
    std::printf("error      ||A - TLR||_F / ||A||_F = %.3g (as stored in %s)\n",
                compression_error(src, read_tlr_hdf5<double, Kokkos::HostSpace>(output)),
                to_string(used));
}

namespace {

struct GridGemmResult {
  std::int64_t m = 0, n = 0, k = 0;
  double median_seconds = 0;
  DistributedGemmReport report;
  Spread received;
  double verify_error = -1, tolerance = 0;
  std::string b_desc, grid_line;
};

/// The whole of a distributed operand on every rank, in double (for --verify / --output).
template <class Scalar, class MemorySpace>
DenseMatrix whole(const DistributedDenseMatrix<Scalar, MemorySpace>& d) {
  return DenseMatrix{d.num_rows(), d.num_cols(), allgather(d)};
}
template <class Scalar, class MemorySpace>
DenseMatrix whole(const DistributedTlrMatrix<Scalar, MemorySpace>& a) {
  return tlr_to_host(allgather(a));
}

template <class Scalar, class Exec>
GridGemmResult run_grid_gemm(const Arguments& args, const Exec& exec) {
  using memory = typename Exec::memory_space;
  using traits = TlrScalarTraits<Scalar>;
  const ProcessGrid grid = make_grid(args.get("grid"));
  const bool transa = args.has("transa"), transb = args.has("transb");
  const Op op_a = transa ? Op::T : Op::N, op_b = transb ? Op::T : Op::N;
  const double alpha = args.get_double("alpha", 1.0), beta = args.get_double("beta", 0.0);
  const auto seed = static_cast<std::uint64_t>(args.get_int("seed", 1));
  const auto repeat = std::max<std::int64_t>(1, args.get_int("repeat", 10));
  const auto& files = args.positional();
  GridGemmResult res;
  const auto a = read_tlr_hdf5<Scalar, memory>(grid, files[0]);
  const int tile = a.tile_size();
  res.m = transa ? a.num_cols() : a.num_rows();
  res.k = transa ? a.num_rows() : a.num_cols();
  res.grid_line = distribution(a);

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
    DistributedDenseMatrix<Scalar, memory> c(grid, res.m, res.n, tile),
        c0(grid, res.m, res.n, tile);
    if (args.has("c")) {
      const auto given = read_initial_c(args.get("c"), res.m, res.n);
      c0 = distribute<Scalar, memory>(grid, given.values.data(), given.rows, given.cols,
                                      std::max<std::int64_t>(1, given.rows), tile);
    } else {
      fill_random(exec, c0, seed + 2);
    }
    Kokkos::deep_copy(exec, c.local(), c0.local());
    const auto plan = analyze(op_a, a, op_b, b, c, options);
    gemm(exec, plan, a, b, alpha, beta, c);  // warm-up
    std::vector<double> times;
    for (std::int64_t r = 0; r < repeat; ++r) {
      MPI_Barrier(MPI_COMM_WORLD);
      const auto start = std::chrono::steady_clock::now();
      res.report = gemm(exec, plan, a, b, alpha, beta, c);
      times.push_back(max_over_ranks(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()));
    }
    std::sort(times.begin(), times.end());
    res.median_seconds = times[times.size() / 2];
    res.received = spread(static_cast<double>(res.report.panel_bytes_received));
    if (!args.has("verify") && !args.has("output")) return;
    // One product from the initial C: what --output writes and --verify checks.
    Kokkos::deep_copy(exec, c.local(), c0.local());
    gemm(exec, plan, a, b, alpha, beta, c);
    const DenseMatrix result = whole(c);
    if (args.has("output") && world_rank() == 0)
      write_dense_matrix_market(args.get("output"), result);
    if (!args.has("verify")) return;
    const DenseMatrix ha = whole(a), hb = whole(b);
    DenseMatrix ref = whole(c0);
    if (world_rank() == 0)
      res.verify_error = product_error(transa, transb, alpha, beta, ha, hb, ref, result);
    MPI_Bcast(&res.verify_error, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    res.tolerance = product_tolerance(traits::kind, args.has("tf32"), res.k);
  };

  if (files.size() == 2) {
    const auto b = read_tlr_hdf5<Scalar, memory>(grid, files[1]);
    if (b.tile_size() != tile)
      throw FormatError(files[1], "has tiles of " + std::to_string(b.tile_size()) + ", " +
                                      files[0] + " of " + std::to_string(tile) +
                                      ": a distributed product needs one tile size");
    res.b_desc = files[1];
    run(b, b.num_rows(), b.num_cols());
  } else {
    const auto cols = args.get_int("dense-cols", 64);
    if (cols < 1 || cols > (std::int64_t(1) << 31)) throw UsageError("--dense-cols must be >= 1");
    const std::int64_t rows = transb ? cols : res.k, width = transb ? res.k : cols;
    DistributedDenseMatrix<Scalar, memory> b(grid, rows, width, tile);
    fill_random(exec, b, seed + 1);
    res.b_desc = "dense random " + std::to_string(rows) + " x " + std::to_string(width);
    run(b, rows, width);
  }
  return res;
}

}  // namespace

int gemm_on_grid(const Arguments& args, ScalarKind kind, const std::string& backend) {
  GridGemmResult res;
  ScalarKind used = kind;
  std::string backend_name;
  with_scalar(kind, [&](auto tag) {
    using Scalar = typename decltype(tag)::type;
    used = TlrScalarTraits<Scalar>::kind;
    backend_name = with_execution_space(
        backend, [&](const auto& exec) { res = run_grid_gemm<Scalar>(args, exec); });
  });
  if (world_rank() != 0)
    return res.verify_error <= res.tolerance || !args.has("verify") ? ok : failure;
  const auto& r = res.report;
  std::printf("tlr gemm: C (%lld x %lld) = %g op(A) op(B) + %g C, k = %lld, ops %s%s\n",
              static_cast<long long>(res.m), static_cast<long long>(res.n),
              args.get_double("alpha", 1.0), args.get_double("beta", 0.0),
              static_cast<long long>(res.k), args.has("transa") ? "T" : "N",
              args.has("transb") ? "T" : "N");
  std::printf("operands  A %s, B %s; precision %s%s; back end %s\n", args.positional()[0].c_str(),
              res.b_desc.c_str(), precision_note(kind, used).c_str(),
              args.has("tf32") ? " (tf32 math)" : "", backend_name.c_str());
  std::fputs(res.grid_line.c_str(), stdout);
  const double dense_flops =
      2.0 * static_cast<double>(res.m) * static_cast<double>(res.n) * static_cast<double>(res.k);
  std::printf("time      %.4f ms (median of %lld, slowest rank); %.2f GFLOP/s dense-equivalent\n",
              res.median_seconds * 1e3,
              static_cast<long long>(std::max<std::int64_t>(1, args.get_int("repeat", 10))),
              res.median_seconds > 0 ? dense_flops / res.median_seconds / 1e9 : 0.0);
  std::printf(
      "summa     %d steps; panels received per rank %s mean, %s max (model %s); transposes "
      "%s; %s\n",
      r.steps, megabytes(res.received.mean).c_str(), megabytes(res.received.max).c_str(),
      megabytes(r.model_bytes).c_str(),
      megabytes(static_cast<double>(r.transpose_bytes_received)).c_str(), to_string(r.transport));
  if (args.has("verify")) {
    const bool passed = res.verify_error <= res.tolerance;
    std::printf(
        "verify    relative Frobenius error vs dense double product %.3g (tolerance %.3g): %s\n",
        res.verify_error, res.tolerance, passed ? "OK" : "FAILED");
    if (!passed) return failure;
  }
  return ok;
}

#else

void compress_on_grid(const Source&, const std::string&, int, const TlrCompressOptions&, ScalarKind,
                      const std::string&, bool, const std::string&, bool) {
  throw UsageError("this kcla was built without MPI");
}
int gemm_on_grid(const Arguments&, ScalarKind, const std::string&) {
  throw UsageError("this kcla was built without MPI");
}

#endif

}  // namespace kcla::cli
