// kcla's grammar product against what a user would run instead, every baseline given its
// best shot and measured in the same run on the same matrix (issue "honest baselines"):
//   - cuSPARSE SpMV: ALG_DEFAULT, CSR_ALG1, CSR_ALG2, with and without one untimed
//     cusparseSpMV_preprocess; SpMM: ALG_DEFAULT/CSR_ALG1/2/3, row- and column-major,
//     with and without preprocess; descriptors made once per variant (detail::CusparseCsr);
//   - dense cuBLAS GEMV / GEMM (fp32; TF32 labelled separately) when the panel fits;
//   - on host builds: KokkosSparse::spmv;
//   - kcla: the automatic choice and every schedule x launch form.
// Each row reports: the per-call median (events around each product, hot L2), the mean of
// back-to-back products, the per-call median with a cold L2 (a 256 MB buffer written
// before each product), the bandwidth those imply over the method's representation bytes
// (+ x and y), the energy per product from NVML with the idle draw subtracted, and the
// relative error against a double-precision host CSR product.
//
//   kcla_bench_baselines [--batch B] [--repeat N] [--energy-seconds S] [--tsv FILE]
//                        [--only FAMILY,...] [--packed-sweep] [--phase-levels N,...] A.h5 ...
//
// kcla's full array runs with one phase per level and with the cost model's phases (up to
// the machine's bound); --phase-levels adds full arrays planned with each bound N.
//
// Without files: a generated genotype-like panel.
#include "baseline_timer.hpp"
#include "energy_meter.hpp"

#include <kcla/detail/baseline_products.hpp>
#include <kcla/grammar_multiply.hpp>
#include <kcla/hdf5_grammar.hpp>
#include <kcla/packed_genotype_multiply.hpp>
#include <kcla/packed_genotypes.hpp>
#include <kcla/repair.hpp>
#include <kcla/synthetic.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using exec_space = Kokkos::DefaultExecutionSpace;
using memory = exec_space::memory_space;
using Scalar = float;
using vector_view = Kokkos::View<Scalar*, memory>;
using block_view = Kokkos::View<Scalar**, Kokkos::LayoutRight, memory>;
using column_block_view = Kokkos::View<Scalar**, Kokkos::LayoutLeft, memory>;

struct Settings {
  std::int64_t batch = 64;
  int repeat = 50;
  double energy_seconds = 1.0;
  std::string tsv;
  std::vector<std::string> files;
  std::vector<std::string> only;  // families to measure (empty: all)
  bool packed_sweep = false;      // also time the 2-bit pair-table kernel over its tuning grid
  std::vector<int> phase_levels;  // more bounds on the full array's levels per phase
};

/// One way of computing the product, ready to enqueue.
struct Candidate {
  std::string family;   // kcla, cuSPARSE, cuBLAS, KokkosSparse
  std::string variant;  // which algorithm / schedule
  std::int64_t bytes;   // representation bytes the product must read (+ x, y)
  std::function<void()> run;
  std::function<double()> error;  // relative error of the last product's output
  double tolerance = 1e-4;
};

struct Row {
  std::string panel;
  std::int64_t vectors = 1;
  Candidate candidate;
  kcla::bench::Timing timing;
  double error = 0;
  std::string failure;
};

/// Relative 2-norm error of a device result against a host reference (both rows x B,
/// vector-innermost unless `column_major`).
template <class View>
double relative_error(const View& v, const std::vector<double>& reference, std::int64_t rows,
                      std::int64_t vectors, bool column_major = false) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
  double num = 0, den = 0;
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t b = 0; b < vectors; ++b) {
      const double got =
          static_cast<double>(h.data()[column_major ? b * rows + r : r * vectors + b]);
      const double want = reference[static_cast<std::size_t>(r * vectors + b)];
      if (!std::isfinite(got)) return INFINITY;
      num += (got - want) * (got - want);
      den += want * want;
    }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

