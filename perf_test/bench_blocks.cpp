// Biobank scale (issue 12): a generated panel too large for CSR on the GPU, streamed
// through block compression and multiplied as a block grammar, next to what a user would
// run instead, all in one run:
//   - generation + compression: seconds, nonzeros/s, peak RSS, the budget's high-water;
//   - bytes: grammar (device, as multiplied), 2-bit packed, CSR (fp32 values, int32
//     columns, int64 row offsets) and dense;
//   - kcla: y = G beta and B = 64 on the device, median of --repeat, checked against the
//     grammar expanded on the host on --verify-rows sampled rows;
//   - cuSPARSE on CSR chunks streamed from pinned host memory: the first --chunks column
//     blocks as CSR in pinned memory; per chunk the host-to-device copy and the best
//     cuSPARSE SpMV/SpMM variant (CsrBaselines) are timed, and the streamed product is
//     bounded below by sum(max(copy, product)) scaled to the panel's nonzeros (perfect
//     overlap: the baseline's best case);
//   - the 2-bit packed kernels on the whole panel when its codes fit in --packed-limit;
//   - out of core (--device-budget SIZE): the same blocks under a device budget, the
//     blocks beyond it streamed from pinned memory in every product; next to the resident
//     product and the streamed blocks' copies alone, which give the achieved overlap
//     (copy + resident - streamed) / min(copy, resident): 1 when the copies hide entirely
//     behind the sweeps (or the sweeps behind the copies), 0 when nothing overlaps.
//
//   kcla_bench_blocks --samples N --variants M [--block-cols W] [--threads T]
//                     [--memory-limit SIZE] [--batch B] [--repeat R] [--verify-rows K]
//                     [--chunks C] [--packed-limit SIZE] [--sfs-exponent E] [--seed S]
//                     [--device-budget SIZE] [--slots N] [--streams LIST]
//   --streams 1,2,4,8: the resident product with the blocks spread over that many
//   instances (BlockMatrixOptions::streams), next to the automatic choice.
#include <kcla/block_compress.hpp>
#include <kcla/block_grammar_multiply.hpp>
#include <kcla/block_grammar_reference.hpp>
#include <kcla/detail/baseline_products.hpp>
#include <kcla/packed_genotype_multiply.hpp>
#include <kcla/packed_genotypes.hpp>
#include <kcla/panel_generator.hpp>

#include <Kokkos_Core.hpp>

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using exec_space = Kokkos::DefaultExecutionSpace;
using memory = exec_space::memory_space;
using clock_type = std::chrono::steady_clock;

double since(clock_type::time_point t) {
  return std::chrono::duration<double>(clock_type::now() - t).count();
}
double peak_rss_gb() {
  struct rusage u {};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / (1024.0 * 1024.0);
}
std::int64_t parse_size(const std::string& s) {
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  const std::string unit(end);
  if (unit == "K") v *= 1024.0;
  if (unit == "M") v *= 1024.0 * 1024;
  if (unit == "G") v *= 1024.0 * 1024 * 1024;
  if (unit == "T") v *= 1024.0 * 1024 * 1024 * 1024;
  return static_cast<std::int64_t>(v);
}

struct Settings {
  kcla::MosaicPanelOptions panel;
  kcla::BlockCompressOptions compress;
  std::int64_t batch = 64;
  int repeat = 5;
  std::int64_t verify_rows = 64;
  std::int64_t chunks = 4;
  std::int64_t packed_limit = std::int64_t(40) << 30;
  kcla::BlockMatrixOptions streaming;  // device_budget_bytes 0: no out-of-core run
  std::vector<int> streams;            // instance counts to compare (--streams)
};

