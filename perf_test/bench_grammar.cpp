// Grammar right product against the CSR baseline, measured side by side in one run on
// the same matrix: single vector (kcla vs the best cuSPARSE SpMV variant: ALG_DEFAULT,
// CSR_ALG1/2 with and without preprocess, descriptors reused; KokkosSparse::spmv on the
// host) and batched (kcla vs the best row-major cuSPARSE SpMM variant, or KokkosSparse
// multivector spmv on the host). kcla_bench_baselines adds dense cuBLAS, column-major
// SpMM, cold-L2 and energy figures. Reports device bytes of each side, the ratios, and the
// cost model's prediction next to the measurement.
//
// Host builds with SuiteSparse:GraphBLAS (KCLA_HAVE_GRAPHBLAS, set by perf_test/CMakeLists.txt
// when libgraphblas-dev is found and CUDA is off) also measure GrB_mxv in plus-times
// (fp32), Boolean and min-plus (fp32) against kcla's product in the same semiring on the
// same matrix (GrammarMatrix<float>, default schedule); every GraphBLAS product ends in
// GrB_wait(w, GrB_MATERIALIZE), so nothing is left pending when the clock stops.
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

#if KCLA_HAVE_GRAPHBLAS && !KCLA_HAVE_CUDA
#define KCLA_BENCH_GRAPHBLAS 1
#include "graphblas_reference.hpp"  // unit_test/: the tests' GraphBLAS reference
#else
#define KCLA_BENCH_GRAPHBLAS 0
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
#if KCLA_BENCH_GRAPHBLAS
  // The same matrix in GraphBLAS (FP32 for plus-times and min-plus, BOOL), the inputs of
  // the Boolean and min-plus products, and GraphBLAS' results by semiring (host, dense).
  std::unique_ptr<kcla::test::graphblas::Matrix> grb_fp32, grb_bool;
  Kokkos::View<bool*, memory> x_bool;
  vector_view x_min_plus;
  std::map<std::string, std::vector<float>> grb_result;
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
  // One variant's workspace: what a user running the best variant holds (the benchmark
  // measures them all on one object).
  if (c.vendor) b += static_cast<std::int64_t>(c.vendor->max_variant_workspace_bytes());
#endif
  return b;
}

#if KCLA_HAVE_CUDA
// One cuSPARSE variant; the fastest so far is the baseline of the ratios (its best shot).
void bench_csr_spmv(benchmark::State& state, MatrixCase* c,
                    kcla::detail::CusparseSpmvVariant variant) {
  double t = 0;
  try {
    t = time_products(state, [&] {
      c->vendor->spmv(exec().cuda_stream(), c->x.data(), c->y_csr.data(), variant);
    });
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
    return;
  }
  auto it = c->results.find("csr_spmv");
  if (it == c->results.end() || t < it->second.seconds)
    c->results["csr_spmv"] = {t, csr_bytes(*c), kcla::detail::to_string(variant), 0};
  state.counters["device_MB"] = static_cast<double>(csr_bytes(*c)) / 1e6;
}
#else
void bench_csr_spmv(benchmark::State& state, MatrixCase* c) {
  const double t = time_products(state, [&] { kcla::csr_spmv(exec(), c->csr, c->x, c->y_csr); });
  c->results["csr_spmv"] = {t, csr_bytes(*c), "KokkosSparse", 0};
  state.counters["device_MB"] = static_cast<double>(csr_bytes(*c)) / 1e6;
}
#endif

