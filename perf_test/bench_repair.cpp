// RePair compression throughput and grammar size (issue 3): for each input, the time of
// kcla::compress (CSRV encoding + RePair), the grammar it gives (nnz, |R|, |C|, L, w*, +pt),
// the device bytes of each sweep schedule next to CSR's (B = 1, fp32), RePair's own
// working bytes (RepairStats) and the process's peak resident memory while compressing.
// Three variants per input: one block (best compression), and two row blocks on one and
// on two threads (same grammar; their wall times give the block-parallel scaling). A
// markdown table of every run is printed at the end.
//
//   kcla_bench_repair [--kcla_matrix=a.ms,b.mtx,HLC,...] [benchmark flags]
//
// Inputs: any file kcla::read_sparse_matrix reads (.mtx, PLINK .bed or base name, .ms /
// .scrm, METIS .graph). Without --kcla_matrix: those of scrm2504.ms, HLC, EUR_subset,
// pgp-strong-2009.mtx, mdual.graph that exist in ${KCLA_DATA_DIR:-~/.cache/kcla/data}
// (scripts/data/fetch.sh), or a generated 1,000 x 20,000 genotype panel when none does.
//
// Memory: peak_rss_MB is the whole process's peak resident set (VmHWM) during the
// compression, reset just before it through /proc/self/clear_refs; it includes the input
// matrix and everything else already resident (rss_before_MB says how much). Where the
// reset is not possible it falls back to getrusage's ru_maxrss, the peak of the whole run
// so far. Neither is RePair's memory alone: repair_working_MB (RepairStats) is. The reset
// also lowers what getrusage and `/usr/bin/time -v` report for the process afterwards.
//
// Time is manual (steady clock around kcla::compress); Google Benchmark stops after one
// iteration when it takes longer than --benchmark_min_time (0.5 s by default), which big
// inputs always do. cpu_seconds is the process CPU time over the same span (all threads):
// on a shared machine, wall time above CPU time (one block runs on one thread) is time
// the compression waited for a core.
#include <kcla/grammar_metrics.hpp>
#include <kcla/repair.hpp>
#include <kcla/sparse_matrix_file.hpp>
#include <kcla/synthetic.hpp>

#include <benchmark/benchmark.h>

#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Input {
  std::string name;
  std::string path;  // "" = generated panel
};

struct Run {
  std::string input, variant;
  kcla::GrammarMetrics metrics;
  double seconds = 0;         // kcla::compress, wall clock, mean over iterations
  double cpu_seconds = 0;     // process CPU time of the same (all threads)
  double repair_seconds = 0;  // RePair alone (RepairStats)
  double read_seconds = 0;
  std::int64_t blocks = 0;
  std::int64_t working_bytes = 0;
  std::int64_t peak_rss = 0, rss_before = 0;
  bool peak_is_process = false;  // ru_maxrss fallback
};

std::vector<Run> g_runs;

// One input matrix in memory at a time (both variants of an input share it).
struct Loaded {
  std::string path;
  bool valid = false;
  kcla::CsrMatrix<double> matrix;
  double read_seconds = 0;
};
Loaded g_loaded;

const kcla::CsrMatrix<double>& load(const Input& in, double* read_seconds) {
  if (!g_loaded.valid || g_loaded.path != in.path) {
    g_loaded = Loaded{};  // free the previous input first
    const auto start = std::chrono::steady_clock::now();
    g_loaded.matrix = in.path.empty() ? kcla::synthetic_genotype_panel(1000, 20000)
                                      : kcla::read_sparse_matrix(in.path);
    g_loaded.read_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    g_loaded.path = in.path;
    g_loaded.valid = true;
  }
  *read_seconds = g_loaded.read_seconds;
  return g_loaded.matrix;
}

// A field of /proc/self/status in bytes ("VmHWM", "VmRSS"); -1 when unreadable.
std::int64_t proc_status_bytes(const std::string& field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(field + ":", 0) == 0) return std::atoll(line.c_str() + field.size() + 1) * 1024;
  return -1;
}

// Resets the kernel's peak-RSS mark (VmHWM) to the current RSS; false where not allowed.
bool reset_peak_rss() {
  std::ofstream out("/proc/self/clear_refs");
  out << "5";
  out.flush();
  return static_cast<bool>(out);
}

double process_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// Hands freed heap back to the system so the RSS before a run is what is live.
void trim_heap() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

