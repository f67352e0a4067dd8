// Level phases of the full-array sweep: which consecutive levels to merge, so that a
// product pays fewer dependent launches (or level hand-offs) for a few more bytes read.
// Chosen by the cost model from the grammar's structure before any device work.
#pragma once

#include <kcla/grammar.hpp>
#include <kcla/schedule.hpp>
#include <kcla/sweep_cost_model.hpp>

#include <cstdint>
#include <vector>

namespace kcla {

struct LevelPhases {
  std::vector<std::int32_t> tops;   ///< top level of each phase (build_full_array_schedule)
  double bytes_moved = 0;           ///< of the level phases: codes, walked rules, leaves, slots
  double seconds = 0;               ///< of the level phases: boundaries, walks and bytes
  std::int64_t computed_slots = 0;  ///< rules that get a value slot (read by C or a later phase)
  /// Rules evaluated per product, repeats counted (a rule walked by several trees of its
  /// phase counts each time); equals computed_slots with one level per phase.
  std::int64_t walked_rules = 0;
};

/// The phases with the smallest predicted time, each at most max_phase_levels levels
/// (clamped to [1, kMaxPhaseLevels]), for products with `vectors` right-hand sides of
/// `value_bytes` each, launched as `launch` (automatic: the machine's default).
LevelPhases plan_level_phases(const Grammar& g, const GrammarLevels& levels, std::int64_t vectors,
                              int value_bytes, SweepLaunch launch, const SweepMachine& machine,
                              std::int32_t max_phase_levels);

}  // namespace kcla