Settings parse(int argc, char** argv) {
  Settings s;
  s.compress.memory_limit_bytes = std::int64_t(48) << 30;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw kcla::InvalidArgument(a + " needs a value");
      return argv[++i];
    };
    if (a == "--samples")
      s.panel.samples = std::stoll(value());
    else if (a == "--variants")
      s.panel.variants = std::stoll(value());
    else if (a == "--sfs-exponent")
      s.panel.sfs_exponent = std::stod(value());
    else if (a == "--founders")
      s.panel.founders = std::stoi(value());
    else if (a == "--seed")
      s.panel.seed = std::stoull(value());
    else if (a == "--block-cols")
      s.compress.block_cols = std::stoll(value());
    else if (a == "--threads")
      s.compress.threads = std::stoi(value());
    else if (a == "--memory-limit")
      s.compress.memory_limit_bytes = parse_size(value());
    else if (a == "--batch")
      s.batch = std::stoll(value());
    else if (a == "--repeat")
      s.repeat = std::stoi(value());
    else if (a == "--verify-rows")
      s.verify_rows = std::stoll(value());
    else if (a == "--chunks")
      s.chunks = std::stoll(value());
    else if (a == "--packed-limit")
      s.packed_limit = parse_size(value());
    else if (a == "--device-budget")
      s.streaming.device_budget_bytes = parse_size(value());
    else if (a == "--slots")
      s.streaming.slots = std::stoi(value());
    else if (a == "--streams") {
      std::stringstream list(value());
      for (std::string item; std::getline(list, item, ',');) s.streams.push_back(std::stoi(item));
    } else
      throw kcla::InvalidArgument("unknown option " + a);
  }
  return s;
}

// Keeps the first few blocks as CSR on their way to compression: the streamed
// baseline's chunks. (The 2-bit panel is packed afterwards, in parallel.)
class TappedSource : public kcla::ColumnBlockSource {
 public:
  TappedSource(kcla::ColumnBlockSource& inner, std::int64_t keep_chunks)
      : inner_(inner), keep_(keep_chunks) {}
  std::int64_t num_rows() const override { return inner_.num_rows(); }
  std::int64_t num_cols() const override { return inner_.num_cols(); }
  std::string name() const override { return inner_.name(); }
  bool next_block(std::int64_t max_cols, kcla::CsrMatrix<double>& block) override {
    if (!inner_.next_block(max_cols, block)) return false;
    if (static_cast<std::int64_t>(chunks.size()) < keep_) chunks.push_back(block);
    return true;
  }
  std::vector<kcla::CsrMatrix<double>> chunks;

 private:
  kcla::ColumnBlockSource& inner_;
  std::int64_t keep_;
};

template <class F>
double median_seconds(int repeat, F&& product) {
  std::vector<double> t;
  for (int r = 0; r < repeat; ++r) {
    const auto start = clock_type::now();
    product();
    Kokkos::fence();
    t.push_back(since(start));
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace

// The out-of-core product next to the resident one (time t, result Yh; the same automatic
// instance count) and the streamed blocks' copies alone, one after another on one stream as
// the product issues them; the resident product on one instance (t_one) when timed.
template <class XView, class YHost>
void streamed_product(const kcla::BlockGrammarMatrix<float, memory>& S, const XView& X,
                      const YHost& Yh, double t, double t_one, int repeat) {
  const std::int64_t B = X.extent(1);
  Kokkos::View<float**, Kokkos::LayoutRight, memory> Ys("Ys", S.num_rows(), B);
  kcla::multiply(exec_space(), S, X, Ys);
  Kokkos::fence();
  const double ts = median_seconds(repeat, [&] { kcla::multiply(exec_space(), S, X, Ys); });
  double tc = 0;
  if (const auto* st = S.staging(); st && !st->streamed.empty()) {
    using bytes_in = Kokkos::View<char*, memory, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
    using bytes_from = Kokkos::View<const char*, kcla::detail::StagingSpace<memory>::type,
                                    Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
    Kokkos::View<char*, memory> slot("slot", static_cast<std::size_t>(st->slot_bytes));
    tc = median_seconds(repeat, [&] {
      for (auto i : st->streamed) {
        const auto n = static_cast<std::size_t>(st->image_bytes[i]);
        Kokkos::deep_copy(
            exec_space(), bytes_in(slot.data(), n),
            bytes_from(reinterpret_cast<const char*>(st->staged_images[i].data()), n));
      }
    });
  }
  auto Ysh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), Ys);
  double num = 0, den = 0;  // the norm of the difference against the norm of y
  for (std::size_t k = 0; k < Ysh.span(); ++k) {
    const double d = double(Ysh.data()[k]) - Yh.data()[k];
    num += d * d;
    den += double(Yh.data()[k]) * Yh.data()[k];
  }
  char one[32] = "not timed";
  if (t_one > 0) std::snprintf(one, sizeof one, "%.3f ms", t_one * 1e3);
  const double overlap = tc > 0 ? (tc + t - ts) / std::min(tc, t) : 0;
  std::printf(
      "  out of core B=%lld: %.3f ms per product (resident %.3f ms, %.2fx; one instance %s); "
      "streamed copies alone %.3f ms (%.1f GB/s); overlap achieved %.0f%%; %.1f GB/s streamed "
      "at the product's time; agrees with the resident product to %.1e\n",
      static_cast<long long>(B), ts * 1e3, t * 1e3, ts / t, one, tc * 1e3,
      tc > 0 ? S.streamed_bytes() / tc / 1e9 : 0.0, 100 * overlap, S.streamed_bytes() / ts / 1e9,
      std::sqrt(num / std::max(den, 1e-300)));
}