void bench_kcla_spmv(benchmark::State& state, MatrixCase* c, kcla::SweepSchedule schedule,
                     kcla::SweepLaunch launch, const std::string& key) {
  kcla::GrammarMatrixOptions options;
  options.schedule = schedule;
  options.tuning.launch = launch;
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
                    kcla::detail::CusparseSpmmVariant variant) {
  auto& X = c->X[B];
  auto& Y = c->Y_csr[B];
  double t = 0;
  try {
    t = time_products(state, [&] {
      c->vendor->spmm(exec().cuda_stream(), static_cast<int>(B), X.data(), Y.data(), variant);
    });
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
    return;
  }
  state.counters["ms_per_vector"] = t / static_cast<double>(B) * 1e3;
  const std::string key = "csr_spmm_" + std::to_string(B);
  auto it = c->results.find(key);
  if (it == c->results.end() || t < it->second.seconds)
    c->results[key] = {t, csr_bytes(*c), kcla::detail::to_string(variant), 0};
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

#if KCLA_BENCH_GRAPHBLAS
namespace grb = kcla::test::graphblas;

template <class Semiring>
struct SemiringInput;
template <>
struct SemiringInput<kcla::PlusTimes<float>> {
  static const vector_view& x(const MatrixCase& c) { return c.x; }
  static const grb::Matrix& matrix(const MatrixCase& c) { return *c.grb_fp32; }
};
template <>
struct SemiringInput<kcla::Boolean> {
  static const Kokkos::View<bool*, memory>& x(const MatrixCase& c) { return c.x_bool; }
  static const grb::Matrix& matrix(const MatrixCase& c) { return *c.grb_bool; }
};
template <>
struct SemiringInput<kcla::MinPlus<float>> {
  static const vector_view& x(const MatrixCase& c) { return c.x_min_plus; }
  static const grb::Matrix& matrix(const MatrixCase& c) { return *c.grb_fp32; }
};

// GrB_mxv in the GraphBLAS semiring of `Semiring`: the host baseline (registered first).
template <class Semiring>
void bench_graphblas_mxv(benchmark::State& state, MatrixCase* c) {
  const auto& A = SemiringInput<Semiring>::matrix(*c);
  grb::Mxv<Semiring> product(A);
  {
    auto xh =
        Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), SemiringInput<Semiring>::x(*c));
    std::vector<grb::host_value_t<Semiring>> u(xh.data(), xh.data() + xh.extent(0));
    product.set_input(u);
  }
  const double t = time_products(state, [&] { product.run(); });
  const auto w = product.result();
  const std::string name = Semiring::name();
  c->grb_result[name].assign(w.begin(), w.end());
  c->results["graphblas_" + name] = {t, A.bytes(), "GrB_mxv", 0};
  state.counters["host_MB"] = static_cast<double>(A.bytes()) / 1e6;
  state.counters["csr_device_MB"] = static_cast<double>(c->csr.bytes()) / 1e6;
}

// kcla's product in the same semiring on the same matrix (GrammarMatrix<float>, default
// schedule and launch), checked against GraphBLAS' w: Boolean and min-plus exactly.
template <class Semiring>
void bench_kcla_semiring(benchmark::State& state, MatrixCase* c) {
  using T = typename Semiring::value_type;
  const std::string name = Semiring::name();
  kcla::GrammarMatrix<Scalar, memory> A(c->grammar);
  const auto& x = SemiringInput<Semiring>::x(*c);
  Kokkos::View<T*, memory> y("y", c->csr.num_rows);
  const double t = time_products(state, [&] { kcla::multiply<Semiring>(exec(), A, x, y); });
  const auto base_it = c->results.find("graphblas_" + name);
  const auto want_it = c->grb_result.find(name);
  if (base_it == c->results.end() || want_it == c->grb_result.end()) {
    state.SkipWithError("the GraphBLAS baseline did not run");
    return;
  }
  const auto& base = base_it->second;
  const auto& want = want_it->second;
  const auto got = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y);
  std::int64_t mismatches = 0;
  double num = 0, den = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const double g = static_cast<double>(got(i)), w = static_cast<double>(want[i]);
    if (!(g == w)) ++mismatches;
    if (std::isfinite(w)) {
      num += (g - w) * (g - w);
      den += w * w;
    }
  }
  const double error = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
  const bool exact = !std::is_same<Semiring, kcla::PlusTimes<T>>::value;
  state.counters["rel_error"] = error;
  if (exact) state.counters["mismatches"] = static_cast<double>(mismatches);
  if (exact ? mismatches > 0 : error > 1e-4)
    state.SkipWithError("kcla result differs from GraphBLAS");
  state.counters["device_MB"] = static_cast<double>(A.device_bytes()) / 1e6;
  state.counters["graphblas_MB"] = static_cast<double>(base.bytes) / 1e6;
  state.counters["footprint_vs_graphblas"] =
      static_cast<double>(A.device_bytes()) /
      static_cast<double>(std::max<std::int64_t>(1, base.bytes));
  state.counters["speedup_vs_graphblas"] = t > 0 ? base.seconds / t : 0;
  std::ostringstream detail;
  detail << kcla::to_string(A.schedule()) << "/" << kcla::to_string(A.prediction().launch);
  state.SetLabel(detail.str());
  c->results["kcla_" + name] = {t, A.device_bytes(), detail.str(), A.prediction().seconds};
}

