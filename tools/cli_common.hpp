// Shared pieces of the kcla command-line tool: exit codes, input loading, back-end dispatch,
// progress display (the options themselves: cli_options.hpp).
#pragma once

#include "cli_options.hpp"

#include <kcla/column_block_source.hpp>
#include <kcla/config.hpp>
#include <kcla/error.hpp>
#include <kcla/grammar.hpp>
#include <kcla/repair.hpp>
#include <kcla/semiring.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace kcla::cli {

/// Exit codes: 0 success, 1 failure while running (bad file, verification failed),
/// 2 usage error.
enum ExitCode { ok = 0, failure = 1, usage = 2 };

/// Reads any matrix kcla knows into a grammar: a kcla .h5 grammar as is; mm-repair files
/// (BASE.vc.R present; needs cols); anything read_sparse_matrix reads, compressed.
Grammar load_grammar(const std::string& path, const Arguments& args, bool show_progress);
/// RePair's options from --block-rows and --threads, with a progress line on stderr.
RepairOptions repair_options_from(const Arguments& args, bool show_progress);

/// Any input `kcla compress` reads as column blocks: PLINK filesets stream from the .bed,
/// ms/scrm output by site ranges of each haplotype line, VCF/BCF record by record (unless
/// `ranks_split_columns`: ranks need the column count first, which a VCF tells only at its
/// end), Matrix Market one pass per block when reading it whole would not fit
/// `memory_limit_bytes` (0: read whole); other formats are read whole first.
std::unique_ptr<ColumnBlockSource> open_column_source(const std::string& path,
                                                      bool ranks_split_columns = false,
                                                      std::int64_t memory_limit_bytes = 0);

/// How `kcla multiply` timed its products (--repeat): "median of N" after a warm-up, or
/// for --repeat 0 one cold product.
std::string timing_label(const Arguments& args);

/// Values of --x: text (whitespace separated) or .bin (float32).
std::vector<double> read_values(const std::string& path);

/// Peak resident memory of this process so far, in bytes.
std::int64_t peak_rss_bytes();

/// Runs f<ExecutionSpace>() on the back end named "cuda", "openmp", "serial" or "" (the
/// default execution space). Throws UsageError for a back end this build lacks.
void with_backend(const std::string& name, const std::function<void(const std::string&)>& run);

/// with_backend, calling run(ExecutionSpace()) for the chosen back end; returns its name.
template <class Run>
std::string with_execution_space(const std::string& backend, Run&& run) {
  std::string chosen;
  with_backend(backend, [&](const std::string& name) {
    chosen = name;
#if KCLA_HAVE_CUDA
    if (name == "cuda") run(Kokkos::Cuda());
#endif
#if defined(KOKKOS_ENABLE_OPENMP)
    if (name == "openmp") run(Kokkos::OpenMP());
#endif
#if defined(KOKKOS_ENABLE_SERIAL)
    if (name == "serial") run(Kokkos::Serial());
#endif
  });
  return chosen;
}

/// Calls run(Semiring{}) with the semiring --semiring and --precision name (plus_times,
/// boolean, min_plus; fp32 or fp64) and returns what it returns; UsageError otherwise.
template <class Run>
auto with_semiring(const Arguments& args, Run&& run) {
  const auto semiring = args.get("semiring", "plus_times");
  const auto precision = args.get("precision", "fp32");
  if (precision != "fp32" && precision != "fp64") throw UsageError("--precision: fp32 or fp64");
  const bool fp64 = precision == "fp64";
  if (semiring == "plus_times") return fp64 ? run(PlusTimes<double>{}) : run(PlusTimes<float>{});
  if (semiring == "min_plus") return fp64 ? run(MinPlus<double>{}) : run(MinPlus<float>{});
  if (semiring == "boolean") return run(Boolean{});
  throw UsageError("--semiring: plus_times, boolean or min_plus (not '" + semiring + "')");
}

/// True when stderr is a terminal (progress bars only then).
bool stderr_is_terminal();

int run_compress(int argc, char** argv);
int run_info(int argc, char** argv);
int run_multiply(int argc, char** argv);
/// kcla multiply on a block grammar file, and under mpirun (tools/cli_multiply_blocks.cpp).
int run_multiply_blocks(const Arguments& args);
int run_demo(int argc, char** argv);
/// kcla generate (tools/cli_generate.cpp).
int run_generate(int argc, char** argv);
/// kcla score: polygenic scores of a PLINK fileset, plink2 --score's definitions.
int run_score(int argc, char** argv);
/// kcla pca: principal components of a PLINK fileset (randomized, on the grammar).
int run_pca(int argc, char** argv);
/// kcla assoc: per-variant linear association scan (plink2 --glm linear's definitions).
int run_assoc(int argc, char** argv);
/// kcla tlr compress | info | gemm (tools/cli_tlr.cpp).
int run_tlr(int argc, char** argv);

}  // namespace kcla::cli
