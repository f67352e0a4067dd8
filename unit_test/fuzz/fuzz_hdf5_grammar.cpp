// libFuzzer target: the input is an HDF5 grammar, genotype grammar or block grammar file,
// with or without a genotype part (docs/fuzzing.md). HDF5
// itself is Debian's uninstrumented library: a memory error inside it shows only when it crashes.
#include <kcla/hdf5_block_grammar.hpp>
#include <kcla/hdf5_genotype_grammar.hpp>
#include <kcla/hdf5_grammar.hpp>

#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto path = kcla::fuzz::write_file("input.h5", data, size);
  kcla::is_hdf5_file(path);
  // Every file through the block reader too (a plain grammar file reads as one block).
  const auto b = kcla::fuzz::read_or_reject([&] { return kcla::read_block_grammar_hdf5(path); });
  if (b) {
    try {
      b->validate("read_block_grammar_hdf5");
    } catch (const std::exception& e) {
      kcla::fuzz::finding("read_block_grammar_hdf5 returned an invalid block grammar", e.what());
    }
  }
  kcla::is_genotype_grammar_hdf5(path);
  const auto genotypes =
      kcla::fuzz::read_or_reject([&] { return kcla::read_genotype_grammar_hdf5(path); });
  if (genotypes) {
    try {
      genotypes->grammar.validate("read_genotype_grammar_hdf5");
      genotypes->missing.validate("read_genotype_grammar_hdf5: missing calls");
      if (static_cast<std::int64_t>(kcla::parse_plink_samples(genotypes->tables).size()) !=
              genotypes->grammar.num_rows ||
          static_cast<std::int64_t>(kcla::parse_plink_variants(genotypes->tables).size()) !=
              genotypes->grammar.num_cols)
        kcla::fuzz::finding("read_genotype_grammar_hdf5: tables disagree with the grammar", "");
    } catch (const std::exception& e) {
      kcla::fuzz::finding("read_genotype_grammar_hdf5 returned invalid parts", e.what());
    }
  }
  // The genotype part alone, as the genotype commands read it from a block grammar file.
  const auto part = kcla::fuzz::read_or_reject([&] { return kcla::read_genotype_part_hdf5(path); });
  if (part) {
    try {
      part->missing.validate("read_genotype_part_hdf5: missing calls");
      if (static_cast<std::int64_t>(kcla::parse_plink_samples(part->tables).size()) !=
              part->missing.num_rows ||
          static_cast<std::int64_t>(kcla::parse_plink_variants(part->tables).size()) !=
              part->missing.num_cols)
        kcla::fuzz::finding("read_genotype_part_hdf5: tables disagree with the matrix", "");
    } catch (const std::exception& e) {
      kcla::fuzz::finding("read_genotype_part_hdf5 returned invalid parts", e.what());
    }
  }
  const auto g = kcla::fuzz::read_or_reject([&] { return kcla::read_grammar_hdf5(path); });
  if (!g) return 0;
  try {
    g->validate("read_grammar_hdf5");
  } catch (const std::exception& e) {
    kcla::fuzz::finding("read_grammar_hdf5 returned an invalid grammar", e.what());
  }
  return 0;
}