/// y = A X in double on the host, rows split over threads (the independent reference).
std::vector<double> reference_product(const kcla::CsrMatrix<double>& a, const std::vector<float>& x,
                                      std::int64_t vectors) {
  std::vector<double> y(static_cast<std::size_t>(a.num_rows * vectors), 0.0);
  const unsigned threads = std::max(1u, std::min(16u, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      for (std::int64_t r = t; r < a.num_rows; r += threads) {
        double* out = &y[static_cast<std::size_t>(r * vectors)];
        for (auto k = a.row_offsets[r]; k < a.row_offsets[r + 1]; ++k) {
          const double v = a.values[k];
          const float* in = &x[static_cast<std::size_t>(a.column_indices[k] * vectors)];
          for (std::int64_t b = 0; b < vectors; ++b) out[b] += v * in[b];
        }
      }
    });
  for (auto& t : pool) t.join();
  return y;
}

std::vector<float> random_values(std::int64_t n, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  std::vector<float> v(static_cast<std::size_t>(n));
  for (auto& e : v) e = u(gen);
  return v;
}

template <class View>
View upload(const std::vector<float>& host, View v) {
  auto h = Kokkos::create_mirror_view(v);
  std::copy(host.begin(), host.end(), h.data());
  Kokkos::deep_copy(v, h);
  return v;
}

std::vector<float> transpose(const std::vector<float>& rowmajor, std::int64_t rows,
                             std::int64_t cols) {
  std::vector<float> t(rowmajor.size());
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < cols; ++c)
      t[static_cast<std::size_t>(c * rows + r)] = rowmajor[static_cast<std::size_t>(r * cols + c)];
  return t;
}

struct Panel {
  std::string name;
  kcla::Grammar grammar;
  kcla::CsrMatrix<double> csr;
};

Panel load_panel(const std::string& path) {
  Panel p;
  p.name = std::filesystem::path(path).stem().string();
  p.grammar = kcla::read_grammar_hdf5(path);
  p.csr = p.grammar.decompress();
  return p;
}

Panel generated_panel() {
  Panel p;
  p.name = "generated";
  p.csr = kcla::synthetic_genotype_panel(2000, 50000);
  p.grammar = kcla::compress(p.csr);
  return p;
}

void print_header(const Panel& p, std::int64_t dense_bytes) {
  const auto& a = p.csr;
  const double csr_mb = (static_cast<double>(a.num_rows + 1) * 4 + a.nnz() * 8.0) / 1e6;
  std::printf(
      "\n=== %s: %lld x %lld, %.2f M nonzeros (%.1f %% dense); CSR fp32/int32 %.1f MB, "
      "dense fp32 %.1f MB, 2-bit %.1f MB\n",
      p.name.c_str(), static_cast<long long>(a.num_rows), static_cast<long long>(a.num_cols),
      a.nnz() / 1e6, 100.0 * a.nnz() / std::max<double>(1, double(a.num_rows) * a.num_cols), csr_mb,
      dense_bytes / 1e6, a.num_cols * ((a.num_rows + 3) / 4) / 1e6);
}

void print_rows(const std::vector<Row>& rows, std::int64_t vectors) {
  std::printf("  B = %lld%s\n", static_cast<long long>(vectors),
              vectors > 1 ? " (times per product; per vector = / B)" : "");
  std::printf("  %-12s %-38s %10s %10s %10s %9s %9s %10s %9s\n", "family", "variant", "call ms",
              "b2b ms", "cold ms", "GB/s hot", "GB/s cold", "mJ/prod", "rel.err");
  for (const auto& r : rows) {
    if (r.vectors != vectors) continue;
    if (!r.failure.empty()) {
      std::printf("  %-12s %-38s %s\n", r.candidate.family.c_str(), r.candidate.variant.c_str(),
                  r.failure.c_str());
      continue;
    }
    const auto& t = r.timing;
    const double bytes = static_cast<double>(r.candidate.bytes);
    char energy[32];
    if (t.joules_per_product >= 0)
      std::snprintf(energy, sizeof energy, "%10.4f", t.joules_per_product * 1e3);
    else
      std::snprintf(energy, sizeof energy, "%10s", "n/a");
    std::printf("  %-12s %-38s %10.4f %10.4f %10.4f %9.1f %9.1f %s %9.2e\n",
                r.candidate.family.c_str(), r.candidate.variant.c_str(), t.call_median_s * 1e3,
                t.b2b_mean_s * 1e3, t.cold_median_s * 1e3, bytes / t.b2b_mean_s / 1e9,
                bytes / t.cold_median_s / 1e9, energy, r.error);
  }
}

