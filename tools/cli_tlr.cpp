// kcla tlr compress | gemm | info: tile-low-rank matrices from the command line.
#include "cli_common.hpp"

#include <kcla/dense_matrix_market.hpp>
#include <kcla/hdf5_tlr.hpp>
#include <kcla/tlr_compress.hpp>
#include <kcla/tlr_gemm.hpp>
#include <kcla/tlr_random.hpp>
#include <kcla/tlr_to_dense.hpp>

#include <cblas.h>

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

const char* kCompressHelp =
    R"(usage: kcla tlr compress (--kernel K --points N | --dense FILE) --tile-size B -o OUT.h5 [options]

Compresses every tile by a truncated SVD (on the host) and writes a kcla TLR file.

source (one of):
  --kernel K           exponential, matern12, matern32, matern52, gaussian,
                       inverse_distance: K_pq = k(|x_p - x_q|) on N random points
  --points N           number of points (uniform in the unit square / cube, ordered along
                       a Z-order curve so that tiles are spatial clusters)
  --dim D              2 (default) or 3
  --length-scale L     kernel length scale (default 0.1); variance 1; inverse_distance
                       uses k(0) = the kernel at half the mean point spacing
  --seed S             random points (default 1)
  --dense FILE         a dense matrix: Matrix Market, "array" format (column-major
                       values; real or integer; general, symmetric or skew-symmetric), or
                       "coordinate" format (absent entries are zero)

options:
  --tile-size B        tile size (required); 16-bit products need a multiple of 8
  --tolerance EPS      per-tile truncation bound (default 1e-6)
  --relative           ||A_ij - U V^T||_F <= EPS ||A_ij||_F (the default)
  --absolute           ||A_ij - U V^T||_F <= EPS
  --max-rank R         cap every tile's rank (default: none)
  --precision P        fp64 (default), fp32, fp16 or bf16: the stored factors
  --check              measure ||A - TLR||_F / ||A||_F of what was stored (done anyway
                       when the matrix has at most 2^22 entries; --no-check skips it)
  -o, --output FILE    the TLR file to write (required; written atomically)
)";

const char* kInfoHelp = R"(usage: kcla tlr info FILE.h5

Reads a kcla TLR file completely (every check of the format, checksums included) and
prints its shape, tiling, precision, rank statistics (logical and stored) and its size
next to the dense matrix's in the same precision.
)";

const char* kGemmHelp = R"(usage: kcla tlr gemm A.h5 [B.h5 | --dense-cols K] [options]

C = alpha op(A) op(B) + beta C with A a kcla TLR file and B another one or a random dense
matrix with K columns in op(B) (default K = 64); C is random, or read with --c. Timed over
--repeat products (median); prints time, GFLOP/s executed, and the workspace.

options:
  --dense-cols K       dense random B, op(B) of size k x K (without B.h5; default 64)
  --transa, --transb   op(A) = A^T, op(B) = B^T
  --alpha A, --beta B  scalars (default 1 and 0)
  --c FILE             initial C (Matrix Market, m x n); default random
  --precision P        compute in fp64, fp32, fp16 or bf16 (default: A's file precision;
                       operands in other precisions are converted on reading)
  --tf32               fp32 storage, TF32 tensor-core math (CUDA; fp32 on the host)
  --workspace BYTES    workspace budget (default 0: see --rectangles)
  --rectangles N       without --workspace: split C into at most N rectangles, pipelined
                       (less workspace; default 1, all of C at once)
  --backend B          cuda, openmp or serial (default: the build's default device)
  --repeat N           timed products (default 10; the median is reported)
  --seed S             random B and C (default 1)
  --verify             compare with alpha op(A) op(B) + beta C computed in double from
                       the decompressed operands; exit 1 when the relative Frobenius error
                       exceeds the precision's tolerance
  -o, --output FILE    write the result C (one product from the initial C) as Matrix
                       Market array
)";

// ------------------------------------------------------------------------------------
// Shared helpers

