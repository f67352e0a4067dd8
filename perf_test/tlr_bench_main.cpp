// main() of the TLR benchmark programs: Kokkos lives for the whole run; summaries that
// span several benchmarks (geometric means) print at the end.
#include <benchmark/benchmark.h>
#include <Kokkos_Core.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "tlr_bench_support.hpp"

namespace kcla::bench {

std::vector<std::function<void()>>& end_of_run_reports() {
  static std::vector<std::function<void()>> reports;
  return reports;
}

void trace(const std::string& phase) {
  static const auto start = std::chrono::steady_clock::now();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::fprintf(stderr, "[%8.2f s] %s\n", s, phase.c_str());
  std::fflush(stderr);
}

}  // namespace kcla::bench

int main(int argc, char** argv) {
  setenv("OMP_PROC_BIND", "false", 0);
  kcla::bench::trace("start");
  Kokkos::ScopeGuard kokkos(argc, argv);
  kcla::bench::trace("Kokkos initialised");
  ::benchmark::Initialize(&argc, argv);
  if (::benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  ::benchmark::RunSpecifiedBenchmarks();
  for (auto& report : kcla::bench::end_of_run_reports()) report();
  ::benchmark::Shutdown();
  return 0;
}
