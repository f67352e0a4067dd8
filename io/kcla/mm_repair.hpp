// Files of the public mm-repair tools (the CPU reference of the grammar-compressed
// matrix papers): BASE.val, BASE.vc.R and BASE.vc.C, imported as a kcla::Grammar.
//
//   BASE.val   float64 distinct nonzero values
//   BASE.vc.R  int32 alpha, then int32 pairs (left, right): rule i is symbol alpha + i,
//              rules in topological order; a symbol t in [1, alpha) is a terminal for
//              value index (t-1) / cols and column (t-1) % cols
//   BASE.vc.C  int32 final sequence; 0 ends a row
// All little-endian. The column count is not stored in the files.
#pragma once

#include <kcla/grammar.hpp>

#include <cstdint>
#include <string>

namespace kcla {

/// Imports the three files of BASE (e.g. "M.csv" for M.csv.val, M.csv.vc.R, M.csv.vc.C)
/// for a matrix of `num_cols` columns. Terminal ids are dense over the terminal codes
/// that occur (ascending code, i.e. by value index then column); unused codes below
/// alpha are dropped; rule i becomes symbol num_terminals + i. Rows = number of 0s.
/// Validates every code (value index < number of values, rule children below their own
/// symbol, sequence symbols in range, the sequence ends with a 0) and throws FormatError
/// naming the file on the first violation; InvalidArgument for num_cols outside
/// [0, 2^31-1].
Grammar read_mm_repair(const std::string& base, std::int64_t num_cols);

/// Writes `grammar` as BASE.val, BASE.vc.R and BASE.vc.C (each atomically: temporary
/// file, then rename), alpha = largest terminal code used + 1. Throws FormatError when the
/// format cannot hold the grammar: values x columns >= 2^31 (the 32-bit terminal code
/// would overflow) or more than 2^31-1 symbols; InvalidArgument for an invalid grammar.
void write_mm_repair(const std::string& base, const Grammar& grammar);

}  // namespace kcla
