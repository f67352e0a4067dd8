// A covariance matrix compressed to tile-low-rank form by all ranks of an MPI job, written
// to one file together, read back by a grid of another shape, and multiplied with a dense
// block SUMMA-style; a few rows of the product are checked against sums over the kernel
// itself.
//
//   mpirun -np 4 distributed_tlr_gemm [--points N] [--tile T] [--tolerance E] [--rhs K]
//                                     [--file PATH]
//
// K_pq = (1 + sqrt3 r/L) exp(-sqrt3 r/L) (Matern-3/2, L = 0.1) on an n x n grid of points in
// the unit square (N = n^2), numbered along a Z-order curve so that a tile holds a compact
// patch of points. Each rank compresses only its own tiles (tile (i, j) lives on grid rank
// (i mod P, j mod Q)). Exit status 1 when the check fails.
#include <kcla/distributed_tlr_gemm.hpp>  // kcla::ProcessGrid, compress_kernel, analyze, gemm

#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace {

using execution_space = Kokkos::DefaultExecutionSpace;
using memory_space = execution_space::memory_space;

struct Options {
  std::int64_t points = 4096;
  int tile = 256;
  double tolerance = 1e-6;
  std::int64_t rhs = 16;
  std::string file = "distributed_tlr_gemm.h5";
};

const char* kUsage =
    "usage: mpirun -np P distributed_tlr_gemm [--points N] [--tile T] [--tolerance E] [--rhs K]\n"
    "                                         [--file PATH]\n";

Options parse_arguments(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--points" && has_value)
      o.points = std::atoll(argv[++i]);
    else if (a == "--tile" && has_value)
      o.tile = std::atoi(argv[++i]);
    else if (a == "--tolerance" && has_value)
      o.tolerance = std::atof(argv[++i]);
    else if (a == "--rhs" && has_value)
      o.rhs = std::atoll(argv[++i]);
    else if (a == "--file" && has_value)
      o.file = argv[++i];
    else if (a.rfind("--kokkos", 0) != 0)
      throw std::runtime_error(std::string("unknown option ") + a + "\n" + kUsage);
  }
  if (o.points < 4 || o.tile < 1 || o.rhs < 1 || !(o.tolerance > 0))
    throw std::runtime_error("distributed_tlr_gemm: bad sizes");
  return o;
}

int run(const Options& o) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  // Points on a regular grid, numbered along a Z-order curve (nearby indices are nearby
  // points, so off-diagonal tiles couple separated patches and have low rank).
  const int side = static_cast<int>(std::sqrt(static_cast<double>(o.points)));
  std::vector<std::pair<std::uint64_t, std::pair<int, int>>> order;
  for (int y = 0; y < side; ++y)
    for (int x = 0; x < side; ++x) {
      std::uint64_t code = 0;
      for (int bit = 15; bit >= 0; --bit)
        code = (code << 2) | (((static_cast<std::uint64_t>(y) >> bit) & 1u) << 1) |
               ((static_cast<std::uint64_t>(x) >> bit) & 1u);
      order.push_back({code, {x, y}});
    }
  std::sort(order.begin(), order.end());
  kcla::PointSet points{2, {}};
  for (const auto& [code, xy] : order)
    points.coordinates.insert(points.coordinates.end(),
                              {xy.first / (side - 1.0), xy.second / (side - 1.0)});
  const std::int64_t n = points.size();
  kcla::CovarianceKernel kernel;
  kernel.type = kcla::KernelType::matern32;
  kernel.length_scale = 0.1;
  kcla::TlrCompressOptions options;
  options.relative_tolerance = o.tolerance;

  // 1. Every rank compresses its tiles; the grid writes one file.
  const kcla::ProcessGrid grid(MPI_COMM_WORLD);  // P x Q, as square as possible
  const auto a =
      kcla::compress_kernel<double, memory_space>(grid, points, points, kernel, o.tile, options);
  kcla::write_tlr_hdf5(o.file, a);
  if (rank == 0)
    std::printf("compressed %lld x %lld on a %d x %d grid: %.1f MB of factors (dense %.1f MB)\n",
                static_cast<long long>(n), static_cast<long long>(n), grid.rows(), grid.cols(),
                a.global_bytes() / 1e6, n * n * 8.0 / 1e6);

  // 2. A 1 x P grid reads it back (any shape reads any file).
  const kcla::ProcessGrid row(MPI_COMM_WORLD, 1, size);
  const auto a2 = kcla::read_tlr_hdf5<double, memory_space>(row, o.file);

  // 3. C = A B with B random dense, SUMMA over the grid.
  execution_space exec;
  kcla::DistributedDenseMatrix<double, memory_space> b(row, n, o.rhs, o.tile),
      c(row, n, o.rhs, o.tile);
  kcla::fill_random(exec, b, 11);
  const auto plan = kcla::analyze(kcla::Op::N, a2, kcla::Op::N, b, c);
  const auto report = kcla::gemm(exec, plan, a2, b, 1.0, 0.0, c);

  // 4. Rank 0 checks a few rows against sums over the kernel itself.
  const std::vector<double> bw = kcla::allgather(b), cw = kcla::allgather(c);
  double received = static_cast<double>(report.panel_bytes_received);
  MPI_Allreduce(MPI_IN_PLACE, &received, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  double worst = 0;
  if (rank == 0) {
    for (std::int64_t i : {std::int64_t{0}, n / 3, n - 1}) {
      double num = 0, den = 0;
      for (std::int64_t j = 0; j < o.rhs; ++j) {
        double exact = 0;
        for (std::int64_t k = 0; k < n; ++k) exact += kernel(points, i, points, k) * bw[k + j * n];
        num += (cw[i + j * n] - exact) * (cw[i + j * n] - exact);
        den += exact * exact;
      }
      worst = std::max(worst, std::sqrt(num / den));
    }
    std::printf("C = A B: %d SUMMA steps, %.2f MB received per rank on average (model %.2f MB)\n",
                report.steps, received / size / 1e6, report.model_bytes / 1e6);
    std::printf("rows checked against the kernel: worst relative error %.2e\n", worst);
  }
  MPI_Bcast(&worst, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  const bool ok = worst <= 100 * o.tolerance;
  if (rank == 0) {
    std::remove(o.file.c_str());
    std::printf("distributed_tlr_gemm: %s\n", ok ? "OK" : "FAILED");
  }
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]) == "--help" || std::string(argv[i]) == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    }
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  int status = 0;
  {
    Kokkos::ScopeGuard kokkos(argc, argv);
    try {
      status = run(parse_arguments(argc, argv));
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s\n", e.what());
      status = 1;
    }
  }
  MPI_Finalize();
  return status;
}