/// The fastest row of a family by per-call median (the baseline's best shot).
const Row* best_of(const std::vector<Row>& rows, std::int64_t vectors,
                   const std::function<bool(const Row&)>& in_family) {
  const Row* best = nullptr;
  for (const auto& r : rows)
    if (r.vectors == vectors && r.failure.empty() && in_family(r) &&
        (!best || r.timing.call_median_s < best->timing.call_median_s))
      best = &r;
  return best;
}

void print_summary(const std::vector<Row>& rows, std::int64_t vectors) {
  const Row* kcla_auto = best_of(rows, vectors, [](const Row& r) {
    return r.candidate.family == "kcla" && r.candidate.variant.rfind("auto", 0) == 0;
  });
  if (!kcla_auto) return;
  std::printf("  summary B = %lld: kcla auto %.4f ms (%s)\n", static_cast<long long>(vectors),
              kcla_auto->timing.call_median_s * 1e3, kcla_auto->candidate.variant.c_str());
  for (const char* family : {"cuSPARSE", "cuBLAS", "KokkosSparse", "2-bit"}) {
    const std::string f = family;
    const Row* best = best_of(rows, vectors, [&](const Row& r) { return r.candidate.family == f; });
    if (!best) continue;
    const double ratio = kcla_auto->timing.call_median_s / best->timing.call_median_s;
    std::printf("    best %-12s %-38s %.4f ms: kcla auto is %.2fx %s\n", family,
                best->candidate.variant.c_str(), best->timing.call_median_s * 1e3,
                ratio >= 1 ? ratio : 1 / ratio, ratio >= 1 ? "slower" : "faster");
  }
}

/// The device's copy bandwidth (read + write bytes per second) of one large
/// device-to-device copy, back to back: the yardstick of bandwidth-bound products.
double copy_bandwidth(kcla::bench::Timer& timer) {
  const bool device = !Kokkos::SpaceAccessibility<Kokkos::HostSpace, memory>::accessible;
  const std::size_t n = (device ? std::size_t(1) << 30 : std::size_t(64) << 20) / sizeof(float);
  Kokkos::View<float*, memory> a("copy a", n), b("copy b", n);
  const auto t = timer.measure([&] { Kokkos::deep_copy(exec_space(), b, a); }, 10, 0);
  return 2.0 * static_cast<double>(n * sizeof(float)) / t.b2b_mean_s;
}

/// The fastest 2-bit product back to back, as a share of the copy bandwidth.
void print_packed_share(const std::vector<Row>& rows, std::int64_t vectors, double copy) {
  const Row* best = nullptr;
  for (const auto& r : rows)
    if (r.vectors == vectors && r.failure.empty() && r.candidate.family == "2-bit" &&
        (!best || r.timing.b2b_mean_s < best->timing.b2b_mean_s))
      best = &r;
  if (!best || copy <= 0) return;
  const double rate = static_cast<double>(best->candidate.bytes) / best->timing.b2b_mean_s;
  std::printf("  2-bit best back to back: %s %.4f ms, %.1f GB/s = %.1f %% of the copy bandwidth\n",
              best->candidate.variant.c_str(), best->timing.b2b_mean_s * 1e3, rate / 1e9,
              100.0 * rate / copy);
}

