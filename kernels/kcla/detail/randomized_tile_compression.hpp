// Randomized compression of kernel-matrix tiles on an execution space: tiles are generated
// in batches on the device, each tile's range is found adaptively (blocks of Gaussian
// samples, projected twice against the basis, orthonormalised by CholQR2 with column
// dropping) until the sampled residual is well under the tile's bound; the basis is then
// truncated through the eigen-decomposition of the sketch's Gram matrix (host LAPACK, r x r)
// and every tile's error is measured on the device against its bound. A tile over its
// bound is recompressed by the host SVD, so the bound holds for every tile.
#pragma once

#include <kcla/detail/batched_dgemm.hpp>
#include <kcla/detail/gram_truncation.hpp>
#include <kcla/detail/parallel_tasks.hpp>
#include <kcla/detail/single_threaded_blas.hpp>
#include <kcla/error.hpp>
#include <kcla/tlr_compress.hpp>
#include <kcla/tlr_kernel_function.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

namespace kcla::detail {

/// Tuning of randomized compression, in one place (docs/tlr.md says how it was chosen).
struct RandomizedCompressionTuning {
  int sample_block = 32;  // basis columns added per round
  // Working memory for one batch of tiles; 0: on a GPU a quarter of its free memory, at most
  // 16 GiB (more tiles per batch keep more host cores busy on the eigenproblems), else 4 GiB.
  std::int64_t batch_bytes = 0;
  double stop_fraction = 1.0 / 16;  // stop when sampled residual^2 <= this * bound^2
  double drop_tolerance = 1e-14;    // CholQR: drop a column whose new part^2 is below this
  // The truncation's budget: share * bound^2 - residual_weight * sampled residual^2, never
  // below floor * bound^2 (the share leaves room for the eigenvalues' rounding).
  double truncation_share = 0.98, residual_weight = 3.0, truncation_floor = 0.25;
};

/// A local tile's place in the global matrix.
struct TileExtent {
  std::int64_t row0 = 0, col0 = 0;
  int height = 0, width = 0;
};

/// Gaussian sample entry (row, col) of round `round`: a counter-based hash, so a tile's
/// samples do not depend on the batch, the tile size padding or the process grid.
inline double gaussian_sample(int round, int row, int col) {
  auto mix = [](std::uint64_t z) {
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  };
  const std::uint64_t key = (static_cast<std::uint64_t>(round) << 42) ^
                            (static_cast<std::uint64_t>(row) << 16) ^
                            static_cast<std::uint64_t>(col);
  const std::uint64_t h1 = mix(key), h2 = mix(key ^ 0x6b636c61ULL);
  const double u1 = (static_cast<double>(h1 >> 11) + 1.0) * 0x1.0p-53;  // (0, 1]
  const double u2 = static_cast<double>(h2 >> 11) * 0x1.0p-53;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

/// Equal-shape GEMMs over tiles of a batch, on the execution space's BLAS.
template <class ExecSpace>
class TileGemm {
 public:
  double flops = 0;  // 2 m n k per product run so far

  void operator()(const ExecSpace& exec, const DgemmShape& shape, const std::vector<double*>& a,
                  const std::vector<double*>& b, const std::vector<double*>& c) {
    const int count = static_cast<int>(c.size());
    if (count == 0) return;
    flops += 2.0 * shape.m * shape.n * shape.k * count;
    exec.fence();
#if KCLA_HAVE_CUDA
    if constexpr (std::is_same<ExecSpace, Kokkos::Cuda>::value) {
      if (!cublas_) cublas_ = std::make_unique<CublasBatchedDgemm>();
      host_.resize(3 * static_cast<std::size_t>(count));
      for (int i = 0; i < count; ++i) {
        host_[i] = reinterpret_cast<std::uintptr_t>(a[i]);
        host_[count + i] = reinterpret_cast<std::uintptr_t>(b[i]);
        host_[2 * count + i] = reinterpret_cast<std::uintptr_t>(c[i]);
      }
      if (device_.extent(0) < host_.size())
        device_ = Kokkos::View<std::uintptr_t*, Kokkos::CudaSpace>(
            Kokkos::ViewAllocateWithoutInitializing("kcla::compress::gemm_pointers"), host_.size());
      Kokkos::deep_copy(
          Kokkos::subview(device_, std::make_pair<std::size_t, std::size_t>(0, host_.size())),
          Kokkos::View<const std::uintptr_t*, Kokkos::HostSpace>(host_.data(), host_.size()));
      const auto p = device_.data();
      cublas_->run(exec.cuda_stream(), shape, reinterpret_cast<const double* const*>(p),
                   reinterpret_cast<const double* const*>(p + count),
                   reinterpret_cast<double* const*>(p + 2 * count), count);
      return;
    }
#endif
    static_assert(
        Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename ExecSpace::memory_space>::accessible
#if KCLA_HAVE_CUDA
            || std::is_same<ExecSpace, Kokkos::Cuda>::value
#endif
        ,
        "compress: randomized compression runs on host execution spaces or CUDA");
    batched_dgemm_host(shape, a.data(), b.data(), c.data(), count);
  }

 private:
#if KCLA_HAVE_CUDA
  std::unique_ptr<CublasBatchedDgemm> cublas_;
  std::vector<std::uintptr_t> host_;
  Kokkos::View<std::uintptr_t*, Kokkos::CudaSpace> device_;
#endif
};

/// Device buffers of one batch: every tile has a b x b slot in A, Q, W1 and W2, a b x s
/// slot in C and s x s slots for the CholQR factors.
template <class MemorySpace>
struct CompressionBatch {
  int b = 0, s = 0, capacity = 0;
  Kokkos::View<double*, MemorySpace> a, q, w1, w2, c, gram, rinv, sums;
  Kokkos::View<TileExtent*, MemorySpace> extents;
  Kokkos::View<int*, MemorySpace> slots, ints;

  CompressionBatch(int b_, int s_, int capacity_) : b(b_), s(s_), capacity(capacity_) {
    const auto bb = static_cast<std::size_t>(b) * b * capacity;
    auto alloc = [](const char* name, std::size_t n) {
      return Kokkos::View<double*, MemorySpace>(Kokkos::ViewAllocateWithoutInitializing(name), n);
    };
    a = alloc("kcla::compress::a", bb);
    q = alloc("kcla::compress::q", bb);
    w1 = alloc("kcla::compress::w1", bb);
    w2 = alloc("kcla::compress::w2", bb);
    c = alloc("kcla::compress::c", static_cast<std::size_t>(b) * s * capacity);
    gram = alloc("kcla::compress::gram", static_cast<std::size_t>(s) * s * capacity);
    rinv = alloc("kcla::compress::rinv", static_cast<std::size_t>(s) * s * capacity);
    sums = alloc("kcla::compress::sums", static_cast<std::size_t>(capacity));
    extents = Kokkos::View<TileExtent*, MemorySpace>("kcla::compress::extents", capacity);
    slots = Kokkos::View<int*, MemorySpace>("kcla::compress::slots", capacity);
    ints = Kokkos::View<int*, MemorySpace>("kcla::compress::ints",
                                           3 * static_cast<std::size_t>(capacity));
  }
  std::int64_t tile_elems() const { return static_cast<std::int64_t>(b) * b; }
  static std::int64_t bytes_per_tile(int b, int s) {
    return 8 * (4 * static_cast<std::int64_t>(b) * b + static_cast<std::int64_t>(b) * s +
                2 * static_cast<std::int64_t>(s) * s + 8);
  }
};

/// Evaluates the kernel's tiles `extents[t]` (zero-padded to b x b) into slot slots[t] of
/// `out`.
template <class ExecSpace, class MemorySpace>
void generate_kernel_tiles(const ExecSpace& exec,
                           const Kokkos::View<const double*, MemorySpace>& rows,
                           const Kokkos::View<const double*, MemorySpace>& cols, int dimension,
                           const CovarianceKernel& kernel,
                           const CompressionBatch<MemorySpace>& batch, int count,
                           const Kokkos::View<double*, MemorySpace>& out) {
  const int b = batch.b;
  const std::int64_t bb = batch.tile_elems();
  const auto extents = batch.extents;
  const auto slots = batch.slots;
  const KernelType type = kernel.type;
  const double length = kernel.length_scale, variance = kernel.variance, self = kernel.self_value;
  Kokkos::parallel_for(
      "kcla::compress::generate_tiles",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(exec, 0, bb * count),
      KOKKOS_LAMBDA(const std::int64_t e) {
        const int t = static_cast<int>(e / bb);
        const std::int64_t within = e - t * bb;
        const int c = static_cast<int>(within / b), r = static_cast<int>(within - c * b);
        const TileExtent x = extents(t);
        double v = 0;
        if (r < x.height && c < x.width) {
          const std::int64_t p = (x.row0 + r) * dimension, q = (x.col0 + c) * dimension;
          double d2 = 0;
          for (int d = 0; d < dimension; ++d) {
            const double diff = rows(p + d) - cols(q + d);
            d2 += diff * diff;
          }
          v = covariance_value(type, length, variance, self, std::sqrt(d2));
        }
        out(static_cast<std::int64_t>(slots(t)) * bb + within) = v;
      });
}

/// sums[t] = squared Frobenius norm of columns [col0, col0 + ncols) of slot slots[t] of
/// `buf` (b rows each).
template <class ExecSpace, class MemorySpace>
void block_norms2(const ExecSpace& exec, const CompressionBatch<MemorySpace>& batch, int count,
                  const Kokkos::View<double*, MemorySpace>& buf, int col0, int ncols) {
  using Team = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  const std::int64_t bb = batch.tile_elems(), start = static_cast<std::int64_t>(col0) * batch.b;
  const int n = batch.b * ncols;
  const auto slots = batch.slots;
  const auto sums = batch.sums;
  Kokkos::parallel_for(
      "kcla::compress::block_norms", Kokkos::TeamPolicy<ExecSpace>(exec, count, Kokkos::AUTO),
      KOKKOS_LAMBDA(const Team& team) {
        const int t = team.league_rank();
        const std::int64_t base = static_cast<std::int64_t>(slots(t)) * bb + start;
        double total = 0;
        Kokkos::parallel_reduce(
            Kokkos::TeamThreadRange(team, n),
            [&](const int e, double& acc) {
              const double v = buf(base + e);
              acc += v * v;
            },
            total);
        Kokkos::single(Kokkos::PerTeam(team), [&] { sums(t) = total; });
      });
}

/// Per tile: Cholesky G = R^T R of the s x s Gram matrix in slot t (leading dimension
/// batch.s), dropping columns whose new part is below the tolerance (their R row and column
/// are zero), then R's inverse (zero in dropped rows and columns) into rinv.
template <class ExecSpace, class MemorySpace>
void cholesky_inverse(const ExecSpace& exec, const CompressionBatch<MemorySpace>& batch, int count,
                      int s, double drop_tolerance) {
  const auto g = batch.gram;
  const auto rinv = batch.rinv;
  const int ld = batch.s;
  const std::int64_t ss = static_cast<std::int64_t>(ld) * ld;
  Kokkos::parallel_for(
      "kcla::compress::cholesky_inverse", Kokkos::RangePolicy<ExecSpace>(exec, 0, count),
      KOKKOS_LAMBDA(const int t) {
        const std::int64_t o = t * ss;
        auto G = [&](int i, int j) -> double& {
          return g(o + i + static_cast<std::int64_t>(j) * ld);
        };
        auto X = [&](int i, int j) -> double& {
          return rinv(o + i + static_cast<std::int64_t>(j) * ld);
        };
        // Upper Cholesky in place: R(i, j) for i <= j overwrites G(i, j).
        for (int j = 0; j < s; ++j) {
          const double gjj = G(j, j);
          double d = gjj;
          for (int i = 0; i < j; ++i) d -= G(i, j) * G(i, j);
          const bool keep = d > drop_tolerance * gjj && d > 0;
          const double rjj = keep ? std::sqrt(d) : 0.0;
          G(j, j) = rjj;
          for (int k = j + 1; k < s; ++k) {
            double v = G(j, k);
            for (int i = 0; i < j; ++i) v -= G(i, j) * G(i, k);
            G(j, k) = keep ? v / rjj : 0.0;
          }
        }
        // Inverse of the upper-triangular factor, column by column.
        for (int k = 0; k < s; ++k) {
          for (int i = 0; i < s; ++i) X(i, k) = 0.0;
          if (G(k, k) == 0.0) continue;
          X(k, k) = 1.0 / G(k, k);
          for (int i = k - 1; i >= 0; --i) {
            if (G(i, i) == 0.0) continue;
            double v = 0;
            for (int l = i + 1; l <= k; ++l) v += G(i, l) * X(l, k);
            X(i, k) = -v / G(i, i);
          }
        }
      });
}

/// Copies slot t of `c` (b x ncols) into columns [col0, col0 + ncols) of slot slots[t] of q.
template <class ExecSpace, class MemorySpace>
void copy_into_basis(const ExecSpace& exec, const CompressionBatch<MemorySpace>& batch, int count,
                     int col0, int ncols) {
  const int b = batch.b;
  const std::int64_t bb = batch.tile_elems(), bs = static_cast<std::int64_t>(b) * batch.s;
  const std::int64_t n = static_cast<std::int64_t>(b) * ncols;
  const auto slots = batch.slots;
  const auto c = batch.c;
  const auto q = batch.q;
  Kokkos::parallel_for(
      "kcla::compress::copy_into_basis",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(exec, 0, n * count),
      KOKKOS_LAMBDA(const std::int64_t e) {
        const int t = static_cast<int>(e / n);
        const std::int64_t within = e - t * n;
        const std::int64_t slot = slots(t);
        q(slot * bb + static_cast<std::int64_t>(col0) * b + within) = c(slot * bs + within);
      });
}

/// Per tile, columns q < r of U (w1) and V (a): the first ranks[t] get the norm of V's
/// column split evenly (U q *= sqrt(c), V q /= sqrt(c)); the rest are zeroed.
template <class ExecSpace, class MemorySpace>
void balance_factors(const ExecSpace& exec, const CompressionBatch<MemorySpace>& batch, int count,
                     int r) {
  using Team = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  const int b = batch.b;
  const std::int64_t bb = batch.tile_elems();
  const auto slots = batch.slots;
  const auto ranks = batch.ints;
  const auto u = batch.w1;
  const auto v = batch.a;
  Kokkos::parallel_for(
      "kcla::compress::balance_factors", Kokkos::TeamPolicy<ExecSpace>(exec, count, Kokkos::AUTO),
      KOKKOS_LAMBDA(const Team& team) {
        const int t = team.league_rank();
        const std::int64_t base = static_cast<std::int64_t>(slots(t)) * bb;
        const int k = ranks(t);
        for (int col = 0; col < r; ++col) {
          const std::int64_t o = base + static_cast<std::int64_t>(col) * b;
          double norm2 = 0;
          if (col < k)
            Kokkos::parallel_reduce(
                Kokkos::TeamThreadRange(team, b),
                [&](const int e, double& acc) { acc += v(o + e) * v(o + e); }, norm2);
          const double root = std::sqrt(std::sqrt(norm2));
          const double su = col < k ? root : 0.0;
          const double sv = col < k && root > 0 ? 1.0 / root : 0.0;
          Kokkos::parallel_for(Kokkos::TeamThreadRange(team, b), [&](const int e) {
            u(o + e) *= su;
            v(o + e) *= sv;
          });
          team.team_barrier();
        }
      });
}

/// Copies, per tile t, the rows[t] x cols[t] block at the start of slot slots[t] of `buf`
/// (leading dimension ld) to or from a compact array at offsets[t] (leading dimension
/// rows[t]). ints holds rows, cols and offsets as [rows | cols | offsets] (3 * capacity).
template <class ExecSpace, class MemorySpace>
void move_blocks(const ExecSpace& exec, const CompressionBatch<MemorySpace>& batch, int count,
                 const Kokkos::View<double*, MemorySpace>& buf, int ld,
                 const Kokkos::View<double*, MemorySpace>& compact, bool to_compact) {
  using Team = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  const std::int64_t bb = batch.tile_elems();
  const int cap = batch.capacity;
  const auto slots = batch.slots;
  const auto ints = batch.ints;
  Kokkos::parallel_for(
      "kcla::compress::move_blocks", Kokkos::TeamPolicy<ExecSpace>(exec, count, Kokkos::AUTO),
      KOKKOS_LAMBDA(const Team& team) {
        const int t = team.league_rank();
        const int rows = ints(t), cols = ints(cap + t), offset = ints(2 * cap + t);
        const std::int64_t base = static_cast<std::int64_t>(slots(t)) * bb;
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, rows * cols), [&](const int e) {
          const int c = e / rows, r = e - c * rows;
          double& strided = buf(base + r + static_cast<std::int64_t>(c) * ld);
          double& packed = compact(static_cast<std::int64_t>(offset) + e);
          if (to_compact)
            packed = strided;
          else
            strided = packed;
        });
      });
}

