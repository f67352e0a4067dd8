// TLR compression of a kernel matrix: randomized compression on the default execution space
// (the GPU in CUDA builds) next to the host SVD path (LAPACK gesdd per tile on every host
// core) on the same points, kernel and tolerance. For each method: wall time from points to
// a TlrMatrix in the default memory space, stored bytes, ranks, the device's batched-GEMM
// TFLOP/s, and every sampled tile's error checked on the host against its bound (the dense
// tile regenerated in fp64, the stored factors widened).
//
//   kcla_bench_tlr_compress --n 65536 --tile 1024 --tolerance 1e-6 --methods device
//   kcla_bench_tlr_compress --n 16384 --tile 512 --methods device,host
//
// One JSON line per method on stdout.
#include <kcla/tlr_compress.hpp>
#include <kcla/tlr_compress_randomized.hpp>
#include <kcla/tlr_kernel_function.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

struct Options {
  std::int64_t n = 8192;
  int tile = 512, dim = 2, check_tiles = 32;
  double tolerance = 1e-6, length_scale = 0.1;
  std::string kernel = "matern32", precision = "fp32", methods = "device,host";
  std::uint64_t seed = 1;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
      return argv[++i];
    };
    if (a == "--n")
      o.n = std::stoll(next());
    else if (a == "--tile")
      o.tile = std::stoi(next());
    else if (a == "--dim")
      o.dim = std::stoi(next());
    else if (a == "--tolerance")
      o.tolerance = std::stod(next());
    else if (a == "--length-scale")
      o.length_scale = std::stod(next());
    else if (a == "--kernel")
      o.kernel = next();
    else if (a == "--precision")
      o.precision = next();
    else if (a == "--methods")
      o.methods = next();
    else if (a == "--check-tiles")
      o.check_tiles = std::stoi(next());
    else if (a == "--seed")
      o.seed = std::stoull(next());
    else
      throw std::invalid_argument("unknown option " + a);
  }
  if (o.n < 1 || o.tile < 1 || !(o.tolerance > 0) || !(o.length_scale > 0))
    throw std::invalid_argument("sizes, tolerance and length scale must be positive");
  if (o.precision != "fp32" && o.precision != "fp64")
    throw std::invalid_argument("--precision: fp32 or fp64");
  return o;
}

struct Checked {
  int tiles = 0;
  double max_ratio = 0;  // measured error / bound
};

/// Sampled tiles (the diagonal's first and last, the rest uniform): ||A_ij - U V^T||_F
/// against max(tol ||A_ij||_F, 0), in fp64 on the host.
template <class Scalar, class Space>
Checked check_tiles(const kcla::TlrMatrix<Scalar, Space>& t, const kcla::PointSet& x,
                    const kcla::CovarianceKernel& k, const Options& o) {
  const auto u = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), t.outer_factors());
  const auto v = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), t.inner_factors());
  const auto& l = t.layout();
  const auto fill = kcla::detail::kernel_tile_fill(x, x, k, o.tile);
  std::mt19937_64 gen(o.seed + 7);
  std::vector<std::pair<int, int>> picks = {{0, 0}, {l.tile_rows() - 1, l.tile_cols() - 1}};
  std::uniform_int_distribution<int> ri(0, l.tile_rows() - 1), ci(0, l.tile_cols() - 1);
  while (static_cast<int>(picks.size()) < o.check_tiles) picks.emplace_back(ri(gen), ci(gen));
  Checked c;
  const std::int64_t ld = l.leading_dim();
  for (const auto& [i, j] : picks) {
    const int h = l.tile_height(i), w = l.tile_width(j), r = l.rank(i, j);
    std::vector<double> a(static_cast<std::size_t>(h) * w);
    fill(i, j, a.data(), h);
    double norm2 = 0;
    for (double e : a) norm2 += e * e;
    const Scalar* pu = u.data() + l.outer_offset(i, j);
    const Scalar* pv = v.data() + l.inner_offset(i, j);
    for (int q = 0; q < r; ++q)
      for (int col = 0; col < w; ++col) {
        const double vq =
            static_cast<double>(kcla::TlrScalarTraits<Scalar>::widen(pv[col + q * ld]));
        for (int row = 0; row < h; ++row)
          a[row + static_cast<std::size_t>(col) * h] -=
              static_cast<double>(kcla::TlrScalarTraits<Scalar>::widen(pu[row + q * ld])) * vq;
      }
    double err2 = 0;
    for (double e : a) err2 += e * e;
    const double bound = o.tolerance * std::sqrt(norm2);
    c.max_ratio = std::max(c.max_ratio, bound > 0 ? std::sqrt(err2) / bound : 0.0);
    ++c.tiles;
  }
  return c;
}