// FNV-1a over the rules, the sequence and the row offsets: equal grammars give equal
// values, so two builds' outputs can be compared from the counters alone. 32 bits, so a
// double counter holds it exactly.
std::uint32_t grammar_hash(const kcla::Grammar& g) {
  std::uint32_t h = 2166136261u;
  auto add = [&](std::int64_t v) {
    for (int byte = 0; byte < 8; ++byte) {
      h ^= static_cast<std::uint32_t>((static_cast<std::uint64_t>(v) >> (8 * byte)) & 0xffu);
      h *= 16777619u;
    }
  };
  for (auto s : g.rule_left) add(s);
  for (auto s : g.rule_right) add(s);
  for (auto s : g.sequence) add(s);
  for (auto o : g.row_offsets) add(o);
  return h;
}

std::int64_t process_peak_rss() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<std::int64_t>(usage.ru_maxrss) * 1024;  // Linux: KiB
}

// threads = 0: one block; else two row blocks on that many threads (1 gives the serial
// time of the same blocks, against which 2 threads show the scaling).
void bench_compress(benchmark::State& state, const Input* in, int threads) {
  Run run;
  run.input = in->name;
  const auto& a = load(*in, &run.read_seconds);
  kcla::RepairOptions options;
  if (threads > 0) {
    options.block_rows = std::max<std::int64_t>(1, (a.num_rows + 1) / 2);
    options.threads = threads;
    run.variant = threads == 1 ? "2 row blocks, 1 thread" : "2 row blocks, 2 threads";
  } else {
    run.variant = "one block";
  }
  kcla::Grammar g;
  kcla::RepairStats stats;
  double total = 0, cpu_total = 0, repair_total = 0;
  std::int64_t iterations = 0;
  for (auto _ : state) {
    g = kcla::Grammar{};  // the previous result must not count in this run's peak
    trim_heap();
    run.rss_before = proc_status_bytes("VmRSS");
    const bool reset = reset_peak_rss();
    const double cpu_start = process_cpu_seconds();
    const auto start = std::chrono::steady_clock::now();
    g = kcla::compress(a, options, &stats);
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    cpu_total += process_cpu_seconds() - cpu_start;
    state.SetIterationTime(elapsed);
    const std::int64_t hwm = reset ? proc_status_bytes("VmHWM") : -1;
    run.peak_is_process = hwm < 0;
    run.peak_rss = std::max(run.peak_rss, hwm < 0 ? process_peak_rss() : hwm);
    run.working_bytes = std::max(run.working_bytes, stats.working_bytes);
    total += elapsed;
    repair_total += stats.seconds;
    ++iterations;
  }
  if (iterations == 0) return;
  run.seconds = total / static_cast<double>(iterations);
  run.cpu_seconds = cpu_total / static_cast<double>(iterations);
  run.repair_seconds = repair_total / static_cast<double>(iterations);
  run.blocks = stats.blocks;
  run.metrics = kcla::compute_metrics(g);
  const auto& m = run.metrics;
  auto mb = [](std::int64_t b) { return static_cast<double>(b) / 1e6; };
  state.counters["nnz"] = static_cast<double>(m.nnz);
  state.counters["rules"] = static_cast<double>(m.rules);
  state.counters["sequence"] = static_cast<double>(m.sequence);
  state.counters["depth"] = m.depth;
  state.counters["max_width"] = static_cast<double>(m.max_width);
  state.counters["pass_throughs"] = static_cast<double>(m.pass_throughs);
  state.counters["csr_MB"] = mb(m.csr_bytes(4));
  state.counters["full_array_MB"] = mb(m.full_array_bytes(1, 4));
  state.counters["layered_MB"] = mb(m.layered_bytes(1, 4));
  state.counters["seconds"] = run.seconds;
  state.counters["cpu_seconds"] = run.cpu_seconds;
  state.counters["repair_seconds"] = run.repair_seconds;
  state.counters["read_seconds"] = run.read_seconds;
  state.counters["Mnnz_per_s"] =
      run.seconds > 0 ? static_cast<double>(m.nnz) / run.seconds / 1e6 : 0;
  state.counters["repair_working_MB"] = mb(run.working_bytes);
  state.counters["repair_working_B_per_nnz"] =
      m.nnz > 0 ? static_cast<double>(run.working_bytes) / static_cast<double>(m.nnz) : 0;
  state.counters["peak_rss_MB"] = mb(run.peak_rss);
  state.counters["rss_before_MB"] = mb(run.rss_before);
  state.counters["blocks"] = static_cast<double>(run.blocks);
  state.counters["grammar_hash"] = static_cast<double>(grammar_hash(g));
  std::ostringstream label;
  label << run.variant << (run.peak_is_process ? ", peak RSS = process peak (ru_maxrss)" : "");
  state.SetLabel(label.str());
  // Google Benchmark may call this more than once (a trial run, then the measured one):
  // keep the last.
  auto same = [&](const Run& r) { return r.input == run.input && r.variant == run.variant; };
  auto it = std::find_if(g_runs.begin(), g_runs.end(), same);
  if (it != g_runs.end())
    *it = run;
  else
    g_runs.push_back(run);
}