int main(int argc, char** argv) {
  // The command line is ours (Kokkos would take --threads); Kokkos reads KOKKOS_* variables.
  int kokkos_argc = 1;
  char* kokkos_argv[] = {argv[0], nullptr};
  Kokkos::ScopeGuard kokkos(kokkos_argc, kokkos_argv);
  try {
    const Settings s = parse(argc, argv);
    kcla::MosaicPanelSource generator(s.panel);
    const double entries =
        static_cast<double>(s.panel.samples) * static_cast<double>(s.panel.variants);
    const bool pack = entries / 4 <= static_cast<double>(s.packed_limit);
    kcla::PackedGenotypes packed;
    if (pack) packed = kcla::PackedGenotypes::all_missing(s.panel.samples, s.panel.variants);
    TappedSource source(generator, s.chunks);
    std::printf("panel: %lld samples x %lld variants (%.3g entries), mosaic generator seed %llu\n",
                static_cast<long long>(s.panel.samples), static_cast<long long>(s.panel.variants),
                entries, static_cast<unsigned long long>(s.panel.seed));
    auto options = s.compress;
    std::int64_t last_report = 0;
    const auto start = clock_type::now();
    options.progress = [&](const kcla::BlockCompressProgress& p) {
      if (p.blocks_done - last_report >= 64 || p.columns_done == p.columns_total) {
        last_report = p.blocks_done;
        std::printf(
            "  %lld blocks, %lld/%lld columns, %.1f M nonzeros/s, in flight %.1f GB, %.0f s\n",
            static_cast<long long>(p.blocks_done), static_cast<long long>(p.columns_done),
            static_cast<long long>(p.columns_total), p.nonzeros_done / p.seconds / 1e6,
            p.bytes_in_flight / 1e9, p.seconds);
        std::fflush(stdout);
      }
    };
    kcla::BlockCompressStats stats;
    const auto g = kcla::compress_blocks(source, options, &stats);
    const double compress_seconds = since(start);
    const double nnz = static_cast<double>(stats.nonzeros);
    std::printf(
        "generate + compress: %.1f s, %.3g nonzeros (density %.3f), %.2f M nonzeros/s on %d "
        "threads, %lld blocks; peak RSS %.1f GB, budget "
        "high-water %.1f GB\n",
        compress_seconds, nnz, nnz / entries, nnz / compress_seconds / 1e6, stats.threads,
        static_cast<long long>(stats.blocks), peak_rss_gb(), stats.peak_bytes_in_flight / 1e9);
    std::fflush(stdout);

    // The 2-bit panel, made again block by block on every core (each thread its own
    // generator, skipping to its blocks): the same panel, packed.
    if (pack) {
      const auto packing = clock_type::now();
      packed = kcla::PackedGenotypes::all_missing(s.panel.samples, s.panel.variants);
      const int threads = stats.threads;
      std::vector<std::thread> pool;
      for (int t = 0; t < threads; ++t)
        pool.emplace_back([&, t] {
          auto options_t = s.panel;
          options_t.threads = 1;
          kcla::MosaicPanelSource mine(options_t);
          kcla::CsrMatrix<double> block;
          std::int64_t at = 0;
          for (std::int64_t b = t; b < g.layout.num_blocks(); b += threads) {
            const auto& e = g.layout.blocks[b];
            mine.skip_columns(e.col_begin - at);
            mine.next_block(e.cols(), block);
            at = e.col_end;
            const auto p = kcla::pack_genotypes(block);
            for (std::int64_t j = 0; j < p.num_variants; ++j)
              std::memcpy(packed.codes.data() + (e.col_begin + j) * packed.bytes_per_variant,
                          p.codes.data() + j * p.bytes_per_variant,
                          static_cast<std::size_t>(p.bytes_per_variant));
          }
        });
      for (auto& t : pool) t.join();
      std::printf("2-bit panel: packed again from the generator in %.1f s (%d threads)\n",
                  since(packing), threads);
    }
    const auto upload = clock_type::now();
    kcla::GrammarMatrixOptions mo;
    mo.expected_vectors = 1;
    kcla::BlockGrammarMatrix<float, memory> A(g, mo);
    Kokkos::fence();
    const double csr_bytes =
        8 * nnz + 8.0 * (s.panel.samples + 1) * static_cast<double>(stats.blocks);
    std::printf(
        "bytes: grammar on the device %.2f GB (uploaded in %.1f s); 2-bit %.2f GB; CSR "
        "%.2f GB; dense fp32 %.2f GB; CSR / grammar %.1fx, 2-bit / grammar %.2fx\n",
        A.static_bytes() / 1e9, since(upload), entries / 4 / 1e9, csr_bytes / 1e9,
        entries * 4 / 1e9, csr_bytes / A.static_bytes(), entries / 4 / A.static_bytes());
    std::fflush(stdout);

    std::vector<std::unique_ptr<kcla::BlockGrammarMatrix<float, memory>>> by_streams;
    for (int count : s.streams) {
      kcla::BlockMatrixOptions o;
      o.streams = count;
      by_streams.push_back(std::make_unique<kcla::BlockGrammarMatrix<float, memory>>(g, mo, o));
    }
    std::unique_ptr<kcla::BlockGrammarMatrix<float, memory>> S;
    if (s.streaming.device_budget_bytes > 0) {
      const auto staging = clock_type::now();
      S = std::make_unique<kcla::BlockGrammarMatrix<float, memory>>(g, mo, s.streaming);
      Kokkos::fence();
      std::printf(
          "out of core: device budget %.2f GB, %zu slots; %zu of %zu blocks streamed (%.2f GB "
          "per product from pinned memory), device %.2f GB; staged in %.1f s\n",
          s.streaming.device_budget_bytes / 1e9, static_cast<std::size_t>(s.streaming.slots),
          S->num_streamed_blocks(), S->num_held_blocks(), S->streamed_bytes() / 1e9,
          S->static_bytes() / 1e9, since(staging));
      std::fflush(stdout);
    }

    std::unique_ptr<kcla::PackedGenotypeMatrix<float, memory>> P;
    if (pack) {
      P = std::make_unique<kcla::PackedGenotypeMatrix<float, memory>>(packed);
      packed = kcla::PackedGenotypes{};  // the host copy is no longer needed
    }
    std::mt19937_64 gen(7);
    std::uniform_real_distribution<double> u(-1, 1);
    std::vector<std::int64_t> batches{1};
    if (s.batch > 1) batches.push_back(s.batch);
    for (std::int64_t B : batches) {
      Kokkos::View<float**, Kokkos::LayoutRight, memory> X("X", g.num_cols(), B),
          Y("Y", g.num_rows(), B);
      auto Xh = Kokkos::create_mirror_view(X);
      std::vector<double> xd(static_cast<std::size_t>(g.num_cols() * B));
      for (std::size_t k = 0; k < xd.size(); ++k) Xh.data()[k] = static_cast<float>(xd[k] = u(gen));
      Kokkos::deep_copy(X, Xh);
      kcla::multiply(exec_space(), A, X, Y);  // plans and shared buffers
      Kokkos::fence();
      const double t = median_seconds(s.repeat, [&] { kcla::multiply(exec_space(), A, X, Y); });
      std::printf("kcla B=%lld: %.3f ms per product, %.4f ms per vector, %.0f GB/s of grammar\n",
                  static_cast<long long>(B), t * 1e3, t * 1e3 / B, A.static_bytes() / t / 1e9);
      // Sampled rows against the grammar expanded on the host.
      std::vector<std::int64_t> rows;
      for (std::int64_t k = 0; k < std::min(s.verify_rows, g.num_rows()); ++k)
        rows.push_back(k * g.num_rows() / std::min(s.verify_rows, g.num_rows()));
      const auto check = std::min<std::int64_t>(B, 4);
      std::vector<double> xs(static_cast<std::size_t>(g.num_cols() * check));
      for (std::int64_t j = 0; j < g.num_cols(); ++j)
        for (std::int64_t b = 0; b < check; ++b) xs[j * check + b] = Xh(j, b);
      const auto ref =
          kcla::reference::block_rows_multiply<kcla::PlusTimes<double>>(g, rows, xs, check);
      auto Yh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), Y);
      double num = 0, den = 0;
      for (std::size_t k = 0; k < rows.size(); ++k)
        for (std::int64_t b = 0; b < check; ++b) {
          const double d = Yh(rows[k], b) - ref[k * check + b];
          num += d * d;
          den += ref[k * check + b] * ref[k * check + b];
        }
      std::printf(
          "  verify: %zu rows x %lld vectors against the host expansion: relative error "
          "%.2e %s\n",
          rows.size(), static_cast<long long>(check), std::sqrt(num / den),
          std::sqrt(num / den) < 1e-4 ? "OK" : "FAILED");

      // cuSPARSE on CSR chunks streamed from pinned host memory (lower bound: perfect overlap).
      double copy_total = 0, product_total = 0, bound_total = 0, chunk_nnz = 0;
      std::string best_variant;
      for (const auto& chunk : source.chunks) {
        kcla::detail::CsrBaselines<exec_space> baselines(chunk, false);
        // The chunk as a user would hold it in pinned memory: fp32 values, int32 columns.
        using pinned = kcla::detail::StagingSpace<memory>::type;
        Kokkos::View<float*, pinned> hv("values", chunk.nnz());
        Kokkos::View<int*, pinned> hc("columns", chunk.nnz());
        Kokkos::View<long*, pinned> ho("offsets", chunk.row_offsets.size());
        for (std::int64_t k = 0; k < chunk.nnz(); ++k) {
          hv(k) = static_cast<float>(chunk.values[k]);
          hc(k) = chunk.column_indices[k];
        }
        for (std::size_t k = 0; k < chunk.row_offsets.size(); ++k) ho(k) = chunk.row_offsets[k];
        Kokkos::View<float*, memory> dv("dv", chunk.nnz());
        Kokkos::View<int*, memory> dc("dc", chunk.nnz());
        Kokkos::View<long*, memory> dofs("do", chunk.row_offsets.size());
        const double copy = median_seconds(s.repeat, [&] {
          Kokkos::deep_copy(dv, hv);
          Kokkos::deep_copy(dc, hc);
          Kokkos::deep_copy(dofs, ho);
        });
        kcla::detail::BaselineOperands<memory> o;
        o.x = Kokkos::View<float**, Kokkos::LayoutRight, memory>("x", chunk.num_cols, B);
        o.y = Kokkos::View<float**, Kokkos::LayoutRight, memory>("y", chunk.num_rows, B);
        o.x_columns = Kokkos::View<float**, Kokkos::LayoutLeft, memory>("xc", chunk.num_cols, B);
        o.y_columns = Kokkos::View<float**, Kokkos::LayoutLeft, memory>("yc", chunk.num_rows, B);
        Kokkos::deep_copy(o.x, 1.0f);
        Kokkos::deep_copy(o.x_columns, 1.0f);
        double best = 1e30;
        for (const auto& p : baselines.products(o, B)) {
          if (p.family != "cuSPARSE" && p.family != "KokkosSparse") continue;
          try {
            p.run();
            Kokkos::fence();
            const double t_p = median_seconds(s.repeat, p.run);
            if (t_p < best) best = t_p, best_variant = p.family + " " + p.variant;
          } catch (const std::exception&) {
          }
        }
        copy_total += copy;
        product_total += best;
        bound_total += std::max(copy, best);
        chunk_nnz += static_cast<double>(chunk.nnz());
      }
      if (chunk_nnz > 0) {
        const double scale = nnz / chunk_nnz;
        std::printf(
            "  streamed CSR baseline (%zu chunks measured, scaled x%.1f to the panel): copy "
            "%.1f ms (%.1f GB/s), %s %.1f ms, overlapped bound %.1f ms: kcla is %.1fx %s\n",
            source.chunks.size(), scale, copy_total * scale * 1e3,
            (8 * chunk_nnz) / copy_total / 1e9, best_variant.c_str(), product_total * scale * 1e3,
            bound_total * scale * 1e3,
            bound_total * scale > t ? bound_total * scale / t : t / (bound_total * scale),
            bound_total * scale > t ? "faster" : "slower");
      }
      if (P) {
        Kokkos::View<float**, Kokkos::LayoutRight, memory> Yp("Yp", g.num_rows(), B);
        kcla::multiply(exec_space(), *P, X, Yp);
        Kokkos::fence();
        const double tp =
            median_seconds(s.repeat, [&] { kcla::multiply(exec_space(), *P, X, Yp); });
        auto Yph = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), Yp);
        double pn = 0, pd = 0;
        for (std::int64_t k = 0; k < g.num_rows() * B; ++k) {
          const double d = Yph.data()[k] - Yh.data()[k];
          pn += d * d;
          pd += double(Yh.data()[k]) * Yh.data()[k];
        }
        std::printf(
            "  2-bit packed: %.3f ms (%.0f GB/s of codes), agrees with kcla to %.1e: kcla "
            "is %.2fx %s\n",
            tp * 1e3, P->device_bytes() / tp / 1e9, std::sqrt(pn / pd), tp > t ? tp / t : t / tp,
            tp > t ? "faster" : "slower");
      }
      double t_one = 0;  // the resident blocks one after another, as out of core runs them
      for (std::size_t k = 0; k < by_streams.size(); ++k) {
        Kokkos::View<float**, Kokkos::LayoutRight, memory> Yk("Yk", g.num_rows(), B);
        kcla::multiply(exec_space(), *by_streams[k], X, Yk);
        Kokkos::fence();
        const double tk =
            median_seconds(s.repeat, [&] { kcla::multiply(exec_space(), *by_streams[k], X, Yk); });
        auto Ykh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), Yk);
        double kn = 0, kd = 0;
        for (std::int64_t e = 0; e < g.num_rows() * B; ++e) {
          const double d = Ykh.data()[e] - Yh.data()[e];
          kn += d * d;
          kd += double(Yh.data()[e]) * Yh.data()[e];
        }
        if (s.streams[k] == 1) t_one = tk;
        std::printf(
            "  blocks over %d instance(s): %.3f ms per product (%.0f GB/s of grammar; automatic "
            "%.3f ms), agrees to %.1e\n",
            s.streams[k], tk * 1e3, A.static_bytes() / tk / 1e9, t * 1e3,
            std::sqrt(kn / std::max(kd, 1e-300)));
      }
      if (S) streamed_product(*S, X, Yh, t, t_one, s.repeat);
      std::fflush(stdout);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kcla_bench_blocks: %s\n", e.what());
    return 1;
  }
  return 0;
}
