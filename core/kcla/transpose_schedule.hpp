// The schedule of the left product z = A^T y (z^T = y^T A) over a grammar: a top-down pass
// that pulls from parents instead of scattering to children, so it needs no atomics, gives
// the same result on every run, and serves every semiring.
//
// Each rule gets a node whose value is the combine of y over the rule's occurrences in the
// expansion of the rows: node(X) = combine over the references to X, a reference from row r
// contributing y[r] and one from a rule P contributing node(P). Nodes are evaluated level by
// level from the top (the highest level first), so a node's parents are done before it.
// Finally each column j combines leaf(coefficient(t), u(t)) over the terminals t of column
// j, u(t) the combine over t's references.
#pragma once

#include <kcla/grammar.hpp>

#include <cstdint>
#include <vector>

namespace kcla {

/// Source codes of a reference: c >= 0 node c, c < 0 row decode_row(c).
inline std::int32_t encode_row(std::int64_t row) {
  return -static_cast<std::int32_t>(row) - 1;
}
inline std::int64_t decode_row(std::int32_t code) {
  return -static_cast<std::int64_t>(code) - 1;
}

struct TransposeSchedule {
  std::int64_t num_rows = 0;
  std::int64_t num_cols = 0;
  std::int32_t depth = 0;
  /// depth + 1 entries: group g (1 .. depth) holds the nodes [off[g-1], off[g]), the rules of
  /// level depth - g + 1, in rule order. Group 1 is evaluated first.
  std::vector<std::int64_t> level_offsets;
  /// Rule index of each node (for tests and tools).
  std::vector<std::int64_t> node_rules;
  /// References to each node: in_sources[in_offsets[n] .. in_offsets[n+1]), ascending.
  std::vector<std::int64_t> in_offsets;
  std::vector<std::int32_t> in_sources;
  /// Terminals in column order: terminal k (k-th in that order) has coefficient
  /// terminal_coefficients[k] and its references are
  /// terminal_sources[terminal_offsets[k] .. terminal_offsets[k+1]).
  std::vector<double> terminal_coefficients;
  std::vector<std::int64_t> terminal_offsets;
  std::vector<std::int32_t> terminal_sources;
  /// Column j's terminals are [column_offsets[j], column_offsets[j+1]) in that order.
  std::vector<std::int64_t> column_offsets;

  std::int64_t num_nodes() const { return static_cast<std::int64_t>(node_rules.size()); }
  std::int64_t num_references() const {
    return static_cast<std::int64_t>(in_sources.size() + terminal_sources.size());
  }
  /// Bytes of the arrays a product reads.
  std::int64_t bytes() const;
  /// Checks sizes, ranges and the top-down order; throws InvalidArgument.
  void validate() const;
};

/// Builds the left-product schedule (validates the grammar first). Throws InvalidArgument
/// when rows or rules do not fit the 32-bit source codes.
TransposeSchedule build_transpose_schedule(const Grammar& g);

}  // namespace kcla
