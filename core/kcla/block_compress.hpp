// Streaming block compression: a panel read column block by column block from a
// ColumnBlockSource, each block compressed by RePair on a pool of threads, and every
// finished grammar handed on in column order (to a file writer, or kept in memory).
// Memory stays bounded by the blocks in flight, which a byte budget limits.
#pragma once

#include <kcla/block_grammar.hpp>
#include <kcla/column_block_source.hpp>
#include <kcla/config.hpp>

#include <cstdint>
#include <functional>

#if KCLA_HAVE_MPI
#include <mpi.h>
#endif

namespace kcla {

struct BlockCompressProgress {
  std::int64_t blocks_done = 0;
  std::int64_t columns_done = 0;    ///< columns of the blocks handed on
  std::int64_t columns_total = -1;  ///< the source's num_cols() (-1: not known yet)
  std::int64_t nonzeros_done = 0;
  std::int64_t grammar_symbols_done = 0;  ///< |R| + |C| of the blocks handed on
  std::int64_t bytes_in_flight = 0;       ///< the budget's current use
  double seconds = 0;
};

struct BlockCompressOptions {
  /// Columns per block; 0 picks about 2^26 entries (rows x columns) per block.
  std::int64_t block_cols = 0;
  /// Compressing threads; 0 uses the hardware concurrency.
  int threads = 0;
  /// Bytes the blocks in flight may take together (their CSR, RePair's working arrays
  /// at kRepairBytesPerNonzero, the grammars waiting to be handed on); 0 means no limit.
  /// A block is read only while the budget has room for one as large as the largest so
  /// far, and compressed only once its own charge fits (so memory stays within the limit
  /// plus one block's CSR); one block alone above the budget is an error that names it.
  std::int64_t memory_limit_bytes = 0;
  /// Called (serialised) after every block handed on.
  std::function<void(const BlockCompressProgress&)> progress;
};

struct BlockCompressStats {
  double seconds = 0;
  std::int64_t blocks = 0;
  std::int64_t nonzeros = 0;
  std::int64_t peak_bytes_in_flight = 0;  ///< the budget's high-water mark
  int threads = 0;
};

/// Budget bytes one nonzero of a block in flight is charged: CSR input (12), CSRV (4),
/// RePair's working arrays (sequence, occurrence store, records, pair table: 6-15 per
/// nonzero measured, docs/benchmarks.md), and slack for the allocator.
constexpr std::int64_t kRepairBytesPerNonzero = 40;

/// The block width `options` gives for a panel of `num_rows` rows.
std::int64_t default_block_cols(std::int64_t num_rows, const BlockCompressOptions& options);

/// Compresses every block of `source`; `sink(block_id, extent, grammar)` receives each one
/// in column order from one thread at a time. Returns the layout (every block spans all
/// rows). Exceptions from the source, RePair or the sink stop the work and propagate.
BlockLayout compress_blocks(
    ColumnBlockSource& source, const BlockCompressOptions& options,
    const std::function<void(std::int64_t, const BlockExtent&, Grammar&&)>& sink,
    BlockCompressStats* stats = nullptr);

/// The same, keeping every grammar in memory.
BlockGrammar compress_blocks(ColumnBlockSource& source, const BlockCompressOptions& options = {},
                             BlockCompressStats* stats = nullptr);

#if KCLA_HAVE_MPI
/// Collective over `comm`: each rank compresses the column blocks rank_blocks() gives it
/// (source.skip_columns to its first column, then its run of blocks) and returns its
/// share of the block grammar; the layout (blocks of default_block_cols) is the same on
/// every rank. The source must know num_cols() in advance. Stats are this rank's.
BlockGrammar compress_blocks(MPI_Comm comm, ColumnBlockSource& source,
                             const BlockCompressOptions& options = {},
                             BlockCompressStats* stats = nullptr);
#endif

/// A CSR matrix already in memory as a ColumnBlockSource (for tests and small inputs).
class CsrColumnBlockSource : public ColumnBlockSource {
 public:
  explicit CsrColumnBlockSource(const CsrMatrix<double>& a, std::string name = "matrix")
      : a_(a), name_(std::move(name)) {}
  std::int64_t num_rows() const override { return a_.num_rows; }
  std::int64_t num_cols() const override { return a_.num_cols; }
  std::string name() const override { return name_; }
  bool next_block(std::int64_t max_cols, CsrMatrix<double>& block) override;
  void skip_columns(std::int64_t count) override { next_col_ += std::max<std::int64_t>(0, count); }

 private:
  const CsrMatrix<double>& a_;
  std::string name_;
  std::int64_t next_col_ = 0;
};

}  // namespace kcla