ScalarKind parse_precision(const std::string& name) {
  if (name == "fp64") return ScalarKind::f64;
  if (name == "fp32") return ScalarKind::f32;
  if (name == "fp16") return ScalarKind::f16;
  if (name == "bf16") return ScalarKind::bf16;
  throw UsageError("--precision: fp64, fp32, fp16 or bf16 (not '" + name + "')");
}

template <class T>
struct Tag {
  using type = T;
};

/// Calls f(Tag<Scalar>) for the scalar type that stores `kind` (fp16: Kokkos' half_t,
/// which is float on host-only builds).
template <class F>
void with_scalar(ScalarKind kind, F&& f) {
  switch (kind) {
    case ScalarKind::f64:
      f(Tag<double>{});
      break;
    case ScalarKind::f32:
      f(Tag<float>{});
      break;
    case ScalarKind::f16:
      f(Tag<Kokkos::Experimental::half_t>{});
      break;
    default:
      f(Tag<bhalf_t>{});
      break;
  }
}

/// "fp16 (as fp32: ...)" when the build stores a precision in a wider type.
std::string precision_note(ScalarKind wanted, ScalarKind used) {
  if (wanted == used) return to_string(wanted);
  return std::string(to_string(wanted)) + " (computed in " + to_string(used) +
         ": this build has no 16-bit " + to_string(wanted) + " type)";
}

std::string megabytes(double bytes) {
  char buffer[64];
  if (bytes >= 1e9)
    std::snprintf(buffer, sizeof buffer, "%.2f GB", bytes / 1e9);
  else if (bytes >= 1e6)
    std::snprintf(buffer, sizeof buffer, "%.2f MB", bytes / 1e6);
  else
    std::snprintf(buffer, sizeof buffer, "%.1f kB", bytes / 1e3);
  return buffer;
}

void print_summary(const TlrLayout& l, ScalarKind kind) {
  const auto& ranks = l.ranks();
  const auto& stored = l.stored_ranks();
  const std::size_t tiles = ranks.size();
  int lo = 0, hi = 0;
  double mean = 0, stored_mean = 0;
  std::int64_t zero = 0, full = 0;
  if (tiles > 0) {
    lo = *std::min_element(ranks.begin(), ranks.end());
    hi = *std::max_element(ranks.begin(), ranks.end());
    mean = std::accumulate(ranks.begin(), ranks.end(), 0.0) / static_cast<double>(tiles);
    stored_mean = std::accumulate(stored.begin(), stored.end(), 0.0) / static_cast<double>(tiles);
    for (int i = 0; i < l.tile_rows(); ++i)
      for (int j = 0; j < l.tile_cols(); ++j) {
        zero += l.rank(i, j) == 0;
        full += l.rank(i, j) == std::min(l.tile_height(i), l.tile_width(j));
      }
  }
  const double compressed = static_cast<double>(l.outer_size() + l.inner_size()) *
                            static_cast<double>(element_bytes(kind));
  const double dense = static_cast<double>(l.num_rows()) * static_cast<double>(l.num_cols()) *
                       static_cast<double>(element_bytes(kind));
  std::printf("shape      %lld x %lld, tiles of %d: %d x %d grid (%zu tiles)\n",
              static_cast<long long>(l.num_rows()), static_cast<long long>(l.num_cols()),
              l.tile_size(), l.tile_rows(), l.tile_cols(), tiles);
  std::printf("precision  %s (%s), rank multiple %d, leading dimension %d\n", to_string(kind),
              tlr_value_type_name(kind), l.rank_multiple(), l.leading_dim());
  std::printf(
      "ranks      min %d, mean %.2f, max %d (stored mean %.2f); %lld rank-0, %lld full-rank "
      "tiles\n",
      lo, mean, hi, stored_mean, static_cast<long long>(zero), static_cast<long long>(full));
  std::printf("bytes      %s compressed vs %s dense (%.2f%%, %.1fx smaller)\n",
              megabytes(compressed).c_str(), megabytes(dense).c_str(),
              dense > 0 ? 100.0 * compressed / dense : 0.0,
              compressed > 0 ? dense / compressed : 0.0);
}

