// Grammar right product against the CSR baseline, measured side by side in one run on
// the same matrix: single vector (kcla vs cuSPARSE SpMV / KokkosSparse::spmv) and batched
// (kcla vs the best of cuSPARSE SpMM ALG_DEFAULT / CSR_ALG2 / CSR_ALG3, or KokkosSparse
// multivector spmv on the host). Reports device bytes of each side, the ratios, and the
// cost model's prediction next to the measurement.
//
//   kcla_bench_grammar [--kcla_matrix=A.h5,B.h5] [--kcla_batches=16,64] [benchmark flags]
//
// Matrices: kcla grammar files (.h5). Without any, a generated genotype-like panel.
#include <kcla/csr_spmv.hpp>
#include <kcla/grammar_multiply.hpp>
#include <kcla/hdf5_grammar.hpp>
#include <kcla/repair.hpp>
#include <kcla/synthetic.hpp>

#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#if KCLA_HAVE_CUDA
#include <kcla/detail/cusparse_csr.hpp>
#endif

namespace {

using exec = Kokkos::DefaultExecutionSpace;
using memory = exec::memory_space;
using Scalar = float;
using vector_view = Kokkos::View<Scalar*, memory>;
using block_view = Kokkos::View<Scalar**, Kokkos::LayoutRight, memory>;

constexpr int kRepetitions = 20;  // products per timed iteration (one fence at the end)

struct Measured {
  double seconds = 0;
  std::int64_t bytes = 0;
  std::string detail;
  double predicted_seconds = 0;
};

struct MatrixCase {
  std::string name;
  kcla::Grammar grammar;
  kcla::CsrDeviceMatrix<Scalar, memory> csr;
  kcla::GrammarMetrics metrics;
  vector_view x, y_csr, y_kcla;
  std::map<std::int64_t, block_view> X, Y_csr, Y_kcla;
  // Results, filled as benchmarks run (baselines first).
  std::map<std::string, Measured> results;
#if KCLA_HAVE_CUDA
  std::unique_ptr<kcla::detail::CusparseCsr> vendor;
#endif
};

std::vector<std::unique_ptr<MatrixCase>> g_cases;

template <class F>
double time_products(benchmark::State& state, F&& product) {
  product();  // warm-up: plans, workspaces, vendor preprocessing
  exec().fence();
  double total = 0;
  std::int64_t count = 0;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    for (int r = 0; r < kRepetitions; ++r) product();
    exec().fence();
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    state.SetIterationTime(elapsed / kRepetitions);
    total += elapsed;
    count += kRepetitions;
  }
  return count ? total / static_cast<double>(count) : 0;
}

double relative_difference(const vector_view& a, const vector_view& b) {
  auto ha = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a);
  auto hb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), b);
  double num = 0, den = 0;
  for (std::size_t i = 0; i < ha.extent(0); ++i) {
    num += (double(ha(i)) - double(hb(i))) * (double(ha(i)) - double(hb(i)));
    den += double(hb(i)) * double(hb(i));
  }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

#if KCLA_HAVE_CUDA
double relative_difference(const block_view& a, const block_view& b) {
  vector_view fa(const_cast<Scalar*>(a.data()), a.span()),
      fb(const_cast<Scalar*>(b.data()), b.span());
  return relative_difference(fa, fb);
}
#endif

std::int64_t csr_bytes(const MatrixCase& c) {
  std::int64_t b = static_cast<std::int64_t>(c.csr.bytes());
#if KCLA_HAVE_CUDA
  if (c.vendor) b += static_cast<std::int64_t>(c.vendor->workspace_bytes());
#endif
  return b;
}

void bench_csr_spmv(benchmark::State& state, MatrixCase* c) {
  const double t = time_products(state, [&] {
#if KCLA_HAVE_CUDA
    c->vendor->spmv(exec().cuda_stream(), c->x.data(), c->y_csr.data());
#else
    kcla::csr_spmv(exec(), c->csr, c->x, c->y_csr);
#endif
  });
  c->results["csr_spmv"] = {t, csr_bytes(*c), "", 0};
  state.counters["device_MB"] = static_cast<double>(csr_bytes(*c)) / 1e6;
}

