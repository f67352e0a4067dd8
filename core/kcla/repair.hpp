// RePair (Larsson & Moffat 1999) over the CSRV string of a sparse matrix, never pairing
// across a row delimiter: kcla's own implementation.
#pragma once

#include <kcla/csrv.hpp>
#include <kcla/grammar.hpp>

#include <cstdint>
#include <functional>

namespace kcla {

struct RepairProgress {
  std::int64_t blocks_done = 0;
  std::int64_t blocks_total = 0;
  std::int64_t rules = 0;             ///< rules created so far (all blocks)
  std::int64_t symbols_replaced = 0;  ///< pair occurrences replaced so far
  std::int64_t input_symbols = 0;     ///< nonzeros of the whole input
};

struct RepairOptions {
  /// Rows per independently compressed block; 0 compresses the matrix as one block (best
  /// compression). Blocks run in parallel and their rules are merged (identical rules are
  /// shared) into one grammar forest.
  std::int64_t block_rows = 0;
  /// Worker threads for row blocks; 0 uses the hardware concurrency.
  int threads = 0;
  /// Called from the compressing threads (serialised) about every 2^20 replacements and
  /// when a block finishes.
  std::function<void(const RepairProgress&)> progress;
};

struct RepairStats {
  double seconds = 0;
  std::int64_t blocks = 0;
  std::int64_t rules_before_merge = 0;  ///< sum of the blocks' rules
  /// Peak bytes of RePair's own working arrays (sequence, occurrence store, pair table,
  /// records, queue, and the initial pair count's table) summed over the blocks in flight:
  /// the documented memory per input symbol.
  std::int64_t working_bytes = 0;
};

/// Compresses a CSRV encoding. Rows must have strictly increasing columns (no symbol can
/// then repeat inside a row, which keeps every pair occurrence disjoint). Deterministic:
/// the same input and block_rows give the same grammar for any thread count.
Grammar repair(const CsrvEncoding& encoding, const RepairOptions& options = {},
               RepairStats* stats = nullptr);

/// encode_csrv + repair.
Grammar compress(const CsrMatrix<double>& matrix, const RepairOptions& options = {},
                 RepairStats* stats = nullptr);

}  // namespace kcla
