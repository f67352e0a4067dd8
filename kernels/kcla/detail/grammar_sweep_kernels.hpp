// The grammar sweep's GPU kernels: one functor per per-level launch (level, fill, rows)
// and the ticketed kernel, in two forms: fused (each ticket waits for the whole level
// below) and dataflow (each value waits for its own children). Launched by
// grammar_sweep_launch.hpp and grammar_sweep.hpp.
#pragma once

#include <kcla/detail/grammar_sweep_args.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <type_traits>

namespace kcla::detail {

// --- per-level launches --------------------------------------------------------------

template <class Semiring, class Scalar>
struct LevelFunctor {
  SweepArgs<Semiring, Scalar> a;
  std::int32_t level;
  std::int64_t first, count;            // nodes of this level
  std::int64_t emit_first, emit_count;  // layered: emits of level - 1 (fused into the round)
  std::int64_t leaf_table = -1, leaf_count = 0;  // level 1: the terminal table to fill
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i) const {
    const std::int64_t item = i / a.vectors, b = i % a.vectors;
    if (item < count)
      a.template node<kReadPlain>(level, first, first + item, b);
    else if (item < count + emit_count)
      a.template emit<kReadPlain>(level - 1, emit_first + item - count, b);
    else
      a.template store_leaf<kReadPlain>(leaf_table, item - count - emit_count, b);
  }
};

template <class Semiring, class Scalar>
struct FillFunctor {
  SweepArgs<Semiring, Scalar> a;
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i) const { a.y[i] = Semiring::zero(); }
};

template <class Semiring, class Scalar>
struct RowsSerialFunctor {
  SweepArgs<Semiring, Scalar> a;
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i) const {
    a.template row_serial<kReadPlain>(i / a.vectors, i % a.vectors);
  }
};

/// The row phase in chunks of C, one team per chunk (row_chunk_team), so a matrix with few,
/// very long rows (HLC: 427 rows of ~25k symbols) still fills the device.
template <class Semiring, class Scalar, class ExecutionSpace>
struct RowsChunkFunctor {
  using T = typename Semiring::value_type;
  using member_type = typename Kokkos::TeamPolicy<ExecutionSpace>::member_type;
  SweepArgs<Semiring, Scalar> a;
  KOKKOS_INLINE_FUNCTION void operator()(const member_type& team) const {
    T* scratch = static_cast<T*>(team.team_shmem().get_shmem(sizeof(T) * team.team_size()));
    row_chunk_team<kReadPlain>(a, team, team.league_rank(), scratch);
  }
};

// --- the fused kernel ------------------------------------------------------------------

/// The ticketed kernel. Teams take tickets (chunks of one level's work, in level order)
/// from an atomic counter. Fused: a ticket waits until every ticket of the level below is
/// done, then reads slots coherently. Dataflow (full array, values of at most 4 bytes):
/// no level wait; each slot read waits for that slot's tag, so a node starts as soon as
/// its own children exist and the critical path is the grammar's longest chain of
/// dependent slots, not L level hand-offs.
template <class Semiring, class Scalar, class ExecutionSpace, bool Dataflow = false>
struct FusedSweepFunctor {
  using T = typename Semiring::value_type;
  using member_type = typename Kokkos::TeamPolicy<ExecutionSpace>::member_type;
  SweepArgs<Semiring, Scalar> a;
  SweepCounter* counters;  // [0] ticket dispenser, [1 + level] tickets finished
  const std::int32_t* ticket_level;
  const std::int32_t* ticket_kind;
  const std::int64_t* ticket_begin;
  const std::int64_t* ticket_end;
  const std::int64_t* tickets_per_level;
  const std::int64_t* level_first;  // first node of each level (index = level)
  std::int64_t epoch, num_tickets;

