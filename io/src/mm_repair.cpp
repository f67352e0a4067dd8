#include <kcla/mm_repair.hpp>

#include <kcla/detail/atomic_file.hpp>
#include <kcla/detail/memory_limit.hpp>
#include "binary_file.hpp"
#include "grammar_checks.hpp"

#include <algorithm>
#include <limits>
#include <new>

namespace kcla {

namespace {

constexpr std::int64_t int32_max = std::numeric_limits<std::int32_t>::max();

/// mm-repair's symbol space: 0 delimits rows, [1, alpha) are terminal codes, and
/// [alpha, alpha + rules) are rules.
struct SymbolSpace {
  std::int64_t alpha = 0;
  std::int64_t num_rules = 0;
  std::int64_t num_values = 0;
  std::int64_t num_cols = 0;

  bool is_terminal(std::int64_t s) const { return s >= 1 && s < alpha; }
  /// A terminal code whose value index exists.
  bool valid_terminal(std::int64_t s) const {
    return is_terminal(s) && num_cols > 0 && (s - 1) / num_cols < num_values;
  }
  std::string describe_terminal(std::int64_t s) const {
    return "terminal code " + std::to_string(s) + " (value index " +
           std::to_string(num_cols > 0 ? (s - 1) / num_cols : -1) + ", but there are " +
           std::to_string(num_values) + " values at " + std::to_string(num_cols) + " columns)";
  }
};

}  // namespace

Grammar read_mm_repair(const std::string& base, std::int64_t num_cols) try {
  if (num_cols < 0 || num_cols > int32_max)
    throw InvalidArgument("read_mm_repair(" + base + "): num_cols " + std::to_string(num_cols) +
                          " outside [0, 2^31-1]");
  const std::string val_path = base + ".val", rules_path = base + ".vc.R",
                    seq_path = base + ".vc.C";
  Grammar g;
  g.num_cols = num_cols;
  g.values = detail::read_array_file<double>(val_path);
  const auto rules_file = detail::read_array_file<std::int32_t>(rules_path);
  if (rules_file.empty() || rules_file.size() % 2 != 1)
    throw FormatError(rules_path, "expected int32 alpha then int32 pairs, but the file holds " +
                                      std::to_string(rules_file.size()) + " int32 values");
  SymbolSpace space;
  space.alpha = rules_file[0];
  space.num_rules = static_cast<std::int64_t>(rules_file.size() / 2);
  space.num_values = static_cast<std::int64_t>(g.values.size());
  space.num_cols = num_cols;
  if (space.alpha < 1)
    throw FormatError(rules_path, "alpha " + std::to_string(space.alpha) + " < 1");
  if (space.alpha + space.num_rules - 1 > int32_max)
    throw FormatError(rules_path, "alpha + number of rules exceeds the 32-bit symbol range");
  const std::int32_t* rule_pairs = rules_file.data() + 1;

  // Validate the rules, collecting the terminal codes that occur.
  std::vector<std::int32_t> used_codes;
  for (std::int64_t i = 0; i < space.num_rules; ++i) {
    const std::int64_t self = space.alpha + i;
    for (int side = 0; side < 2; ++side) {
      const std::int64_t child = rule_pairs[2 * i + side];
      const std::string where = "rule " + std::to_string(i) + " (symbol " + std::to_string(self) +
                                ", int32 #" + std::to_string(1 + 2 * i + side) + ")";
      if (child < 1 || child >= self)
        throw FormatError(rules_path, where + " has child " + std::to_string(child) +
                                          ", which is neither a terminal nor an earlier rule");
      if (space.is_terminal(child)) {
        if (!space.valid_terminal(child))
          throw FormatError(rules_path, where + " has invalid " + space.describe_terminal(child));
        used_codes.push_back(static_cast<std::int32_t>(child));
      }
    }
  }

  // Validate the sequence.
  const auto sequence = detail::read_array_file<std::int32_t>(seq_path);
  const std::int64_t num_symbols = space.alpha + space.num_rules;
  for (std::size_t k = 0; k < sequence.size(); ++k) {
    const std::int64_t s = sequence[k];
    if (s == 0) continue;
    const std::string where = "symbol #" + std::to_string(k);
    if (s < 0 || s >= num_symbols)
      throw FormatError(seq_path, where + " is " + std::to_string(s) + ", outside [0, " +
                                      std::to_string(num_symbols) + ")");
    if (space.is_terminal(s)) {
      if (!space.valid_terminal(s))
        throw FormatError(seq_path, where + " is an invalid " + space.describe_terminal(s));
      used_codes.push_back(static_cast<std::int32_t>(s));
    }
  }
  if (!sequence.empty() && sequence.back() != 0)
    throw FormatError(seq_path, "the sequence does not end with a 0 (row delimiter): truncated?");

  // Dense terminal dictionary over the codes that occur, in ascending code order.
  std::sort(used_codes.begin(), used_codes.end());
  used_codes.erase(std::unique(used_codes.begin(), used_codes.end()), used_codes.end());
  const auto num_terminals = static_cast<std::int64_t>(used_codes.size());
  g.terminal_values.resize(used_codes.size());
  g.terminal_columns.resize(used_codes.size());
  for (std::size_t t = 0; t < used_codes.size(); ++t) {
    g.terminal_values[t] = static_cast<std::int32_t>((used_codes[t] - 1) / num_cols);
    g.terminal_columns[t] = static_cast<std::int32_t>((used_codes[t] - 1) % num_cols);
  }
  auto to_kcla = [&](std::int64_t s) -> symbol_t {
    if (s >= space.alpha) return static_cast<symbol_t>(num_terminals + (s - space.alpha));
    return static_cast<symbol_t>(
        std::lower_bound(used_codes.begin(), used_codes.end(), static_cast<std::int32_t>(s)) -
        used_codes.begin());
  };

  g.rule_left.resize(static_cast<std::size_t>(space.num_rules));
  g.rule_right.resize(static_cast<std::size_t>(space.num_rules));
  for (std::int64_t i = 0; i < space.num_rules; ++i) {
    g.rule_left[i] = to_kcla(rule_pairs[2 * i]);
    g.rule_right[i] = to_kcla(rule_pairs[2 * i + 1]);
  }
  g.sequence.reserve(sequence.size());
  for (const std::int32_t s : sequence) {
    if (s == 0) {
      g.row_offsets.push_back(static_cast<std::int64_t>(g.sequence.size()));
    } else {
      g.sequence.push_back(to_kcla(s));
    }
  }
  g.num_rows = static_cast<std::int64_t>(g.row_offsets.size()) - 1;
  detail::check_expansion_lengths(rules_path, seq_path, g);
  return g;
} catch (const std::bad_alloc&) {  // even a file too large for memory gives an error naming it
  detail::throw_out_of_memory(base);
}

void write_mm_repair(const std::string& base, const Grammar& grammar) {
  grammar.validate("write_mm_repair(" + base + ")");
  const auto num_values = static_cast<std::int64_t>(grammar.values.size());
  if (grammar.num_cols > 0 && num_values > int32_max / grammar.num_cols)
    throw FormatError(base,
                      "the mm-repair format cannot hold this matrix: its 32-bit terminal "
                      "code value * columns + column + 1 overflows, since " +
                          std::to_string(num_values) + " values x " +
                          std::to_string(grammar.num_cols) + " columns >= 2^31");
  const auto num_terminals = grammar.num_terminals();
  std::vector<std::int32_t> code(static_cast<std::size_t>(num_terminals));
  std::int64_t max_code = 0;
  for (std::int64_t t = 0; t < num_terminals; ++t) {
    code[t] =
        static_cast<std::int32_t>(std::int64_t(grammar.terminal_values[t]) * grammar.num_cols +
                                  grammar.terminal_columns[t] + 1);
    max_code = std::max<std::int64_t>(max_code, code[t]);
  }
  const std::int64_t alpha = max_code + 1;
  // alpha itself and every rule symbol alpha + i must be int32 too.
  if (alpha + std::max<std::int64_t>(grammar.num_rules(), 1) - 1 > int32_max)
    throw FormatError(base, "the mm-repair format cannot hold this grammar: alpha " +
                                std::to_string(alpha) + " + " +
                                std::to_string(grammar.num_rules()) + " rules exceed 2^31-1");
  auto to_mm = [&](symbol_t s) -> std::int32_t {
    return grammar.is_terminal(s) ? code[s]
                                  : static_cast<std::int32_t>(alpha + grammar.rule_index(s));
  };

  std::vector<std::int32_t> rules;
  rules.reserve(1 + 2 * static_cast<std::size_t>(grammar.num_rules()));
  rules.push_back(static_cast<std::int32_t>(alpha));
  for (std::int64_t i = 0; i < grammar.num_rules(); ++i) {
    rules.push_back(to_mm(grammar.rule_left[i]));
    rules.push_back(to_mm(grammar.rule_right[i]));
  }
  std::vector<std::int32_t> sequence;
  sequence.reserve(grammar.sequence.size() + static_cast<std::size_t>(grammar.num_rows));
  for (std::int64_t r = 0; r < grammar.num_rows; ++r) {
    for (auto k = grammar.row_offsets[r]; k < grammar.row_offsets[r + 1]; ++k)
      sequence.push_back(to_mm(grammar.sequence[k]));
    sequence.push_back(0);
  }

  detail::AtomicFile val_file(base + ".val"), rules_file(base + ".vc.R"), seq_file(base + ".vc.C");
  val_file.write(grammar.values.data(), grammar.values.size() * sizeof(double));
  rules_file.write(rules.data(), rules.size() * sizeof(std::int32_t));
  seq_file.write(sequence.data(), sequence.size() * sizeof(std::int32_t));
  val_file.commit();
  rules_file.commit();
  seq_file.commit();
}

}  // namespace kcla
