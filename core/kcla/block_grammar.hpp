// A matrix split into rectangular blocks, each compressed into its own grammar: the form
// panels too large for one grammar take (variant ranges compressed independently, in
// parallel, by ranks), and the unit a distributed matrix hands to its ranks.
//
//   y = (+)_b  P_b^T  G_b  x[columns of b]        (+) the semiring's sum
//
// Blocks may leave parts of the matrix empty (those entries are the semiring's zero);
// where blocks overlap their products combine in the semiring's sum. The usual genotype split is
// column blocks spanning every row.
#pragma once

#include <kcla/csr_matrix.hpp>
#include <kcla/grammar.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace kcla {

/// Where one block sits: rows [row_begin, row_end) and columns [col_begin, col_end).
struct BlockExtent {
  std::int64_t row_begin = 0, row_end = 0;
  std::int64_t col_begin = 0, col_end = 0;
  std::int64_t rows() const { return row_end - row_begin; }
  std::int64_t cols() const { return col_end - col_begin; }
  bool operator==(const BlockExtent& o) const {
    return row_begin == o.row_begin && row_end == o.row_end && col_begin == o.col_begin &&
           col_end == o.col_end;
  }
};

/// The shape of a block matrix: every block's extent, in block order. A distributed matrix
/// keeps the whole layout on every rank and the grammars of its own blocks only.
struct BlockLayout {
  std::int64_t num_rows = 0;
  std::int64_t num_cols = 0;
  std::vector<BlockExtent> blocks;

  std::int64_t num_blocks() const { return static_cast<std::int64_t>(blocks.size()); }
  /// Throws InvalidArgument (prefixed with `what`) on a negative shape or a block outside
  /// the matrix.
  void validate(const std::string& what = "block layout") const;
  /// Column blocks of at most `block_cols` columns spanning every row.
  static BlockLayout column_blocks(std::int64_t num_rows, std::int64_t num_cols,
                                   std::int64_t block_cols);
};

struct BlockGrammar {
  BlockLayout layout;
  /// The blocks this object holds (all of them, or one rank's share), ascending, and their
  /// grammars: grammars[i] is block block_ids[i], shaped like its extent.
  std::vector<std::int64_t> block_ids;
  std::vector<Grammar> grammars;

  std::int64_t num_rows() const { return layout.num_rows; }
  std::int64_t num_cols() const { return layout.num_cols; }
  bool complete() const {
    return static_cast<std::int64_t>(block_ids.size()) == layout.num_blocks();
  }
  const BlockExtent& extent_of(std::size_t i) const { return layout.blocks[block_ids[i]]; }

  /// Layout, ids (ascending, in range) and each grammar's shape against its extent; each
  /// grammar validated. Throws InvalidArgument prefixed with `what`.
  void validate(const std::string& what = "block grammar") const;
  /// InvalidArgument prefixed with `what` unless every block is held (operations on the
  /// whole matrix: statistics, standardized products, association scans).
  void require_complete(const std::string& what) const;
  /// The matrix the held blocks encode (held blocks only; overlapping entries added, the
  /// plus-times reading).
  CsrMatrix<double> decompress() const;
  /// One block covering the whole matrix.
  static BlockGrammar single(Grammar g);
};

/// The blocks rank `rank` of `ranks` owns: a contiguous run of block ids, the runs
/// balanced by block area (rows x columns), every block owned by exactly one rank.
std::vector<std::int64_t> rank_blocks(const BlockLayout& layout, int rank, int ranks);

/// Columns [col_begin, col_end) of `a` as a matrix of their own (all rows; column indices
/// relative to col_begin).
CsrMatrix<double> column_slice(const CsrMatrix<double>& a, std::int64_t col_begin,
                               std::int64_t col_end);

}  // namespace kcla
