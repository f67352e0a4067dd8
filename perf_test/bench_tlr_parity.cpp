// Experiment (a): fp32, every tile of rank b/16, b = N/16. TLR product time against "dense
// parity" = dense cuBLAS GEMM time x (FLOPs the TLR product executes / dense FLOPs),
// measured in the same run; plus the pipelining gain (same rectangles, one stream and one
// arena vs two). Args: N, target number of rectangles (1: one rectangle, all of C).
#include <map>
#include <string>

#include "tlr_bench_support.hpp"

namespace {

using namespace kcla::bench;

/// Dense GEMM time for an n x n x n product, measured once per program run.
template <class Scalar>
double dense_ms_cached(std::int64_t n) {
  static std::map<std::int64_t, double> cache;
  auto it = cache.find(n);
  if (it != cache.end()) return it->second;
  exec_space exec;
  auto a = uninitialized<Scalar>("dense A", n, n), b = uninitialized<Scalar>("dense B", n, n),
       c = uninitialized<Scalar>("dense C", n, n);
  kcla::fill_random(exec, a, 11);
  kcla::fill_random(exec, b, 12);
  dense_gemm(exec, a, b, c);  // warm-up
  const double ms = median_ms(exec, n >= 32768 ? 2 : 3, [&] { dense_gemm(exec, a, b, c); });
  cache[n] = ms;
  return ms;
}

void BM_TlrParity(benchmark::State& state) {
  using Scalar = float;
  const std::int64_t n = state.range(0);
  const int runs = static_cast<int>(state.range(1));
  const int tiles = 16, b = static_cast<int>(n / tiles), r = b / 16;
  exec_space exec;
  auto a = kcla::random_tlr<Scalar, memory_space>(exec, n, n, b, uniform_ranks(tiles, tiles, r), 1);
  auto bm =
      kcla::random_tlr<Scalar, memory_space>(exec, n, n, b, uniform_ranks(tiles, tiles, r), 2);
  auto c = uninitialized<Scalar>("C", n, n);
  kcla::fill_random(exec, c, 3);

  kcla::TlrGemmOptions o;
  o.tuning.pipelined = true;
  o.workspace_bytes =
      runs <= 1 ? 0 : kcla::workspace_bytes(kcla::Op::N, a, kcla::Op::N, bm, runs, o);
  const auto plan = kcla::analyze(kcla::Op::N, a, kcla::Op::N, bm, o);
  const auto plan_serial = kcla::analyze(kcla::Op::N, a, kcla::Op::N, bm, unpipelined(o, plan));

  auto product = [&](const kcla::TlrGemmPlan& p) { kcla::gemm(exec, p, a, bm, 1.0, 0.0, c); };
  product(plan);  // warm-up: handles, pointer arrays, workspace
  product(plan_serial);
  exec.fence();
  const double tlr_ms = iteration_median_ms(state, exec, [&] { product(plan); });
  const double serial_ms = median_ms(exec, 3, [&] { product(plan_serial); });
  const double dense_ms = dense_ms_cached<Scalar>(n);
  const double dense_flops = 2.0 * n * n * n;
  const double parity_ms = dense_ms * plan.flops() / dense_flops;
  state.counters["tlr_ms"] = tlr_ms;
  state.counters["serial_ms"] = serial_ms;
  state.counters["pipeline_gain"] = serial_ms / tlr_ms;
  state.counters["dense_ms"] = dense_ms;
  state.counters["flop_ratio"] = plan.flops() / dense_flops;
  state.counters["parity_ms"] = parity_ms;
  state.counters["parity_pct"] = 100.0 * parity_ms / tlr_ms;
  state.counters["tlr_TFLOPs"] = plan.flops() / (tlr_ms * 1e9);
  state.counters["dense_TFLOPs"] = dense_flops / (dense_ms * 1e9);
  state.counters["rectangles"] = plan.num_rectangles();
  state.counters["workspace_MB"] = plan.workspace_bytes() / 1e6;
  state.SetLabel("fp32 r=b/16 b=N/16 " +
                 std::string(plan.num_arenas() == 2 ? "pipelined" : "1 arena"));
}

#if KCLA_HAVE_CUDA
BENCHMARK(BM_TlrParity)
    ->Name("tlr_parity")
    ->Args({16384, 1})
    ->Args({32768, 1})
    ->Args({32768, 4})
    ->Args({32768, 8})
    ->UseManualTime()
    ->Iterations(5)
    ->Unit(benchmark::kMillisecond);
#else
BENCHMARK(BM_TlrParity)
    ->Name("tlr_parity")
    ->Args({1024, 1})
    ->Args({1024, 4})
    ->UseManualTime()
    ->Iterations(2)
    ->Unit(benchmark::kMillisecond);
#endif

}  // namespace
