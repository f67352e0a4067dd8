// Shared pieces of the TLR benchmarks: timing, the dense GEMM baseline, the KBLAS-style
// baseline (loop over k, three batched GEMMs over all output tiles per step, every rank
// padded to the largest), rank distributions, result comparison, end-of-run reports.
#pragma once

#include <kcla/tlr_gemm.hpp>
#include <kcla/tlr_matrix.hpp>
#include <kcla/tlr_random.hpp>

#include <benchmark/benchmark.h>
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "tlr_bench_vendor.hpp"

namespace kcla::bench {

using exec_space = Kokkos::DefaultExecutionSpace;
using memory_space = exec_space::memory_space;

template <class Scalar>
using dense_matrix = Kokkos::View<Scalar**, Kokkos::LayoutLeft, memory_space>;

/// Lines printed after all benchmarks ran (summaries such as geometric means).
std::vector<std::function<void()>>& end_of_run_reports();

/// Seconds since the program started, with a phase name, on stderr (set-up costs of the
/// large cases: allocation, generation, planning, first products).
void trace(const std::string& phase);

/// An n x n column-major matrix, not initialised (it is filled right after).
template <class Scalar>
dense_matrix<Scalar> uninitialized(const std::string& label, std::int64_t rows, std::int64_t cols) {
  return dense_matrix<Scalar>(Kokkos::view_alloc(Kokkos::WithoutInitializing, label), rows, cols);
}

template <class Exec>
Where where_of(const Exec& exec) {
#if KCLA_HAVE_CUDA
  if constexpr (std::is_same<Exec, Kokkos::Cuda>::value) return Where{true, exec.cuda_stream()};
#endif
  (void)exec;
  return Where{};
}

/// Median wall time (ms) of `reps` fenced runs of f().
template <class Exec, class F>
double median_ms(const Exec& exec, int reps, F&& f) {
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    exec.fence();
    Kokkos::Timer timer;
    f();
    exec.fence();
    t.push_back(timer.seconds() * 1e3);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

/// Runs f() once per benchmark iteration (fenced), reports each as the iteration's manual
/// time and returns the median (ms).
template <class Exec, class F>
double iteration_median_ms(benchmark::State& state, const Exec& exec, F&& f) {
  std::vector<double> times;
  for (auto _ : state) {
    const double ms = median_ms(exec, 1, f);
    times.push_back(ms);
    state.SetIterationTime(ms / 1e3);
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

/// The options of the same product without pipelining: one stream and one arena holding
/// what each of the pipelined plan's two arenas held (the same rectangles).
inline TlrGemmOptions unpipelined(const TlrGemmOptions& options, const TlrGemmPlan& plan) {
  TlrGemmOptions serial = options;
  serial.tuning.pipelined = false;
  if (plan.num_arenas() == 2) serial.workspace_bytes = options.workspace_bytes / 2;
  return serial;
}

/// C = A B with dense column-major Views (cuBLAS GemmEx on CUDA, BLAS on the host).
template <class Exec, class Scalar>
void dense_gemm(const Exec& exec, const dense_matrix<Scalar>& a, const dense_matrix<Scalar>& b,
                const dense_matrix<Scalar>& c, TlrMath math = TlrMath::standard) {
  GemmShape s;
  s.kind = TlrScalarTraits<Scalar>::kind;
  s.math = math;
  s.m = static_cast<int>(c.extent(0));
  s.n = static_cast<int>(c.extent(1));
  s.k = static_cast<int>(a.extent(1));
  s.lda = static_cast<int>(std::max<std::size_t>(1, a.stride(1)));
  s.ldb = static_cast<int>(std::max<std::size_t>(1, b.stride(1)));
  s.ldc = static_cast<int>(std::max<std::size_t>(1, c.stride(1)));
  vendor_gemm(where_of(exec), s, 1.0, a.data(), b.data(), 0.0, c.data());
}

/// Copies a TLR family into per-tile blocks of `rmax` columns (tile-major, leading
/// dimension ld), zero beyond each tile's stored rank.
template <class Scalar>
struct PadFamily {
  Kokkos::View<Scalar*, memory_space> out;
  Kokkos::View<const Scalar*, memory_space> in;
  Kokkos::View<const std::int64_t*, memory_space> start;
  Kokkos::View<const int*, memory_space> prefix;
  Kokkos::View<const int*, memory_space> stored;
  int tile_rows, tile_cols, rmax;
  bool outer;
  std::int64_t ld, in_ld;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t e) const {
    const std::int64_t per_tile = ld * rmax;
    const std::int64_t tile = e / per_tile;
    const std::int64_t rest = e - tile * per_tile;
    const std::int64_t col = rest / ld, row = rest - col * ld;
    const int i = static_cast<int>(tile / tile_cols), j = static_cast<int>(tile % tile_cols);
    const int r = stored(tile);
    Scalar v = TlrScalarTraits<Scalar>::narrow(0.0);
    if (col < r) {
      const std::int64_t c0 =
          outer ? start(i) + prefix(static_cast<std::int64_t>(i) * (tile_cols + 1) + j)
                : start(j) + prefix(static_cast<std::int64_t>(j) * (tile_rows + 1) + i);
      v = in((c0 + col) * in_ld + row);
    }
    out(e) = v;
  }
};

/// The KBLAS algorithm for C <- alpha A B + beta C (both TLR, uniform square tiles):
/// for each k, S_ij = V_ik^T W_kj, T_ij = S_ij Z_kj^T, C_ij += U_ik T_ij, each a batched
/// GEMM over all (i, j) with every rank padded to the largest stored rank.
template <class Scalar>
class KblasLoop {
 public:
  KblasLoop(const TlrMatrix<Scalar, memory_space>& a, const TlrMatrix<Scalar, memory_space>& b,
            const dense_matrix<Scalar>& c)
      : p_(a.tile_rows()), q_(a.tile_cols()), r_(b.tile_cols()), tile_(a.tile_size()) {
    if (a.num_rows() % tile_ || a.num_cols() % tile_ || b.num_cols() % tile_ ||
        b.tile_size() != tile_ || b.num_rows() != a.num_cols())
      throw InvalidArgument("KblasLoop: needs uniform tiles of one size and matching shapes");
    for (int v : a.layout().stored_ranks()) rmax_ = std::max(rmax_, v);
    for (int v : b.layout().stored_ranks()) rmax_ = std::max(rmax_, v);
    ld_ = tile_;
    u_ = pad(a, true);
    v_ = pad(a, false);
    w_ = pad(b, true);
    z_ = pad(b, false);
    const std::int64_t pairs = static_cast<std::int64_t>(p_) * r_;
    s_ = Kokkos::View<Scalar*, memory_space>("kblas::S", pairs * rmax_ * rmax_);
    t_ = Kokkos::View<Scalar*, memory_space>("kblas::T", pairs * rmax_ * ld_);
    // Pointer arrays: for every k, 3 GEMMs x (A, B, C) x pairs.
    ptrs_ = Kokkos::View<std::uintptr_t*, memory_space>("kblas::ptrs", 9 * pairs * q_);
    auto h = Kokkos::create_mirror_view(ptrs_);
    const std::size_t es = sizeof(Scalar);
    auto at = [&](const Kokkos::View<Scalar*, memory_space>& x, std::int64_t e) {
      return reinterpret_cast<std::uintptr_t>(x.data()) + static_cast<std::uintptr_t>(e) * es;
    };
    const std::int64_t tile_elems = ld_ * rmax_;
    const std::int64_t ldc = static_cast<std::int64_t>(c.stride(1));
    for (int k = 0; k < q_; ++k)
      for (int i = 0; i < p_; ++i)
        for (int j = 0; j < r_; ++j) {
          const std::int64_t pr = static_cast<std::int64_t>(i) * r_ + j;
          const std::int64_t base = 9 * pairs * k;
          const std::int64_t sij = pr * rmax_ * rmax_, tij = pr * rmax_ * ld_;
          h(base + 0 * pairs + pr) = at(v_, (static_cast<std::int64_t>(i) * q_ + k) * tile_elems);
          h(base + 1 * pairs + pr) = at(w_, (static_cast<std::int64_t>(k) * r_ + j) * tile_elems);
          h(base + 2 * pairs + pr) = at(s_, sij);
          h(base + 3 * pairs + pr) = at(s_, sij);
          h(base + 4 * pairs + pr) = at(z_, (static_cast<std::int64_t>(k) * r_ + j) * tile_elems);
          h(base + 5 * pairs + pr) = at(t_, tij);
          h(base + 6 * pairs + pr) = at(u_, (static_cast<std::int64_t>(i) * q_ + k) * tile_elems);
          h(base + 7 * pairs + pr) = at(t_, tij);
          h(base + 8 * pairs + pr) =
              reinterpret_cast<std::uintptr_t>(c.data()) +
              static_cast<std::uintptr_t>(static_cast<std::int64_t>(i) * tile_ +
                                          static_cast<std::int64_t>(j) * tile_ * ldc) *
                  es;
        }
    Kokkos::deep_copy(ptrs_, h);
    ldc_ = static_cast<int>(ldc);
  }

  template <class Exec>
  void run(const Exec& exec, double alpha, double beta) const {
    const Where stream = where_of(exec);
    const std::int64_t pairs = static_cast<std::int64_t>(p_) * r_;
    const int batch = static_cast<int>(pairs);
    auto arr = [&](int k, int which) {
      return reinterpret_cast<void* const*>(ptrs_.data() + 9 * pairs * k + which * pairs);
    };
    auto carr = [&](int k, int which) {
      return reinterpret_cast<const void* const*>(ptrs_.data() + 9 * pairs * k + which * pairs);
    };
    GemmShape s1, s2, s3;
    s1.kind = s2.kind = s3.kind = TlrScalarTraits<Scalar>::kind;
    // S = V^T W: (rmax x b) x (b x rmax)
    s1.trans_a = true;
    s1.m = rmax_, s1.n = rmax_, s1.k = tile_, s1.lda = ld_, s1.ldb = ld_, s1.ldc = rmax_;
    // T = S Z^T: (rmax x rmax) x (rmax x b)
    s2.trans_b = true;
    s2.m = rmax_, s2.n = tile_, s2.k = rmax_, s2.lda = rmax_, s2.ldb = ld_, s2.ldc = rmax_;
    // C += U T: (b x rmax) x (rmax x b)
    s3.m = tile_, s3.n = tile_, s3.k = rmax_, s3.lda = ld_, s3.ldb = rmax_, s3.ldc = ldc_;
    if (rmax_ == 0) return;
    for (int k = 0; k < q_; ++k) {
      vendor_batched_gemm(stream, s1, 1.0, carr(k, 0), carr(k, 1), 0.0, arr(k, 2), batch);
      vendor_batched_gemm(stream, s2, 1.0, carr(k, 3), carr(k, 4), 0.0, arr(k, 5), batch);
      vendor_batched_gemm(stream, s3, alpha, carr(k, 6), carr(k, 7), k == 0 ? beta : 1.0, arr(k, 8),
                          batch);
    }
  }

  double flops() const {
    const double pairs = static_cast<double>(p_) * r_;
    const double r = rmax_, b = tile_;
    return q_ * pairs * 2.0 * (r * r * b + r * b * r + b * b * r);
  }
  std::size_t bytes() const {
    return (u_.span() + v_.span() + w_.span() + z_.span() + s_.span() + t_.span()) * sizeof(Scalar);
  }
  int rmax() const { return rmax_; }

 private:
  Kokkos::View<Scalar*, memory_space> pad(const TlrMatrix<Scalar, memory_space>& x, bool outer) {
    const auto& l = x.device_layout();
    const std::int64_t n = static_cast<std::int64_t>(l.tile_rows) * l.tile_cols * ld_ * rmax_;
    Kokkos::View<Scalar*, memory_space> out("kblas::factors", n);
    kcla::detail::parallel_for_large(
        "kcla::bench::kblas_pad", exec_space(), n,
        PadFamily<Scalar>{out, outer ? x.outer_factors() : x.inner_factors(),
                          outer ? l.outer_start : l.inner_start,
                          outer ? l.outer_prefix : l.inner_prefix, l.stored_ranks, l.tile_rows,
                          l.tile_cols, rmax_, outer, ld_, l.leading_dim});
    exec_space().fence();
    return out;
  }

  int p_, q_, r_, tile_, rmax_ = 0;
  std::int64_t ld_ = 0;
  int ldc_ = 0;
  Kokkos::View<Scalar*, memory_space> u_, v_, w_, z_, s_, t_;
  Kokkos::View<std::uintptr_t*, memory_space> ptrs_;
};

/// ||x - y||_F / ||y||_F on the device.
template <class Scalar>
struct DiffNorms {
  dense_matrix<Scalar> x, y;
  std::int64_t rows;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t e, double& num, double& den) const {
    const std::int64_t c = e / rows, r = e - c * rows;
    const double a = TlrScalarTraits<Scalar>::widen(x(r, c));
    const double b = TlrScalarTraits<Scalar>::widen(y(r, c));
    num += (a - b) * (a - b);
    den += b * b;
  }
};

template <class Scalar>
double relative_difference(const dense_matrix<Scalar>& x, const dense_matrix<Scalar>& y) {
  const std::int64_t rows = static_cast<std::int64_t>(x.extent(0));
  const std::int64_t count = rows * static_cast<std::int64_t>(x.extent(1));
  double num = 0, den = 0;
  // In chunks: Kokkos 3.4 on CUDA cannot launch 2^32+ iterations (detail/large_range.hpp).
  for (std::int64_t begin = 0; begin < count; begin += kcla::detail::max_launch_iterations) {
    double n = 0, d = 0;
    Kokkos::parallel_reduce(
        "kcla::bench::diff",
        Kokkos::RangePolicy<exec_space, Kokkos::IndexType<std::int64_t>>(
            begin, std::min(count, begin + kcla::detail::max_launch_iterations)),
        DiffNorms<Scalar>{x, y, rows}, n, d);
    num += n;
    den += d;
  }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

/// Every tile of rank `rank`.
inline std::vector<int> uniform_ranks(int tiles_r, int tiles_c, int rank) {
  return std::vector<int>(static_cast<std::size_t>(tiles_r) * tiles_c, rank);
}

/// Ranks in [lo, hi], skewed towards lo (lo + (hi - lo) u^2), rounded up to `multiple`.
inline std::vector<int> skewed_ranks(int tiles_r, int tiles_c, int lo, int hi, int multiple,
                                     std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<int> ranks(static_cast<std::size_t>(tiles_r) * tiles_c);
  for (auto& r : ranks) {
    const double x = u(gen);
    const int v = lo + static_cast<int>((hi - lo) * x * x);
    r = std::min(hi, (v + multiple - 1) / multiple * multiple);
  }
  return ranks;
}

}  // namespace kcla::bench
