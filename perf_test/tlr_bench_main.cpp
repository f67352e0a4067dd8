// main() of the TLR benchmark programs: Kokkos lives for the whole run; summaries that
// span several benchmarks (geometric means) print at the end.
#include <benchmark/benchmark.h>
#include <Kokkos_Core.hpp>

#include <cstdlib>

#include "tlr_bench_support.hpp"

namespace kcla::bench {

std::vector<std::function<void()>>& end_of_run_reports() {
  static std::vector<std::function<void()>> reports;
  return reports;
}

}  // namespace kcla::bench

int main(int argc, char** argv) {
  setenv("OMP_PROC_BIND", "false", 0);
  Kokkos::ScopeGuard kokkos(argc, argv);
  ::benchmark::Initialize(&argc, argv);
  if (::benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  ::benchmark::RunSpecifiedBenchmarks();
  for (auto& report : kcla::bench::end_of_run_reports()) report();
  ::benchmark::Shutdown();
  return 0;
}
