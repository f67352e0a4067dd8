// Experiment (b): fp32, every tile of rank b/s, b = N/16, on the grid N x s: speed-up of
// the TLR product over the KBLAS algorithm (loop over k, three batched GEMMs over all
// output tiles per step, ranks padded to the largest), both measured in the same run on
// the same operands (their results are compared too). The geometric mean and the
// smallest speed-up print at the end. Args: N, s (rank = b / s).
#include <cmath>
#include <cstdio>

#include "tlr_bench_support.hpp"

namespace {

using namespace kcla::bench;

std::vector<double>& speedups() {
  static std::vector<double> s;
  return s;
}

void report() {
  if (speedups().empty()) return;
  double log_sum = 0, worst = speedups().front();
  for (double s : speedups()) {
    log_sum += std::log(s);
    worst = std::min(worst, s);
  }
  std::printf(
      "tlr_kblas summary: %zu cases, geometric-mean speed-up over the KBLAS loop %.3fx, "
      "smallest %.3fx\n",
      speedups().size(), std::exp(log_sum / speedups().size()), worst);
}

void BM_TlrKblas(benchmark::State& state) {
  using Scalar = float;
  static const bool registered = [] {
    end_of_run_reports().push_back(report);
    return true;
  }();
  (void)registered;
  const std::int64_t n = state.range(0);
  const int s = static_cast<int>(state.range(1));
  const int tiles = 16, b = static_cast<int>(n / tiles), r = std::max(1, b / s);
  exec_space exec;
  const std::string tag = "kblas N=" + std::to_string(n) + " s=" + std::to_string(s) + ": ";
  trace(tag + "begin");
  auto a = kcla::random_tlr<Scalar, memory_space>(exec, n, n, b, uniform_ranks(tiles, tiles, r), 1);
  auto bm =
      kcla::random_tlr<Scalar, memory_space>(exec, n, n, b, uniform_ranks(tiles, tiles, r), 2);
  auto c = uninitialized<Scalar>("C", n, n);
  kcla::fill_random(exec, c, 3);

  // Workspace: one rectangle when it fits in 12 GB, else the split that does.
  kcla::TlrGemmOptions o;
  const std::size_t cap = std::size_t(12) << 30;
  const std::size_t whole = kcla::workspace_bytes(kcla::Op::N, a, kcla::Op::N, bm, 1, o);
  o.workspace_bytes = std::min(whole, cap);
  const auto plan = kcla::analyze(kcla::Op::N, a, kcla::Op::N, bm, o);
  auto product = [&] { kcla::gemm(exec, plan, a, bm, 1.0, 0.0, c); };
  trace(tag + "planned");
  product();  // warm-up
  exec.fence();
  trace(tag + "first product");
  const double tlr_ms = iteration_median_ms(state, exec, product);

  double kblas_ms = 0, diff = 0, kblas_flops = 0, kblas_gb = 0;
  {
    auto ck = uninitialized<Scalar>("C kblas", n, n);
    KblasLoop<Scalar> kblas(a, bm, ck);
    trace(tag + "KBLAS set up");
    kblas.run(exec, 1.0, 0.0);  // warm-up
    exec.fence();
    trace(tag + "first KBLAS product");
    kblas_ms = median_ms(exec, n >= 65536 ? 1 : 3, [&] { kblas.run(exec, 1.0, 0.0); });
    trace(tag + "KBLAS timed");
    diff = relative_difference(ck, c);
    trace(tag + "compared");
    kblas_flops = kblas.flops();
    kblas_gb = kblas.bytes() / 1e9;
  }
  const double speedup = kblas_ms / tlr_ms;
  speedups().push_back(speedup);
  state.counters["rank"] = r;
  state.counters["tlr_ms"] = tlr_ms;
  state.counters["kblas_ms"] = kblas_ms;
  state.counters["speedup"] = speedup;
  state.counters["tlr_TFLOPs"] = plan.flops() / (tlr_ms * 1e9);
  state.counters["kblas_TFLOPs"] = kblas_flops / (kblas_ms * 1e9);
  state.counters["rel_diff"] = diff;
  state.counters["rectangles"] = plan.num_rectangles();
  state.counters["workspace_GB"] = plan.workspace_bytes() / 1e9;
  state.counters["kblas_GB"] = kblas_gb;
}

#if KCLA_HAVE_CUDA
void grid(benchmark::internal::Benchmark* bench) {
  for (std::int64_t n : {4096, 8192, 16384, 32768, 65536})
    for (std::int64_t s : {32, 16, 8, 4}) bench->Args({n, s});
}
BENCHMARK(BM_TlrKblas)
    ->Name("tlr_kblas")
    ->Apply(grid)
    ->UseManualTime()
    ->Iterations(2)
    ->Unit(benchmark::kMillisecond);
#else
void grid(benchmark::internal::Benchmark* bench) {
  for (std::int64_t n : {512, 1024})
    for (std::int64_t s : {32, 16, 8, 4}) bench->Args({n, s});
}
BENCHMARK(BM_TlrKblas)
    ->Name("tlr_kblas")
    ->Apply(grid)
    ->UseManualTime()
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);
#endif

}  // namespace
