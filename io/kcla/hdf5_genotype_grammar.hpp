// A genotype grammar file: a grammar file (<kcla/hdf5_grammar.hpp>) that also carries what
// the genotype commands need besides the matrix — where calls were missing, which allele
// the values count, and the source fileset's .fam and .bim — so `kcla score/assoc/pca`
// start from it without reading the .bed or running RePair again (layout: docs/format.md).
// read_grammar_hdf5 reads such a file as a plain grammar. A block grammar file
// (<kcla/hdf5_block_grammar.hpp>) may carry the same part: BlockGrammarFileWriter::
// append_genotypes writes it, read_genotype_part_hdf5 reads it from either kind.
#pragma once

#include <kcla/config.hpp>
#include <kcla/grammar.hpp>
#include <kcla/missing_calls.hpp>
#include <kcla/packed_genotypes.hpp>  // CountedAllele
#include <kcla/plink.hpp>             // PlinkTables

#include <string>

namespace kcla {

constexpr const char* kGenotypeFormatName = "kcla-genotypes";
constexpr int kGenotypeFormatVersion = 1;

/// What a genotype file holds besides its matrix, for either file kind (a grammar file or
/// a block grammar file written by `kcla compress FILESET --block-cols N`).
struct GenotypePart {
  MissingCalls missing;
  CountedAllele counted_allele = CountedAllele::a1;
  PlinkTables tables;
};

struct GenotypeGrammar {
  /// Samples x variants, counts of `counted_allele`; a missing call is 0 and listed below.
  Grammar grammar;
  MissingCalls missing;
  CountedAllele counted_allele = CountedAllele::a1;
  /// The fileset's .fam (one line per row) and .bim (one line per column), verbatim.
  PlinkTables tables;
};

/// Checks that the parts agree (shapes, the tables' line counts) and writes them to `path`
/// atomically; InvalidArgument when they do not agree.
void write_genotype_grammar_hdf5(const std::string& path, const GenotypeGrammar& g);

/// Reads and validates a file written by write_genotype_grammar_hdf5. FormatError naming
/// the file when it is damaged, or when it holds a grammar without the genotype part (a
/// matrix compressed from another format or by a kcla older than this reader).
GenotypeGrammar read_genotype_grammar_hdf5(const std::string& path);

/// The genotype part of a grammar or block grammar file, validated against the file's
/// matrix shape; FormatError naming the file as read_genotype_grammar_hdf5.
GenotypePart read_genotype_part_hdf5(const std::string& path);

/// True when `path` is an HDF5 file with a genotype part (nothing else is checked).
bool is_genotype_grammar_hdf5(const std::string& path);

}  // namespace kcla
