// A covariance matrix in tile-low-rank (TLR) form, multiplied with a dense block and with
// itself, checked against dense products of the decompressed matrix.
//
//   tlr_covariance_gemm [--points N] [--tile T] [--tolerance E] [--length-scale L]
//                       [--rhs K] [--seed S]
//
// K_pq = exp(-|x_p - x_q| / L) on N random points x in the unit square (an exponential,
// i.e. Matern-1/2, covariance). Tiles of T x T entries away from the diagonal couple far
// apart groups of points and are numerically low rank, so each tile is stored as
// U V^T with the smallest rank that keeps ||K_ij - U V^T||_F <= E ||K_ij||_F.
//
// The program prints the compression ratio, the tile ranks and three relative errors:
//   compression  ||A - K||_F / ||K||_F         (at most E, by construction)
//   A B          C = A B (dense B, N x K) from kcla::gemm against the dense product
//   A A          C = A A (TLR x TLR) from kcla::gemm against the dense product
// where A is the TLR matrix and the dense products use A decompressed (kcla::to_dense), so
// the last two measure the product itself. Exit status 1 when one is off.
#include <kcla/tlr_compress.hpp>  // kcla::compress_kernel, kcla::TlrCompressOptions
#include <kcla/tlr_gemm.hpp>      // kcla::analyze, kcla::gemm
#include <kcla/tlr_random.hpp>    // kcla::fill_random
#include <kcla/tlr_to_dense.hpp>  // kcla::to_dense

#include <KokkosBlas3_gemm.hpp>  // the dense reference products
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <random>
#include <string>
#include <vector>

namespace {

using execution_space = Kokkos::DefaultExecutionSpace;
using memory_space = execution_space::memory_space;
using Dense = Kokkos::View<double**, Kokkos::LayoutLeft, memory_space>;  // column-major

struct Options {
  std::int64_t points = 2048;
  int tile = 128;
  double tolerance = 1e-6;
  double length_scale = 0.1;
  std::int64_t rhs = 32;
  std::uint64_t seed = 7;
};

struct UsageError {
  std::string what;
};

const char* kUsage =
    "usage: tlr_covariance_gemm [--points N] [--tile T] [--tolerance E] [--length-scale L]\n"
    "                           [--rhs K] [--seed S]\n";

Options parse_arguments(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw UsageError{a + " needs a value"};
      return argv[++i];
    };
    if (a == "--points") {
      o.points = std::strtoll(value().c_str(), nullptr, 10);
    } else if (a == "--tile") {
      o.tile = std::atoi(value().c_str());
    } else if (a == "--tolerance") {
      o.tolerance = std::strtod(value().c_str(), nullptr);
    } else if (a == "--length-scale") {
      o.length_scale = std::strtod(value().c_str(), nullptr);
    } else if (a == "--rhs") {
      o.rhs = std::strtoll(value().c_str(), nullptr, 10);
    } else if (a == "--seed") {
      o.seed = std::strtoull(value().c_str(), nullptr, 10);
    } else if (a == "-h" || a == "--help") {
      throw UsageError{""};
    } else {
      throw UsageError{"unknown argument " + a};
    }
  }
  if (o.points < 1 || o.tile < 1 || o.rhs < 1 || !(o.tolerance > 0) || !(o.length_scale > 0))
    throw UsageError{"sizes, tolerance and length scale must be positive"};
  return o;
}

/// ||X - Y||_F / ||Y||_F of two matrices of the same shape (on the host).
double relative_error(const Dense& x, const Dense& y) {
  const auto hx = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), x);
  const auto hy = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y);
  double diff = 0, norm = 0;
  for (std::size_t c = 0; c < hx.extent(1); ++c)
    for (std::size_t r = 0; r < hx.extent(0); ++r) {
      const double d = hx(r, c) - hy(r, c);
      diff += d * d;
      norm += hy(r, c) * hy(r, c);
    }
  return norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff);
}

