// kcla compress IN -o OUT.h5 and kcla info FILE.
#include "cli_common.hpp"

#include <kcla/grammar_metrics.hpp>
#include <kcla/hdf5_grammar.hpp>

#include <chrono>
#include <cstdio>
#include <iostream>

namespace kcla::cli {

namespace {

const char* kCompressHelp = R"(usage: kcla compress IN -o OUT.h5 [options]

Compresses a sparse matrix into a kcla grammar file (HDF5; docs/format.md).
IN: Matrix Market (.mtx), PLINK fileset (.bed/.bim/.fam or base name), VCF/BCF
(.vcf, .vcf.gz, .bcf: genotype dosages, samples x variants, non-REF allele counts from GT;
needs a kcla built with htslib), ms/scrm output (.ms, .scrm), METIS graph (.graph), or an
mm-repair base name (with --cols).

options:
  -o, --output FILE    the grammar file to write (required; written atomically)
  --block-rows N       compress N rows per block, blocks in parallel (default: one block)
  --threads N          threads for row blocks (default: all cores)
  --cols N             column count of mm-repair input
  --quiet              no progress bar (it shows only on a terminal anyway)
)";

const char* kInfoHelp = R"(usage: kcla info FILE

Prints shape, nnz, |V|, |R|, |C|, depth L, widest level, w*, +pt and the device bytes of
each sweep schedule next to CSR's (fp32, B = 1 and 64). FILE: anything `kcla compress`
reads; non-grammar input is compressed first.

options:
  --cols N, --block-rows N, --threads N   as for compress
)";

}  // namespace

int run_compress(int argc, char** argv) {
  Arguments args(argc, argv, 2, {"quiet", "help"});
  if (args.has("help")) {
    std::cout << kCompressHelp;
    return ok;
  }
  args.allow_only({"output", "block-rows", "threads", "cols", "quiet", "help"});
  if (args.positional().size() != 1)
    throw UsageError("compress needs exactly one input (see --help)");
  if (!args.has("output")) throw UsageError("compress needs -o OUT.h5");
  const auto start = std::chrono::steady_clock::now();
  const auto g =
      load_grammar(args.positional()[0], args, !args.has("quiet") && stderr_is_terminal());
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  write_grammar_hdf5(args.get("output"), g);
  const auto m = compute_metrics(g);
  std::printf("compressed %s -> %s in %.2f s\n", args.positional()[0].c_str(),
              args.get("output").c_str(), seconds);
  print_metrics(std::cout, m);
  return ok;
}

int run_info(int argc, char** argv) {
  Arguments args(argc, argv, 2, {"help", "quiet"});
  if (args.has("help")) {
    std::cout << kInfoHelp;
    return ok;
  }
  args.allow_only({"cols", "block-rows", "threads", "help", "quiet"});
  if (args.positional().size() != 1) throw UsageError("info needs exactly one FILE (see --help)");
  const auto g =
      load_grammar(args.positional()[0], args, !args.has("quiet") && stderr_is_terminal());
  std::printf("%s\n", args.positional()[0].c_str());
  print_metrics(std::cout, compute_metrics(g));
  return ok;
}

}  // namespace kcla::cli