  KOKKOS_INLINE_FUNCTION void operator()(const member_type& team) const {
    T* scratch = static_cast<T*>(team.team_shmem().get_shmem(sizeof(T) * team.team_size()));
    std::int64_t ticket = 0;
    Kokkos::single(
        Kokkos::PerTeam(team),
        [&](std::int64_t& t) {
          t = static_cast<std::int64_t>(Kokkos::atomic_fetch_add(&counters[0], SweepCounter(1))) -
              epoch * num_tickets;
        },
        ticket);
    const std::int32_t level = ticket_level[ticket];
    const std::int32_t kind = ticket_kind[ticket];
    const std::int64_t begin = ticket_begin[ticket], end = ticket_end[ticket];
    const std::int64_t B = a.vectors;
    // Level 1 runs beside the tickets that fill the terminal table: it evaluates its leaves.
    SweepArgs<Semiring, Scalar> args = a;
    if (level <= 1) args.leaf_base = -1;
    // A node ticket of at most one item per thread reads its inputs (child codes, leaf
    // values) while the level below is still running: after the hand-off only the
    // child slots remain to be read.
    const std::int64_t item = team.team_rank();
    const bool prefetched = kind == nodes && (end - begin) * B <= team.team_size();
    const bool has_item = prefetched && item < (end - begin) * B;
    typename SweepArgs<Semiring, Scalar>::NodeOperands operands{};
    if (has_item) operands = args.prefetch_node(begin + item / B, item % B);
    constexpr int mode = Dataflow ? kReadTagged : kReadCoherent;
    // Wait for the nearest level below that has tickets: an empty level in between (no
    // row units, nothing to fill) must not break the chain of hand-offs.
    std::int32_t below = level - 1;
    while (below >= 0 && tickets_per_level[below] == 0) --below;
    if (!Dataflow && below >= 0) {
      const std::int64_t target = (epoch + 1) * tickets_per_level[below];
      Kokkos::single(Kokkos::PerTeam(team), [&]() {
        while (load_counter(&counters[1 + below]) < target) {
#if defined(__CUDA_ARCH__)
          // Back off: hundreds of waiting teams polling one L2 line slow the producers.
          __nanosleep(200);
#endif
        }
        Kokkos::memory_fence();
      });
    }
    if (!Dataflow) team.team_barrier();
    if (prefetched) {
      if (has_item)
        args.template finish_node<mode>(level, level_first[level], begin + item / B, item % B,
                                        operands);
    } else if (kind == nodes) {
      const std::int64_t first = level_first[level];
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, (end - begin) * B), [&](std::int64_t i) {
        args.template node<mode>(level, first, begin + i / B, i % B);
      });
    } else if (kind == emits) {
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, (end - begin) * B), [&](std::int64_t i) {
        args.template emit<mode>(level - 1, begin + i / B, i % B);
      });
    } else if (kind == leaves) {
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, (end - begin) * B), [&](std::int64_t i) {
        args.template store_leaf<mode>(a.leaf_base, begin + i / B, i % B);
      });
    } else if (kind == fill_y) {
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, end - begin),
                           [&](std::int64_t i) { args.y[begin + i] = Semiring::zero(); });
    } else if (kind == rows_serial) {
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, (end - begin) * B), [&](std::int64_t i) {
        args.template row_serial<mode>(begin + i / B, i % B);
      });
    } else if (kind == rows_team) {
      for (std::int64_t r = begin; r < end; ++r)
        row_segment_team<mode>(args, team, args.row_offsets[r], args.row_offsets[r + 1],
                               args.y + r * B, scratch);
    } else {  // row_chunks
      for (std::int64_t c = begin; c < end; ++c) row_chunk_team<mode>(args, team, c, scratch);
    }
    team.team_barrier();
    // Dataflow counts its tickets too: a later fused product on the same plan waits for
    // per-level totals that include every earlier product.
    Kokkos::single(Kokkos::PerTeam(team), [&]() {
      Kokkos::memory_fence();
      Kokkos::atomic_fetch_add(&counters[1 + level], SweepCounter(1));
    });
  }
};

}  // namespace kcla::detail
