// Experiment (c): fp16, 8 x 8 tiles (b = N/8), ranks skewed in [b/32, b/16]: speed-up over
// dense fp16 cuBLAS GEMM (tensor cores, fp32 accumulation) measured in the same run, and
// memory (compressed operands + workspace) as a percentage of the dense inputs.
// Args: N, workspace mode (0: budget for 10.5% total memory, 1: one rectangle, 2: as 0 with
// stages 1-2 forced to batched launches, the evidence for TlrLaunch::automatic).
#include <map>
#include <string>

#include "tlr_bench_support.hpp"

namespace {

using namespace kcla::bench;
using Scalar = Kokkos::Experimental::half_t;

double dense_ms_cached(std::int64_t n) {
  static std::map<std::int64_t, double> cache;
  auto it = cache.find(n);
  if (it != cache.end()) return it->second;
  exec_space exec;
  auto a = uninitialized<Scalar>("dense A", n, n), b = uninitialized<Scalar>("dense B", n, n),
       c = uninitialized<Scalar>("dense C", n, n);
  kcla::fill_random(exec, a, 11);
  kcla::fill_random(exec, b, 12);
  exec.fence();
  trace("dense operands generated");
  dense_gemm(exec, a, b, c);  // warm-up
  exec.fence();
  trace("first dense product");
  const double ms = median_ms(exec, 2, [&] { dense_gemm(exec, a, b, c); });
  cache[n] = ms;
  return ms;
}

void BM_TlrFp16(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  const int mode = static_cast<int>(state.range(1));
  const int tiles = 8, b = static_cast<int>(n / tiles);
  const int multiple = kcla::TlrScalarTraits<Scalar>::rank_multiple;
  exec_space exec;
  const std::string tag = "fp16 N=" + std::to_string(n) + " mode " + std::to_string(mode) + ": ";
  trace(tag + "begin");
  auto a = kcla::random_tlr<Scalar, memory_space>(
      exec, n, n, b, skewed_ranks(tiles, tiles, b / 32, b / 16, multiple, 101), 1);
  auto bm = kcla::random_tlr<Scalar, memory_space>(
      exec, n, n, b, skewed_ranks(tiles, tiles, b / 32, b / 16, multiple, 202), 2);
  auto c = uninitialized<Scalar>("C", n, n);
  kcla::fill_random(exec, c, 3);
  exec.fence();
  trace(tag + "operands generated");

  const double dense_inputs = 2.0 * n * n * sizeof(Scalar);
  const double compressed = static_cast<double>(a.bytes() + bm.bytes());
  kcla::TlrGemmOptions o;
  o.tuning.pipelined = true;
  if (mode == 2) o.tuning.coupling_launch = kcla::TlrLaunch::batched;
  if (mode == 0 || mode == 2) {
    const double budget = 0.105 * dense_inputs - compressed;
    o.workspace_bytes = static_cast<std::size_t>(std::max(budget, 1.0));
  }
  const auto plan = kcla::analyze(kcla::Op::N, a, kcla::Op::N, bm, o);
  const auto plan_serial = kcla::analyze(kcla::Op::N, a, kcla::Op::N, bm, unpipelined(o, plan));
  trace(tag + "planned: " + std::to_string(plan.num_rectangles()) + " rectangles");

  auto product = [&](const kcla::TlrGemmPlan& p) { kcla::gemm(exec, p, a, bm, 1.0, 0.0, c); };
  product(plan);  // warm-up
  exec.fence();
  trace(tag + "first product");
  product(plan_serial);
  exec.fence();
  trace(tag + "first serial product");
  const double tlr_ms = iteration_median_ms(state, exec, [&] { product(plan); });
  trace(tag + "timed products");
  const double serial_ms = median_ms(exec, 3, [&] { product(plan_serial); });
  const double dense_ms = dense_ms_cached(n);
  trace(tag + "dense baseline");
  const double memory = compressed + static_cast<double>(plan.workspace_bytes());
  state.counters["tlr_ms"] = tlr_ms;
  state.counters["dense_ms"] = dense_ms;
  state.counters["speedup"] = dense_ms / tlr_ms;
  state.counters["memory_pct"] = 100.0 * memory / dense_inputs;
  state.counters["compressed_MB"] = compressed / 1e6;
  state.counters["workspace_MB"] = plan.workspace_bytes() / 1e6;
  state.counters["rectangles"] = plan.num_rectangles();
  state.counters["serial_ms"] = serial_ms;
  state.counters["pipeline_gain"] = serial_ms / tlr_ms;
  state.counters["tlr_TFLOPs"] = plan.flops() / (tlr_ms * 1e9);
  state.counters["dense_TFLOPs"] = 2.0 * n * n * n / (dense_ms * 1e9);
  state.SetLabel(mode == 0   ? "budget: 10.5% memory"
                 : mode == 1 ? "one rectangle"
                             : "budget: 10.5% memory, stages 1-2 batched");
}

#if KCLA_HAVE_CUDA
BENCHMARK(BM_TlrFp16)
    ->Name("tlr_fp16")
    ->Args({32768, 0})
    ->Args({65536, 0})
    ->Args({65536, 1})
    ->Args({65536, 2})
    ->UseManualTime()
    ->Iterations(5)
    ->Unit(benchmark::kMillisecond);
#else
BENCHMARK(BM_TlrFp16)
    ->Name("tlr_fp16")
    ->Args({1024, 0})
    ->Args({1024, 1})
    ->UseManualTime()
    ->Iterations(2)
    ->Unit(benchmark::kMillisecond);
#endif

}  // namespace