void write_tsv(const std::string& path, const std::vector<Row>& rows, double idle_watts) {
  std::ofstream o(path);
  o << "panel\tB\tfamily\tvariant\tbytes\tcall_ms\tb2b_ms\tcold_ms\tmJ_per_product\t"
       "watts_above_idle\tidle_watts\trel_error\tfailure\n";
  for (const auto& r : rows)
    o << r.panel << '\t' << r.vectors << '\t' << r.candidate.family << '\t' << r.candidate.variant
      << '\t' << r.candidate.bytes << '\t' << r.timing.call_median_s * 1e3 << '\t'
      << r.timing.b2b_mean_s * 1e3 << '\t' << r.timing.cold_median_s * 1e3 << '\t'
      << r.timing.joules_per_product * 1e3 << '\t' << r.timing.watts_above_idle << '\t'
      << idle_watts << '\t' << r.error << '\t' << r.failure << '\n';
}

/// Every candidate for `vectors` right-hand sides on one panel, then each measured.
class PanelBench {
 public:
  PanelBench(const Panel& p, const Settings& s, kcla::bench::Timer& timer)
      : panel_(p), settings_(s), timer_(timer), baselines_(p.csr) {}

  std::int64_t dense_bytes() const { return panel_.csr.num_rows * panel_.csr.num_cols * 4; }