template <class Scalar>
void run(const Options& o) {
  using Space = Kokkos::DefaultExecutionSpace::memory_space;
  const kcla::PointSet x = kcla::morton_points(o.n, o.dim, o.seed);
  kcla::CovarianceKernel k;
  const auto type = kcla::kernel_type_from_string(o.kernel);
  if (!type) throw std::invalid_argument("--kernel: unknown kernel '" + o.kernel + "'");
  k.type = *type;
  k.length_scale = o.length_scale;
  k.self_value = 1.0;
  kcla::TlrCompressOptions options;
  options.relative_tolerance = o.tolerance;
  std::string list = o.methods + ",";
  for (std::size_t p; (p = list.find(',')) != std::string::npos; list.erase(0, p + 1)) {
    const std::string method = list.substr(0, p);
    if (method.empty()) continue;
    if (method != "device" && method != "host")
      throw std::invalid_argument("--methods: device and/or host");
    kcla::TlrCompressReport report;
    Kokkos::fence();
    const auto start = std::chrono::steady_clock::now();
    const auto t = method == "device"
                       ? kcla::compress_kernel<Scalar, Space>(Kokkos::DefaultExecutionSpace(), x, x,
                                                              k, o.tile, options, &report)
                       : kcla::compress_kernel<Scalar, Space>(x, x, k, o.tile, options);
    Kokkos::fence();
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const auto& ranks = t.layout().ranks();
    const double mean_rank =
        std::accumulate(ranks.begin(), ranks.end(), 0.0) / static_cast<double>(ranks.size());
    const int max_rank = *std::max_element(ranks.begin(), ranks.end());
    const double bytes =
        static_cast<double>(t.layout().outer_size() + t.layout().inner_size()) * sizeof(Scalar);
    const Checked c = check_tiles(t, x, k, o);
    std::printf(
        "{\"method\":\"%s\",\"space\":\"%s\",\"n\":%lld,\"tile\":%d,\"kernel\":\"%s\","
        "\"length_scale\":%g,\"tolerance\":%g,\"precision\":\"%s\",\"seconds\":%.3f,"
        "\"stored_gb\":%.3f,\"dense_gb\":%.3f,\"mean_rank\":%.1f,\"max_rank\":%d,"
        "\"sample_columns\":%lld,\"gemm_tflops\":%.2f,\"range_s\":%.3f,\"eigen_s\":%.3f,"
        "\"finish_s\":%.3f,\"fallback_tiles\":%d,"
        "\"measured_max_ratio\":%.3f,\"checked_tiles\":%d,\"checked_max_ratio\":%.3f}\n",
        method.c_str(),
        method == "device" ? Kokkos::DefaultExecutionSpace::name() : "host SVD (gesdd)",
        static_cast<long long>(o.n), o.tile, o.kernel.c_str(), o.length_scale, o.tolerance,
        o.precision.c_str(), seconds, bytes / 1e9,
        static_cast<double>(o.n) * o.n * sizeof(Scalar) / 1e9, mean_rank, max_rank,
        static_cast<long long>(report.sample_columns), report.gemm_flops / seconds / 1e12,
        report.range_seconds, report.eigen_seconds, report.finish_seconds, report.fallback_tiles,
        report.max_error_ratio, c.tiles, c.max_ratio);
    std::fflush(stdout);
  }
}

}  // namespace

int main(int argc, char** argv) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  try {
    const Options o = parse(argc, argv);
    if (o.precision == "fp64")
      run<double>(o);
    else
      run<float>(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kcla_bench_tlr_compress: %s\n", e.what());
    return 1;
  }
  return 0;
}
