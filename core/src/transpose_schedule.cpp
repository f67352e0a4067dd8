#include <kcla/schedule.hpp>
#include <kcla/transpose_schedule.hpp>

#include <algorithm>
#include <limits>
#include <numeric>
#include <string>

namespace kcla {

namespace {

constexpr std::int64_t kMaxCode = std::numeric_limits<std::int32_t>::max();

void require(bool ok, const std::string& what) {
  if (!ok) throw InvalidArgument("transpose schedule: " + what);
}

}  // namespace

std::int64_t TransposeSchedule::bytes() const {
  return static_cast<std::int64_t>(in_offsets.size() * 8 + in_sources.size() * 4 +
                                   terminal_coefficients.size() * 8 + terminal_offsets.size() * 8 +
                                   terminal_sources.size() * 4 + column_offsets.size() * 8);
}

void TransposeSchedule::validate() const {
  const std::int64_t nodes = num_nodes();
  const std::int64_t terminals = static_cast<std::int64_t>(terminal_coefficients.size());
  require(num_rows >= 0 && num_cols >= 0 && depth >= 0, "negative extents");
  require(static_cast<std::int64_t>(level_offsets.size()) == depth + 1, "level_offsets size");
  require(level_offsets.front() == 0 && level_offsets.back() == nodes,
          "level_offsets do not cover the nodes");
  require(static_cast<std::int64_t>(in_offsets.size()) == nodes + 1 && in_offsets.front() == 0 &&
              in_offsets.back() == static_cast<std::int64_t>(in_sources.size()),
          "in_offsets do not cover in_sources");
  require(static_cast<std::int64_t>(terminal_offsets.size()) == terminals + 1 &&
              terminal_offsets.front() == 0 &&
              terminal_offsets.back() == static_cast<std::int64_t>(terminal_sources.size()),
          "terminal_offsets do not cover terminal_sources");
  require(static_cast<std::int64_t>(column_offsets.size()) == num_cols + 1 &&
              column_offsets.front() == 0 && column_offsets.back() == terminals,
          "column_offsets do not cover the terminals");
  auto check_source = [&](std::int32_t c, std::int64_t nodes_done) {
    if (c >= 0)
      require(c < nodes_done, "a node reads node " + std::to_string(c) + " before it is evaluated");
    else
      require(decode_row(c) < num_rows, "a reference names row " + std::to_string(decode_row(c)));
  };
  for (std::int32_t g = 1; g <= depth; ++g) {
    require(level_offsets[g] >= level_offsets[g - 1], "level_offsets decrease");
    for (auto n = level_offsets[g - 1]; n < level_offsets[g]; ++n) {
      require(in_offsets[n + 1] >= in_offsets[n], "in_offsets decrease");
      for (auto e = in_offsets[n]; e < in_offsets[n + 1]; ++e)
        check_source(in_sources[e], level_offsets[g - 1]);
    }
  }
  for (std::int64_t t = 0; t < terminals; ++t) {
    require(terminal_offsets[t + 1] >= terminal_offsets[t], "terminal_offsets decrease");
    for (auto e = terminal_offsets[t]; e < terminal_offsets[t + 1]; ++e)
      check_source(terminal_sources[e], nodes);
  }
  for (std::int64_t j = 0; j < num_cols; ++j)
    require(column_offsets[j + 1] >= column_offsets[j], "column_offsets decrease");
}

TransposeSchedule build_transpose_schedule(const Grammar& g) {
  g.validate();
  if (g.num_rows > kMaxCode || g.num_rules() >= kMaxCode)
    throw InvalidArgument("transpose schedule: " + std::to_string(g.num_rows) + " rows and " +
                          std::to_string(g.num_rules()) +
                          " rules do not fit 32-bit source codes; split the matrix into blocks");
  const auto levels = compute_levels(g);
  const std::int64_t rules = g.num_rules(), terminals = g.num_terminals();
  TransposeSchedule s;
  s.num_rows = g.num_rows;
  s.num_cols = g.num_cols;
  s.depth = levels.depth;

  // Nodes: rules grouped by level, the highest level first; rule order within a group.
  s.level_offsets.assign(static_cast<std::size_t>(s.depth) + 1, 0);
  for (std::int32_t grp = 1; grp <= s.depth; ++grp)
    s.level_offsets[grp] = s.level_offsets[grp - 1] + levels.rules_per_level[s.depth - grp + 1];
  std::vector<std::int64_t> next(s.level_offsets.begin(), s.level_offsets.end());
  std::vector<std::int32_t> node_of_rule(static_cast<std::size_t>(rules));
  s.node_rules.resize(static_cast<std::size_t>(rules));
  for (std::int64_t i = 0; i < rules; ++i) {
    const auto n = next[s.depth - levels.rule_level[i]]++;
    node_of_rule[i] = static_cast<std::int32_t>(n);
    s.node_rules[n] = i;
  }

  // Terminals in column order (stable in terminal id).
  std::vector<std::int64_t> by_column(static_cast<std::size_t>(terminals));
  std::iota(by_column.begin(), by_column.end(), 0);
  std::stable_sort(by_column.begin(), by_column.end(), [&](std::int64_t a, std::int64_t b) {
    return g.terminal_columns[a] < g.terminal_columns[b];
  });
  std::vector<std::int64_t> terminal_rank(static_cast<std::size_t>(terminals));
  s.terminal_coefficients.resize(static_cast<std::size_t>(terminals));
  s.column_offsets.assign(static_cast<std::size_t>(g.num_cols) + 1, 0);
  for (std::int64_t k = 0; k < terminals; ++k) {
    const auto t = by_column[k];
    terminal_rank[t] = k;
    s.terminal_coefficients[k] = g.values[g.terminal_values[t]];
    ++s.column_offsets[g.terminal_columns[t] + 1];
  }
  std::partial_sum(s.column_offsets.begin(), s.column_offsets.end(), s.column_offsets.begin());

  // References: counts, offsets, then the sources themselves (sorted per list).
  s.in_offsets.assign(static_cast<std::size_t>(rules) + 1, 0);
  s.terminal_offsets.assign(static_cast<std::size_t>(terminals) + 1, 0);
  auto count = [&](symbol_t sym) {
    if (sym < terminals)
      ++s.terminal_offsets[terminal_rank[sym] + 1];
    else
      ++s.in_offsets[node_of_rule[sym - terminals] + 1];
  };
  for (std::int64_t i = 0; i < rules; ++i) count(g.rule_left[i]), count(g.rule_right[i]);
  for (auto sym : g.sequence) count(sym);
  std::partial_sum(s.in_offsets.begin(), s.in_offsets.end(), s.in_offsets.begin());
  std::partial_sum(s.terminal_offsets.begin(), s.terminal_offsets.end(),
                   s.terminal_offsets.begin());
  s.in_sources.resize(static_cast<std::size_t>(s.in_offsets.back()));
  s.terminal_sources.resize(static_cast<std::size_t>(s.terminal_offsets.back()));
  std::vector<std::int64_t> in_fill(s.in_offsets.begin(), s.in_offsets.end() - 1);
  std::vector<std::int64_t> terminal_fill(s.terminal_offsets.begin(), s.terminal_offsets.end() - 1);
  auto place = [&](symbol_t sym, std::int32_t source) {
    if (sym < terminals)
      s.terminal_sources[terminal_fill[terminal_rank[sym]]++] = source;
    else
      s.in_sources[in_fill[node_of_rule[sym - terminals]]++] = source;
  };
  for (std::int64_t r = 0; r < g.num_rows; ++r)
    for (auto k = g.row_offsets[r]; k < g.row_offsets[r + 1]; ++k)
      place(g.sequence[k], encode_row(r));
  for (std::int64_t i = 0; i < rules; ++i) {
    place(g.rule_left[i], node_of_rule[i]);
    place(g.rule_right[i], node_of_rule[i]);
  }
  // Ascending sources: parents' values are read in address order (rows, whose codes are
  // negative, first).
  for (std::int64_t n = 0; n < rules; ++n)
    std::sort(s.in_sources.begin() + s.in_offsets[n], s.in_sources.begin() + s.in_offsets[n + 1]);
  for (std::int64_t k = 0; k < terminals; ++k)
    std::sort(s.terminal_sources.begin() + s.terminal_offsets[k],
              s.terminal_sources.begin() + s.terminal_offsets[k + 1]);
  return s;
}

}  // namespace kcla