void bench_kcla_spmv(benchmark::State& state, MatrixCase* c, kcla::SweepSchedule schedule,
                     kcla::SweepLaunch launch, const std::string& key) {
  kcla::GrammarMatrixOptions options;
  options.schedule = schedule;
  options.launch = launch;
  kcla::GrammarMatrix<Scalar, memory> A(c->grammar, options);
  const double t =
      time_products(state, [&] { kcla::multiply(exec(), A, c->x, c->y_kcla, launch); });
  const double error = relative_difference(c->y_kcla, c->y_csr);
  if (error > 1e-4) state.SkipWithError("kcla result differs from the CSR product");
  const auto& base = c->results["csr_spmv"];
  state.counters["rel_error"] = error;
  state.counters["nnz"] = static_cast<double>(c->metrics.nnz);
  state.counters["device_MB"] = static_cast<double>(A.device_bytes()) / 1e6;
  state.counters["csr_device_MB"] = static_cast<double>(base.bytes) / 1e6;
  state.counters["footprint_vs_csr"] = static_cast<double>(A.device_bytes()) /
                                       static_cast<double>(std::max<std::int64_t>(1, base.bytes));
  state.counters["speedup_vs_csr"] = t > 0 ? base.seconds / t : 0;
  state.counters["predicted_us"] = A.prediction().seconds * 1e6;
  std::ostringstream detail;
  detail << kcla::to_string(A.schedule()) << "/"
         << kcla::to_string(launch == kcla::SweepLaunch::automatic ? A.prediction().launch
                                                                   : launch);
  state.SetLabel(detail.str());
  c->results[key] = {t, A.device_bytes(), detail.str(), A.prediction().seconds};
}

#if KCLA_HAVE_CUDA
void bench_csr_spmm(benchmark::State& state, MatrixCase* c, std::int64_t B,
                    kcla::detail::CusparseSpmmAlgorithm alg) {
  auto& X = c->X[B];
  auto& Y = c->Y_csr[B];
  double t = 0;
  try {
    t = time_products(state, [&] {
      c->vendor->spmm(exec().cuda_stream(), static_cast<int>(B), X.data(), Y.data(), alg);
    });
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
    return;
  }
  state.counters["ms_per_vector"] = t / static_cast<double>(B) * 1e3;
  const std::string key = "csr_spmm_" + std::to_string(B);
  auto it = c->results.find(key);
  if (it == c->results.end() || t < it->second.seconds)
    c->results[key] = {t, csr_bytes(*c), kcla::detail::to_string(alg), 0};
}
#else
void bench_csr_spmm(benchmark::State& state, MatrixCase* c, std::int64_t B) {
  Kokkos::View<Scalar**, Kokkos::LayoutLeft, memory> X("X", c->csr.num_cols, B),
      Y("Y", c->csr.num_rows, B);
  Kokkos::deep_copy(X, 1.0f);
  using crs = KokkosSparse::CrsMatrix<Scalar, int, Kokkos::Device<exec, memory>, void, int>;
  crs A("A", c->csr.num_rows, c->csr.num_cols, static_cast<int>(c->csr.nnz()), c->csr.values,
        c->csr.row_offsets, c->csr.column_indices);
  const double t =
      time_products(state, [&] { KokkosSparse::spmv("N", Scalar(1), A, X, Scalar(0), Y); });
  state.counters["ms_per_vector"] = t / static_cast<double>(B) * 1e3;
  c->results["csr_spmm_" + std::to_string(B)] = {t, csr_bytes(*c), "KokkosSparse", 0};
}
#endif

void bench_kcla_spmm(benchmark::State& state, MatrixCase* c, std::int64_t B,
                     kcla::SweepSchedule schedule) {
  kcla::GrammarMatrixOptions options;
  options.schedule = schedule;
  options.expected_vectors = B;
  kcla::GrammarMatrix<Scalar, memory> A(c->grammar, options);
  auto& X = c->X[B];
  auto& Y = c->Y_kcla[B];
  const double t = time_products(state, [&] { kcla::multiply(exec(), A, X, Y); });
  const std::string base_key = "csr_spmm_" + std::to_string(B);
#if KCLA_HAVE_CUDA
  const double error = relative_difference(Y, c->Y_csr[B]);
  state.counters["rel_error"] = error;
  if (error > 1e-4) state.SkipWithError("kcla batched result differs from cuSPARSE SpMM");
#endif
  const auto& base = c->results[base_key];
  state.counters["ms_per_vector"] = t / static_cast<double>(B) * 1e3;
  state.counters["device_MB"] = static_cast<double>(A.device_bytes()) / 1e6;
  state.counters["speedup_vs_best_csr"] = t > 0 ? base.seconds / t : 0;
  state.counters["predicted_us"] = A.prediction().seconds * 1e6;
  state.SetLabel(std::string(kcla::to_string(A.schedule())) + " vs " + base.detail);
  const std::string key = "kcla_spmm_" + std::to_string(B) + "_" + kcla::to_string(schedule);
  c->results[key] = {t, A.device_bytes(), kcla::to_string(A.schedule()), A.prediction().seconds};
}

