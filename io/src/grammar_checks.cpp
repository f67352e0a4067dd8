#include "grammar_checks.hpp"

#include <kcla/error.hpp>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace kcla::detail {

void check_expansion_lengths(const std::string& rules_file, const std::string& rows_file,
                             const Grammar& g) {
  // Every length stays at most num_cols (or the check throws), so no sum below overflows.
  const auto cols = static_cast<std::uint64_t>(g.num_cols);
  const auto terminals = g.num_terminals();
  std::vector<std::uint64_t> length(static_cast<std::size_t>(g.num_rules()));
  auto length_of = [&](symbol_t s) -> std::uint64_t {
    return s < terminals ? 1 : length[static_cast<std::size_t>(s - terminals)];
  };
  auto too_long = [&](const std::string& file, const std::string& what) {
    throw FormatError(file, what + " expands to more than " + std::to_string(cols) +
                                " terminals, the column count (a matrix row has at most one "
                                "entry per column)");
  };
  for (std::int64_t i = 0; i < g.num_rules(); ++i) {
    length[i] = length_of(g.rule_left[i]) + length_of(g.rule_right[i]);
    if (length[i] > cols) too_long(rules_file, "rule " + std::to_string(i));
  }
  for (std::int64_t r = 0; r < g.num_rows; ++r) {
    std::uint64_t row = 0;
    for (auto k = g.row_offsets[r]; k < g.row_offsets[r + 1]; ++k) {
      row += length_of(g.sequence[k]);
      if (row > cols) too_long(rows_file, "row " + std::to_string(r));
    }
  }
}

}  // namespace kcla::detail