template <class Semiring>
void register_graphblas_pair(MatrixCase* c) {
  const std::string suffix = c->name + "/" + Semiring::name();
  benchmark::RegisterBenchmark(("graphblas_mxv/" + suffix).c_str(), bench_graphblas_mxv<Semiring>,
                               c)
      ->UseManualTime()
      ->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark(("kcla_semiring/" + suffix).c_str(), bench_kcla_semiring<Semiring>,
                               c)
      ->UseManualTime()
      ->Unit(benchmark::kMicrosecond);
}
#endif

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
  {
    const auto host_csr = c->grammar.decompress();
    c->csr = kcla::to_device_csr<Scalar, memory>(host_csr);
#if KCLA_BENCH_GRAPHBLAS
    c->grb_fp32 = std::make_unique<kcla::test::graphblas::Matrix>(host_csr, GrB_FP32);
    c->grb_bool = std::make_unique<kcla::test::graphblas::Matrix>(host_csr, GrB_BOOL);
#endif
  }
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
#if KCLA_BENCH_GRAPHBLAS
  // Dense inputs (every entry present in GraphBLAS' u): about half the Boolean ones true,
  // min-plus distances in [0, 10).
  c->x_bool = Kokkos::View<bool*, memory>("x_bool", c->csr.num_cols);
  c->x_min_plus = vector_view("x_min_plus", c->csr.num_cols);
  auto xbh = Kokkos::create_mirror_view(c->x_bool);
  auto xmh = Kokkos::create_mirror_view(c->x_min_plus);
  for (std::size_t j = 0; j < xh.extent(0); ++j) {
    xbh(j) = xh(j) > 0;
    xmh(j) = 10 * std::abs(xh(j));
  }
  Kokkos::deep_copy(c->x_bool, xbh);
  Kokkos::deep_copy(c->x_min_plus, xmh);
#endif
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
#if KCLA_BENCH_GRAPHBLAS
    std::printf("  vs SuiteSparse:GraphBLAS %d.%d.%d GrB_mxv (host, fp32 / bool):\n",
                GxB_IMPLEMENTATION_MAJOR, GxB_IMPLEMENTATION_MINOR, GxB_IMPLEMENTATION_SUB);
    for (const char* semiring : {"plus_times", "boolean", "min_plus"}) {
      const std::string name = semiring;
      if (!c->results.count("graphblas_" + name) || !c->results.count("kcla_" + name)) continue;
      const auto& gb = c->results.at("graphblas_" + name);
      const auto& k = c->results.at("kcla_" + name);
      std::printf(
          "  %-10s GraphBLAS %9.4f ms  %8.2f MB | kcla %9.4f ms  %8.2f MB  [%s]  speedup "
          "%.2fx  footprint 1/%.1f\n",
          semiring, gb.seconds * 1e3, gb.bytes / 1e6, k.seconds * 1e3, k.bytes / 1e6,
          k.detail.c_str(), k.seconds > 0 ? gb.seconds / k.seconds : 0.0,
          static_cast<double>(gb.bytes) / std::max<std::int64_t>(1, k.bytes));
    }
#endif
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
#if KCLA_BENCH_GRAPHBLAS
  kcla::test::graphblas::initialize();
#endif
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
#if KCLA_HAVE_CUDA
    for (const auto& v : kcla::detail::all_spmv_variants())
      benchmark::RegisterBenchmark(("csr_spmv/" + n + "/" + kcla::detail::to_string(v)).c_str(),
                                   bench_csr_spmv, c, v)
          ->UseManualTime()
          ->Unit(benchmark::kMicrosecond);
#else
    benchmark::RegisterBenchmark(("csr_spmv/" + n).c_str(), bench_csr_spmv, c)
        ->UseManualTime()
        ->Unit(benchmark::kMicrosecond);
#endif
    const std::pair<kcla::SweepSchedule, kcla::SweepLaunch> configs[] = {
        {kcla::SweepSchedule::automatic, kcla::SweepLaunch::automatic},
        {kcla::SweepSchedule::full_array, kcla::SweepLaunch::fused},
        {kcla::SweepSchedule::full_array, kcla::SweepLaunch::dataflow},
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
      // kcla's row-major X and Y: the row-major variants (kcla_bench_baselines also
      // measures column-major inputs).
      for (const auto& v : kcla::detail::all_spmm_variants())
        if (v.order == kcla::detail::DenseOrder::row_major)
          benchmark::RegisterBenchmark(
              ("csr_spmm/" + n + "/B=" + std::to_string(B) + "/" + kcla::detail::to_string(v))
                  .c_str(),
              bench_csr_spmm, c, B, v)
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
#if KCLA_BENCH_GRAPHBLAS
    // Each semiring: the GraphBLAS baseline, then kcla.
    register_graphblas_pair<kcla::PlusTimes<Scalar>>(c);
    register_graphblas_pair<kcla::Boolean>(c);
    register_graphblas_pair<kcla::MinPlus<Scalar>>(c);
#endif
  }
  benchmark::RunSpecifiedBenchmarks();
  print_summary(batches);
  benchmark::Shutdown();
  g_cases.clear();
#if KCLA_BENCH_GRAPHBLAS
  kcla::test::graphblas::finalize();
#endif
  return 0;
}
