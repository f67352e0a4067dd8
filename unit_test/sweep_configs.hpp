// Every schedule x launch combination of the grammar sweep, and full arrays whose levels
// are merged into phases: the tests of kcla::multiply run each against their reference.
#pragma once

#include <kcla/grammar_matrix.hpp>
#include <kcla/sweep_cost_model.hpp>

#include <cstdint>

namespace kcla::test {

struct SweepConfig {
  SweepSchedule schedule;
  SweepLaunch launch;
  /// Full array: levels per phase (1: one phase per level). Above 1 the matrix gets a
  /// machine whose boundaries cost a second each, so the planner merges as many levels as
  /// allowed and every phase but the first has ceil(L / phase_levels) levels' worth of walks.
  std::int32_t phase_levels = 1;
  SlotOrder slot_order = SlotOrder::rule;
  /// automatic: what the grammar gets; always / never run on device spaces only (host
  /// spaces never build the terminal table, so there they would repeat another config).
  LeafTable leaf_table = LeafTable::automatic;
  /// SweepTuning::row_chunk_symbols; above 0 on device spaces only (64: the smallest
  /// chunks, so that most rows of a test matrix are cut and combined from partials).
  std::int64_t row_chunk_symbols = 0;
  /// SweepTuning::row_tickets; rows / chunks on device spaces only (the ticketed kernels'
  /// row phase with one team per row, or with chunks, whatever the test matrix's rows).
  RowTickets row_tickets = RowTickets::automatic;
};

inline constexpr SweepConfig kSweepConfigs[] = {
    {SweepSchedule::full_array, SweepLaunch::per_level},
    {SweepSchedule::full_array, SweepLaunch::graph},
    {SweepSchedule::full_array, SweepLaunch::fused},
    {SweepSchedule::layered, SweepLaunch::per_level},
    {SweepSchedule::layered, SweepLaunch::graph},
    {SweepSchedule::layered, SweepLaunch::fused},
    {SweepSchedule::full_array, SweepLaunch::per_level, 3},
    {SweepSchedule::full_array, SweepLaunch::graph, kMaxPhaseLevels},
    {SweepSchedule::full_array, SweepLaunch::fused, 2},
    {SweepSchedule::full_array, SweepLaunch::dataflow},
    {SweepSchedule::full_array, SweepLaunch::dataflow, 3, SlotOrder::first_use},
    {SweepSchedule::full_array, SweepLaunch::graph, 1, SlotOrder::first_use},
    {SweepSchedule::full_array, SweepLaunch::per_level, 1, SlotOrder::rule, LeafTable::always},
    {SweepSchedule::full_array, SweepLaunch::fused, 2, SlotOrder::rule, LeafTable::always},
    {SweepSchedule::full_array, SweepLaunch::dataflow, 3, SlotOrder::rule, LeafTable::always},
    {SweepSchedule::full_array, SweepLaunch::graph, 1, SlotOrder::rule, LeafTable::never},
    {SweepSchedule::full_array, SweepLaunch::dataflow, 1, SlotOrder::rule, LeafTable::never},
    {SweepSchedule::full_array, SweepLaunch::per_level, 1, SlotOrder::rule, LeafTable::automatic,
     64},
    {SweepSchedule::full_array, SweepLaunch::dataflow, 1, SlotOrder::rule, LeafTable::automatic,
     64},
    {SweepSchedule::full_array, SweepLaunch::fused, 1, SlotOrder::rule, LeafTable::automatic, 64},
    {SweepSchedule::full_array, SweepLaunch::dataflow, 1, SlotOrder::rule, LeafTable::automatic, 0,
     RowTickets::rows},
    {SweepSchedule::full_array, SweepLaunch::fused, 1, SlotOrder::rule, LeafTable::automatic, 0,
     RowTickets::rows},
    {SweepSchedule::full_array, SweepLaunch::dataflow, 1, SlotOrder::rule, LeafTable::automatic, 0,
     RowTickets::chunks},
};

/// Whether configuration c tests anything on ExecutionSpace (see SweepConfig::leaf_table,
/// row_chunk_symbols and row_tickets).
template <class ExecutionSpace>
bool runs_on(const SweepConfig& c) {
  return (c.leaf_table == LeafTable::automatic && c.row_chunk_symbols == 0 &&
          c.row_tickets == RowTickets::automatic) ||
         !Kokkos::SpaceAccessibility<Kokkos::HostSpace,
                                     typename ExecutionSpace::memory_space>::accessible;
}

/// The matrix options that run configuration c.
inline GrammarMatrixOptions sweep_options(const SweepConfig& c) {
  GrammarMatrixOptions options;
  options.schedule = c.schedule;
  options.tuning.max_phase_levels = c.phase_levels;  // whatever the machine's default
  options.tuning.slot_order = c.slot_order;
  options.tuning.leaf_table = c.leaf_table;
  options.tuning.row_chunk_symbols = c.row_chunk_symbols;
  options.tuning.row_tickets = c.row_tickets;
  if (c.phase_levels > 1) {
    auto machine = SweepMachine::for_host();
    machine.launch_seconds = machine.graph_node_seconds = machine.level_wait_seconds = 1.0;
    options.tuning.machine = machine;
  }
  return options;
}

/// Phases a configuration's full array must have for a grammar of depth L.
inline std::int32_t expected_phases(const SweepConfig& c, std::int32_t L) {
  return (L + c.phase_levels - 1) / c.phase_levels;
}

}  // namespace kcla::test
