#include "genotype_input.hpp"

#include <kcla/hdf5_block_grammar.hpp>
#include <kcla/hdf5_genotype_grammar.hpp>
#include <kcla/hdf5_grammar.hpp>
#include <kcla/repair.hpp>

namespace kcla::cli {

GenotypeInput load_genotype_input(const std::string& path, int threads) {
  GenotypeInput in;
  const auto n = path.size();
  if (is_block_grammar_hdf5(path)) {
    auto part = read_genotype_part_hdf5(path);  // first: a file without one fails fast
    if (part.counted_allele != CountedAllele::a1)
      throw FormatError(path,
                        "counts A2; the genotype commands expect A1 counts (PLINK's default), "
                        "as `kcla compress FILESET --block-cols N` writes them");
    in.blocks = read_block_grammar_hdf5(path);
    in.blocked = true;
    in.missing = std::move(part.missing);
    in.tables = std::move(part.tables);
    in.from_grammar_file = true;
    in.output_base = n > 3 && path.compare(n - 3, 3, ".h5") == 0 ? path.substr(0, n - 3) : path;
  } else if (is_hdf5_file(path)) {
    auto file = read_genotype_grammar_hdf5(path);
    if (file.counted_allele != CountedAllele::a1)
      throw FormatError(path,
                        "counts A2; the genotype commands expect A1 counts (PLINK's default), "
                        "as `kcla compress FILESET` writes them");
    in.grammar = std::move(file.grammar);
    in.missing = std::move(file.missing);
    in.tables = std::move(file.tables);
    in.from_grammar_file = true;
    in.output_base = n > 3 && path.compare(n - 3, 3, ".h5") == 0 ? path.substr(0, n - 3) : path;
  } else {
    auto plink = read_plink(path);
    in.tables = read_plink_tables(path);
    RepairOptions repair;
    repair.threads = threads;
    in.grammar = compress(plink.matrix, repair);
    in.missing = std::move(plink.missing);
    in.output_base = plink_base_name(path);
  }
  in.samples = parse_plink_samples(in.tables);
  in.variants = parse_plink_variants(in.tables);
  // The fileset's tables are read after its .bed: one edited in between must not pair IDs
  // with the wrong rows.
  if (static_cast<std::int64_t>(in.samples.size()) != in.num_samples() ||
      static_cast<std::int64_t>(in.variants.size()) != in.num_variants())
    throw FormatError(path, "the .fam/.bim changed while the fileset was read");
  return in;
}

const char* preparation_label(const GenotypeInput& input) {
  return input.from_grammar_file ? "read grammar + statistics" : "read + compress + statistics";
}

}  // namespace kcla::cli