/// A host TLR matrix in double with exactly the values of `a` (widened).
template <class Scalar, class MemorySpace>
TlrMatrix<double, Kokkos::HostSpace> widen_to_host(const TlrMatrix<Scalar, MemorySpace>& a) {
  const auto u = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a.outer_factors());
  const auto v = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a.inner_factors());
  std::vector<double> du(u.extent(0)), dv(v.extent(0));
  for (std::size_t e = 0; e < du.size(); ++e)
    du[e] = static_cast<double>(TlrScalarTraits<Scalar>::widen(u(e)));
  for (std::size_t e = 0; e < dv.size(); ++e)
    dv[e] = static_cast<double>(TlrScalarTraits<Scalar>::widen(v(e)));
  return make_tlr_matrix<double, Kokkos::HostSpace>(a.layout_ptr(), du, dv);
}

// ------------------------------------------------------------------------------------
// compress

/// n points uniform in [0, 1]^dim, sorted along a Z-order (Morton) curve.
PointSet morton_points(std::int64_t n, int dim, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> u(0, 1);
  const int bits = dim == 2 ? 31 : 21;
  std::vector<std::pair<std::uint64_t, std::int64_t>> order(static_cast<std::size_t>(n));
  std::vector<double> coords(static_cast<std::size_t>(n * dim));
  for (std::int64_t p = 0; p < n; ++p) {
    std::uint64_t code = 0;
    std::uint64_t cell[3] = {0, 0, 0};
    for (int d = 0; d < dim; ++d) {
      const double x = u(gen);
      coords[static_cast<std::size_t>(p * dim + d)] = x;
      cell[d] = std::min<std::uint64_t>(static_cast<std::uint64_t>(x * double(1ULL << bits)),
                                        (1ULL << bits) - 1);
    }
    for (int b = bits - 1; b >= 0; --b)
      for (int d = 0; d < dim; ++d) code = (code << 1) | ((cell[d] >> b) & 1u);
    order[static_cast<std::size_t>(p)] = {code, p};
  }
  std::sort(order.begin(), order.end());
  PointSet s;
  s.dimension = dim;
  s.coordinates.reserve(coords.size());
  for (const auto& [code, p] : order)
    for (int d = 0; d < dim; ++d)
      s.coordinates.push_back(coords[static_cast<std::size_t>(p * dim + d)]);
  return s;
}

KernelType parse_kernel(const std::string& name) {
  for (KernelType t : {KernelType::exponential, KernelType::matern12, KernelType::matern32,
                       KernelType::matern52, KernelType::gaussian, KernelType::inverse_distance})
    if (name == to_string(t)) return t;
  throw UsageError(
      "--kernel: exponential, matern12, matern32, matern52, gaussian or "
      "inverse_distance (not '" +
      name + "')");
}

/// The matrix being compressed: a dense one, or a kernel on a point set.
struct Source {
  DenseMatrix dense;
  bool is_kernel = false;
  PointSet points;
  CovarianceKernel kernel;
  std::int64_t rows() const { return is_kernel ? points.size() : dense.rows; }
  std::int64_t cols() const { return is_kernel ? points.size() : dense.cols; }
  double operator()(std::int64_t r, std::int64_t c) const {
    return is_kernel ? kernel(points, r, points, c) : dense(r, c);
  }
};

/// ||A - Ã||_F / ||A||_F with Ã the stored matrix (widened to double), tile by tile.
double compression_error(const Source& src, const TlrMatrix<double, Kokkos::HostSpace>& a) {
  const auto& l = a.layout();
  const auto& u = a.outer_factors();
  const auto& v = a.inner_factors();
  const std::int64_t ld = l.leading_dim();
  const int tiles = l.tile_rows() * l.tile_cols();
  std::vector<double> err(static_cast<std::size_t>(tiles)), norm(static_cast<std::size_t>(tiles));
  Kokkos::parallel_for(
      "kcla::cli::tlr_error", Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace>(0, tiles),
      [&](const int t) {
        const int i = t / l.tile_cols(), j = t % l.tile_cols();
        double e = 0, n = 0;
        for (int c = 0; c < l.tile_width(j); ++c)
          for (int r = 0; r < l.tile_height(i); ++r) {
            double s = 0;
            for (int q = 0; q < l.stored_rank(i, j); ++q)
              s += u(l.outer_offset(i, j) + q * ld + r) * v(l.inner_offset(i, j) + q * ld + c);
            const double x = src(static_cast<std::int64_t>(i) * l.tile_size() + r,
                                 static_cast<std::int64_t>(j) * l.tile_size() + c);
            e += (x - s) * (x - s);
            n += x * x;
          }
        err[static_cast<std::size_t>(t)] = e;
        norm[static_cast<std::size_t>(t)] = n;
      });
  Kokkos::DefaultHostExecutionSpace().fence();
  const double e = std::accumulate(err.begin(), err.end(), 0.0);
  const double n = std::accumulate(norm.begin(), norm.end(), 0.0);
  return n > 0 ? std::sqrt(e / n) : std::sqrt(e);
}

