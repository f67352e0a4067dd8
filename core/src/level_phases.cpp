#include <kcla/level_phases.hpp>

#include <algorithm>
#include <limits>

namespace kcla {

namespace {

/// Materialized rules and walked rules (with multiplicity) of every candidate phase
/// (floor, floor + span], span = 1 .. max_span.
struct PhaseCounts {
  std::int32_t max_span = 1;
  std::vector<double> materialized, walked;  // index floor * (max_span + 1) + span
  double& m(std::int32_t floor, std::int32_t span) {
    return materialized[static_cast<std::size_t>(floor) * (max_span + 1) + span];
  }
  double& w(std::int32_t floor, std::int32_t span) {
    return walked[static_cast<std::size_t>(floor) * (max_span + 1) + span];
  }
};

PhaseCounts count_phases(const Grammar& g, const GrammarLevels& levels, std::int32_t max_span) {
  const std::int32_t L = levels.depth;
  const auto terminals = g.num_terminals();
  const auto rules = g.num_rules();
  PhaseCounts c;
  c.max_span = max_span;
  c.materialized.assign(static_cast<std::size_t>(L + 1) * (max_span + 1), 0.0);
  c.walked.assign(c.materialized.size(), 0.0);
  // Highest phase top at which a rule still gets a slot: every top below its top reader;
  // any top when C reads it.
  const auto top_reader = detail::rule_top_readers(g, levels);
  std::vector<std::int32_t> last_top(static_cast<std::size_t>(rules));
  for (std::int64_t i = 0; i < rules; ++i) last_top[i] = top_reader[i] - 1;
  for (auto sym : g.sequence)
    if (sym >= terminals) last_top[sym - terminals] = L;
  // Rules by level.
  std::vector<std::int64_t> start(static_cast<std::size_t>(L) + 2, 0);
  for (std::int64_t i = 0; i < rules; ++i) ++start[levels.rule_level[i] + 1];
  for (std::int32_t k = 1; k <= L + 1; ++k) start[k] += start[k - 1];
  std::vector<std::int64_t> by_level(static_cast<std::size_t>(rules));
  {
    std::vector<std::int64_t> fill(start.begin(), start.end());
    for (std::int64_t i = 0; i < rules; ++i) by_level[fill[levels.rule_level[i]]++] = i;
  }
  // size[i]: rules walked to evaluate rule i in a phase with floor f (rule i included),
  // counted with multiplicity; levels f+1 .. f+max_span are refreshed for each floor.
  std::vector<double> size(static_cast<std::size_t>(rules), 0.0);
  std::vector<double> dm(static_cast<std::size_t>(max_span) + 2), dw(dm.size());
  for (std::int32_t floor = 0; floor < L; ++floor) {
    std::fill(dm.begin(), dm.end(), 0.0);
    std::fill(dw.begin(), dw.end(), 0.0);
    const std::int32_t ceiling = std::min(L, floor + max_span);
    for (std::int32_t level = floor + 1; level <= ceiling; ++level)
      for (auto k = start[level]; k < start[level + 1]; ++k) {
        const auto i = by_level[k];
        double s = 1;
        for (symbol_t child : {g.rule_left[i], g.rule_right[i]})
          if (child >= terminals && levels.rule_level[child - terminals] > floor)
            s += size[child - terminals];
        size[i] = s;
        // Materialized in (floor, top] for every top in [level, min(ceiling, last_top)].
        const std::int32_t top = std::min(ceiling, last_top[i]);
        if (top < level) continue;
        dm[level - floor] += 1, dm[top - floor + 1] -= 1;
        dw[level - floor] += s, dw[top - floor + 1] -= s;
      }
    double m = 0, w = 0;
    for (std::int32_t span = 1; span <= ceiling - floor; ++span) {
      m += dm[span], w += dw[span];
      c.m(floor, span) = m;
      c.w(floor, span) = w;
    }
  }
  return c;
}

/// count_phases for one level per phase, without its walks: every rule is walked alone
/// and materialized when anything reads it (a parent or C).
PhaseCounts count_single_levels(const Grammar& g, const GrammarLevels& levels) {
  const auto terminals = g.num_terminals();
  const auto rules = g.num_rules();
  std::vector<char> read(static_cast<std::size_t>(rules), 0);
  for (std::int64_t i = 0; i < rules; ++i)
    for (symbol_t child : {g.rule_left[i], g.rule_right[i]})
      if (child >= terminals) read[child - terminals] = 1;
  for (auto sym : g.sequence)
    if (sym >= terminals) read[sym - terminals] = 1;
  PhaseCounts c;
  c.max_span = 1;
  c.materialized.assign(static_cast<std::size_t>(levels.depth + 1) * 2, 0.0);
  c.walked.assign(c.materialized.size(), 0.0);
  for (std::int64_t i = 0; i < rules; ++i)
    if (read[i]) {
      c.m(levels.rule_level[i] - 1, 1) += 1;
      c.w(levels.rule_level[i] - 1, 1) += 1;
    }
  return c;
}

}  // namespace

LevelPhases plan_level_phases(const Grammar& g, const GrammarLevels& levels, std::int64_t vectors,
                              int value_bytes, SweepLaunch launch, const SweepMachine& machine,
                              std::int32_t max_phase_levels) {
  LevelPhases best;
  const std::int32_t L = levels.depth;
  if (L == 0) return best;
  const std::int32_t max_span = std::clamp(max_phase_levels, 1, kMaxPhaseLevels);
  auto counts = max_span == 1 ? count_single_levels(g, levels) : count_phases(g, levels, max_span);
  if (launch == SweepLaunch::automatic) launch = machine.default_launch;
  const double boundary = machine.boundary_seconds(launch);
  const double value = static_cast<double>(vectors) * value_bytes;
  // A phase reads two child codes per walked rule, a leaf (a slot below the phase or a
  // terminal: B values plus ~4 bytes of table) per walked rule plus one per tree, and
  // writes the slots of its materialized rules.
  auto bytes = [&](double m, double w) { return 8 * w + (w + m) * (4 + value) + m * value; };
  // Shortest path over the levels: cost[t] = the best phases covering levels 1 .. t.
  std::vector<double> cost(static_cast<std::size_t>(L) + 1, std::numeric_limits<double>::max());
  std::vector<std::int32_t> from(static_cast<std::size_t>(L) + 1, 0);
  cost[0] = 0;
  for (std::int32_t top = 1; top <= L; ++top)
    for (std::int32_t span = 1; span <= std::min(max_span, top); ++span) {
      const std::int32_t floor = top - span;
      const double b = bytes(counts.m(floor, span), counts.w(floor, span));
      const double c = cost[floor] + boundary + (span - 1) * machine.walk_level_seconds +
                       b / machine.bandwidth_bytes_per_second +
                       machine.gather_seconds(counts.m(floor, span) + counts.w(floor, span),
                                              vectors, value_bytes);
      if (c < cost[top]) cost[top] = c, from[top] = floor;
    }
  for (std::int32_t top = L; top > 0; top = from[top]) best.tops.push_back(top);
  std::reverse(best.tops.begin(), best.tops.end());
  best.seconds = cost[L];
  std::int32_t floor = 0;
  for (auto top : best.tops) {
    best.bytes_moved += bytes(counts.m(floor, top - floor), counts.w(floor, top - floor));
    best.computed_slots += static_cast<std::int64_t>(counts.m(floor, top - floor));
    best.walked_rules += static_cast<std::int64_t>(counts.w(floor, top - floor));
    floor = top;
  }
  return best;
}

}  // namespace kcla
