#include <kcla/schedule.hpp>

#include <kcla/error.hpp>

#include <algorithm>
#include <string>

namespace kcla {

GrammarLevels compute_levels(const Grammar& g) {
  GrammarLevels levels;
  const auto terminals = g.num_terminals();
  levels.rule_level.resize(static_cast<std::size_t>(g.num_rules()));
  auto level_of = [&](symbol_t s) { return s < terminals ? 0 : levels.rule_level[s - terminals]; };
  for (std::int64_t i = 0; i < g.num_rules(); ++i) {
    const std::int32_t l = 1 + std::max(level_of(g.rule_left[i]), level_of(g.rule_right[i]));
    levels.rule_level[i] = l;
    levels.depth = std::max(levels.depth, l);
  }
  levels.rules_per_level.assign(static_cast<std::size_t>(levels.depth) + 1, 0);
  for (auto l : levels.rule_level) ++levels.rules_per_level[l];
  return levels;
}

TerminalTable terminal_table(const Grammar& g) {
  TerminalTable t;
  t.columns = g.terminal_columns;
  t.coefficients.resize(g.terminal_values.size());
  for (std::size_t i = 0; i < g.terminal_values.size(); ++i)
    t.coefficients[i] = g.values[g.terminal_values[i]];
  return t;
}

namespace detail {

std::vector<std::int32_t> rule_top_readers(const Grammar& g, const GrammarLevels& levels) {
  const auto terminals = g.num_terminals();
  std::vector<std::int32_t> top(static_cast<std::size_t>(g.num_rules()), 0);
  for (std::int64_t i = 0; i < g.num_rules(); ++i)
    for (symbol_t c : {g.rule_left[i], g.rule_right[i]})
      if (c >= terminals) top[c - terminals] = std::max(top[c - terminals], levels.rule_level[i]);
  return top;
}

}  // namespace detail

namespace {
// Rules in the order a top-down reading first meets them: C row by row, then each level
// from the top, its rules in that order, meeting their children. A level's slots in this
// order put the rules that a row (or a run of parents) reads one after another next to
// each other, so the sweep's gathers share cache lines and sectors.
std::vector<std::int64_t> first_use_order(const Grammar& g, const GrammarLevels& levels) {
  const auto terminals = g.num_terminals();
  const auto rules = g.num_rules();
  std::vector<std::vector<std::int64_t>> by_level(static_cast<std::size_t>(levels.depth) + 1);
  std::vector<char> met(static_cast<std::size_t>(rules), 0);
  auto meet = [&](symbol_t sym) {
    if (sym < terminals) return;
    const auto r = sym - terminals;
    if (met[r]) return;
    met[r] = 1;
    by_level[levels.rule_level[r]].push_back(r);
  };
  for (auto sym : g.sequence) meet(sym);
  for (std::int32_t l = levels.depth; l >= 1; --l)
    for (std::size_t k = 0; k < by_level[l].size(); ++k) {
      const auto r = by_level[l][k];
      meet(g.rule_left[r]);
      meet(g.rule_right[r]);
    }
  std::vector<std::int64_t> order;
  order.reserve(static_cast<std::size_t>(rules));
  for (std::int32_t l = 1; l <= levels.depth; ++l)
    order.insert(order.end(), by_level[l].begin(), by_level[l].end());
  for (std::int64_t r = 0; r < rules; ++r)
    if (!met[r]) order.push_back(r);  // read by nothing: any slot
  return order;
}
}  // namespace

FullArraySchedule build_full_array_schedule(const Grammar& g,
                                            const std::vector<std::int32_t>& phase_tops,
                                            SlotOrder order) {
  g.validate();
  return detail::build_full_array_schedule(g, compute_levels(g), phase_tops, order);
}

FullArraySchedule detail::build_full_array_schedule(const Grammar& g, const GrammarLevels& levels,
                                                    const std::vector<std::int32_t>& phase_tops,
                                                    SlotOrder order) {
  const auto terminals = g.num_terminals();
  const auto rules = g.num_rules();
  FullArraySchedule s;
  s.num_rows = g.num_rows;
  s.num_cols = g.num_cols;
  if (phase_tops.empty()) {
    for (std::int32_t k = 1; k <= levels.depth; ++k) s.phase_tops.push_back(k);
  } else {
    s.phase_tops = phase_tops;
    std::int32_t below = 0;
    for (auto top : phase_tops) {
      if (top <= below || top - below > kMaxPhaseLevels)
        throw InvalidArgument("full-array schedule: phase tops must ascend by 1 to " +
                              std::to_string(kMaxPhaseLevels) + " levels (got " +
                              std::to_string(top) + " after " + std::to_string(below) + ")");
      below = top;
    }
    if (below != levels.depth)
      throw InvalidArgument("full-array schedule: the last phase top is " + std::to_string(below) +
                            ", the grammar's depth " + std::to_string(levels.depth));
  }
  s.depth = static_cast<std::int32_t>(s.phase_tops.size());
  std::vector<std::int32_t> phase_of(static_cast<std::size_t>(levels.depth) + 1, 0);
  for (std::int32_t p = 0, level = 1; p < s.depth; ++p)
    for (; level <= s.phase_tops[p]; ++level) phase_of[level] = p;
  // A rule is materialized when C reads it or a rule of a later phase does.
  const auto top_reader = detail::rule_top_readers(g, levels);
  std::vector<char> materialized(static_cast<std::size_t>(rules), 0);
  for (auto sym : g.sequence)
    if (sym >= terminals) materialized[sym - terminals] = 1;
  for (std::int64_t i = 0; i < rules; ++i)
    if (top_reader[i] > 0 && phase_of[top_reader[i]] > phase_of[levels.rule_level[i]])
      materialized[i] = 1;
  // Counting sort by (walked?, phase, level); within a level, rule order or first use.
  const std::int32_t L = levels.depth;
  auto bucket = [&](std::int64_t i) {
    return (materialized[i] ? 0 : L) + levels.rule_level[i] - 1;
  };
  std::vector<std::int64_t> start(2 * static_cast<std::size_t>(L) + 1, 0);
  for (std::int64_t i = 0; i < rules; ++i) ++start[bucket(i) + 1];
  for (std::size_t k = 1; k < start.size(); ++k) start[k] += start[k - 1];
  s.level_offsets.assign(static_cast<std::size_t>(s.depth) + 1, 0);
  for (std::int32_t p = 0; p < s.depth; ++p) s.level_offsets[p + 1] = start[s.phase_tops[p]];
  if (rules >= std::numeric_limits<std::int32_t>::max())
    throw InvalidArgument("full-array schedule: more than 2^31-1 rules");
  std::vector<std::int32_t> slot(static_cast<std::size_t>(rules));
  if (order == SlotOrder::first_use) {
    for (auto i : first_use_order(g, levels))
      slot[i] = static_cast<std::int32_t>(start[bucket(i)]++);
  } else {
    for (std::int64_t i = 0; i < rules; ++i)
      slot[i] = static_cast<std::int32_t>(start[bucket(i)]++);
  }
  auto code = [&](symbol_t c) { return c < terminals ? encode_terminal(c) : slot[c - terminals]; };
  s.left.resize(slot.size());
  s.right.resize(slot.size());
  for (std::int64_t i = 0; i < rules; ++i) {
    s.left[slot[i]] = code(g.rule_left[i]);
    s.right[slot[i]] = code(g.rule_right[i]);
  }
  s.row_offsets = g.row_offsets;
  s.row_symbols.resize(g.sequence.size());
  for (std::size_t k = 0; k < g.sequence.size(); ++k) s.row_symbols[k] = code(g.sequence[k]);
  s.terminals = terminal_table(g);
  return s;
}

LayeredWidth layered_width(const Grammar& g, const GrammarLevels& levels) {
  const auto top_reader = detail::rule_top_readers(g, levels);
  // Level k holds its rules plus one pass-through per rule of a lower level l read above
  // k (l < k < top reader): a difference array over the levels.
  std::vector<std::int64_t> change(static_cast<std::size_t>(levels.depth) + 2, 0);
  LayeredWidth w;
  for (std::int64_t i = 0; i < g.num_rules(); ++i) {
    const std::int32_t l = levels.rule_level[i];
    ++change[l];
    --change[l + 1];
    if (top_reader[i] > l + 1) {
      ++change[l + 1];
      --change[top_reader[i]];
      w.pass_throughs += top_reader[i] - l - 1;
    }
  }
  std::int64_t width = 0;
  for (std::int32_t k = 1; k <= levels.depth; ++k) {
    width += change[k];
    w.max_width = std::max(w.max_width, width);
  }
  return w;
}

LayeredSchedule build_layered_schedule(const Grammar& g) {
  g.validate();
  const auto levels = compute_levels(g);
  const auto terminals = g.num_terminals();
  const auto rules = g.num_rules();
  const std::int32_t depth = levels.depth;
  auto level_of = [&](symbol_t s) { return s < terminals ? 0 : levels.rule_level[s - terminals]; };

  const auto top_reader = detail::rule_top_readers(g, levels);

  // Level sizes: rules plus the pass-throughs carrying a value up to its top reader.
  std::vector<std::int64_t> width(static_cast<std::size_t>(depth) + 1, 0);
  std::vector<std::int64_t> chain_offset(static_cast<std::size_t>(rules) + 1, 0);
  for (std::int64_t i = 0; i < rules; ++i) {
    ++width[levels.rule_level[i]];
    const std::int32_t chain = std::max(0, top_reader[i] - levels.rule_level[i] - 1);
    for (std::int32_t k = 1; k <= chain; ++k) ++width[levels.rule_level[i] + k];
    chain_offset[i + 1] = chain_offset[i] + chain;
  }
  LayeredSchedule s;
  s.num_rows = g.num_rows;
  s.num_cols = g.num_cols;
  s.depth = depth;
  s.pass_throughs = chain_offset[rules];
  s.level_offsets.assign(static_cast<std::size_t>(depth) + 1, 0);
  for (std::int32_t k = 1; k <= depth; ++k) {
    s.level_offsets[k] = s.level_offsets[k - 1] + width[k];
    s.max_width = std::max(s.max_width, width[k]);
  }
  if (s.max_width >= std::numeric_limits<std::int32_t>::max())
    throw InvalidArgument("layered schedule: a level wider than 2^31-1");

  // Frontier positions: a level's rules first (rule order), then its pass-throughs
  // (ordered by the rule they carry).
  std::vector<std::int64_t> fill(static_cast<std::size_t>(depth) + 1, 0);
  std::vector<std::int32_t> position(static_cast<std::size_t>(rules));
  for (std::int64_t i = 0; i < rules; ++i)
    position[i] = static_cast<std::int32_t>(fill[levels.rule_level[i]]++);
  std::vector<std::int32_t> chain_position(static_cast<std::size_t>(s.pass_throughs));
  for (std::int64_t i = 0; i < rules; ++i)
    for (std::int64_t k = 0; k < chain_offset[i + 1] - chain_offset[i]; ++k)
      chain_position[chain_offset[i] + k] =
          static_cast<std::int32_t>(fill[levels.rule_level[i] + 1 + k]++);
  // Position of rule i's value in frontier `level` (its own level or a pass-through).
  auto position_at = [&](std::int64_t i, std::int32_t level) {
    const std::int32_t own = levels.rule_level[i];
    return level == own ? position[i] : chain_position[chain_offset[i] + (level - own - 1)];
  };
  auto code = [&](symbol_t c, std::int32_t parent_level) {
    return c < terminals ? encode_terminal(c) : position_at(c - terminals, parent_level - 1);
  };

  s.left.assign(static_cast<std::size_t>(s.level_offsets[depth]), kNoChild);
  s.right.assign(s.left.size(), kNoChild);
  for (std::int64_t i = 0; i < rules; ++i) {
    const std::int32_t l = levels.rule_level[i];
    const auto at = s.level_offsets[l - 1] + position[i];
    s.left[at] = code(g.rule_left[i], l);
    s.right[at] = code(g.rule_right[i], l);
    const std::int64_t chain = chain_offset[i + 1] - chain_offset[i];
    for (std::int64_t k = 0; k < chain; ++k) {
      const std::int32_t pt_level = l + 1 + static_cast<std::int32_t>(k);
      const auto pt_at = s.level_offsets[pt_level - 1] + chain_position[chain_offset[i] + k];
      s.left[pt_at] = position_at(i, pt_level - 1);  // identity of the value one level down
    }
  }

  // Emit lists: C's symbols bucketed by their level (terminals: level 0).
  s.emit_offsets.assign(static_cast<std::size_t>(depth) + 2, 0);
  for (auto sym : g.sequence) ++s.emit_offsets[level_of(sym) + 1];
  for (std::int32_t k = 1; k <= depth + 1; ++k) s.emit_offsets[k] += s.emit_offsets[k - 1];
  std::vector<std::int64_t> emit_fill(s.emit_offsets.begin(), s.emit_offsets.end() - 1);
  s.emit_positions.resize(g.sequence.size());
  s.emit_rows.resize(g.sequence.size());
  for (std::int64_t r = 0; r < g.num_rows; ++r)
    for (auto k = g.row_offsets[r]; k < g.row_offsets[r + 1]; ++k) {
      const symbol_t sym = g.sequence[k];
      const std::int32_t l = level_of(sym);
      const auto at = emit_fill[l]++;
      s.emit_positions[at] =
          sym < terminals ? static_cast<std::int32_t>(sym) : position[sym - terminals];
      s.emit_rows[at] = static_cast<std::int32_t>(r);
    }
  s.terminals = terminal_table(g);
  return s;
}

void LayeredSchedule::validate() const {
  auto fail = [](const std::string& m) { throw InvalidArgument("layered schedule: " + m); };
  if (level_offsets.size() != static_cast<std::size_t>(depth) + 1) fail("level_offsets size");
  const auto num_terminals = static_cast<std::int64_t>(terminals.columns.size());
  for (std::int32_t k = 1; k <= depth; ++k) {
    const auto below = k >= 2 ? level_offsets[k - 1] - level_offsets[k - 2] : 0;
    for (auto n = level_offsets[k - 1]; n < level_offsets[k]; ++n)
      for (auto c : {left[n], right[n]}) {
        if (c == kNoChild) continue;
        if (c >= 0 && c >= below)
          fail("node " + std::to_string(n) + " at level " + std::to_string(k) + " reads position " +
               std::to_string(c) + " of a level with " + std::to_string(below) +
               " nodes (not properly layered)");
        if (c < 0 && decode_terminal(c) >= num_terminals) fail("terminal out of range");
      }
  }
  for (std::int32_t k = 0; k <= depth; ++k)
    for (auto e = emit_offsets[k]; e < emit_offsets[k + 1]; ++e) {
      const auto width = k == 0 ? num_terminals : level_offsets[k] - level_offsets[k - 1];
      if (emit_positions[e] < 0 || emit_positions[e] >= width) fail("emit position out of range");
      if (emit_rows[e] < 0 || emit_rows[e] >= num_rows) fail("emit row out of range");
      if (e > emit_offsets[k] && emit_rows[e] < emit_rows[e - 1])
        fail("emit list not in row order");
    }
}

}  // namespace kcla
