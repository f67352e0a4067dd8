// The grammar sweep kernels behind kcla::multiply. Two schedules (full array, layered)
// and two launch modes:
//   per_level  one parallel_for per level (the layered schedule fuses the emit of level
//              k-1 into the round of level k), then rows or the last emit;
//   fused      one TeamPolicy kernel; each team takes the next ticket (a chunk of one
//              level's work) from an atomic counter and waits until the level below is
//              complete. Tickets are handed out in level order, so every ticket a team
//              waits for is held by a team that is already running: no deadlock, and the
//              L launch gaps become L short hand-offs.
//   dataflow   the same tickets without level waits (full array, values of at most 4
//              bytes, devices): slots are 64-bit words tagged with the product, and each
//              read waits for its own slot's tag.
// Values of B right-hand sides are stored vector-innermost: slot s, vector b at s*B + b.
// This is the GPU form; execution spaces in host memory run grammar_sweep_host.hpp's.
// The pieces: grammar_sweep_args.hpp (kernel arguments), grammar_sweep_kernels.hpp (the
// functors), grammar_sweep_plan.hpp (host planning), grammar_sweep_launch.hpp (launchers).
#pragma once

#include <kcla/config.hpp>
#include <kcla/detail/grammar_sweep_args.hpp>
#include <kcla/detail/grammar_sweep_host.hpp>
#include <kcla/detail/grammar_sweep_kernels.hpp>
#include <kcla/detail/grammar_sweep_launch.hpp>
#include <kcla/detail/grammar_sweep_plan.hpp>
#include <kcla/error.hpp>
#include <kcla/grammar_matrix.hpp>
#include <kcla/schedule.hpp>

#include <Kokkos_Core.hpp>
#include <Kokkos_Graph.hpp>

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <typeindex>
#include <typeinfo>