  void run(std::int64_t vectors, std::vector<Row>& rows) {
    const auto& a = panel_.csr;
    const auto x_host = random_values(a.num_cols * vectors, 1234 + vectors);
    const auto reference = reference_product(a, x_host, vectors);
    std::vector<Candidate> candidates;
    const std::int64_t io_bytes = (a.num_rows + a.num_cols) * vectors * 4;

    block_view X("X", a.num_cols, vectors), Y("Y", a.num_rows, vectors);
    upload(x_host, X);
    vector_view x(X.data(), vectors == 1 ? a.num_cols : 0),
        y(Y.data(), vectors == 1 ? a.num_rows : 0);
    auto poison = [=] { Kokkos::deep_copy(Y, std::nanf("")); };

    // --- kcla ---------------------------------------------------------------------------
    std::vector<std::shared_ptr<kcla::GrammarMatrix<Scalar, memory>>> keep;
    // phase_levels: the bound on the full array's levels per phase (0: the machine's).
    auto add_kcla = [&](kcla::SweepSchedule schedule, kcla::SweepLaunch launch,
                        int phase_levels = 0, kcla::SlotOrder order = kcla::SlotOrder::rule) {
      kcla::GrammarMatrixOptions o;
      o.schedule = schedule;
      o.tuning.launch = launch;
      o.tuning.max_phase_levels = phase_levels;
      o.tuning.slot_order = order;
      o.expected_vectors = vectors;
      auto A = std::make_shared<kcla::GrammarMatrix<Scalar, memory>>(panel_.grammar, o);
      keep.push_back(A);
      std::string name =
          std::string(kcla::to_string(A->schedule())) + "/" +
          kcla::to_string(launch == kcla::SweepLaunch::automatic ? A->prediction().launch : launch);
      if (A->schedule() == kcla::SweepSchedule::full_array)
        name += " " + std::to_string(A->depth()) + " phases";
      if (order == kcla::SlotOrder::first_use) name += " first-use slots";
      char predicted[64];
      std::snprintf(predicted, sizeof predicted, " pred %.4f ms", A->prediction().seconds * 1e3);
      name += predicted;
      if (schedule == kcla::SweepSchedule::automatic && launch == kcla::SweepLaunch::automatic)
        name = "auto " + name;
      exec_space exec;
      Candidate c{"kcla", name, A->static_bytes() + io_bytes,
                  vectors == 1
                      ? std::function<void()>([=] { kcla::multiply(exec, *A, x, y, launch); })
                      : std::function<void()>([=] { kcla::multiply(exec, *A, X, Y, launch); }),
                  [&, Y] { return relative_error(Y, reference, a.num_rows, vectors); }};
      candidates.push_back(std::move(c));
    };
    add_kcla(kcla::SweepSchedule::automatic, kcla::SweepLaunch::automatic);
    for (auto launch : {kcla::SweepLaunch::per_level, kcla::SweepLaunch::graph,
                        kcla::SweepLaunch::fused, kcla::SweepLaunch::dataflow}) {
      add_kcla(kcla::SweepSchedule::full_array, launch, 1);
      add_kcla(kcla::SweepSchedule::full_array, launch, 1, kcla::SlotOrder::first_use);
      add_kcla(kcla::SweepSchedule::full_array, launch);
      for (int n : settings_.phase_levels) add_kcla(kcla::SweepSchedule::full_array, launch, n);
      if (launch != kcla::SweepLaunch::dataflow) add_kcla(kcla::SweepSchedule::layered, launch);
    }

    // --- what a user would run instead -----------------------------------------------------
    kcla::detail::BaselineOperands<memory> operands{X, Y, {}, {}};
    column_block_view Xc, Yc;
    if (vectors > 1) {
      Xc = column_block_view("Xc", a.num_cols, vectors);
      Yc = column_block_view("Yc", a.num_rows, vectors);
      upload(transpose(x_host, a.num_cols, vectors), Xc);
      operands.x_columns = Xc;
      operands.y_columns = Yc;
    }
    for (auto& p : baselines_.products(operands, vectors)) {
      const bool column_major = p.column_major;
      candidates.push_back({p.family, p.variant, p.bytes + io_bytes, p.run,
                            [&, column_major, Y, Yc] {
                              return column_major
                                         ? relative_error(Yc, reference, a.num_rows, vectors, true)
                                         : relative_error(Y, reference, a.num_rows, vectors);
                            },
                            p.tolerance});
    }

    for (auto& c : candidates) {
      if (!settings_.only.empty() &&
          std::find(settings_.only.begin(), settings_.only.end(), c.family) == settings_.only.end())
        continue;
      Row r;
      r.panel = panel_.name;
      r.vectors = vectors;
      r.candidate = c;
      try {
        poison();
        if (Yc.data()) Kokkos::deep_copy(Yc, std::nanf(""));
        c.run();
        exec_space().fence();
        r.error = c.error();
        if (!(r.error <= c.tolerance)) {
          char what[96];
          std::snprintf(what, sizeof what, "WRONG RESULT: relative error %.3g > %.0g", r.error,
                        c.tolerance);
          r.failure = what;
        } else {
          r.timing = timer_.measure(c.run, settings_.repeat, settings_.energy_seconds);
        }
      } catch (const std::exception& e) {
        r.failure = std::string("unavailable: ") + e.what();
      }
      rows.push_back(std::move(r));
    }
  }

 private:
  const Panel& panel_;
  const Settings& settings_;
  kcla::bench::Timer& timer_;
  kcla::detail::CsrBaselines<exec_space> baselines_;
};

