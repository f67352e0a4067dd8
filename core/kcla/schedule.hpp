// Sweep schedules of a grammar: the order in which a right product evaluates rules.
//
// Levels: lvl(terminal) = 0, lvl(rule) = 1 + max(lvl(children)); rules of one level are
// an antichain and can be evaluated in parallel. Both schedules store, per rule, two
// signed child codes:  c >= 0  a rule's slot (full array) or its position in the
// previous frontier (layered);  c == kNoChild  the semiring zero;  c < 0 otherwise
// terminal -(c+1), evaluated in the sweep as leaf(V[value(t)], x[column(t)]).
#pragma once

#include <kcla/grammar.hpp>

#include <cstdint>
#include <limits>
#include <vector>

namespace kcla {

constexpr std::int32_t kNoChild = std::numeric_limits<std::int32_t>::min();
inline std::int32_t encode_terminal(std::int64_t terminal) {
  return -static_cast<std::int32_t>(terminal) - 1;
}
inline std::int64_t decode_terminal(std::int32_t code) {
  return -static_cast<std::int64_t>(code) - 1;
}

/// Level of every rule (index i = rule i) and the depth L = max level (0: no rules).
struct GrammarLevels {
  std::vector<std::int32_t> rule_level;
  std::int32_t depth = 0;
  std::vector<std::int64_t> rules_per_level;  ///< depth + 1 entries, [0] = 0
};
GrammarLevels compute_levels(const Grammar& g);

/// Terminal dictionary as the sweeps read it: coefficient V[value(t)] and column.
struct TerminalTable {
  std::vector<double> coefficients;
  std::vector<std::int32_t> columns;
};
TerminalTable terminal_table(const Grammar& g);

/// Most levels one phase of the full array may merge: a walk inside a phase keeps at most
/// kMaxPhaseLevels + 1 pending codes (the kernels' fixed stack).
constexpr std::int32_t kMaxPhaseLevels = 8;

/// Full-array schedule: one value slot per rule, slots ordered by level (then by rule
/// index, so child reads stay monotone). The sequence C is kept row by row, each symbol
/// as a child code; y[r] = combine over its row. No pass-throughs; live set = |R| slots.
///
/// Phases: consecutive levels may be merged into one phase, so a sweep pays one launch
/// (or level hand-off) per phase instead of one per level. A phase computes only its
/// materialized rules, those read by C or by a later phase; each combines the leaves of
/// its subtree down to the phase's floor, walking the rules of its own phase instead of
/// reading their slots. level_offsets bounds the phases over the materialized slots
/// [0, computed_slots()); the rules only walked get codes after them, so a child code at
/// or above its phase's first slot means "walk". One level per phase (the default) is the
/// plain full array: every rule materialized, nothing walked.
struct FullArraySchedule {
  std::int64_t num_rows = 0;
  std::int64_t num_cols = 0;
  std::int32_t depth = 0;                   ///< phases (= levels without merging)
  std::vector<std::int32_t> phase_tops;     ///< top level of each phase, ascending (depth entries)
  std::vector<std::int64_t> level_offsets;  ///< depth+1 entries: phase k = [off[k-1], off[k])
  std::vector<std::int32_t> left, right;    ///< per slot, materialized then walked
  std::vector<std::int64_t> row_offsets;    ///< num_rows + 1
  std::vector<std::int32_t> row_symbols;    ///< |C| child codes
  TerminalTable terminals;

  std::int64_t num_slots() const { return static_cast<std::int64_t>(left.size()); }
  /// Slots that hold values (the rest are walked inside their phase).
  std::int64_t computed_slots() const { return level_offsets.empty() ? 0 : level_offsets.back(); }
};
/// How the full array orders the slots of one level: by rule index (RePair's order of
/// creation), or by first use, the order in which a reading of C row by row and then of
/// the levels from the top first meets each rule, so that rules read one after another
/// share cache lines and sectors.
enum class SlotOrder { rule, first_use };

/// phase_tops: the top level of each phase, strictly ascending, ending at the grammar's
/// depth, each phase at most kMaxPhaseLevels levels; empty means one phase per level.
FullArraySchedule build_full_array_schedule(const Grammar& g,
                                            const std::vector<std::int32_t>& phase_tops = {},
                                            SlotOrder order = SlotOrder::rule);

/// Layered schedule (the seed's): pass-through completion makes the grammar properly
/// layered (every rule child one level below its parent), so the sweep needs only two
/// frontier buffers of max_width slots. A root of C is emitted into y when its level is
/// computed: emit list k holds (frontier position at level k, row) in row order; emit
/// list 0 holds the terminals that stand directly in C (position = terminal id).
struct LayeredSchedule {
  std::int64_t num_rows = 0;
  std::int64_t num_cols = 0;
  std::int32_t depth = 0;
  std::vector<std::int64_t> level_offsets;  ///< depth+1: level k nodes = [off[k-1], off[k])
  std::vector<std::int32_t> left, right;    ///< child codes into frontier k-1 / terminals
  std::vector<std::int64_t> emit_offsets;   ///< depth+2: list k = [off[k], off[k+1])
  std::vector<std::int32_t> emit_positions;
  std::vector<std::int32_t> emit_rows;
  std::int64_t max_width = 0;      ///< w*: widest level after completion
  std::int64_t pass_throughs = 0;  ///< +pt: identity nodes added by completion
  TerminalTable terminals;

  std::int64_t num_nodes() const { return static_cast<std::int64_t>(left.size()); }
  /// Checks proper layering and index ranges; throws InvalidArgument.
  void validate() const;
};
LayeredSchedule build_layered_schedule(const Grammar& g);

namespace detail {
/// Highest level that reads each rule as a child (0: none; C does not count).
std::vector<std::int32_t> rule_top_readers(const Grammar& g, const GrammarLevels& levels);
/// build_full_array_schedule for a grammar already validated, with its levels
/// (compute_levels(g)): what GrammarMatrix builds, each analysis done once.
FullArraySchedule build_full_array_schedule(const Grammar& g, const GrammarLevels& levels,
                                            const std::vector<std::int32_t>& phase_tops,
                                            SlotOrder order = SlotOrder::rule);
}  // namespace detail

/// w* and +pt of the layered schedule, counted without building it (what the cost model
/// needs: a matrix that runs the full array never pays for the layered arrays).
struct LayeredWidth {
  std::int64_t max_width = 0;
  std::int64_t pass_throughs = 0;
};
LayeredWidth layered_width(const Grammar& g, const GrammarLevels& levels);

}  // namespace kcla