namespace kcla::detail {

/// The device's ticketed kernel (fused, or dataflow with a.tagged set) over the plan's
/// tickets; the plan's epoch counts it.
template <bool Dataflow, class ExecutionSpace, class Plan, class Semiring, class Scalar>
void launch_ticketed(const ExecutionSpace& exec, Plan& plan, const SweepArgs<Semiring, Scalar>& a,
                     const char* label) {
  FusedSweepFunctor<Semiring, Scalar, ExecutionSpace, Dataflow> f;
  f.a = a;
  f.counters = plan.counters.data();
  f.ticket_level = plan.ticket_level.data();
  f.ticket_kind = plan.ticket_kind.data();
  f.ticket_begin = plan.ticket_begin.data();
  f.ticket_end = plan.ticket_end.data();
  f.tickets_per_level = plan.tickets_per_level_device.data();
  f.level_first = plan.level_first.data();
  f.epoch = plan.epoch;
  f.num_tickets = plan.num_tickets;
  const int team_size = sweep_team_size<ExecutionSpace>();
  const std::size_t scratch =
      sizeof(typename Semiring::value_type) * static_cast<std::size_t>(team_size);
  Kokkos::parallel_for(label,
                       Kokkos::TeamPolicy<ExecutionSpace>(exec, plan.num_tickets, team_size)
                           .set_scratch_size(0, Kokkos::PerTeam(scratch)),
                       f);
  ++plan.epoch;
}

/// Runs one product. x: num_cols x B, y: num_rows x B, both vector-innermost.
template <class Semiring, class ExecutionSpace, class Scalar, class MemorySpace>
void sweep(const ExecutionSpace& exec, const GrammarMatrix<Scalar, MemorySpace>& A,
           const typename Semiring::value_type* x, typename Semiring::value_type* y,
           std::int64_t vectors, SweepLaunch launch) {
  using T = typename Semiring::value_type;
  // The matrix's prediction holds the launch mode its machine model prefers.
  if (launch == SweepLaunch::automatic) launch = A.prediction().launch;
  const bool layered = A.schedule() == SweepSchedule::layered;
  if (launch == SweepLaunch::dataflow) {
    if (layered)
      throw InvalidArgument(
          "kcla::multiply: the dataflow launch needs the full-array schedule (this matrix runs "
          "the layered one; use per_level, graph or fused)");
    // Host threads run their level-waiting form; on a device, values wider than a tag's
    // partner run the captured graph.
    if constexpr (sweeps_on_host<ExecutionSpace>)
      launch = SweepLaunch::fused;
    else if constexpr (!taggable_value<T>)
      launch = SweepLaunch::graph;
  }
  prepare_plan<ExecutionSpace>(A, vectors, sizeof(T));
  auto& plan = A.plan();

  SweepArgs<Semiring, Scalar> a;
  a.left = A.left.data();
  a.right = A.right.data();
  a.coefficients = A.terminal_coefficients.data();
  a.columns = A.terminal_columns.data();
  a.row_offsets = A.row_offsets.data();
  a.row_symbols = A.row_symbols.data();
  a.emit_positions = A.emit_positions.data();
  a.emit_rows = A.emit_rows.data();
  a.x = x;
  a.y = y;
  a.slots = reinterpret_cast<T*>(plan.workspace.data());
  a.vectors = vectors;
  a.width = A.max_width;
  a.num_rows = A.num_rows();
  a.layered = layered;
  a.leaf_base = plan.leaf_table;
  a.chunk_first_row = plan.chunk_first_row.data();
  a.chunk_symbols = plan.chunk_symbols;
  a.num_chunks = static_cast<std::int64_t>(plan.chunk_first_row.extent(0));
  a.row_partials = reinterpret_cast<T*>(plan.row_partials.data());
  a.row_arrivals = plan.row_arrivals.data();
  a.empty_rows = plan.empty_rows.data();
  a.num_empty_rows = static_cast<std::int64_t>(plan.empty_rows.extent(0));
  a.row_group = plan.row_group;
  a.row_warp = plan.row_warp;
  a.warp_row_items = plan.warp_row_items;
  a.long_rows = plan.long_rows.data();
  a.num_long_rows = static_cast<std::int64_t>(plan.long_rows.extent(0));

  if constexpr (!sweeps_on_host<ExecutionSpace> && taggable_value<T>) {
    if (launch == SweepLaunch::dataflow) {
      a.tagged = tagged_workspace(plan.tagged_workspace, sweep_slots<ExecutionSpace>(A) * vectors,
                                  "kcla::grammar::tagged_workspace");
      a.tag = slot_tag(plan.dataflow_products++);
      launch_ticketed<true>(exec, plan, a, "kcla::grammar_sweep_dataflow");
      return;
    }
  }
  if (launch == SweepLaunch::fused) {
    if constexpr (sweeps_on_host<ExecutionSpace>) {
      HostFusedSweepFunctor<Semiring, SweepArgs<Semiring, Scalar>,
                            Kokkos::Experimental::UniqueToken<ExecutionSpace>>
          f{a,
            plan.counters.data(),
            plan.ticket_level.data(),
            plan.ticket_kind.data(),
            plan.ticket_begin.data(),
            plan.ticket_end.data(),
            plan.tickets_per_level_device.data(),
            plan.level_first.data(),
            plan.epoch,
            plan.num_tickets,
            host_occurrence_rows<Semiring, ExecutionSpace>(A, a),
            host_reduce_copies<Semiring, ExecutionSpace>(A, a),
            host_rows_by_row<Semiring>(A, a)};
      Kokkos::parallel_for("kcla::grammar_sweep_fused",
                           Kokkos::RangePolicy<ExecutionSpace, Kokkos::IndexType<std::int64_t>>(
                               exec, 0, plan.num_tickets),
                           f);
      ++plan.epoch;
      return;
    }
    launch_ticketed<false>(exec, plan, a, "kcla::grammar_sweep_fused");
    return;
  }

  if (launch == SweepLaunch::graph) {
    // Capture the level launches once per (x, y, B, semiring), replay afterwards.
    const std::type_index semiring_type(typeid(Semiring));
    const std::uintptr_t stream = stream_identity(exec);
    if (!plan.graph || plan.graph_x != x || plan.graph_y != y || plan.graph_vectors != vectors ||
        plan.graph_type != semiring_type || plan.graph_stream != stream) {
      auto graph = std::make_shared<Kokkos::Experimental::Graph<ExecutionSpace>>(
          Kokkos::Experimental::create_graph(exec, [&](const auto& root) {
            GraphLauncher<ExecutionSpace> launcher{root};
            launch_levels<Semiring, ExecutionSpace>(A, a, launcher);
          }));
      plan.graph = graph;
      plan.graph_x = x;
      plan.graph_y = y;
      plan.graph_vectors = vectors;
      plan.graph_type = semiring_type;
      plan.graph_stream = stream;
    }
    static_cast<Kokkos::Experimental::Graph<ExecutionSpace>*>(plan.graph.get())->submit();
    return;
  }
  ImmediateLauncher<ExecutionSpace> launcher{exec};
  launch_levels<Semiring, ExecutionSpace>(A, a, launcher);
}

}  // namespace kcla::detail