/// The 2-bit table kernels (y = G x) over grids of their tuning knobs, for the notes: which
/// chunk of variants and tile of sample words (pair tables), which team size, quads per
/// slice and number of teams (quad tables) the defaults should be.
void packed_sweep(const Panel& p, kcla::bench::Timer& timer) {
  kcla::PackedGenotypes packed;
  try {
    packed = kcla::pack_genotypes(p.csr);
  } catch (const kcla::InvalidArgument&) {
    return;
  }
  kcla::PackedGenotypeMatrix<Scalar, memory> G(packed);
  vector_view x("x", p.csr.num_cols), y("y", p.csr.num_rows);
  upload(random_values(p.csr.num_cols, 99), x);
  std::printf("  2-bit pair tables, y = G x over the tuning grid (b2b ms; %.1f MB of codes)\n",
              static_cast<double>(G.device_bytes()) / 1e6);
  std::printf("  %8s", "chunk");
  const int words[] = {32, 64, 128, 256, 512};
  for (int w : words) std::printf(" %8d", w);
  std::printf("   <- max team words\n");
  for (int chunk : {32, 64, 128, 256, 512, 1024}) {
    std::printf("  %8d", chunk);
    for (int w : words) {
      kcla::PackedMultiplyOptions o;
      o.kernel = kcla::PackedKernel::tables;
      o.tuning.table_chunk_variants = chunk;
      o.tuning.table_max_team_words = w;
      exec_space exec;
      const auto t = timer.measure([&] { kcla::multiply(exec, G, x, y, o); }, 20, 0);
      std::printf(" %8.4f", t.b2b_mean_s * 1e3);
    }
    std::printf("\n");
  }
  std::printf("  2-bit quad tables, y = G x over the tuning grid (b2b ms)\n");
  std::printf("  %8s %6s", "threads", "quads");
  const double team_factors[] = {0, 0.5, 2, 4};  // 0: the default count
  for (double f : team_factors) std::printf("   teams x%-4.1f", f == 0 ? 1.0 : f);
  std::printf("\n");
  for (int threads : {128, 256, 512, 1024})
    for (int quads : {1, 2, 4}) {
      std::printf("  %8d %6d", threads, quads);
      kcla::PackedMultiplyOptions o;
      o.kernel = kcla::PackedKernel::quad_tables;
      o.tuning.quad_team_threads = threads;
      o.tuning.quad_slice_quads = quads;
      exec_space exec;
      const auto sample_words = (p.csr.num_rows + 15) / 16;
      const auto plan = kcla::detail::packed_quad_tables_plan<Scalar>(
          exec, sample_words, p.csr.num_cols, o.tuning, 1024);
      const auto base = plan.teams_per_tile * plan.num_tiles;
      for (double f : team_factors) {
        o.tuning.quad_target_teams =
            f == 0 ? 0 : std::max<int>(1, static_cast<int>(static_cast<double>(base) * f));
        const auto t = timer.measure([&] { kcla::multiply(exec, G, x, y, o); }, 20, 0);
        std::printf("   %11.4f", t.b2b_mean_s * 1e3);
      }
      std::printf("   (%d slices x %d words, %d quads, %lld teams)\n", plan.slices,
                  plan.slice_threads, plan.slice_quads, static_cast<long long>(base));
    }
  if (kcla::detail::packed_int8_tensor_cores_available(exec_space(), G)) {
    std::printf("  2-bit int8 tensor cores, y = G x over the warps targeted (b2b ms)\n   ");
    const auto warps = exec_space().concurrency() * 3 / 256;  // one wave: 24 per multiprocessor
    for (const int replicas : {0, 1, 4}) {
      std::printf("  replicas %d (0: automatic):", replicas);
      for (double f : {0.25, 0.5, 1.0, 2.0}) {
        kcla::PackedMultiplyOptions o;
        o.kernel = kcla::PackedKernel::int8_tensor_cores;
        o.tuning.imma_replicas = replicas;
        o.tuning.imma_target_warps = std::max(1, static_cast<int>(static_cast<double>(warps) * f));
        exec_space exec;
        const auto t = timer.measure([&] { kcla::multiply(exec, G, x, y, o); }, 20, 0);
        std::printf("  x%.2f: %.4f", f, t.b2b_mean_s * 1e3);
      }
      std::printf("\n   ");
    }
    std::printf("\n");
  }
  if (!kcla::detail::packed_tensor_cores_available(exec_space(), G)) return;
  std::printf("  2-bit tensor cores, y = G x over the tuning grid (b2b ms)\n");
  std::printf("  %8s", "warps");
  const double factors[] = {0.5, 1, 1.5, 2, 4};  // x the default target of warps
  for (double f : factors) std::printf("   warps x%-3.1f", f);
  std::printf("\n");
  const auto wave = exec_space().concurrency() * 3 / 256;
  for (int warps : {2, 4, 8}) {
    std::printf("  %8d", warps);
    for (double f : factors) {
      kcla::PackedMultiplyOptions o;
      o.kernel = kcla::PackedKernel::tensor_cores;
      o.tuning.mma_team_warps = warps;
      o.tuning.mma_target_warps = std::max(1, static_cast<int>(static_cast<double>(wave) * f));
      exec_space exec;
      const auto t = timer.measure([&] { kcla::multiply(exec, G, x, y, o); }, 20, 0);
      std::printf("   %10.4f", t.b2b_mean_s * 1e3);
    }
    std::printf("\n");
  }
}