std::string with_commas(std::int64_t v) {
  std::string s = std::to_string(v);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(i, ",");
  return s;
}

void print_table() {
  std::printf("\n==== kcla compression (CSRV + RePair), B = 1 fp32 schedule bytes ====\n");
  std::printf(
      "\n| input | rows x cols | nnz | variant | \\|R\\| | \\|C\\| | L | w* | +pt | CSR MB | "
      "full array MB (vs CSR) | layered MB (vs CSR) | seconds: wall (RePair, CPU) | M nnz/s | "
      "RePair working MB | peak RSS MB (before) |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (const auto& r : g_runs) {
    const auto& m = r.metrics;
    const double csr = static_cast<double>(m.csr_bytes(4)) / 1e6;
    const double full = static_cast<double>(m.full_array_bytes(1, 4)) / 1e6;
    const double layered = static_cast<double>(m.layered_bytes(1, 4)) / 1e6;
    std::printf(
        "| %s | %s x %s | %s | %s | %s | %s | %d | %s | %s | %.1f | %.1f (%.2f) | %.1f (%.2f) | "
        "%.2f (%.2f, %.2f) | %.2f | %.0f | %.0f%s (%.0f) |\n",
        r.input.c_str(), with_commas(m.rows).c_str(), with_commas(m.cols).c_str(),
        with_commas(m.nnz).c_str(), r.variant.c_str(), with_commas(m.rules).c_str(),
        with_commas(m.sequence).c_str(), m.depth, with_commas(m.max_width).c_str(),
        with_commas(m.pass_throughs).c_str(), csr, full, csr > 0 ? full / csr : 0, layered,
        csr > 0 ? layered / csr : 0, r.seconds, r.repair_seconds, r.cpu_seconds,
        r.seconds > 0 ? static_cast<double>(m.nnz) / r.seconds / 1e6 : 0,
        static_cast<double>(r.working_bytes) / 1e6, static_cast<double>(r.peak_rss) / 1e6,
        r.peak_is_process ? "*" : "", static_cast<double>(r.rss_before) / 1e6);
  }
  if (std::any_of(g_runs.begin(), g_runs.end(), [](const Run& r) { return r.peak_is_process; }))
    std::printf(
        "\n* process peak of the whole run so far (ru_maxrss): VmHWM could not be reset.\n");
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

bool exists(const std::string& path) {
  struct stat info {};
  return stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode);
}

std::vector<Input> default_inputs() {
  std::string dir;
  if (const char* env = std::getenv("KCLA_DATA_DIR"); env && *env)
    dir = env;
  else if (const char* home = std::getenv("HOME"))
    dir = std::string(home) + "/.cache/kcla/data";
  // name, path handed to read_sparse_matrix, file whose presence decides
  const char* sets[][3] = {{"scrm2504", "scrm2504.ms", "scrm2504.ms"},
                           {"HLC", "HLC", "HLC.bed"},
                           {"EUR_subset", "EUR_subset", "EUR_subset.bed"},
                           {"pgp-strong-2009", "pgp-strong-2009.mtx", "pgp-strong-2009.mtx"},
                           {"mdual", "mdual.graph", "mdual.graph"}};
  std::vector<Input> inputs;
  for (const auto& s : sets)
    if (!dir.empty() && exists(dir + "/" + s[2])) inputs.push_back({s[0], dir + "/" + s[1]});
  if (inputs.empty()) {
    std::fprintf(stderr,
                 "kcla_bench_repair: no data set in '%s' (scripts/data/fetch.sh); "
                 "using a generated 1000 x 20000 genotype panel\n",
                 dir.c_str());
    inputs.push_back({"generated_1000x20000", ""});
  }
  return inputs;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<Input> inputs;
  std::vector<char*> rest;
  for (int i = 0; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--kcla_matrix=", 0) == 0) {
      for (auto& m : split(a.substr(14)))
        inputs.push_back({std::filesystem::path(m).filename().string(), m});
    } else {
      rest.push_back(argv[i]);
    }
  }
  if (inputs.empty()) inputs = default_inputs();
  int rest_argc = static_cast<int>(rest.size());
  benchmark::Initialize(&rest_argc, rest.data());
  for (const auto& in : inputs) {
    for (int threads : {0, 1, 2})
      benchmark::RegisterBenchmark(
          ("compress/" + in.name +
           (threads == 0 ? "/one_block" : "/row_blocks_2x" + std::to_string(threads)))
              .c_str(),
          bench_compress, &in, threads)
          ->UseManualTime()
          ->Unit(benchmark::kSecond);
  }
  benchmark::RunSpecifiedBenchmarks();
  print_table();
  benchmark::Shutdown();
  return 0;
}
