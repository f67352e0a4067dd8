// A matrix delivered in column blocks (variant ranges of a genotype panel), left to
// right: the streaming input of block compression (kcla::compress_blocks). Memory stays
// bounded by one block per reader call, whatever the panel's size.
#pragma once

#include <kcla/csr_matrix.hpp>

#include <cstdint>
#include <string>

namespace kcla {

class ColumnBlockSource {
 public:
  virtual ~ColumnBlockSource() = default;

  /// Rows of every block (samples).
  virtual std::int64_t num_rows() const = 0;
  /// Columns of the whole matrix, or -1 while a reader cannot know it before the end
  /// (then it is the sum of the blocks' widths once next_block has returned false).
  virtual std::int64_t num_cols() const = 0;
  /// Where the data comes from, for messages ("panel.bed", "mosaic generator").
  virtual std::string name() const = 0;

  /// Fills `block` with the next at most `max_cols` columns (num_rows x width, column
  /// indices relative to the block, strictly increasing within a row) and returns true;
  /// returns false, leaving `block` empty, when every column has been delivered. Blocks
  /// are delivered in column order. Throws FormatError naming the source on bad input.
  virtual bool next_block(std::int64_t max_cols, CsrMatrix<double>& block) = 0;

  /// Moves past the next `count` columns without delivering them (a rank starting at its
  /// share). The default reads and drops them; sources that can seek override it.
  virtual void skip_columns(std::int64_t count) {
    CsrMatrix<double> dropped;
    while (count > 0 && next_block(count, dropped)) count -= dropped.num_cols;
  }
};

}  // namespace kcla