Settings parse(int argc, char** argv) {
  Settings s;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::runtime_error(a + " needs a value");
      return argv[++i];
    };
    if (a == "--batch")
      s.batch = std::stoll(value());
    else if (a == "--repeat")
      s.repeat = std::stoi(value());
    else if (a == "--energy-seconds")
      s.energy_seconds = std::stod(value());
    else if (a == "--tsv")
      s.tsv = value();
    else if (a == "--only") {
      std::stringstream list(value());
      for (std::string f; std::getline(list, f, ',');) s.only.push_back(f);
    } else if (a == "--packed-sweep") {
      s.packed_sweep = true;
    } else if (a == "--phase-levels") {
      std::stringstream list(value());
      for (std::string n; std::getline(list, n, ',');) s.phase_levels.push_back(std::stoi(n));
    } else if (a.rfind("--kokkos", 0) == 0 || a.rfind("--benchmark", 0) == 0)
      continue;  // Kokkos' own flags; Google Benchmark flags from scripts/gpu/run.sh
    else if (a.rfind("--", 0) == 0)
      throw std::runtime_error("unknown option " + a);
    else
      s.files.push_back(a);
  }
  if (s.batch < 1 || s.repeat < 1) throw std::runtime_error("--batch and --repeat must be >= 1");
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  try {
    const Settings settings = parse(argc, argv);
    kcla::bench::EnergyMeter meter;
    kcla::bench::Timer timer(meter);
    std::printf("baselines: back end %s, B = 1 and %lld, %d timed products per figure\n",
                exec_space::name(), static_cast<long long>(settings.batch), settings.repeat);
    if (meter.available())
      std::printf("energy: NVML counter, idle draw %.1f W (measured over 2 s, subtracted)\n",
                  timer.idle_watts());
    else
      std::printf("energy: n/a (%s)\n", meter.reason().c_str());
    const double copy = copy_bandwidth(timer);
    std::printf(
        "copy bandwidth: %.1f GB/s (read + write, one device-to-device copy, back to "
        "back)\n",
        copy / 1e9);
    std::vector<Row> rows;
    std::vector<std::string> files = settings.files;
    if (files.empty()) files.push_back("");
    for (const auto& f : files) {
      const Panel panel = f.empty() ? generated_panel() : load_panel(f);
      PanelBench bench(panel, settings, timer);
      print_header(panel, bench.dense_bytes());
      std::vector<Row> panel_rows;
      for (std::int64_t vectors : {std::int64_t(1), settings.batch}) {
        bench.run(vectors, panel_rows);
        print_rows(panel_rows, vectors);
        print_summary(panel_rows, vectors);
        print_packed_share(panel_rows, vectors, copy);
        if (settings.batch == 1) break;
      }
      if (settings.packed_sweep) packed_sweep(panel, timer);
      rows.insert(rows.end(), panel_rows.begin(), panel_rows.end());
      std::fflush(stdout);
    }
    if (!settings.tsv.empty()) write_tsv(settings.tsv, rows, timer.idle_watts());
    for (const auto& r : rows)
      if (r.failure.rfind("WRONG", 0) == 0) return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kcla_bench_baselines: %s\n", e.what());
    return 1;
  }
  return 0;
}
