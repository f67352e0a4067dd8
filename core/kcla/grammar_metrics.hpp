// Structure metrics of a grammar and the device bytes each schedule needs, next to CSR's.
#pragma once

#include <kcla/grammar.hpp>

#include <cstdint>
#include <iosfwd>

namespace kcla {

struct GrammarMetrics {
  std::int64_t rows = 0, cols = 0;
  std::int64_t nnz = 0;              ///< nonzeros of the matrix the grammar encodes
  std::int64_t num_values = 0;       ///< |V|
  std::int64_t num_terminals = 0;    ///< distinct (value, column) pairs
  std::int64_t rules = 0;            ///< |R|
  std::int64_t sequence = 0;         ///< |C|
  std::int32_t depth = 0;            ///< L
  std::int64_t max_level_rules = 0;  ///< widest level of the raw grammar (full-array)
  std::int64_t max_width = 0;        ///< w*: widest level after pass-through completion
  std::int64_t pass_throughs = 0;    ///< +pt

  /// Device bytes for products with `vectors` right-hand sides and values of
  /// `value_bytes` each (x and y excluded: every format needs them).
  /// CSR: int32 offsets and indices, values of the same type.
  std::int64_t csr_bytes(int value_bytes) const;
  /// Full array: rules (2 x int32), level offsets, C by rows (int32 + int64 offsets),
  /// terminal table, and |R| x vectors value slots.
  std::int64_t full_array_bytes(std::int64_t vectors, int value_bytes) const;
  /// Layered: rules + pass-throughs (2 x int32), emit lists (2 x int32 per C symbol),
  /// terminal table, and two frontier buffers of w* x vectors slots.
  std::int64_t layered_bytes(std::int64_t vectors, int value_bytes) const;
  /// nnz / (2|R| + |C|): how many nonzeros each stored symbol stands for.
  double compression_ratio() const;
};

GrammarMetrics compute_metrics(const Grammar& g);

struct GrammarLevels;  // schedule.hpp

namespace detail {
/// compute_metrics for a grammar already validated, with its levels (compute_levels(g)).
GrammarMetrics compute_metrics(const Grammar& g, const GrammarLevels& levels);
}  // namespace detail

/// A human-readable block: shape, sizes, depth, widths and bytes per schedule vs CSR.
void print_metrics(std::ostream& out, const GrammarMetrics& m, int value_bytes = 4);

}  // namespace kcla