int run_tlr_compress(int argc, char** argv) {
  Arguments args(argc, argv, 3, {"relative", "absolute", "check", "no-check", "help"});
  if (args.has("help")) {
    std::cout << kCompressHelp;
    return ok;
  }
  args.allow_only({"kernel", "points", "dim", "length-scale", "seed", "dense", "tile-size",
                   "tolerance", "relative", "absolute", "max-rank", "precision", "check",
                   "no-check", "output", "help"});
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
  double seconds = 0, error = -1;
  ScalarKind used = kind;
  with_scalar(kind, [&](auto tag) {
    using Scalar = typename decltype(tag)::type;
    used = TlrScalarTraits<Scalar>::kind;
    const auto start = std::chrono::steady_clock::now();
    const auto a =
        src.is_kernel
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
  Arguments args(argc, argv, 3, {"help"});
  if (args.has("help")) {
    std::cout << kInfoHelp;
    return ok;
  }
  args.allow_only({"help"});
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

/// A rows x cols column-major View whose leading dimension is a multiple of 8 (what
/// 16-bit products need of dense operands), and the padded allocation behind it.
template <class Scalar, class MemorySpace>
struct PaddedMatrix {
  Kokkos::View<Scalar**, Kokkos::LayoutLeft, MemorySpace> full;
  Kokkos::View<Scalar**, Kokkos::LayoutStride, MemorySpace> view;
  PaddedMatrix(const std::string& label, std::int64_t rows, std::int64_t cols)
      : full(label, std::max<std::int64_t>(8, (rows + 7) / 8 * 8), cols),
        view(Kokkos::subview(full, std::pair<std::int64_t, std::int64_t>(0, rows), Kokkos::ALL())) {
  }
};

/// A dense View (any space) as a host matrix in double.
template <class View>
DenseMatrix dense_to_host(const View& v) {
  using scalar = typename View::non_const_value_type;
  Kokkos::View<scalar**, Kokkos::LayoutLeft, typename View::memory_space> packed(
      "packed", v.extent(0), v.extent(1));
  Kokkos::deep_copy(packed, v);
  const auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), packed);
  DenseMatrix d{static_cast<std::int64_t>(v.extent(0)), static_cast<std::int64_t>(v.extent(1)), {}};
  d.values.resize(static_cast<std::size_t>(d.rows * d.cols));
  for (std::int64_t c = 0; c < d.cols; ++c)
    for (std::int64_t r = 0; r < d.rows; ++r)
      d(r, c) = static_cast<double>(TlrScalarTraits<scalar>::widen(h(r, c)));
  return d;
}

template <class Scalar, class MemorySpace>
DenseMatrix tlr_to_host(const TlrMatrix<Scalar, MemorySpace>& a) {
  const auto d = widen_to_host(a);
  return dense_to_host(to_dense(Kokkos::DefaultHostExecutionSpace(), d));
}

/// Tolerance of the relative Frobenius error of a product in each precision: the storage
/// precision's own (as the tests use), or 4 u sqrt(k) when larger.
double product_tolerance(ScalarKind kind, bool tf32, std::int64_t k) {
  const double sk = std::sqrt(static_cast<double>(std::max<std::int64_t>(1, k)));
  if (tf32) return std::max(1e-2, 4 * 4.9e-4 * sk);
  switch (kind) {
    case ScalarKind::f64:
      return std::max(1e-12, 4 * 1.1e-16 * sk);
    case ScalarKind::f32:
      return std::max(1e-5, 4 * 6e-8 * sk);
    case ScalarKind::f16:
      return std::max(1e-2, 4 * 6e-8 * sk);
    default:
      return std::max(3e-2, 4 * 6e-8 * sk);
  }
}

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
  options.rectangles = static_cast<int>(args.get_int("rectangles", 0));
  if (args.has("tf32")) options.math = TlrMath::tf32;

  auto run = [&](const auto& b, std::int64_t b_rows, std::int64_t b_cols) {
    const std::int64_t bk = transb ? b_cols : b_rows;
    res.n = transb ? b_rows : b_cols;
    if (bk != res.k)
      throw InvalidArgument("op(A) is " + std::to_string(res.m) + " x " + std::to_string(res.k) +
                            " but op(B) has " + std::to_string(bk) + " rows");
    PaddedMatrix<Scalar, memory> c("kcla::cli::C", res.m, res.n), c0("kcla::cli::C0", res.m, res.n);
    if (args.has("c")) {
      const auto given = read_dense_matrix_market(args.get("c"));
      if (given.rows != res.m || given.cols != res.n)
        throw FormatError(args.get("c"), "is " + std::to_string(given.rows) + " x " +
                                             std::to_string(given.cols) + ", C must be " +
                                             std::to_string(res.m) + " x " + std::to_string(res.n));
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
    if (res.m > 0 && res.n > 0)
      cblas_dgemm(CblasColMajor, transa ? CblasTrans : CblasNoTrans,
                  transb ? CblasTrans : CblasNoTrans, static_cast<int>(res.m),
                  static_cast<int>(res.n), static_cast<int>(res.k), alpha, ha.values.data(),
                  static_cast<int>(std::max<std::int64_t>(1, ha.rows)), hb.values.data(),
                  static_cast<int>(std::max<std::int64_t>(1, hb.rows)), beta, ref.values.data(),
                  static_cast<int>(std::max<std::int64_t>(1, ref.rows)));
    double num = 0, den = 0;
    for (std::size_t e = 0; e < ref.values.size(); ++e) {
      const double d = result.values[e] - ref.values[e];
      num += d * d;
      den += ref.values[e] * ref.values[e];
    }
    res.verify_error = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
    if (!std::isfinite(res.verify_error))
      res.verify_error = std::numeric_limits<double>::infinity();
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
#if defined(KOKKOS_ENABLE_CUDA)
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
  Arguments args(argc, argv, 3, {"transa", "transb", "verify", "tf32", "help"});
  if (args.has("help")) {
    std::cout << kGemmHelp;
    return ok;
  }
  args.allow_only({"dense-cols", "transa", "transb", "alpha", "beta", "c", "precision", "tf32",
                   "workspace", "rectangles", "backend", "repeat", "seed", "verify", "output",
                   "help"});
  const auto& files = args.positional();
  if (files.empty() || files.size() > 2)
    throw UsageError("gemm needs A.h5 and optionally B.h5 (see --help)");
  if (files.size() == 2 && args.has("dense-cols"))
    throw UsageError("give B.h5 or --dense-cols K, not both");
  if (args.get_int("workspace", 0) < 0) throw UsageError("--workspace must be >= 0");
  if (args.get_int("rectangles", 1) < 1 || args.get_int("rectangles", 1) > (1 << 20))
    throw UsageError("--rectangles must be between 1 and 1048576");
  args.get_double("alpha", 1.0);
  args.get_double("beta", 0.0);
  args.get_int("repeat", 10);
  args.get_int("seed", 1);
  const auto backend = args.get("backend");
  // The precision: A's file's unless --precision says otherwise.
  const auto info = read_tlr_hdf5_info(files[0]);
  const ScalarKind kind =
      args.has("precision") ? parse_precision(args.get("precision")) : info.value_type;
  if (args.has("tf32") && kind != ScalarKind::f32)
    throw UsageError("--tf32 needs fp32 (this product is " + std::string(to_string(kind)) + ")");
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
