// kcla generate: a synthetic genotype panel of any size, streamed to a PLINK fileset.
#include "cli_common.hpp"

#include <kcla/panel_generator.hpp>
#include <kcla/plink.hpp>
#include <kcla/plink_writer.hpp>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>

namespace kcla::cli {

namespace {

Command generate_command() {
  Command c("kcla generate --samples N --variants M -o BASE [options]",
            "Writes a synthetic genotype panel (N samples x M variants, values 0/1/2) as the "
            "PLINK fileset BASE.bed/.bim/.fam, streaming: memory stays bounded by one block of "
            "variants whatever the size. The model (docs/panel-generator.md): sample haplotypes "
            "are mosaics of K founder haplotypes (Li & Stephens-like copying with exponential "
            "run lengths); the founders' alleles follow local coalescent trees, so the "
            "allele-frequency spectrum is neutral (~ 1/f) and LD decays with distance; recent "
            "mutations on copied segments add the rare variants. The same options and seed give "
            "the same panel on any thread count.");
  // Ranges the generator itself checks are left to it: its messages name the option.
  c.text("-o,--output", "BASE", "fileset to write (BASE.bed/.bim/.fam; written atomically)")
      .integer("--samples", "N", "individuals (rows; required)")
      .integer("--variants", "M", "variants (columns; required)")
      .integer("--ploidy", "P", "haplotypes per individual: 2 (values 0/1/2, default) or 1")
      .integer("--founders", "K", "founder haplotypes (default 64)")
      .real("--switch-rate", "R", "per variant, chance a haplotype switches founder (default 1e-3)")
      .real("--tree-span", "S", "mean variants under one founder genealogy (default 200)")
      .real("--rare-fraction", "F",
            "share of recent-mutation variants (default: the neutral share)")
      .real("--sfs-exponent", "A", "frequency density ~ f^-A (default 1, neutral)")
      .integer("--seed", "S", "random seed (default 1)")
      .integer("--threads", "T", "threads (default 0: all cores)", 0, 1 << 16)
      .integer("--block-cols", "C", "variants per block (default 0: about 2^25 calls per block)", 0)
      .flag("--quiet", "no progress line (it shows only on a terminal anyway)");
  return c;
}

}  // namespace

int run_generate(int argc, char** argv) {
  auto command = generate_command();
  const auto args = command.parse(argc, argv, 2);
  if (args.has("help")) {
    std::cout << command.help();
    return ok;
  }
  if (!args.has("output")) throw UsageError("generate needs -o BASE");
  if (!args.has("samples") || !args.has("variants"))
    throw UsageError("generate needs --samples N and --variants M");
  MosaicPanelOptions o;
  o.samples = args.get_int("samples", 0);
  o.variants = args.get_int("variants", 0);
  o.ploidy = static_cast<int>(args.get_int("ploidy", o.ploidy));
  o.founders = static_cast<int>(args.get_int("founders", o.founders));
  o.switch_rate = args.get_double("switch-rate", o.switch_rate);
  o.tree_span = args.get_double("tree-span", o.tree_span);
  o.rare_fraction = args.get_double("rare-fraction", o.rare_fraction);
  o.sfs_exponent = args.get_double("sfs-exponent", o.sfs_exponent);
  o.seed = static_cast<std::uint64_t>(args.get_int("seed", 1));
  o.threads = static_cast<int>(args.get_int("threads", 0));
  std::unique_ptr<MosaicPanelSource> source;
  try {
    source = std::make_unique<MosaicPanelSource>(o);
  } catch (const InvalidArgument& e) {  // a bad option is a usage error
    throw UsageError(e.what());
  }
  PlinkWriteOptions w;
  w.threads = o.threads;
  w.block_cols = args.get_int("block-cols", 0);
  const auto start = std::chrono::steady_clock::now();
  auto seconds = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  const bool show_progress = !args.has("quiet") && stderr_is_terminal();
  if (show_progress)
    w.progress = [&](std::int64_t done, std::int64_t total) {
      const double s = seconds();
      std::fprintf(stderr, "\rgenerate: %lld/%lld variants (%5.1f%%), %.3g entries/s",
                   static_cast<long long>(done), static_cast<long long>(total),
                   100.0 * static_cast<double>(done) / static_cast<double>(total),
                   s > 0 ? static_cast<double>(done) * static_cast<double>(o.samples) / s : 0.0);
      std::fflush(stderr);
    };
  const std::string base = plink_base_name(args.get("output"));
  write_plink(*source, base, w);
  if (show_progress) std::fprintf(stderr, "\n");
  const double s = seconds();
  const double entries = static_cast<double>(o.samples) * static_cast<double>(o.variants);
  std::printf(
      "generated %s.bed/.bim/.fam: %lld samples x %lld variants (%.3g entries) in %.2f s, "
      "%.3g entries/s\n",
      base.c_str(), static_cast<long long>(o.samples), static_cast<long long>(o.variants), entries,
      s, s > 0 ? entries / s : 0.0);
  return ok;
}

}  // namespace kcla::cli
