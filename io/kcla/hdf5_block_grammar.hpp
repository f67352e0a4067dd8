// HDF5 storage of block grammar matrices (layout: docs/format.md, "Block grammar files"):
// one group per block holding a grammar, and the block layout. Written incrementally,
// block by block as compression finishes them, into a temporary file renamed into place
// only by finish(): a crash or an error leaves no file that looks complete.
#pragma once

#include <kcla/block_grammar.hpp>
#include <kcla/config.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kcla {

struct GenotypePart;  // <kcla/hdf5_genotype_grammar.hpp>

constexpr const char* kBlockGrammarFormatName = "kcla-block-grammar";
constexpr int kBlockGrammarFormatVersion = 2;  // 2: checksummed HDF5 metadata (docs/format.md)

class BlockGrammarFileWriter {
 public:
  /// Creates a temporary file next to `path`; throws FormatError naming `path` on failure.
  explicit BlockGrammarFileWriter(const std::string& path);
  /// Removes the temporary file unless finish() succeeded.
  ~BlockGrammarFileWriter();
  BlockGrammarFileWriter(const BlockGrammarFileWriter&) = delete;
  BlockGrammarFileWriter& operator=(const BlockGrammarFileWriter&) = delete;

  /// Writes block `block_id` (each id once, any order) with its extent.
  void append(std::int64_t block_id, const BlockExtent& extent, const Grammar& g);
  /// Writes the genotype part (missing calls, counted allele, .fam/.bim) of a panel
  /// compressed from a PLINK fileset, once, before finish(); finish() checks its shape
  /// against the layout's. InvalidArgument when the part is inconsistent in itself.
  void append_genotypes(const GenotypePart& part);
  /// Writes the layout (every block of it must have been appended, with the same extent),
  /// closes the file and renames it onto `path`.
  void finish(const BlockLayout& layout);
  /// Bytes written so far (the temporary file's size).
  std::int64_t bytes_written() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

/// Writes a complete block grammar.
void write_block_grammar_hdf5(const std::string& path, const BlockGrammar& g);

/// True when `path` is a kcla block grammar file (false for anything else, even corrupt).
bool is_block_grammar_hdf5(const std::string& path);

/// The layout of a block grammar file; a single-grammar file reads as one block.
BlockLayout read_block_layout_hdf5(const std::string& path);

/// Reads and validates the blocks `block_ids` (ascending; empty: every block) of a block
/// grammar file, or the one block of a single-grammar file. Errors name the file and block.
BlockGrammar read_block_grammar_hdf5(const std::string& path,
                                     const std::vector<std::int64_t>& block_ids = {});

}  // namespace kcla
