// How the grammar sweep's kernels are launched: now, on an execution space instance, or
// appended to a Kokkos (CUDA) graph captured once and replayed; the per-level sequence.
#pragma once

#include <kcla/config.hpp>
#include <kcla/detail/grammar_sweep_kernels.hpp>
#include <kcla/detail/grammar_sweep_plan.hpp>

#include <Kokkos_Core.hpp>
#include <Kokkos_Graph.hpp>

#include <cstdint>
#include <type_traits>

namespace kcla::detail {

/// Which stream an execution space instance submits to (a captured graph replays on the
/// instance it was created with, so a product on another stream needs a new graph).
template <class ExecutionSpace>
std::uintptr_t stream_identity(const ExecutionSpace& exec) {
#if KCLA_HAVE_CUDA
  if constexpr (std::is_same<ExecutionSpace, Kokkos::Cuda>::value)
    return reinterpret_cast<std::uintptr_t>(exec.cuda_stream());
#endif
  (void)exec;
  return 0;
}

/// Launches kernels now, on an execution space instance.
template <class ExecutionSpace>
struct ImmediateLauncher {
  ExecutionSpace exec;
  template <class F>
  void range(const char* label, std::int64_t n, const F& f) {
    if (n > 0)
      Kokkos::parallel_for(
          label, Kokkos::RangePolicy<ExecutionSpace, Kokkos::IndexType<std::int64_t>>(exec, 0, n),
          f);
  }
  template <class F>
  void team(const char* label, std::int64_t league, int team_size, std::size_t scratch,
            const F& f) {
    if (league > 0)
      Kokkos::parallel_for(
          label,
          Kokkos::TeamPolicy<ExecutionSpace>(exec, static_cast<int>(league), team_size)
              .set_scratch_size(0, Kokkos::PerTeam(scratch)),
          f);
  }
};

/// Appends kernels to a Kokkos graph (a CUDA graph on CUDA), each after the previous.
template <class ExecutionSpace>
struct GraphLauncher {
  Kokkos::Experimental::GraphNodeRef<ExecutionSpace> node;
  template <class F>
  void range(const char* label, std::int64_t n, const F& f) {
    if (n > 0)
      node = node.then_parallel_for(
          label, Kokkos::RangePolicy<ExecutionSpace, Kokkos::IndexType<std::int64_t>>(0, n), f);
  }
  template <class F>
  void team(const char* label, std::int64_t league, int team_size, std::size_t scratch,
            const F& f) {
    if (league > 0)
      node = node.then_parallel_for(
          label,
          Kokkos::TeamPolicy<ExecutionSpace>(static_cast<int>(league), team_size)
              .set_scratch_size(0, Kokkos::PerTeam(scratch)),
          f);
  }
};

/// The per-level launch sequence, through a launcher (immediate or graph).
template <class Semiring, class ExecutionSpace, class Scalar, class MemorySpace, class Launcher>
void launch_levels(const GrammarMatrix<Scalar, MemorySpace>& A,
                   const SweepArgs<Semiring, Scalar>& a, Launcher& launch) {
  if constexpr (sweeps_on_host<ExecutionSpace>) {
    launch_host_levels<Semiring>(A, a, launch);
    launch_host_rows<Semiring, ExecutionSpace>(A, a, launch);
    return;
  }
  using T = typename Semiring::value_type;
  const bool layered = A.schedule() == SweepSchedule::layered;
  const std::int32_t depth = A.depth();
  const std::int64_t rows = A.num_rows(), vectors = a.vectors;
  const int team_size = sweep_team_size<ExecutionSpace>();
  if (layered) launch.range("kcla::grammar_fill", rows * vectors, FillFunctor<Semiring, Scalar>{a});
  const auto& plan = A.plan();
  for (std::int32_t k = 1; k <= depth; ++k) {
    LevelFunctor<Semiring, Scalar> f{
        a, k, A.level_offsets[k - 1], A.level_offsets[k] - A.level_offsets[k - 1], 0, 0};
    if (k == 1 && plan.leaf_table >= 0) {
      // Level 1 fills the terminal table and evaluates its own leaves.
      f.a.leaf_base = -1;
      f.leaf_table = plan.leaf_table;
      f.leaf_count = static_cast<std::int64_t>(A.terminal_columns.extent(0));
    }
    if (layered) {
      f.emit_first = A.emit_offsets[k - 1];
      f.emit_count = A.emit_offsets[k] - A.emit_offsets[k - 1];
    }
    launch.range("kcla::grammar_level", (f.count + f.emit_count + f.leaf_count) * vectors, f);
  }
  if (layered) {
    LevelFunctor<Semiring, Scalar> f{a,
                                     depth + 1,
                                     0,
                                     0,
                                     A.emit_offsets[depth],
                                     A.emit_offsets[depth + 1] - A.emit_offsets[depth]};
    launch.range("kcla::grammar_emit", f.emit_count * vectors, f);
  } else if (uses_row_chunks(A)) {
    launch.team("kcla::grammar_rows", a.num_chunks, team_size,
                sizeof(T) * static_cast<std::size_t>(team_size),
                RowsChunkFunctor<Semiring, Scalar, ExecutionSpace>{a});
  } else {
    launch.range("kcla::grammar_rows", rows * vectors, RowsSerialFunctor<Semiring, Scalar>{a});
  }
}

}  // namespace kcla::detail