std::unique_ptr<MatrixCase> load_case(const std::string& path,
                                      const std::vector<std::int64_t>& batches) {
  auto c = std::make_unique<MatrixCase>();
  if (path.empty()) {
    const auto a = kcla::synthetic_genotype_panel(1000, 20000);
    c->name = "generated_1000x20000";
    c->grammar = kcla::compress(a);
  } else {
    c->name = std::filesystem::path(path).stem().string();
    c->grammar = kcla::read_grammar_hdf5(path);
  }
  c->metrics = kcla::compute_metrics(c->grammar);
  c->csr = kcla::to_device_csr<Scalar, memory>(c->grammar.decompress());
#if KCLA_HAVE_CUDA
  c->vendor = std::make_unique<kcla::detail::CusparseCsr>(
      c->csr.num_rows, c->csr.num_cols, c->csr.nnz(), c->csr.row_offsets.data(),
      c->csr.column_indices.data(), c->csr.values.data(), false);
#endif
  std::mt19937_64 gen(7);
  std::uniform_real_distribution<float> u(-1, 1);
  c->x = vector_view("x", c->csr.num_cols);
  c->y_csr = vector_view("y_csr", c->csr.num_rows);
  c->y_kcla = vector_view("y_kcla", c->csr.num_rows);
  auto xh = Kokkos::create_mirror_view(c->x);
  for (std::size_t j = 0; j < xh.extent(0); ++j) xh(j) = u(gen);
  Kokkos::deep_copy(c->x, xh);
  for (auto B : batches) {
    c->X[B] = block_view("X", c->csr.num_cols, B);
    c->Y_csr[B] = block_view("Y_csr", c->csr.num_rows, B);
    c->Y_kcla[B] = block_view("Y_kcla", c->csr.num_rows, B);
    auto Xh = Kokkos::create_mirror_view(c->X[B]);
    for (std::size_t i = 0; i < Xh.span(); ++i) Xh.data()[i] = u(gen);
    Kokkos::deep_copy(c->X[B], Xh);
  }
  return c;
}

