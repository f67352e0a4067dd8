#include <kcla/config.hpp>
#include <kcla/error.hpp>
#include <kcla/level_phases.hpp>
#include <kcla/sweep_cost_model.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <optional>

namespace kcla {

const char* to_string(SweepSchedule s) {
  switch (s) {
    case SweepSchedule::full_array:
      return "full_array";
    case SweepSchedule::layered:
      return "layered";
    default:
      return "auto";
  }
}

const char* to_string(SweepLaunch l) {
  switch (l) {
    case SweepLaunch::per_level:
      return "per_level";
    case SweepLaunch::fused:
      return "fused";
    case SweepLaunch::graph:
      return "graph";
    case SweepLaunch::dataflow:
      return "dataflow";
    default:
      return "auto";
  }
}

SweepSchedule parse_schedule(const std::string& name) {
  if (name == "auto" || name == "automatic") return SweepSchedule::automatic;
  if (name == "full_array" || name == "full") return SweepSchedule::full_array;
  if (name == "layered") return SweepSchedule::layered;
  throw InvalidArgument("unknown schedule '" + name + "' (auto, full_array, layered)");
}

SweepMachine SweepMachine::for_gpu() {
  SweepMachine m;
  // Measured on the H200 (docs/gpu-notes.md): the captured graph beats per-level
  // launches by 1.2-1.65x on the scrm panel and beats the fused kernel on scrm (1.37x) and
  // EUR_subset (1.49x); the fused kernel wins only on the smallest panel (mouse, 1.14x).
  m.default_launch = SweepLaunch::graph;
  // Merged phases won 3-14 % at 64 vectors and lost up to 2x at one (docs/level-phases.md):
  // a walk's dependent loads cost more than the graph node they save when nothing
  // amortizes them.
  m.max_phase_levels = kMaxPhaseLevels;
  m.phase_min_vectors = 32;
  // The dataflow kernel beat the graph 1.2-2.1x on three of four panels (run 59, an H100)
  // and lost on the one with 25,000-symbol rows; the model tells them apart.
  m.dataflow_candidate = true;
  m.terminal_table = true;
  // A scattered read's sector through L2: fit to the four panels' single-vector products
  // (docs/level-phases.md, "The cost model's gathers").
  m.gather_sector_seconds = 8e-12;
  return m;
}

SweepMachine SweepMachine::for_host() {
  SweepMachine m;
  m.bandwidth_bytes_per_second = 1.0e10;  // two cores gathering from DRAM
  m.launch_seconds = 2.0e-6;
  m.level_wait_seconds = 1.0e-6;
  m.default_launch = SweepLaunch::fused;
  return m;
}

SweepMachine SweepMachine::for_default_execution_space() {
#if KCLA_HAVE_CUDA
  return for_gpu();
#else
  return for_host();
#endif
}

namespace {

SweepPrediction predict_launch(const GrammarMetrics& m, SweepSchedule schedule, SweepLaunch launch,
                               std::int64_t vectors, int value_bytes, const SweepMachine& machine,
                               const LevelPhases* phases) {
  SweepPrediction p;
  p.schedule = schedule;
  p.launch = launch == SweepLaunch::automatic ? machine.default_launch : launch;
  p.vectors = vectors;
  const double B = static_cast<double>(vectors), vb = value_bytes;
  const bool one_kernel = p.launch == SweepLaunch::fused || p.launch == SweepLaunch::dataflow;
  // Dataflow (full array, values of at most 4 bytes): each slot value is a 64-bit word.
  const bool tagged = p.launch == SweepLaunch::dataflow && schedule == SweepSchedule::full_array &&
                      value_bytes <= 4;
  // Dataflow row tickets: one team of 256 threads per row, steps of 256 (symbol, vector)
  // items through the mean row.
  const double row_steps = tagged ? static_cast<double>(m.sequence) /
                                        static_cast<double>(std::max<std::int64_t>(1, m.rows)) * B /
                                        256 * machine.dataflow_row_step_seconds
                                  : 0.0;
  // Each node reads two child codes and two child values, and writes one value; a leaf
  // child also reads its coefficient and column.
  const double leaf_reads = 2.0 * static_cast<double>(m.nnz > 0 ? m.num_terminals : 0) * (4 + vb);
  // The full array's terminal table: one slot per terminal and vector.
  const std::int64_t table_slots = machine.terminal_table && m.depth >= 1 && m.num_terminals > 0 &&
                                           m.sequence >= 2 * m.num_terminals
                                       ? m.num_terminals
                                       : 0;
  // Scattered reads move whole sectors: a slot read per symbol of C and per child (two
  // per rule; the phases count their own), 8-byte slots under dataflow.
  const int slot_bytes = tagged ? 8 : value_bytes;
  if (schedule == SweepSchedule::full_array && phases != nullptr) {
    const double phase_gathers = static_cast<double>(phases->walked_rules + phases->computed_slots);
    // The level phases as planned, then the row phase: one more boundary.
    const double rows_bytes =
        static_cast<double>(m.sequence) * (4 + B * vb) + static_cast<double>(m.rows) * (8 + B * vb);
    p.phases = static_cast<std::int32_t>(phases->tops.size());
    p.bytes_moved = phases->bytes_moved + rows_bytes;
    p.workspace_bytes = (phases->computed_slots + table_slots) * vectors * value_bytes;
    p.static_bytes = m.full_array_bytes(vectors, value_bytes) - m.rules * vectors * value_bytes;
    p.launches = one_kernel ? 1 : p.phases + 1;
    p.seconds = phases->seconds + machine.boundary_seconds(p.launch) +
                rows_bytes / machine.bandwidth_bytes_per_second +
                (p.launch == SweepLaunch::per_level ? 0.0 : machine.launch_seconds) + row_steps +
                machine.gather_seconds(static_cast<double>(m.sequence), vectors, slot_bytes);
    if (tagged) {  // tagged slots: 8 bytes per value, written once and read
      const double extra = static_cast<double>(p.workspace_bytes) * (8.0 / vb - 1);
      p.workspace_bytes *= 8 / value_bytes;
      p.bytes_moved += 2 * extra;
      p.seconds += 2 * extra / machine.bandwidth_bytes_per_second;
      // The phases' gathers were planned for plain slots: the tagged ones are wider.
      p.seconds += machine.gather_seconds(phase_gathers, vectors, 8) -
                   machine.gather_seconds(phase_gathers, vectors, value_bytes);
    }
    return p;
  }
  if (schedule == SweepSchedule::full_array) {
    p.phases = m.depth;
    const double nodes = static_cast<double>(m.rules);
    p.bytes_moved = nodes * (8 + 3 * B * vb) + static_cast<double>(m.sequence) * (4 + B * vb) +
                    static_cast<double>(m.rows) * (8 + B * vb) + leaf_reads;
    p.workspace_bytes = (m.rules + table_slots) * vectors * value_bytes;
    p.static_bytes = m.full_array_bytes(vectors, value_bytes) - m.rules * vectors * value_bytes;
    p.launches = one_kernel ? 1 : m.depth + 1;
    if (tagged) {
      p.bytes_moved += nodes * B * (8 - vb) * 3;
      p.workspace_bytes = (m.rules + table_slots) * vectors * 8;
    }
  } else {
    const double nodes = static_cast<double>(m.rules + m.pass_throughs);
    // Emits are read-modify-write atomics into y.
    p.bytes_moved = nodes * (8 + 3 * B * vb) + static_cast<double>(m.sequence) * (8 + 3 * B * vb) +
                    static_cast<double>(m.rows) * B * vb + leaf_reads;
    p.workspace_bytes = 2 * m.max_width * vectors * value_bytes;
    p.static_bytes = m.layered_bytes(vectors, value_bytes) - p.workspace_bytes;
    p.launches = one_kernel ? 1 : m.depth + 2;
    p.phases = m.depth;
  }
  const double child_reads =
      2.0 * static_cast<double>(schedule == SweepSchedule::full_array ? m.rules
                                                                      : m.rules + m.pass_throughs);
  p.seconds =
      p.bytes_moved / machine.bandwidth_bytes_per_second + row_steps +
      machine.gather_seconds(child_reads + static_cast<double>(m.sequence), vectors, slot_bytes);
  if (one_kernel)
    p.seconds += machine.launch_seconds + (m.depth + 1) * machine.boundary_seconds(p.launch);
  else if (p.launch == SweepLaunch::graph)
    p.seconds +=
        machine.launch_seconds + static_cast<double>(p.launches) * machine.graph_node_seconds;
  else
    p.seconds += static_cast<double>(p.launches) * machine.launch_seconds;
  return p;
}

}  // namespace

SweepPrediction predict_sweep(const GrammarMetrics& m, SweepSchedule schedule, SweepLaunch launch,
                              std::int64_t vectors, int value_bytes, const SweepMachine& machine,
                              const LevelPhases* phases) {
  if (schedule == SweepSchedule::automatic)
    throw InvalidArgument("predict_sweep: choose a concrete schedule");
  auto p = predict_launch(m, schedule, launch, vectors, value_bytes, machine, phases);
  if (launch == SweepLaunch::automatic && machine.dataflow_candidate &&
      schedule == SweepSchedule::full_array && value_bytes <= 4 &&
      p.launch != SweepLaunch::dataflow) {
    // Phases planned for the default launch: the same phases, each boundary a hop instead.
    std::optional<LevelPhases> hops;
    if (phases != nullptr) {
      hops = *phases;
      hops->seconds += static_cast<double>(phases->tops.size()) *
                       (machine.dataflow_hop_seconds - machine.boundary_seconds(p.launch));
    }
    const auto d = predict_launch(m, schedule, SweepLaunch::dataflow, vectors, value_bytes, machine,
                                  hops ? &*hops : nullptr);
    if (d.seconds < p.seconds) return d;
  }
  return p;
}

BaselinePrediction predict_baselines(const GrammarMetrics& m, int value_bytes,
                                     const SweepMachine& machine) {
  const double rows = static_cast<double>(m.rows), cols = static_cast<double>(m.cols);
  const double io = (rows + cols) * value_bytes;
  BaselinePrediction p;
  p.csr_seconds =
      machine.vendor_call_seconds +
      (static_cast<double>(m.csr_bytes(value_bytes)) + io) / machine.csr_bytes_per_second;
  p.dense_seconds = machine.vendor_call_seconds +
                    (rows * cols * value_bytes + io) / machine.dense_bytes_per_second;
  p.packed_seconds =
      machine.vendor_call_seconds + (rows * cols / 4 + io) / machine.packed_bytes_per_second;
  return p;
}

SweepPrediction choose_sweep(const GrammarMetrics& m, std::int64_t vectors, int value_bytes,
                             SweepLaunch launch, std::int64_t workspace_budget_bytes,
                             const SweepMachine& machine, const LevelPhases* phases) {
  const auto full =
      predict_sweep(m, SweepSchedule::full_array, launch, vectors, value_bytes, machine, phases);
  // The layered schedule has no dataflow form (its frontiers are reused level by level):
  // it would run the fused one.
  const SweepLaunch resolved = launch == SweepLaunch::automatic ? machine.default_launch : launch;
  const auto layered = predict_sweep(
      m, SweepSchedule::layered, resolved == SweepLaunch::dataflow ? SweepLaunch::fused : launch,
      vectors, value_bytes, machine);
  const bool full_fits =
      workspace_budget_bytes <= 0 || full.workspace_bytes <= workspace_budget_bytes;
  const bool layered_fits =
      workspace_budget_bytes <= 0 || layered.workspace_bytes <= workspace_budget_bytes;
  if (full_fits && layered_fits) return full.seconds <= layered.seconds ? full : layered;
  if (full_fits) return full;
  if (layered_fits) return layered;
  return full.workspace_bytes <= layered.workspace_bytes ? full : layered;
}

}  // namespace kcla