int run(const Options& o) {
  const execution_space exec;
  const std::int64_t n = o.points;

  // 1. The TLR matrix: every tile generated from the kernel and compressed by a truncated
  //    SVD at the tolerance (on the host), then copied to the default memory space. The
  //    dense N x N matrix never exists.
  const kcla::PointSet points = kcla::morton_points(n, 2, o.seed);
  kcla::CovarianceKernel kernel;
  kernel.type = kcla::KernelType::exponential;
  kernel.length_scale = o.length_scale;
  kcla::TlrCompressOptions compress_options;
  compress_options.relative_tolerance = o.tolerance;
  Kokkos::Timer timer;
  const auto A =
      kcla::compress_kernel<double, memory_space>(points, points, kernel, o.tile, compress_options);
  const double compress_s = timer.seconds();

  const auto& ranks = A.layout().ranks();
  const auto [min_rank, max_rank] = std::minmax_element(ranks.begin(), ranks.end());
  const double mean_rank =
      std::accumulate(ranks.begin(), ranks.end(), 0.0) / static_cast<double>(ranks.size());
  const double dense_bytes = static_cast<double>(n) * static_cast<double>(n) * sizeof(double);
  std::printf("exponential covariance, %lld points, length scale %g, tolerance %.0e\n",
              static_cast<long long>(n), o.length_scale, o.tolerance);
  std::printf("TLR: %d x %d tiles of %d, ranks min %d / mean %.1f / max %d, compressed in %.2f s\n",
              A.tile_rows(), A.tile_cols(), A.tile_size(), *min_rank, mean_rank, *max_rank,
              compress_s);
  std::printf("storage: %.2f MB instead of %.2f MB dense: compression ratio %.1fx\n",
              static_cast<double>(A.bytes()) / 1e6, dense_bytes / 1e6,
              dense_bytes / static_cast<double>(A.bytes()));

  // 2. The decompressed matrix, for the references, and the compression error against
  //    the exact kernel matrix.
  const Dense A_dense = kcla::to_dense(exec, A);
  Dense K("K", n, n);
  {
    auto hk = Kokkos::create_mirror_view(K);
    for (std::int64_t q = 0; q < n; ++q)
      for (std::int64_t p = 0; p < n; ++p) hk(p, q) = kernel(points, p, points, q);
    Kokkos::deep_copy(K, hk);
  }
  const double compression_error = relative_error(A_dense, K);

  // 3. C = A B with a dense B: analyze once (the plan can serve many products with the
  //    same rank structure), then gemm.
  Dense B("B", n, o.rhs), C("C", n, o.rhs), C_ref("C_ref", n, o.rhs);
  kcla::fill_random(exec, B, o.seed);
  const auto plan = kcla::analyze(kcla::Op::N, A, kcla::Op::N, B);
  timer.reset();
  kcla::gemm(exec, plan, A, B, 1.0, 0.0, C);
  exec.fence();
  const double ab_ms = 1e3 * timer.seconds();
  KokkosBlas::gemm("N", "N", 1.0, A_dense, B, 0.0, C_ref);
  const double ab_error = relative_error(C, C_ref);

  // 4. C = A A, both operands TLR (the one-off form: analyze and gemm in one call).
  Dense AA("AA", n, n), AA_ref("AA_ref", n, n);
  timer.reset();
  kcla::gemm(exec, kcla::Op::N, A, kcla::Op::N, A, 1.0, 0.0, AA);
  exec.fence();
  const double aa_ms = 1e3 * timer.seconds();
  KokkosBlas::gemm("N", "N", 1.0, A_dense, A_dense, 0.0, AA_ref);
  const double aa_error = relative_error(AA, AA_ref);

  // The compression error is bounded by the tolerance; the products add only rounding.
  const double product_tolerance = 1e-12;
  const bool compression_ok = compression_error <= o.tolerance * (1 + 1e-3);
  const bool ab_ok = ab_error <= product_tolerance, aa_ok = aa_error <= product_tolerance;
  const std::string ab_label = "C = A B (N x " + std::to_string(o.rhs) + ")";
  std::printf("relative errors (Frobenius):\n");
  std::printf("  %-28s %.3e  (bound %.0e)  %s\n", "compression ||A - K|| / ||K||",
              compression_error, o.tolerance, compression_ok ? "ok" : "TOO LARGE");
  std::printf("  %-28s %.3e  (%.2f ms)  %s\n", ab_label.c_str(), ab_error, ab_ms,
              ab_ok ? "ok" : "TOO LARGE");
  std::printf("  %-28s %.3e  (%.2f ms)  %s\n", "C = A A (TLR x TLR)", aa_error, aa_ms,
              aa_ok ? "ok" : "TOO LARGE");
  const bool ok = compression_ok && ab_ok && aa_ok;
  std::printf("tlr_covariance_gemm: %s\n", ok ? "OK" : "FAILED");
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  try {
    return run(parse_arguments(argc, argv));
  } catch (const UsageError& e) {
    if (!e.what.empty()) std::fprintf(stderr, "tlr_covariance_gemm: %s\n", e.what.c_str());
    std::fprintf(stderr, "%s", kUsage);
    return e.what.empty() ? 0 : 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tlr_covariance_gemm: %s\n", e.what());
    return 1;
  }
}