void print_summary(const std::vector<std::int64_t>& batches) {
  std::printf("\n==== kcla grammar product vs CSR (%s, fp32) ====\n", exec::name());
  for (const auto& c : g_cases) {
    const auto& m = c->metrics;
    std::printf("\n[%s] %lld x %lld, nnz %lld, |R| %lld, |C| %lld, L %d, w* %lld, +pt %lld\n",
                c->name.c_str(), (long long)m.rows, (long long)m.cols, (long long)m.nnz,
                (long long)m.rules, (long long)m.sequence, m.depth, (long long)m.max_width,
                (long long)m.pass_throughs);
    const auto base = c->results.count("csr_spmv") ? c->results.at("csr_spmv") : Measured{};
    std::printf("  CSR SpMV                 %9.4f ms   device %8.2f MB\n", base.seconds * 1e3,
                base.bytes / 1e6);
    for (const auto& [key, r] : c->results) {
      if (key.rfind("kcla_spmv", 0) != 0) continue;
      std::printf(
          "  %-24s %9.4f ms   device %8.2f MB   time ratio %.2fx  footprint 1/%.1f   predicted "
          "%.4f ms  [%s]\n",
          key.c_str(), r.seconds * 1e3, r.bytes / 1e6, base.seconds / r.seconds,
          static_cast<double>(base.bytes) / std::max<std::int64_t>(1, r.bytes),
          r.predicted_seconds * 1e3, r.detail.c_str());
    }
    for (auto B : batches) {
      const std::string bk = "csr_spmm_" + std::to_string(B);
      if (!c->results.count(bk)) continue;
      const auto& vb = c->results.at(bk);
      std::printf("  B=%-3lld CSR best (%s) %9.5f ms/vector\n", (long long)B, vb.detail.c_str(),
                  vb.seconds / B * 1e3);
      for (const auto& [key, r] : c->results)
        if (key.rfind("kcla_spmm_" + std::to_string(B) + "_", 0) == 0)
          std::printf(
              "  B=%-3lld %-22s %9.5f ms/vector  ratio %.2fx  device %.2f MB  predicted %.5f "
              "ms/vector\n",
              (long long)B, key.c_str(), r.seconds / B * 1e3, vb.seconds / r.seconds, r.bytes / 1e6,
              r.predicted_seconds / B * 1e3);
    }
  }
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  std::vector<std::string> matrices;
  std::vector<std::int64_t> batches{16, 64};
  std::vector<char*> rest;
  for (int i = 0; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--kcla_matrix=", 0) == 0) {
      for (auto& m : split(a.substr(14))) matrices.push_back(m);
    } else if (a.rfind("--kcla_batches=", 0) == 0) {
      batches.clear();
      for (auto& b : split(a.substr(15))) batches.push_back(std::stoll(b));
    } else {
      rest.push_back(argv[i]);
    }
  }
  if (matrices.empty()) matrices.push_back("");
  int rest_argc = static_cast<int>(rest.size());
  benchmark::Initialize(&rest_argc, rest.data());

  for (const auto& path : matrices) {
    g_cases.push_back(load_case(path, batches));
    MatrixCase* c = g_cases.back().get();
    const std::string n = c->name;
    benchmark::RegisterBenchmark(("csr_spmv/" + n).c_str(), bench_csr_spmv, c)
        ->UseManualTime()
        ->Unit(benchmark::kMicrosecond);
    const std::pair<kcla::SweepSchedule, kcla::SweepLaunch> configs[] = {
        {kcla::SweepSchedule::automatic, kcla::SweepLaunch::automatic},
        {kcla::SweepSchedule::full_array, kcla::SweepLaunch::fused},
        {kcla::SweepSchedule::full_array, kcla::SweepLaunch::per_level},
        {kcla::SweepSchedule::full_array, kcla::SweepLaunch::graph},
        {kcla::SweepSchedule::layered, kcla::SweepLaunch::fused},
        {kcla::SweepSchedule::layered, kcla::SweepLaunch::per_level},
        {kcla::SweepSchedule::layered, kcla::SweepLaunch::graph}};
    for (const auto& [schedule, launch] : configs) {
      const std::string key =
          std::string("kcla_spmv_") + kcla::to_string(schedule) + "_" + kcla::to_string(launch);
      benchmark::RegisterBenchmark(
          ("kcla_spmv/" + n + "/" + kcla::to_string(schedule) + "/" + kcla::to_string(launch))
              .c_str(),
          bench_kcla_spmv, c, schedule, launch, key)
          ->UseManualTime()
          ->Unit(benchmark::kMicrosecond);
    }
    for (auto B : batches) {
#if KCLA_HAVE_CUDA
      for (auto alg : {kcla::detail::CusparseSpmmAlgorithm::alg_default,
                       kcla::detail::CusparseSpmmAlgorithm::csr_alg2,
                       kcla::detail::CusparseSpmmAlgorithm::csr_alg3})
        benchmark::RegisterBenchmark(
            ("csr_spmm/" + n + "/B=" + std::to_string(B) + "/" + kcla::detail::to_string(alg))
                .c_str(),
            bench_csr_spmm, c, B, alg)
            ->UseManualTime()
            ->Unit(benchmark::kMicrosecond);
#else
      benchmark::RegisterBenchmark(("csr_spmm/" + n + "/B=" + std::to_string(B)).c_str(),
                                   bench_csr_spmm, c, B)
          ->UseManualTime()
          ->Unit(benchmark::kMicrosecond);
#endif
      for (auto schedule : {kcla::SweepSchedule::automatic, kcla::SweepSchedule::full_array,
                            kcla::SweepSchedule::layered})
        benchmark::RegisterBenchmark(
            ("kcla_spmm/" + n + "/B=" + std::to_string(B) + "/" + kcla::to_string(schedule))
                .c_str(),
            bench_kcla_spmm, c, B, schedule)
            ->UseManualTime()
            ->Unit(benchmark::kMicrosecond);
    }
  }
  benchmark::RunSpecifiedBenchmarks();
  print_summary(batches);
  benchmark::Shutdown();
  g_cases.clear();
  return 0;
}
