// How the TLR product's launch forms and rectangle counts compare (the evidence behind the
// automatic choices in TlrGemmOptions): fp32, every tile of rank b/s, b = N/16, each
// variant against the KBLAS-style loop on the same operands in the same run.
// Args: N, s (rank = b / s), variant (see kVariants), ranks (0: every tile rank b/s;
// 1: skewed in [b/(2s), b/s] as in the fp16 experiment, so stages 1-2 have many shapes).
#include <cstdio>
#include <map>
#include <string>
#include <utility>

#include "tlr_bench_support.hpp"

namespace {

using namespace kcla::bench;

struct Variant {
  const char* name;
  kcla::TlrLaunch coupling, final_launch;
  int rectangles;  // 0: automatic
};

constexpr kcla::TlrLaunch grouped = kcla::TlrLaunch::grouped;
constexpr kcla::TlrLaunch batched = kcla::TlrLaunch::batched;
constexpr kcla::TlrLaunch per_task = kcla::TlrLaunch::per_task;
constexpr kcla::TlrLaunch automatic = kcla::TlrLaunch::automatic;

const Variant kVariants[] = {
    {"grouped+per_task x1", grouped, per_task, 1},  // the first release's form
    {"grouped+batched x1", grouped, batched, 1},   {"grouped+grouped x1", grouped, grouped, 1},
    {"batched+batched x1", batched, batched, 1},   {"grouped+batched x4", grouped, batched, 4},
    {"grouped+batched x8", grouped, batched, 8},   {"automatic", automatic, automatic, 0},
};
constexpr int kNumVariants = sizeof(kVariants) / sizeof(kVariants[0]);

/// The operands and the KBLAS time of one (N, s), kept while its variants run.
struct Case {
  std::int64_t n = 0;
  int s = 0, skewed = 0;
  kcla::TlrMatrix<float, memory_space> a, b;
  dense_matrix<float> c;
  double kblas_ms = 0;
};

Case& case_for(std::int64_t n, int s, int skewed) {
  static Case current;
  // The Views must go before Kokkos is finalised.
  static const bool registered = [] {
    end_of_run_reports().push_back([] { current = Case{}; });
    return true;
  }();
  (void)registered;
  if (current.n == n && current.s == s && current.skewed == skewed) return current;
  current = Case{};  // release the previous operands first
  exec_space exec;
  const int tiles = 16, b = static_cast<int>(n / tiles), r = std::max(1, b / s);
  auto ranks = [&](std::uint64_t seed) {
    return skewed ? skewed_ranks(tiles, tiles, std::max(1, r / 2), r, 1, seed)
                  : uniform_ranks(tiles, tiles, r);
  };
  current.a = kcla::random_tlr<float, memory_space>(exec, n, n, b, ranks(5), 1);
  current.b = kcla::random_tlr<float, memory_space>(exec, n, n, b, ranks(6), 2);
  current.c = uninitialized<float>("C", n, n);
  {
    KblasLoop<float> kblas(current.a, current.b, current.c);
    kblas.run(exec, 1.0, 0.0);  // warm-up
    current.kblas_ms = median_ms(exec, n >= 65536 ? 1 : 3, [&] { kblas.run(exec, 1.0, 0.0); });
  }
  current.n = n;
  current.s = s;
  current.skewed = skewed;
  return current;
}

void BM_TlrVariant(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  const int s = static_cast<int>(state.range(1));
  const Variant& v = kVariants[state.range(2)];
  const int skewed = static_cast<int>(state.range(3));
  Case& cs = case_for(n, s, skewed);
  exec_space exec;
  kcla::TlrGemmOptions o;
  o.tuning.coupling_launch = v.coupling;
  o.tuning.final_launch = v.final_launch;
  o.tuning.rectangles = v.rectangles;
  // At most 12 GB of workspace, as in the KBLAS experiment.
  const std::size_t cap = std::size_t(12) << 30;
  const int runs = v.rectangles == 0
                       ? kcla::analyze(kcla::Op::N, cs.a, kcla::Op::N, cs.b, o).num_rectangles()
                       : v.rectangles;
  const std::size_t want = kcla::workspace_bytes(kcla::Op::N, cs.a, kcla::Op::N, cs.b, runs, o);
  if (want > cap) o.workspace_bytes = cap;
  const auto plan = kcla::analyze(kcla::Op::N, cs.a, kcla::Op::N, cs.b, o);
  auto product = [&] { kcla::gemm(exec, plan, cs.a, cs.b, 1.0, 0.0, cs.c); };
  product();  // warm-up: handles, pointer arrays, workspace
  exec.fence();
  const double tlr_ms = iteration_median_ms(state, exec, product);
  state.counters["tlr_ms"] = tlr_ms;
  state.counters["kblas_ms"] = cs.kblas_ms;
  state.counters["speedup"] = cs.kblas_ms / tlr_ms;
  state.counters["tlr_TFLOPs"] = plan.flops() / (tlr_ms * 1e9);
  state.counters["rectangles"] = plan.num_rectangles();
  // Shapes (groups) of stages 1 and 2 in the first rectangle: what TlrLaunch::automatic
  // decides on.
  state.counters["s1_groups"] = static_cast<double>(plan.data().rectangles[0].stage1.groups.size());
  state.counters["s2_groups"] = static_cast<double>(plan.data().rectangles[0].stage2.groups.size());
  state.counters["workspace_GB"] = plan.workspace_bytes() / 1e9;
  state.SetLabel(std::string(v.name) + (skewed ? ", skewed ranks" : ""));
}

void grid(benchmark::internal::Benchmark* bench, std::initializer_list<std::pair<int, int>> cases) {
  for (const auto& [n, s] : cases)
    for (int v = 0; v < kNumVariants; ++v) bench->Args({n, s, v, 0});
}

/// Skewed ranks: the stage 1-2 launch forms only (grouped, batched, automatic).
void skewed_grid(benchmark::internal::Benchmark* bench,
                 std::initializer_list<std::pair<int, int>> cases) {
  for (const auto& [n, s] : cases)
    for (int v : {1, 3, 6}) bench->Args({n, s, v, 1});
}

#if KCLA_HAVE_CUDA
BENCHMARK(BM_TlrVariant)
    ->Name("tlr_variant")
    ->Apply([](benchmark::internal::Benchmark* b) {
      grid(b,
           {{4096, 32}, {4096, 4}, {8192, 16}, {16384, 16}, {16384, 4}, {32768, 16}, {32768, 4}});
    })
    ->UseManualTime()
    ->Iterations(3)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_TlrVariant)
    ->Name("tlr_variant")
    ->Apply([](benchmark::internal::Benchmark* b) {
      grid(b, {{65536, 4}});
    })
    ->UseManualTime()
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_TlrVariant)
    ->Name("tlr_variant")
    ->Apply([](benchmark::internal::Benchmark* b) {
      skewed_grid(b, {{4096, 16}, {8192, 16}, {16384, 8}, {32768, 16}});
    })
    ->UseManualTime()
    ->Iterations(3)
    ->Unit(benchmark::kMillisecond);
#else
BENCHMARK(BM_TlrVariant)
    ->Name("tlr_variant")
    ->Apply([](benchmark::internal::Benchmark* b) {
      grid(b, {{512, 8}});
      skewed_grid(b, {{512, 8}});
    })
    ->UseManualTime()
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);
#endif

}  // namespace
