// kcla demo: the main job on an embedded default. Simulates a genotype panel, compresses
// it, multiplies (a polygenic score y = G beta, and a batch of 16 score vectors) on the
// default back end, verifies against the CSR product and prints structure and timings.
#include "cli_common.hpp"

#include <kcla/config.hpp>
#include <kcla/csr_spmv.hpp>
#include <kcla/grammar_metrics.hpp>
#include <kcla/grammar_multiply.hpp>
#include <kcla/repair.hpp>
#include <kcla/synthetic.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <random>

namespace kcla::cli {

namespace {

Command demo_command() {
  Command c("kcla demo [options]",
            "Simulates an N x M genotype panel (default 1000 x 20000, mosaic haplotypes), "
            "compresses it with RePair, computes polygenic scores y = G beta on the grammar "
            "(single vector and a batch of 16), verifies them against a CSR product and prints "
            "structure and timings.");
  c.integer("--individuals", "N", "samples of the panel (default 1000)", 1, 1 << 24)
      .integer("--snps", "M", "variants of the panel (default 20000)", 1, 1 << 28)
      .integer("--seed", "S", "seed of the panel (default 1)")
      .choice("--backend", {"cuda", "openmp", "serial"},
              "where the products run (default: the build's default device)");
  return c;
}

template <class F>
double median_seconds(F&& f, int repeat) {
  std::vector<double> t;
  for (int r = 0; r < repeat; ++r) {
    const auto start = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

template <class Exec>
int demo_on(const Arguments& args) {
  using memory = typename Exec::memory_space;
  const auto n = args.get_int("individuals", 1000), m = args.get_int("snps", 20000);
  SyntheticPanelOptions panel;
  panel.seed = static_cast<std::uint64_t>(args.get_int("seed", 1));
  std::printf("kcla demo: %lld individuals x %lld SNPs, back end %s\n", (long long)n, (long long)m,
              Exec::name());
  auto t0 = std::chrono::steady_clock::now();
  const auto G = synthetic_genotype_panel(n, m, panel);
  auto t1 = std::chrono::steady_clock::now();
  RepairStats stats;
  const auto grammar = compress(G, {}, &stats);
  auto t2 = std::chrono::steady_clock::now();
  std::printf("simulated %lld nonzeros in %.2f s; RePair %.2f s\n\n", (long long)G.nnz(),
              std::chrono::duration<double>(t1 - t0).count(),
              std::chrono::duration<double>(t2 - t1).count());
  print_metrics(std::cout, compute_metrics(grammar));

  Exec exec;
  GrammarMatrix<float, memory> A(grammar);
  const auto csr = to_device_csr<float, memory>(G);
  std::mt19937_64 gen(panel.seed + 1);
  std::normal_distribution<double> effect(0, 1);
  Kokkos::View<float*, memory> beta("beta", m), y("y", n), y_csr("y_csr", n);
  auto bh = Kokkos::create_mirror_view(beta);
  for (std::int64_t j = 0; j < m; ++j) bh(j) = static_cast<float>(effect(gen));
  Kokkos::deep_copy(beta, bh);

  const int repeat = 20;
  const CsrSpmv<float, memory> csr_product(csr);  // vendor state made once, as a user would
  multiply(exec, A, beta, y);
  csr_product(exec, beta, y_csr);
  exec.fence();
  const double t_kcla = median_seconds(
      [&] {
        multiply(exec, A, beta, y);
        exec.fence();
      },
      repeat);
  const double t_csr = median_seconds(
      [&] {
        csr_product(exec, beta, y_csr);
        exec.fence();
      },
      repeat);
  auto yh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y);
  auto ych = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y_csr);
  double num = 0, den = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    num += (double(yh(i)) - double(ych(i))) * (double(yh(i)) - double(ych(i)));
    den += double(ych(i)) * double(ych(i));
  }
  const double error = den > 0 ? std::sqrt(num / den) : std::sqrt(num);

  const std::int64_t B = 16;
  GrammarMatrixOptions batched;
  batched.expected_vectors = B;
  GrammarMatrix<float, memory> AB(grammar, batched);
  Kokkos::View<float**, Kokkos::LayoutRight, memory> X("X", m, B), Y("Y", n, B);
  Kokkos::deep_copy(X, 0.5f);
  multiply(exec, AB, X, Y);
  exec.fence();
  const double t_batch = median_seconds(
      [&] {
        multiply(exec, AB, X, Y);
        exec.fence();
      },
      repeat);

  std::printf("\n%-34s %12s %14s\n", "product (fp32)", "ms", "device MB");
  std::printf("%-34s %12.4f %14.2f\n", "CSR (vendor) y = G beta", t_csr * 1e3, csr.bytes() / 1e6);
  std::printf("%-34s %12.4f %14.2f   [%s/%s]\n", "grammar y = G beta", t_kcla * 1e3,
              A.device_bytes() / 1e6, to_string(A.schedule()), to_string(A.prediction().launch));
  std::printf("%-34s %12.4f %14.2f   [%s, per vector %.4f ms]\n", "grammar Y = G X (16 vectors)",
              t_batch * 1e3, AB.device_bytes() / 1e6, to_string(AB.schedule()), t_batch * 1e3 / B);
  std::printf("\nscore check against CSR: relative error %.2e -> %s\n", error,
              error <= 1e-5 ? "OK" : "FAILED");
  std::printf("first scores: %.4f %.4f %.4f\n", yh(0), n > 1 ? yh(1) : 0.f, n > 2 ? yh(2) : 0.f);
  return error <= 1e-5 ? ok : failure;
}

}  // namespace

int run_demo(int argc, char** argv) {
  auto command = demo_command();
  const auto args = command.parse(argc, argv, 2);
  if (args.has("help")) {
    std::cout << command.help();
    return ok;
  }
  int code = ok;
  with_backend(args.get("backend"), [&](const std::string& name) {
#if KCLA_HAVE_CUDA
    if (name == "cuda") code = demo_on<Kokkos::Cuda>(args);
#endif
#if defined(KOKKOS_ENABLE_OPENMP)
    if (name == "openmp") code = demo_on<Kokkos::OpenMP>(args);
#endif
#if defined(KOKKOS_ENABLE_SERIAL)
    if (name == "serial") code = demo_on<Kokkos::Serial>(args);
#endif
  });
  return code;
}

}  // namespace kcla::cli
