// kcla compress IN -o OUT.h5 and kcla info FILE.
#include "cli_common.hpp"
#include "cli_mpi.hpp"

#include <kcla/block_compress.hpp>
#include <kcla/detail/memory_limit.hpp>
#include <kcla/hdf5_block_grammar.hpp>
#include <kcla/hdf5_block_grammar_mpi.hpp>

#include <kcla/grammar_metrics.hpp>
#include <kcla/hdf5_genotype_grammar.hpp>
#include <kcla/hdf5_grammar.hpp>
#include <kcla/level_phases.hpp>
#include <kcla/plink.hpp>
#include <kcla/schedule.hpp>
#include <kcla/sweep_cost_model.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>

namespace kcla::cli {

namespace {

// RePair options, shared by compress, info and multiply (a matrix that must be compressed).
Command& repair_options(Command& c) {
  return c
      .integer("--block-rows", "N",
               "compress N rows per block, blocks in parallel, rules merged into one grammar "
               "(default 0: one block)",
               0)
      .integer("--threads", "N", "threads for blocks (default 0: all cores)", 0, 1 << 16)
      .integer("--cols", "N", "column count of mm-repair input", 1);
}

Command compress_command() {
  Command c("kcla compress IN -o OUT.h5 [options]",
            "Compresses a sparse matrix into a kcla grammar file (HDF5; docs/format.md).\nIN: "
            "Matrix Market (.mtx), PLINK fileset (.bed/.bim/.fam or base name), VCF/BCF (.vcf, "
            ".vcf.gz, .bcf: genotype dosages, samples x variants, non-REF allele counts from "
            "GT; needs a kcla built with htslib), ms/scrm output (.ms, .scrm), METIS graph "
            "(.graph), or an mm-repair base name (with --cols).");
  c.positional("IN", "the matrix to compress")
      .text("-o,--output", "FILE", "the grammar file to write (required; written atomically)")
      .integer("--block-cols", "N",
               "stream the panel in blocks of N columns (variants), compress the blocks in "
               "parallel and write a block grammar file; memory is bounded by the blocks in "
               "flight. Under mpirun each rank compresses its share of the blocks and the ranks "
               "write one file together (parallel HDF5). PLINK filesets stream from the .bed.",
               0)
      .bytes("--memory-limit",
             "with --block-cols: bytes the blocks in flight may take (e.g. 8G; default: half of "
             "this machine's memory)");
  repair_options(c).flag("--quiet", "no progress bar (it shows only on a terminal anyway)");
  return c;
}

Command info_command() {
  Command c("kcla info FILE [options]",
            "Prints shape, nnz, |V|, |R|, |C|, depth L, widest level, w*, +pt and the device "
            "bytes of each sweep schedule next to CSR's (fp32, B = 1 and 64). FILE: anything "
            "`kcla compress` reads; non-grammar input is compressed first (the options below "
            "are compress's).");
  c.positional("FILE", "a grammar, block grammar or any matrix `kcla compress` reads");
  repair_options(c).flag("--quiet", "no progress bar");
  return c;
}

}  // namespace

namespace {

std::string megabytes(double bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f MB", bytes / 1e6);
  return text;
}

/// The genotype part of PLINK fileset `input` (its tables and the missing calls given), or
/// nothing, with a warning, when its tables lack PLINK's six columns (read_plink needs two
/// fields per line): the file then holds the matrix alone.
std::optional<GenotypePart> plink_genotype_part(const std::string& input, MissingCalls missing,
                                                const char* file_kind) {
  GenotypePart part;
  part.tables = read_plink_tables(input);
  part.missing = std::move(missing);
  try {
    parse_plink_samples(part.tables);
    parse_plink_variants(part.tables);
  } catch (const FormatError& e) {
    std::fprintf(stderr,
                 "warning: %s\nwarning: the %s file has no genotype part (kcla "
                 "score/assoc/pca need PLINK's six columns per .fam/.bim line)\n",
                 e.what(), file_kind);
    return std::nullopt;
  }
  return part;
}

bool is_plink_input(const std::string& input) {
  return is_plink_fileset_name(input) && !is_hdf5_file(input);
}

void print_genotype_part(const GenotypePart& part) {
  std::printf(
      "genotypes: %lld samples x %lld variants, %lld missing calls; the file keeps the .fam, "
      ".bim and missing calls (kcla score/assoc/pca read it)\n",
      static_cast<long long>(part.missing.num_rows), static_cast<long long>(part.missing.num_cols),
      static_cast<long long>(part.missing.count()));
}

int compress_in_blocks(const Arguments& args, bool progress) {
  const auto input = args.positional()[0];
  const auto output = args.get("output");
  const int rank = mpi_rank(), ranks = mpi_ranks();
  BlockCompressOptions options;
  options.block_cols = args.get_int("block-cols", 0);
  options.threads = static_cast<int>(args.get_int("threads", 0));
  options.memory_limit_bytes = args.has("memory-limit")
                                   ? parse_bytes(args.get("memory-limit"), "memory-limit")
                                   : static_cast<std::int64_t>(detail::physical_memory_bytes() / 2 /
                                                               static_cast<unsigned>(ranks));
  const auto start = std::chrono::steady_clock::now();
  auto source = open_column_source(input, ranks > 1, options.memory_limit_bytes);
  if (progress && rank == 0)
    options.progress = [&](const BlockCompressProgress& p) {
      // A VCF tells its column count only at its end.
      const std::string total = p.columns_total >= 0 ? std::to_string(p.columns_total) : "?";
      std::fprintf(stderr, "\rblocks %lld, columns %lld/%s, %.1f M nonzeros/s, in flight %s   ",
                   static_cast<long long>(p.blocks_done), static_cast<long long>(p.columns_done),
                   total.c_str(), p.seconds > 0 ? p.nonzeros_done / p.seconds / 1e6 : 0.0,
                   megabytes(static_cast<double>(p.bytes_in_flight)).c_str());
      std::fflush(stderr);
    };
  BlockCompressStats stats;
  BlockLayout layout;
  std::int64_t grammar_symbols = 0;
  std::optional<GenotypePart> genotypes;
  if (ranks > 1) {
    if (rank == 0 && is_plink_input(input))
      std::fprintf(stderr,
                   "warning: under mpirun the block grammar file gets no genotype part; "
                   "compress the fileset in one process for kcla score/assoc/pca\n");
#if KCLA_HAVE_MPI
    const auto share = compress_blocks(MPI_COMM_WORLD, *source, options, &stats);
    for (const auto& g : share.grammars) grammar_symbols += g.num_rules() + g.row_offsets.back();
    write_block_grammar_hdf5(MPI_COMM_WORLD, output, share);
    layout = share.layout;
    std::int64_t totals[2] = {stats.nonzeros, grammar_symbols}, sums[2] = {0, 0};
    MPI_Reduce(totals, sums, 2, MPI_INT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    stats.nonzeros = sums[0];
    grammar_symbols = sums[1];
#endif
  } else {
    BlockGrammarFileWriter writer(output);
    layout = compress_blocks(
        *source, options,
        [&](std::int64_t id, const BlockExtent& extent, Grammar&& g) {
          grammar_symbols += g.num_rules() + g.row_offsets.back();
          writer.append(id, extent, g);
        },
        &stats);
    if (is_plink_input(input)) {
      // A second pass over the .bed for the missing calls (the blocks read them as 0).
      genotypes = plink_genotype_part(input, read_plink_missing_calls(input), "block grammar");
      if (genotypes) writer.append_genotypes(*genotypes);
    }
    writer.finish(layout);
  }
  if (progress && rank == 0) std::fprintf(stderr, "\n");
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (rank != 0) return ok;
  const double entries =
      static_cast<double>(layout.num_rows) * static_cast<double>(layout.num_cols);
  const double file_bytes = static_cast<double>(std::filesystem::file_size(output));
  std::printf("compressed %s -> %s in %.2f s (%d rank%s x %d threads)\n", input.c_str(),
              output.c_str(), seconds, ranks, ranks > 1 ? "s" : "", stats.threads);
  std::printf("shape: %lld x %lld, %lld nonzeros, %lld blocks of %lld columns\n",
              static_cast<long long>(layout.num_rows), static_cast<long long>(layout.num_cols),
              static_cast<long long>(stats.nonzeros), static_cast<long long>(layout.num_blocks()),
              static_cast<long long>(layout.num_blocks() ? layout.blocks[0].cols() : 0));
  if (genotypes) print_genotype_part(*genotypes);
  std::printf("throughput: %.2f M nonzeros/s; peak RSS %s (rank 0), budget high-water %s\n",
              static_cast<double>(stats.nonzeros) / seconds / 1e6,
              megabytes(static_cast<double>(peak_rss_bytes())).c_str(),
              megabytes(static_cast<double>(stats.peak_bytes_in_flight)).c_str());
  std::printf(
      "grammar: |R| + |C| = %lld symbols, file %s; CSR (fp32, int32) %s; 2-bit %s\n",
      static_cast<long long>(grammar_symbols), megabytes(file_bytes).c_str(),
      megabytes(8.0 * static_cast<double>(stats.nonzeros) + 8.0 * (layout.num_rows + 1)).c_str(),
      megabytes(entries / 4).c_str());
  return ok;
}

}  // namespace

namespace {

/// The cost model's GPU predictions (fp32, the launch it would choose): the full array with
/// one phase per level and with the phases it plans, and the layered schedule.
void print_gpu_predictions(const Grammar& g, const GrammarMetrics& m) {
  const auto machine = SweepMachine::for_gpu();
  const auto levels = compute_levels(g);
  for (std::int64_t vectors : {1, 64}) {
    const auto phased = plan_level_phases(g, levels, vectors, 4, SweepLaunch::automatic, machine,
                                          machine.phase_levels_for(vectors));
    const auto full =
        predict_sweep(m, SweepSchedule::full_array, SweepLaunch::automatic, vectors, 4, machine);
    const auto merged = predict_sweep(m, SweepSchedule::full_array, SweepLaunch::automatic, vectors,
                                      4, machine, &phased);
    const auto layered =
        predict_sweep(m, SweepSchedule::layered, SweepLaunch::automatic, vectors, 4, machine);
    std::printf(
        "GPU model (B=%-3lld) full array %d levels %.4f ms (%s) | %d phases %.4f ms (%s, %.2fx "
        "the evaluations, %.0f %% of the slots) | layered %.4f ms\n",
        static_cast<long long>(vectors), full.phases, full.seconds * 1e3, to_string(full.launch),
        merged.phases, merged.seconds * 1e3, to_string(merged.launch),
        static_cast<double>(phased.walked_rules) /
            static_cast<double>(std::max<std::int64_t>(1, m.rules)),
        100.0 * static_cast<double>(phased.computed_slots) /
            static_cast<double>(std::max<std::int64_t>(1, m.rules)),
        layered.seconds * 1e3);
  }
  const auto other = predict_baselines(m, 4, machine);
  std::printf(
      "GPU model (B=1  ) instead: CSR SpMV %.4f ms | dense GEMV %.4f ms | 2-bit GEMV "
      "%.4f ms (genotype panels)\n",
      other.csr_seconds * 1e3, other.dense_seconds * 1e3, other.packed_seconds * 1e3);
}

}  // namespace

int run_compress(int argc, char** argv) {
  auto command = compress_command();
  const auto args = command.parse(argc, argv, 2);
  if (args.has("help")) {
    std::cout << command.help();
    return ok;
  }
  if (!args.has("output")) throw UsageError("compress needs -o OUT.h5");
  const bool progress = !args.has("quiet") && stderr_is_terminal();
  if (args.has("block-cols") || mpi_ranks() > 1) return compress_in_blocks(args, progress);
  const auto input = args.positional()[0];
  const auto start = std::chrono::steady_clock::now();
  Grammar g;
  std::optional<GenotypePart> genotypes;
  if (is_plink_input(input)) {
    // A genotype grammar file: the grammar and what score/assoc/pca need besides it.
    auto plink = read_plink(input);
    g = compress(plink.matrix, repair_options_from(args, progress));
    if (progress) std::fprintf(stderr, "\n");
    genotypes = plink_genotype_part(input, std::move(plink.missing), "grammar");
    if (genotypes) {
      GenotypeGrammar file;
      file.grammar = std::move(g);
      file.missing = std::move(genotypes->missing);
      file.tables = std::move(genotypes->tables);
      write_genotype_grammar_hdf5(args.get("output"), file);
      g = std::move(file.grammar);
      genotypes->missing = std::move(file.missing);
    } else {
      write_grammar_hdf5(args.get("output"), g);
    }
  } else {
    g = load_grammar(input, args, progress);
    write_grammar_hdf5(args.get("output"), g);
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const auto m = compute_metrics(g);
  std::printf("compressed %s -> %s in %.2f s\n", input.c_str(), args.get("output").c_str(),
              seconds);
  if (genotypes) print_genotype_part(*genotypes);
  print_metrics(std::cout, m);
  return ok;
}

namespace {

/// What `kcla info` says of a file's genotype part.
std::string genotype_line(const GenotypePart& part) {
  return "genotypes: " + std::to_string(part.missing.num_rows) + " samples x " +
         std::to_string(part.missing.num_cols) + " variants, " +
         std::to_string(part.missing.count()) + " missing calls, counting " +
         (part.counted_allele == CountedAllele::a1 ? "A1" : "A2") + "; from " +
         part.tables.fam_name + " and " + part.tables.bim_name + "\n";
}

}  // namespace

int run_info(int argc, char** argv) {
  auto command = info_command();
  const auto args = command.parse(argc, argv, 2);
  if (args.has("help")) {
    std::cout << command.help();
    return ok;
  }
  if (is_block_grammar_hdf5(args.positional()[0])) {
    const auto path = args.positional()[0];
    const auto g = read_block_grammar_hdf5(path);
    std::int64_t nnz = 0, rules = 0, sequence = 0, device = 0, depth = 0;
    for (const auto& block : g.grammars) {
      const auto m = compute_metrics(block);
      nnz += m.nnz;
      rules += m.rules;
      sequence += m.sequence;
      depth = std::max<std::int64_t>(depth, m.depth);
      device += std::min(m.full_array_bytes(1, 4), m.layered_bytes(1, 4));
    }
    const double entries = static_cast<double>(g.num_rows()) * static_cast<double>(g.num_cols());
    std::printf("%s\n", path.c_str());
    if (is_genotype_grammar_hdf5(path))
      std::printf("%s", genotype_line(read_genotype_part_hdf5(path)).c_str());
    std::printf("block grammar: shape %lld x %lld, nnz %lld, %lld blocks\n",
                static_cast<long long>(g.num_rows()), static_cast<long long>(g.num_cols()),
                static_cast<long long>(nnz), static_cast<long long>(g.layout.num_blocks()));
    std::printf("|R| %lld, |C| %lld, deepest block L %lld\n", static_cast<long long>(rules),
                static_cast<long long>(sequence), static_cast<long long>(depth));
    std::printf(
        "bytes: file %s; device (fp32, B=1, best schedule per block) %s; CSR (fp32, "
        "int32) %s; 2-bit %s; dense fp32 %s\n",
        megabytes(static_cast<double>(std::filesystem::file_size(path))).c_str(),
        megabytes(static_cast<double>(device)).c_str(),
        megabytes(8.0 * static_cast<double>(nnz) + 8.0 * (g.num_rows() + 1)).c_str(),
        megabytes(entries / 4).c_str(), megabytes(entries * 4).c_str());
    return ok;
  }
  const auto path = args.positional()[0];
  Grammar g;
  std::string genotypes;
  if (is_genotype_grammar_hdf5(path)) {
    auto file = read_genotype_grammar_hdf5(path);
    genotypes =
        genotype_line({std::move(file.missing), file.counted_allele, std::move(file.tables)});
    g = std::move(file.grammar);
  } else {
    g = load_grammar(path, args, !args.has("quiet") && stderr_is_terminal());
  }
  std::printf("%s\n%s", path.c_str(), genotypes.c_str());
  const auto m = compute_metrics(g);
  print_metrics(std::cout, m);
  print_gpu_predictions(g, m);
  return ok;
}

}  // namespace kcla::cli