/// Compresses the local tiles (local_rows x local_cols in tiles of tile_size, row-major
/// tile order) of a kernel matrix whose local tile (i, j) is the global block where(i, j).
/// `host_fill` writes a local tile on the host (for tiles the device result misses).
template <class ExecSpace>
std::vector<CompressedTile<double>> compress_kernel_tiles_randomized(
    const ExecSpace& exec, const PointSet& row_points, const PointSet& col_points,
    const CovarianceKernel& kernel, std::int64_t local_rows, std::int64_t local_cols, int tile_size,
    const std::function<TileExtent(int, int)>& where, const TileFill<double>& host_fill,
    const TlrCompressOptions& options, TlrCompressReport* report,
    const RandomizedCompressionTuning& tuning = {}) {
  using Mem = typename ExecSpace::memory_space;
  check_compress_options(options);
  if (tile_size < 1) throw InvalidArgument("compress_kernel: tile size must be positive");
  static_cast<void>(kernel(1.0));  // an unknown kernel type throws here, not NaNs on the device
  if (tuning.sample_block < 1 || tuning.batch_bytes < 0)
    throw InvalidArgument("compress_kernel: bad randomized-compression tuning");
  const int tr = static_cast<int>((local_rows + tile_size - 1) / tile_size);
  const int tc = static_cast<int>((local_cols + tile_size - 1) / tile_size);
  const int num_tiles = tr * tc;
  std::vector<CompressedTile<double>> tiles(static_cast<std::size_t>(num_tiles));
  TlrCompressReport rep;
  rep.tiles = num_tiles;
  if (num_tiles == 0) {
    if (report) *report = rep;
    return tiles;
  }
  const int b =
      static_cast<int>(std::min<std::int64_t>(tile_size, std::max(local_rows, local_cols)));
  const int s = std::min(tuning.sample_block, b);
  std::int64_t batch_bytes = tuning.batch_bytes > 0 ? tuning.batch_bytes : (4LL << 30);
#if KCLA_HAVE_CUDA
  if (tuning.batch_bytes == 0 && std::is_same<ExecSpace, Kokkos::Cuda>::value)
    batch_bytes = std::min<std::int64_t>(16LL << 30, cuda_free_bytes() / 4);
#endif
  const int capacity = static_cast<int>(std::max<std::int64_t>(
      1, std::min<std::int64_t>(num_tiles,
                                batch_bytes / CompressionBatch<Mem>::bytes_per_tile(b, s))));
  const int dim = row_points.dimension;

  auto to_device = [&](const std::vector<double>& v, const char* name) {
    Kokkos::View<double*, Mem> d(Kokkos::ViewAllocateWithoutInitializing(name), v.size());
    Kokkos::deep_copy(d, Kokkos::View<const double*, Kokkos::HostSpace>(v.data(), v.size()));
    return Kokkos::View<const double*, Mem>(d);
  };
  const auto rows_d = to_device(row_points.coordinates, "kcla::compress::row_points");
  const auto cols_d = to_device(col_points.coordinates, "kcla::compress::col_points");

  CompressionBatch<Mem> batch(b, s, capacity);
  const auto extents_h = Kokkos::create_mirror_view(batch.extents);
  const auto slots_h = Kokkos::create_mirror_view(batch.slots);
  const auto ints_h = Kokkos::create_mirror_view(batch.ints);
  const auto sums_h = Kokkos::create_mirror_view(batch.sums);
  TileGemm<ExecSpace> gemm;
  std::vector<Kokkos::View<double*, Mem>> omega;  // per round, b x s (column-major)
  auto omega_for = [&](int round) {
    while (static_cast<int>(omega.size()) <= round) {
      const int rd = static_cast<int>(omega.size());
      std::vector<double> h(static_cast<std::size_t>(b) * s);
      for (int c = 0; c < s; ++c)
        for (int r = 0; r < b; ++r)
          h[r + static_cast<std::size_t>(c) * b] = gaussian_sample(rd, r, c);
      Kokkos::View<double*, Mem> d(Kokkos::ViewAllocateWithoutInitializing("kcla::compress::omega"),
                                   h.size());
      Kokkos::deep_copy(d, Kokkos::View<const double*, Kokkos::HostSpace>(h.data(), h.size()));
      omega.push_back(d);
    }
    return omega[static_cast<std::size_t>(round)].data();
  };
  // Host copies of the slot lists in `batch.slots`, the extents and the sums.
  auto set_extents = [&](const std::vector<TileExtent>& list) {
    for (std::size_t t = 0; t < list.size(); ++t) extents_h(t) = list[t];
    Kokkos::deep_copy(exec, batch.extents, extents_h);
  };
  auto set_slots = [&](const std::vector<int>& list) {
    for (std::size_t t = 0; t < list.size(); ++t) slots_h(t) = list[t];
    Kokkos::deep_copy(exec, batch.slots, slots_h);
  };
  auto read_sums = [&](int count) {
    Kokkos::deep_copy(exec, sums_h, batch.sums);
    exec.fence();
    return std::vector<double>(sums_h.data(), sums_h.data() + count);
  };
  const std::int64_t bb = batch.tile_elems();
  // Slot addresses of the tiles of `list` in a buffer of `stride` elements per slot.
  auto slot_pointers = [](const Kokkos::View<double*, Mem>& v, const std::vector<int>& list,
                          std::int64_t stride, std::int64_t offset = 0) {
    std::vector<double*> p(list.size());
    for (std::size_t i = 0; i < list.size(); ++i) p[i] = v.data() + list[i] * stride + offset;
    return p;
  };

  auto seconds_since = [](std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  double range_seconds = 0, eigen_seconds = 0, finish_seconds = 0;
  std::vector<int> fallback;
  for (int first = 0; first < num_tiles; first += capacity) {
    const int count = std::min(capacity, num_tiles - first);
    ++rep.batches;
    auto phase_start = std::chrono::steady_clock::now();
    std::vector<int> all(static_cast<std::size_t>(count));
    std::vector<TileExtent> ext(static_cast<std::size_t>(count));
    for (int t = 0; t < count; ++t) {
      const int g = first + t;
      ext[t] = where(g / tc, g % tc);
      all[t] = t;
    }
    set_extents(ext);
    set_slots(all);
    generate_kernel_tiles(exec, rows_d, cols_d, dim, kernel, batch, count, batch.a);
    block_norms2(exec, batch, count, batch.a, 0, b);
    const std::vector<double> norm2 = read_sums(count);
    std::vector<double> bound2(static_cast<std::size_t>(count)),
        est(static_cast<std::size_t>(count), 0.0);
    std::vector<int> basis(static_cast<std::size_t>(count), 0);
    std::vector<int> active;
    for (int t = 0; t < count; ++t) {
      const double bound =
          std::max(options.relative_tolerance * std::sqrt(norm2[t]), options.absolute_tolerance);
      bound2[t] = bound * bound;
      if (!std::isfinite(norm2[t]))
        throw InvalidArgument("compress_kernel: the kernel gives a non-finite value in tile (" +
                              std::to_string((first + t) / tc) + ", " +
                              std::to_string((first + t) % tc) + ")");
      if (norm2[t] > bound2[t]) active.push_back(t);
    }

    // Adaptive range finding: all active tiles share the basis size r.
    int r = 0;
    for (int round = 0; !active.empty(); ++round) {
      std::vector<int> still;
      for (int t : active) {
        const int full = std::min(ext[t].height, ext[t].width);
        const bool capped = options.max_rank > 0 && r >= options.max_rank + s;
        if (r >= full || capped) {
          basis[t] = r;
          est[t] = r >= full ? 0.0 : est[t];
        } else {
          still.push_back(t);
        }
      }
      active.swap(still);
      if (active.empty()) break;
      const int n = static_cast<int>(active.size());
      const int se = std::min(s, b - r);
      set_slots(active);
      const auto pa = slot_pointers(batch.a, active, bb);
      const auto pq = slot_pointers(batch.q, active, bb);
      const auto py = slot_pointers(batch.q, active, bb, static_cast<std::int64_t>(r) * b);
      const auto pc = slot_pointers(batch.c, active, static_cast<std::int64_t>(b) * s);
      const std::vector<double*> pomega(static_cast<std::size_t>(n), omega_for(round));
      gemm(exec, {false, false, b, se, b, b, b, b, 1.0, 0.0}, pa, pomega, py);
      for (int pass = 0; pass < 2 && r > 0; ++pass) {
        gemm(exec, {true, false, r, se, b, b, b, b, 1.0, 0.0}, pq, py, pc);
        gemm(exec, {false, false, b, se, r, b, b, b, -1.0, 1.0}, pq, pc, py);
      }
      block_norms2(exec, batch, n, batch.q, r, se);
      const std::vector<double> sampled = read_sums(n);
      still.clear();
      for (int i = 0; i < n; ++i) {
        const int t = active[i];
        est[t] = sampled[i] / se;
        if (est[t] <= tuning.stop_fraction * bound2[t])
          basis[t] = r;
        else
          still.push_back(t);
      }
      active.swap(still);
      if (active.empty()) break;
      // CholQR2 on the new block of the tiles that go on.
      const int m = static_cast<int>(active.size());
      set_slots(active);
      // The Gram matrices and inverse factors sit at the list position, not the slot.
      std::vector<int> positions(static_cast<std::size_t>(m));
      for (int i = 0; i < m; ++i) positions[i] = i;
      const auto pnew = slot_pointers(batch.q, active, bb, static_cast<std::int64_t>(r) * b);
      const auto pout = slot_pointers(batch.c, active, static_cast<std::int64_t>(b) * s);
      const auto pg = slot_pointers(batch.gram, positions, static_cast<std::int64_t>(s) * s);
      const auto pr = slot_pointers(batch.rinv, positions, static_cast<std::int64_t>(s) * s);
      for (int pass = 0; pass < 2; ++pass) {
        gemm(exec, {true, false, se, se, b, b, b, s, 1.0, 0.0}, pnew, pnew, pg);
        cholesky_inverse(exec, batch, m, se, tuning.drop_tolerance);
        gemm(exec, {false, false, b, se, se, b, s, b, 1.0, 0.0}, pnew, pr, pout);
        copy_into_basis(exec, batch, m, r, se);
      }
      r += se;
    }

    range_seconds += seconds_since(phase_start);
    phase_start = std::chrono::steady_clock::now();
    // Truncation and measurement, in groups of equal basis size: (1) per group the sketch
    // B = Q^T A and its Gram matrix B B^T, packed together; (2) every tile's eigenproblem
    // on the host at once, the largest first; (3) per group the factors, their measured
    // error and their way to the host.
    std::map<int, std::vector<int>> groups;
    for (int t = 0; t < count; ++t)
      if (basis[t] > 0) groups[basis[t]].push_back(t);
    std::vector<std::int64_t> gram_off(static_cast<std::size_t>(count), 0);
    std::int64_t gram_total = 0;
    for (const auto& group : groups)
      for (int t : group.second) {
        gram_off[t] = gram_total;
        gram_total += static_cast<std::int64_t>(group.first) * group.first;
      }
    if (gram_total > INT32_MAX)
      throw InvalidArgument(
          "compress_kernel: a batch's sketches exceed 2^31 elements; "
          "lower the batch memory");
    // ints = [rows | cols | offsets] per tile of `list`, then slots = list.
    auto set_blocks = [&](const std::vector<int>& list, const std::vector<int>& rows,
                          const std::vector<int>& cols, const std::vector<std::int64_t>& offsets) {
      for (std::size_t i = 0; i < list.size(); ++i) {
        const int t = list[i];
        ints_h(i) = rows[t];
        ints_h(capacity + i) = cols[t];
        ints_h(2 * capacity + i) = static_cast<int>(offsets[t]);
      }
      Kokkos::deep_copy(exec, batch.ints, ints_h);
      set_slots(list);
    };
    Kokkos::View<double*, Mem> grams(
        Kokkos::ViewAllocateWithoutInitializing("kcla::compress::grams"),
        static_cast<std::size_t>(std::max<std::int64_t>(gram_total, 1)));
    for (const auto& group : groups) {
      const int rb = group.first;
      const std::vector<int>& list = group.second;
      rep.sample_columns += static_cast<std::int64_t>(rb) * static_cast<std::int64_t>(list.size());
      const auto pa = slot_pointers(batch.a, list, bb), pq = slot_pointers(batch.q, list, bb);
      const auto pw1 = slot_pointers(batch.w1, list, bb), pw2 = slot_pointers(batch.w2, list, bb);
      gemm(exec, {true, false, rb, b, b, b, b, b, 1.0, 0.0}, pq, pa, pw1);      // B = Q^T A
      gemm(exec, {false, true, rb, rb, b, b, b, rb, 1.0, 0.0}, pw1, pw1, pw2);  // G = B B^T
      set_blocks(list, basis, basis, gram_off);
      move_blocks(exec, batch, static_cast<int>(list.size()), batch.w2, rb, grams, true);
    }
    auto grams_h = Kokkos::create_mirror_view(grams);
    Kokkos::deep_copy(exec, grams_h, grams);
    exec.fence();
    std::vector<int> keep(static_cast<std::size_t>(count), 0);
    {
      const auto eigen_start = std::chrono::steady_clock::now();
      std::vector<int> order;
      for (int t = 0; t < count; ++t)
        if (basis[t] > 0) order.push_back(t);
      std::stable_sort(order.begin(), order.end(),
                       [&](int x, int y) { return basis[x] > basis[y]; });
      const SingleThreadedBlas one_blas_thread_per_tile;
      run_tasks(0, static_cast<std::int64_t>(order.size()), [&](std::int64_t i) {
        const int t = order[static_cast<std::size_t>(i)];
        const double budget2 =
            std::max(tuning.truncation_share * bound2[t] - tuning.residual_weight * est[t],
                     tuning.truncation_floor * bound2[t]);
        keep[t] =
            gram_truncation(basis[t], grams_h.data() + gram_off[t], budget2, options.max_rank);
      });
      eigen_seconds += seconds_since(eigen_start);
    }
    Kokkos::deep_copy(exec, grams, grams_h);
    // The batch's kept factors, packed: U (height x keep) then V (width x keep) per tile.
    std::vector<int> heights(static_cast<std::size_t>(count)),
        widths(static_cast<std::size_t>(count));
    std::vector<std::int64_t> u_off(static_cast<std::size_t>(count), 0),
        v_off(static_cast<std::size_t>(count), 0);
    std::int64_t total = 0;
    for (int t = 0; t < count; ++t) {
      heights[t] = ext[t].height;
      widths[t] = ext[t].width;
      u_off[t] = total;
      total += static_cast<std::int64_t>(ext[t].height) * keep[t];
      v_off[t] = total;
      total += static_cast<std::int64_t>(ext[t].width) * keep[t];
    }
    if (total > INT32_MAX)
      throw InvalidArgument(
          "compress_kernel: a batch's factors exceed 2^31 elements; lower the batch memory");
    Kokkos::View<double*, Mem> factors(
        Kokkos::ViewAllocateWithoutInitializing("kcla::compress::factors"),
        static_cast<std::size_t>(std::max<std::int64_t>(total, 1)));
    std::vector<double> err2(static_cast<std::size_t>(count), 0.0);
    for (const auto& group : groups) {
      const int rb = group.first;
      const std::vector<int>& list = group.second;
      const int n = static_cast<int>(list.size());
      const auto pa = slot_pointers(batch.a, list, bb), pq = slot_pointers(batch.q, list, bb);
      const auto pw1 = slot_pointers(batch.w1, list, bb), pw2 = slot_pointers(batch.w2, list, bb);
      set_blocks(list, basis, basis, gram_off);
      move_blocks(exec, batch, n, batch.w2, rb, grams, false);                  // Z over G
      gemm(exec, {true, false, b, rb, rb, b, rb, b, 1.0, 0.0}, pw1, pw2, pa);   // V = B^T Z
      gemm(exec, {false, false, b, rb, rb, b, rb, b, 1.0, 0.0}, pq, pw2, pw1);  // U = Q Z
      for (int i = 0; i < n; ++i) ints_h(i) = keep[list[i]];
      Kokkos::deep_copy(exec, batch.ints, ints_h);
      balance_factors(exec, batch, n, rb);
      // Measure: the tile again, minus U V^T.
      std::vector<TileExtent> group_ext(static_cast<std::size_t>(n));
      for (int i = 0; i < n; ++i) group_ext[i] = ext[list[i]];
      set_extents(group_ext);
      generate_kernel_tiles(exec, rows_d, cols_d, dim, kernel, batch, n, batch.q);
      gemm(exec, {false, true, b, b, rb, b, b, b, -1.0, 1.0}, pw1, pa, pq);
      block_norms2(exec, batch, n, batch.q, 0, b);
      const std::vector<double> group_err2 = read_sums(n);
      for (int i = 0; i < n; ++i) err2[list[i]] = group_err2[i];
      set_blocks(list, heights, keep, u_off);
      move_blocks(exec, batch, n, batch.w1, b, factors, true);
      set_blocks(list, widths, keep, v_off);
      move_blocks(exec, batch, n, batch.a, b, factors, true);
    }
    auto factors_h = Kokkos::create_mirror_view(factors);
    Kokkos::deep_copy(exec, factors_h, factors);
    exec.fence();
    for (const auto& group : groups)
      for (int t : group.second) {
        const TileExtent x = ext[t];
        auto& out = tiles[static_cast<std::size_t>(first + t)];
        const int k = keep[t];
        out.rank = k;
        out.u.assign(factors_h.data() + u_off[t],
                     factors_h.data() + u_off[t] + static_cast<std::int64_t>(x.height) * k);
        out.v.assign(factors_h.data() + v_off[t],
                     factors_h.data() + v_off[t] + static_cast<std::int64_t>(x.width) * k);
        const double err = std::sqrt(std::max(0.0, err2[t]));
        const double bound = std::sqrt(bound2[t]);
        if (!(err <= bound)) {
          if (options.max_rank > 0 && k >= options.max_rank) {
            ++rep.capped_tiles;
          } else {
            fallback.push_back(first + t);
          }
        } else if (bound > 0) {
          rep.max_error_ratio = std::max(rep.max_error_ratio, err / bound);
        }
      }
    finish_seconds += seconds_since(phase_start);
  }
  // Tiles the device result missed: the host SVD, as the SVD path computes them.
  rep.fallback_tiles = static_cast<int>(fallback.size());
  const SingleThreadedBlas one_blas_thread_per_tile;
  run_tasks(0, static_cast<std::int64_t>(fallback.size()), [&](std::int64_t f) {
    const int g = fallback[static_cast<std::size_t>(f)];
    const int i = g / tc, j = g % tc;
    const int h = static_cast<int>(
        std::min<std::int64_t>(tile_size, local_rows - static_cast<std::int64_t>(i) * tile_size));
    const int w = static_cast<int>(
        std::min<std::int64_t>(tile_size, local_cols - static_cast<std::int64_t>(j) * tile_size));
    std::vector<double> a(static_cast<std::size_t>(h) * w);
    host_fill(i, j, a.data(), h);
    const int info = compress_tile_svd(h, w, a.data(), options, tiles[static_cast<std::size_t>(g)]);
    if (info != 0)
      throw BackendError("compress: LAPACK gesdd failed on tile " + std::to_string(g) + " (info " +
                         std::to_string(info) + ")");
  });
  for (const auto& t : tiles) rep.max_rank = std::max(rep.max_rank, t.rank);
  rep.gemm_flops = gemm.flops;
  rep.range_seconds = range_seconds;
  rep.eigen_seconds = eigen_seconds;
  rep.finish_seconds = finish_seconds - eigen_seconds;
  if (report) *report = rep;
  return tiles;
}

}  // namespace kcla::detail
