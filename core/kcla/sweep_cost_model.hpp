// Predicts bytes moved, launches and time of one grammar sweep from structure metrics
// alone, so a schedule can be chosen before any device work (and the prediction reported
// next to the measurement).
#pragma once

#include <kcla/grammar_metrics.hpp>
#include <kcla/schedule.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <optional>
#include <string>

namespace kcla {

enum class SweepSchedule { automatic, full_array, layered };
/// per_level: one launch per level (+ emit/rows); graph: the same launches captured once
/// as a Kokkos (CUDA) graph and replayed; fused: one ticketed kernel in which each level's
/// chunks wait for the level below; dataflow (full array only): one ticketed kernel in
/// which each value waits for its own children, no level waits (on a device, for values
/// of at most 4 bytes; wider values run the graph there, host execution spaces their fused
/// form).
enum class SweepLaunch { automatic, per_level, graph, fused, dataflow };

const char* to_string(SweepSchedule s);
const char* to_string(SweepLaunch l);
SweepSchedule parse_schedule(const std::string& name);  ///< "auto", "full_array", "layered"

struct SweepMachine {
  double bandwidth_bytes_per_second = 3.0e12;  ///< achievable for gathers (H200 ~ 4.2 TB/s copy)
  /// Calibrated on the H200 (docs/gpu-notes.md runs 7-8, scrm2504: 31 dependent kernels
  /// took 0.190 ms per level-launched product and 0.115 ms as a replayed graph, against
  /// ~0.017 ms of memory traffic).
  double launch_seconds = 5.5e-6;      ///< one kernel launch, stream-ordered
  double level_wait_seconds = 1.5e-6;  ///< one level hand-off inside a fused kernel
  double graph_node_seconds = 3.2e-6;  ///< one dependent kernel node of a replayed graph
  /// Dataflow: what each level of the longest chain of dependent slots adds (a store
  /// becoming visible to a polling reader on another multiprocessor), and what each step of
  /// a row ticket adds (one team reduces a whole row, team-size symbols per step; rows of
  /// 25,000 symbols serialize there). Fit to one H100 run (docs/level-phases.md, run 59).
  double dataflow_hop_seconds = 2.0e-6;
  double dataflow_row_step_seconds = 1.0e-6;
  /// A scattered read (a rule's child value, a symbol of C's slot or terminal) moves whole
  /// 32-byte sectors through L2 whatever it uses: what one such sector costs the machine
  /// (0: no such term; host cores' bandwidth above is already a gather rate). Fit to the
  /// GPU runs (docs/level-phases.md, "The cost model's gathers").
  double gather_sector_seconds = 0;
  /// What `gathers` scattered reads of `vectors` values of `value_bytes` each cost.
  double gather_seconds(double gathers, std::int64_t vectors, int value_bytes) const {
    const std::int64_t sectors = (vectors * value_bytes + 31) / 32;
    return gathers * static_cast<double>(sectors) * gather_sector_seconds;
  }
  /// Whether SweepLaunch::automatic may choose the dataflow launch for a full array (when
  /// its prediction beats default_launch's and values have at most 4 bytes).
  bool dataflow_candidate = false;
  /// Full array: most levels one phase may merge (1: none; at most kMaxPhaseLevels), the
  /// smallest batch for which phases are planned at all, and what each merged level adds to
  /// its phase (one more dependent load in every walk; fit to batched products).
  std::int32_t max_phase_levels = 1;
  std::int64_t phase_min_vectors = 1;
  double walk_level_seconds = 0.7e-6;
  /// What one level (or phase) boundary costs under a launch form (not automatic).
  double boundary_seconds(SweepLaunch launch) const {
    switch (launch) {
      case SweepLaunch::fused:
        return level_wait_seconds;
      case SweepLaunch::dataflow:
        return dataflow_hop_seconds;
      case SweepLaunch::graph:
        return graph_node_seconds;
      default:
        return launch_seconds;
    }
  }
  /// The bound on levels per phase for products of `vectors` vectors.
  std::int32_t phase_levels_for(std::int64_t vectors) const {
    return vectors >= phase_min_vectors ? max_phase_levels : 1;
  }
  /// What a user could run instead, as call overhead plus bytes over an achieved rate (fit
  /// to the H200's single-vector figures of docs/baselines.md: cuSPARSE CSR SpMV with
  /// preprocessing, cuBLAS SGEMV, kcla's best 2-bit kernel, each within ~25 %).
  double vendor_call_seconds = 10e-6;
  double csr_bytes_per_second = 3.3e12;
  double dense_bytes_per_second = 3.8e12;
  double packed_bytes_per_second = 1.5e12;
  /// Whether full-array products evaluate the terminals once into a table of value slots
  /// (a device's, SweepTuning::leaf_table automatic: when C holds at least twice as many
  /// symbols as there are terminals); the prediction's workspace counts it.
  bool terminal_table = false;
  /// What SweepLaunch::automatic becomes for the left product (kcla::multiply_transpose)
  /// on a device: graph or dataflow (values of at most 4 bytes; wider ones run the graph),
  /// or automatic: dataflow where the model gives the grammar's full-array right product the
  /// dataflow launch, graph otherwise.
  SweepLaunch transpose_launch = SweepLaunch::automatic;
  /// What SweepLaunch::automatic becomes. On the H200 the fused (ticketed) kernel measured
  /// 10-30x slower than per-level launches (docs/gpu-notes.md), on two host cores ~2x
  /// faster.
  SweepLaunch default_launch = SweepLaunch::per_level;
  /// Defaults for a GPU (the H200 figures above) and for host cores.
  static SweepMachine for_gpu();
  static SweepMachine for_host();
  /// Defaults for the execution space kcla was built for (CUDA vs host).
  static SweepMachine for_default_execution_space();
  /// Defaults for a matrix held in MemorySpace: host cores where the host can read it
  /// (HostSpace, also in a CUDA build), the GPU otherwise.
  template <class MemorySpace>
  static SweepMachine for_memory_space() {
    return Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemorySpace>::accessible ? for_host()
                                                                                  : for_gpu();
  }
};

/// Full array on a device: whether a product first evaluates every terminal once into a
/// table (with level 1) that later levels and the rows read with one load, instead of a
/// terminal's coefficient and column and then x at every read. automatic: when C holds at
/// least twice as many symbols as there are terminals.
enum class LeafTable { automatic, always, never };

/// Full array on a device, ticketed launches (dataflow, fused): what one ticket of the row
/// phase reduces. automatic: one row per team where the mean row is longer than a warp
/// reduces whole (inside chunks) yet no longer than a chunk, chunks of C otherwise
/// (docs/level-phases.md); rows, chunks: always that.
enum class RowTickets { automatic, rows, chunks };

/// Experimental tuning of the grammar sweep: knobs measured on one GPU (docs/gpu-notes.md);
/// names and defaults may change between versions. The defaults are what kcla chooses.
struct SweepTuning {
  /// How the levels are launched; automatic: the machine's default_launch. A product call
  /// may still name a launch form for itself (kcla::multiply's last argument).
  SweepLaunch launch = SweepLaunch::automatic;
  /// The cost model's machine; empty: the defaults for the matrix's memory space
  /// (SweepMachine::for_memory_space).
  std::optional<SweepMachine> machine;
  /// Full array: most levels one phase may merge; 0: the machine's bound for the expected
  /// batch (SweepMachine::phase_levels_for), 1: one phase per level. The cost model picks
  /// the phases within this bound.
  std::int32_t max_phase_levels = 0;
  /// Full array: the order of a level's slots (kcla/schedule.hpp).
  SlotOrder slot_order = SlotOrder::rule;
  /// Full array on a device: the terminal table (ignored on host spaces and for layered).
  LeafTable leaf_table = LeafTable::automatic;
  /// Full array on a device, rows averaging more than 48 symbols: the symbols of C each team
  /// of the row phase reduces (at least 64); 0: automatic, about 32 (symbol, vector) items
  /// per thread, at least one chunk per multiprocessor, at most as many chunks as teams the
  /// device holds at once (docs/level-phases.md).
  std::int64_t row_chunk_symbols = 0;
  /// Full array on a device, dataflow and fused launches: the row phase's tickets.
  RowTickets row_tickets = RowTickets::automatic;
};

struct SweepPrediction {
  SweepSchedule schedule = SweepSchedule::full_array;
  SweepLaunch launch = SweepLaunch::per_level;
  std::int64_t vectors = 1;
  double bytes_moved = 0;            ///< device bytes read + written by one product
  std::int64_t launches = 0;         ///< kernel launches per product
  std::int32_t phases = 0;           ///< level phases (full array: levels merged into phases)
  std::int64_t workspace_bytes = 0;  ///< value slots the sweep needs
  std::int64_t static_bytes = 0;     ///< schedule arrays + terminal table
  double seconds = 0;                ///< predicted time of one product
};

/// Predicted single-vector times of what a user could run instead of the grammar sweep:
/// CSR SpMV (int32 indices), a dense GEMV and a 2-bit packed GEMV (genotype panels: values
/// 0, 1, 2), values of `value_bytes`.
struct BaselinePrediction {
  double csr_seconds = 0, dense_seconds = 0, packed_seconds = 0;
};
BaselinePrediction predict_baselines(const GrammarMetrics& m, int value_bytes,
                                     const SweepMachine& machine);

/// What the full array's level phases cost (kcla/level_phases.hpp); null: one per level.
struct LevelPhases;

SweepPrediction predict_sweep(const GrammarMetrics& m, SweepSchedule schedule, SweepLaunch launch,
                              std::int64_t vectors, int value_bytes, const SweepMachine& machine,
                              const LevelPhases* phases = nullptr);

/// The schedule with the smallest predicted time whose workspace fits
/// `workspace_budget_bytes` (0: no limit); if none fits, the one with the smaller workspace.
SweepPrediction choose_sweep(const GrammarMetrics& m, std::int64_t vectors, int value_bytes,
                             SweepLaunch launch, std::int64_t workspace_budget_bytes,
                             const SweepMachine& machine, const LevelPhases* phases = nullptr);

}  // namespace kcla
