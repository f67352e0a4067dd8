// The input of the genotype commands (score, assoc, pca): a PLINK 1 fileset, read and
// compressed on the spot, or a genotype grammar file written by `kcla compress FILESET`,
// read as it is (no .bed, no RePair).
#pragma once

#include <kcla/block_grammar.hpp>
#include <kcla/grammar.hpp>
#include <kcla/missing_calls.hpp>
#include <kcla/plink.hpp>

#include <string>

namespace kcla::cli {

struct GenotypeInput {
  Grammar grammar;      ///< samples x variants, A1 counts (unless `blocked`)
  BlockGrammar blocks;  ///< the same in column blocks, from a block grammar file
  bool blocked = false;
  MissingCalls missing;
  PlinkTables tables;
  PlinkSamples samples;
  PlinkVariants variants;
  std::string output_base;  ///< FILESET (base name) or the grammar file without ".h5"
  bool from_grammar_file = false;

  std::int64_t num_samples() const { return blocked ? blocks.num_rows() : grammar.num_rows; }
  std::int64_t num_variants() const { return blocked ? blocks.num_cols() : grammar.num_cols; }
  /// f(grammar) or f(blocks): the operators and statistics take either.
  template <class F>
  decltype(auto) visit(F&& f) const {
    return blocked ? f(blocks) : f(grammar);
  }
};

/// `path`: a genotype grammar or block grammar file (by its HDF5 signature) or a PLINK
/// fileset. `threads`
/// are RePair's (0: all cores).
GenotypeInput load_genotype_input(const std::string& path, int threads);

/// What the commands say they did before the products ("read + compress", "read grammar").
const char* preparation_label(const GenotypeInput& input);

}  // namespace kcla::cli
