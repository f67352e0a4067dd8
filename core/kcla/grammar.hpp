// A grammar-compressed sparse matrix: the straight-line program (C, R, V) of its CSRV
// string. Host-side; schedules and device matrices are built from it.
#pragma once

#include <kcla/csr_matrix.hpp>
#include <kcla/error.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace kcla {

/// Symbols are dense 32-bit ids: terminals first (0 .. num_terminals-1), then rules
/// (num_terminals + i is rule i). Rules are in topological order: a rule's children are
/// terminals or earlier rules.
using symbol_t = std::int32_t;

struct Grammar {
  std::int64_t num_rows = 0;
  std::int64_t num_cols = 0;

  /// V: the distinct nonzero values, in first-seen (row-major) order.
  std::vector<double> values;

  /// Terminal dictionary: terminal t is the entry values[terminal_values[t]] in column
  /// terminal_columns[t]. Ids are dense over the (value, column) pairs that occur, so
  /// nothing is ever packed as value * cols + column.
  std::vector<std::int32_t> terminal_values;
  std::vector<std::int32_t> terminal_columns;

  /// R: rule i expands to (rule_left[i], rule_right[i]).
  std::vector<symbol_t> rule_left;
  std::vector<symbol_t> rule_right;

  /// C, split into rows: row r is sequence[row_offsets[r] .. row_offsets[r+1]). A row with
  /// no symbols is an all-zero row.
  std::vector<std::int64_t> row_offsets{0};
  std::vector<symbol_t> sequence;

  std::int64_t num_terminals() const { return static_cast<std::int64_t>(terminal_values.size()); }
  std::int64_t num_rules() const { return static_cast<std::int64_t>(rule_left.size()); }
  std::int64_t num_symbols() const { return num_terminals() + num_rules(); }
  bool is_terminal(symbol_t s) const { return s < num_terminals(); }
  /// Index into rule_left/rule_right of a nonterminal symbol.
  std::int64_t rule_index(symbol_t s) const { return s - num_terminals(); }

  /// Throws InvalidArgument (prefixed with `what`) on the first inconsistency: sizes,
  /// indices out of range, rules that reference themselves or later rules.
  void validate(const std::string& what = "grammar") const;

  /// Expands every row: the exact CSR matrix the grammar encodes (columns ascending
  /// within a row when the grammar came from a CSRV string of a CSR matrix).
  CsrMatrix<double> decompress() const;

  /// Number of terminals each rule expands to (the length of its expansion).
  std::vector<std::int64_t> expansion_lengths() const;
};

}  // namespace kcla
