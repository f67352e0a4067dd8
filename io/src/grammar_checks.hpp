// Checks of a grammar read from a file that Grammar::validate does not make.
#pragma once

#include <kcla/grammar.hpp>

#include <string>

namespace kcla::detail {

/// Throws FormatError naming `rules_file` when a rule of `g` (already validated) expands to
/// more terminals than g.num_cols, or `rows_file` when a row does: a matrix row has at most
/// one entry per column, and a grammar whose rules double (64 rules expand to 2^64
/// terminals, from a few hundred bytes) overflows every length computed from it
/// (expansion_lengths, decompress).
void check_expansion_lengths(const std::string& rules_file, const std::string& rows_file,
                             const Grammar& g);

}  // namespace kcla::detail
