// The grammar sweep kernels behind kcla::multiply. Two schedules (full array, layered)
// and two launch modes:
//   per_level  one parallel_for per level (the layered schedule fuses the emit of level
//              k-1 into the round of level k), then rows or the last emit;
//   fused      one TeamPolicy kernel; each team takes the next ticket (a chunk of one
//              level's work) from an atomic counter and waits until the level below is
//              complete. Tickets are handed out in level order, so every ticket a team
//              waits for is held by a team that is already running: no deadlock, and the
//              L launch gaps become L short hand-offs.
// Values of B right-hand sides are stored vector-innermost: slot s, vector b at s*B + b.
// This is the GPU form; execution spaces in host memory run grammar_sweep_host.hpp's.
#pragma once

#include <kcla/config.hpp>
#include <kcla/detail/grammar_sweep_host.hpp>
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

/// A load that sees stores made by other blocks of the same kernel after the level
/// hand-off: on CUDA it bypasses the (non-coherent) L1 cache.
template <class T>
KOKKOS_FORCEINLINE_FUNCTION T load_coherent(const T* p) {
#if defined(__CUDA_ARCH__)
  if constexpr (std::is_same<T, float>::value || std::is_same<T, double>::value ||
                std::is_same<T, int>::value)
    return __ldcg(p);
  else
    return *static_cast<const volatile T*>(p);
#else
  return *p;
#endif
}

/// The fused kernel's counters are unsigned long long: CUDA adds to those natively, while
/// Kokkos 3.4 turns an atomic add on std::int64_t into a compare-and-swap loop, which under
/// hundreds of teams starting at once retried ~460 times per team (H200, nsight compute)
/// and made the fused kernel 25x slower than per-level launches.
using SweepCounter = unsigned long long;

KOKKOS_FORCEINLINE_FUNCTION std::int64_t load_counter(const SweepCounter* p) {
  return static_cast<std::int64_t>(*static_cast<const volatile SweepCounter*>(p));
}

/// Everything a sweep kernel reads and writes, as raw pointers (one product).
template <class Semiring, class Scalar>
struct SweepArgs {
  using T = typename Semiring::value_type;
  const std::int32_t* left = nullptr;
  const std::int32_t* right = nullptr;
  const Scalar* coefficients = nullptr;
  const std::int32_t* columns = nullptr;
  const std::int64_t* row_offsets = nullptr;
  const std::int32_t* row_symbols = nullptr;
  const std::int32_t* emit_positions = nullptr;
  const std::int32_t* emit_rows = nullptr;
  const T* x = nullptr;
  T* y = nullptr;
  T* slots = nullptr;  // full array: all slots; layered: buffer 0, buffer 1 at + width*B
  std::int64_t vectors = 1;
  std::int64_t width = 0;  // layered frontier capacity
  std::int64_t num_rows = 0;
  bool layered = false;

  template <bool Coherent>
  KOKKOS_FORCEINLINE_FUNCTION T value(std::int32_t code, const T* read, std::int64_t b) const {
    if (code >= 0) {
      const T* p = read + static_cast<std::int64_t>(code) * vectors + b;
      return Coherent ? load_coherent(p) : *p;
    }
    if (code == kNoChild) return Semiring::zero();
    const std::int64_t t = -static_cast<std::int64_t>(code) - 1;
    return Semiring::leaf(Semiring::coefficient(coefficients[t]),
                          x[static_cast<std::int64_t>(columns[t]) * vectors + b]);
  }
  KOKKOS_FORCEINLINE_FUNCTION T* buffer(std::int32_t level) const {
    return slots + (level % 2) * width * vectors;
  }
  /// A node's operands as far as they can be known before the level below is complete:
  /// child codes, and the values of leaf children (inputs only, no slot reads).
  struct NodeOperands {
    std::int32_t left_code, right_code;
    T left_value, right_value;
  };
  KOKKOS_FORCEINLINE_FUNCTION NodeOperands prefetch_node(std::int64_t n, std::int64_t b) const {
    NodeOperands o;
    o.left_code = left[n];
    o.right_code = right[n];
    o.left_value = o.left_code < 0 ? value<false>(o.left_code, nullptr, b) : Semiring::zero();
    o.right_value = o.right_code < 0 ? value<false>(o.right_code, nullptr, b) : Semiring::zero();
    return o;
  }
  /// Completes node n of `level` (global index, level starts at first), vector b: reads the
  /// children that are slots and stores the node's value.
  template <bool Coherent>
  KOKKOS_FORCEINLINE_FUNCTION void finish_node(std::int32_t level, std::int64_t first,
                                               std::int64_t n, std::int64_t b,
                                               const NodeOperands& o) const {
    const T* read = layered ? buffer(level - 1) : slots;
    const T l = o.left_code >= 0 ? value<Coherent>(o.left_code, read, b) : o.left_value;
    const T r = o.right_code >= 0 ? value<Coherent>(o.right_code, read, b) : o.right_value;
    T* target = layered ? buffer(level) + (n - first) * vectors : slots + n * vectors;
    target[b] = Semiring::combine(l, r);
  }
  /// Node item: node n of `level`, vector b, in one go.
  template <bool Coherent>
  KOKKOS_FORCEINLINE_FUNCTION void node(std::int32_t level, std::int64_t first, std::int64_t n,
                                        std::int64_t b) const {
    finish_node<Coherent>(level, first, n, b, prefetch_node(n, b));
  }
  /// Emit item of layered level `level` (0: a terminal standing in C).
  template <bool Coherent>
  KOKKOS_FORCEINLINE_FUNCTION void emit(std::int32_t level, std::int64_t e, std::int64_t b) const {
    // A terminal standing in C has code -(t+1) (encode_terminal is host-only).
    const T v = level == 0 ? value<Coherent>(-emit_positions[e] - 1, nullptr, b)
                           : value<Coherent>(emit_positions[e], buffer(level), b);
    Semiring::atomic_combine(&y[static_cast<std::int64_t>(emit_rows[e]) * vectors + b], v);
  }
  /// Row r, vector b, reduced by one thread.
  template <bool Coherent>
  KOKKOS_FORCEINLINE_FUNCTION void row_serial(std::int64_t r, std::int64_t b) const {
    T sum = Semiring::zero();
    for (auto k = row_offsets[r]; k < row_offsets[r + 1]; ++k)
      sum = Semiring::combine(sum, value<Coherent>(row_symbols[k], slots, b));
    y[r * vectors + b] = sum;
  }
};

/// Row r reduced by a whole team: threads split into groups over the row's symbols and
/// lanes over vectors; partials meet in team scratch.
/// Symbols [begin, end) of row r (all of it, or one chunk's part) reduced by a team; a
/// partial row is combined atomically into y, which then must start at zero.
template <bool Coherent, class Semiring, class Scalar, class Member>
KOKKOS_INLINE_FUNCTION void row_segment_team(const SweepArgs<Semiring, Scalar>& a,
                                             const Member& team, std::int64_t r, std::int64_t begin,
                                             std::int64_t end, bool whole_row,
                                             typename Semiring::value_type* scratch) {
  using T = typename Semiring::value_type;
  const int team_size = team.team_size(), t = team.team_rank();
  const std::int64_t lanes = a.vectors < team_size ? a.vectors : team_size;
  const std::int64_t groups = team_size / lanes;
  const std::int64_t lane = t % lanes, group = t / lanes;
  for (std::int64_t b0 = 0; b0 < a.vectors; b0 += lanes) {
    const std::int64_t b = b0 + lane;
    T partial = Semiring::zero();
    if (group < groups && b < a.vectors)
      for (auto k = begin + group; k < end; k += groups)
        partial =
            Semiring::combine(partial, a.template value<Coherent>(a.row_symbols[k], a.slots, b));
    scratch[t] = partial;
    team.team_barrier();
    // Tree over the groups: log2(groups) steps instead of one thread walking them all.
    std::int64_t span = 1;
    while (span < groups) span *= 2;
    for (std::int64_t half = span / 2; half >= 1; half /= 2) {
      if (group < half && group + half < groups)
        scratch[t] = Semiring::combine(scratch[t], scratch[t + half * lanes]);
      team.team_barrier();
    }
    if (group == 0 && b < a.vectors) {
      if (whole_row)
        a.y[r * a.vectors + b] = scratch[lane];
      else
        Semiring::atomic_combine(&a.y[r * a.vectors + b], scratch[lane]);
    }
    team.team_barrier();
  }
}

template <bool Coherent, class Semiring, class Scalar, class Member>
KOKKOS_INLINE_FUNCTION void row_team(const SweepArgs<Semiring, Scalar>& a, const Member& team,
                                     std::int64_t r, typename Semiring::value_type* scratch) {
  row_segment_team<Coherent>(a, team, r, a.row_offsets[r], a.row_offsets[r + 1], true, scratch);
}

// --- per-level launches --------------------------------------------------------------

template <class Semiring, class Scalar>
struct LevelFunctor {
  SweepArgs<Semiring, Scalar> a;
  std::int32_t level;
  std::int64_t first, count;            // nodes of this level
  std::int64_t emit_first, emit_count;  // layered: emits of level - 1 (fused into the round)
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i) const {
    const std::int64_t item = i / a.vectors, b = i % a.vectors;
    if (item < count)
      a.template node<false>(level, first, first + item, b);
    else
      a.template emit<false>(level - 1, emit_first + item - count, b);
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
    a.template row_serial<false>(i / a.vectors, i % a.vectors);
  }
};

/// Long rows split into fixed chunks of C, one team per chunk, so a matrix with few,
/// very long rows (HLC: 427 rows of ~25k symbols) still fills the device. y starts at zero.
template <class Semiring, class Scalar, class ExecutionSpace>
struct RowsChunkFunctor {
  using T = typename Semiring::value_type;
  using member_type = typename Kokkos::TeamPolicy<ExecutionSpace>::member_type;
  SweepArgs<Semiring, Scalar> a;
  const std::int64_t* chunk_first_row;
  std::int64_t chunk_symbols, total_symbols;
  KOKKOS_INLINE_FUNCTION void operator()(const member_type& team) const {
    T* scratch = static_cast<T*>(team.team_shmem().get_shmem(sizeof(T) * team.team_size()));
    const std::int64_t c0 = team.league_rank() * chunk_symbols;
    const std::int64_t c1 = c0 + chunk_symbols < total_symbols ? c0 + chunk_symbols : total_symbols;
    for (std::int64_t r = chunk_first_row[team.league_rank()];
         r < a.num_rows && a.row_offsets[r] < c1; ++r) {
      const std::int64_t begin = a.row_offsets[r] > c0 ? a.row_offsets[r] : c0;
      const std::int64_t end = a.row_offsets[r + 1] < c1 ? a.row_offsets[r + 1] : c1;
      if (begin >= end) continue;
      const bool whole = a.row_offsets[r] >= c0 && a.row_offsets[r + 1] <= c1;
      row_segment_team<false>(a, team, r, begin, end, whole, scratch);
    }
  }
};

// --- the fused kernel ------------------------------------------------------------------

template <class Semiring, class Scalar, class ExecutionSpace>
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
    // A node ticket of at most one item per thread reads its inputs (child codes, leaf
    // values) while the level below is still running: after the hand-off only the
    // child slots remain to be read.
    const std::int64_t item = team.team_rank();
    const bool prefetched = kind == nodes && (end - begin) * B <= team.team_size();
    const bool has_item = prefetched && item < (end - begin) * B;
    typename SweepArgs<Semiring, Scalar>::NodeOperands operands{};
    if (has_item) operands = a.prefetch_node(begin + item / B, item % B);
    // Wait for the nearest level below that has tickets: an empty level in between (no
    // row units, nothing to fill) must not break the chain of hand-offs.
    std::int32_t below = level - 1;
    while (below >= 0 && tickets_per_level[below] == 0) --below;
    if (below >= 0) {
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
    team.team_barrier();
    if (prefetched) {
      if (has_item)
        a.template finish_node<true>(level, level_first[level], begin + item / B, item % B,
                                     operands);
    } else if (kind == nodes) {
      const std::int64_t first = level_first[level];
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, (end - begin) * B), [&](std::int64_t i) {
        a.template node<true>(level, first, begin + i / B, i % B);
      });
    } else if (kind == emits) {
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, (end - begin) * B), [&](std::int64_t i) {
        a.template emit<true>(level - 1, begin + i / B, i % B);
      });
    } else if (kind == fill_y) {
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, end - begin),
                           [&](std::int64_t i) { a.y[begin + i] = Semiring::zero(); });
    } else if (kind == rows_serial) {
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, (end - begin) * B), [&](std::int64_t i) {
        a.template row_serial<true>(begin + i / B, i % B);
      });
    } else {
      for (std::int64_t r = begin; r < end; ++r) row_team<true>(a, team, r, scratch);
    }
    team.team_barrier();
    Kokkos::single(Kokkos::PerTeam(team), [&]() {
      Kokkos::memory_fence();
      Kokkos::atomic_fetch_add(&counters[1 + level], SweepCounter(1));
    });
  }
};

template <class ExecutionSpace>
constexpr int sweep_team_size() {
#if KCLA_HAVE_CUDA
  if constexpr (std::is_same<ExecutionSpace, Kokkos::Cuda>::value) return 256;
#endif
  return 1;
}

template <class ExecutionSpace>
constexpr std::int64_t items_per_ticket() {
#if KCLA_HAVE_CUDA
  // One item per thread: a level's chunks spread over the whole GPU, and a chunk's
  // latency (the level hand-off's critical path) is one dependent load chain.
  if constexpr (std::is_same<ExecutionSpace, Kokkos::Cuda>::value) return 256;
#endif
  return 16384;
}

/// Average symbols per row below which a row is reduced by one thread, not a team.
constexpr std::int64_t kSerialRowSymbols = 48;

/// 8-byte words of value slots a product with `vectors` vectors of `value_bytes` needs.
template <class Scalar, class MemorySpace>
std::int64_t workspace_words(const GrammarMatrix<Scalar, MemorySpace>& A, std::int64_t vectors,
                             std::int64_t value_bytes) {
  const bool layered = A.schedule() == SweepSchedule::layered;
  const std::int64_t slots = layered ? 2 * A.max_width : A.level_offsets.back();
  return (slots * vectors * value_bytes + 7) / 8;
}

/// (Re)builds the fused kernel's ticket table and workspace for `vectors` vectors.
template <class ExecutionSpace, class Scalar, class MemorySpace>
void prepare_plan(const GrammarMatrix<Scalar, MemorySpace>& A, std::int64_t vectors,
                  std::int64_t value_bytes) {
  if constexpr (sweeps_on_host<ExecutionSpace>)
    prepare_host_plan<ExecutionSpace>(A, vectors, value_bytes);
  auto& plan = A.plan();
  const bool layered = A.schedule() == SweepSchedule::layered;
  const std::int64_t words = workspace_words(A, vectors, value_bytes);
  if (plan.vectors == vectors && static_cast<std::int64_t>(plan.workspace.extent(0)) >= words &&
      plan.num_tickets > 0)
    return;
  plan.vectors = vectors;
  plan.graph.reset();  // a captured graph names the old workspace and ticket table
  if (static_cast<std::int64_t>(plan.workspace.extent(0)) < words) {
    plan.workspace = Kokkos::View<std::uint64_t*, MemorySpace>(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "kcla::grammar::workspace"), words);
    if constexpr (sweeps_on_host<ExecutionSpace>)
      advise_huge_pages(plan.workspace.data(), static_cast<std::size_t>(words) * 8);
  }

  const std::int32_t depth = A.depth();
  const std::int64_t per_ticket =
      std::max<std::int64_t>(1, items_per_ticket<ExecutionSpace>() / vectors);
  // Chunks of C for the row phase of per-level launches: ~8 items per thread on a GPU.
  const std::int64_t chunk_items =
      sweep_team_size<ExecutionSpace>() > 1 ? 8 * sweep_team_size<ExecutionSpace>() : 16384;
  plan.chunk_symbols = std::max<std::int64_t>(64, chunk_items / vectors);
  std::vector<std::int32_t> level, kind;
  std::vector<std::int64_t> begin, end;
  // Levels 0 .. depth + 1; the host form's row phase may end with a level depth + 2.
  plan.tickets_per_level.assign(
      static_cast<std::size_t>(depth) + (sweeps_on_host<ExecutionSpace> ? 3 : 2), 0);
  auto add = [&](std::int32_t l, std::int32_t k, std::int64_t b, std::int64_t e,
                 std::int64_t chunk) {
    for (std::int64_t s = b; s < e; s += chunk) {
      level.push_back(l);
      kind.push_back(k);
      begin.push_back(s);
      end.push_back(std::min(e, s + chunk));
      ++plan.tickets_per_level[l];
    }
  };
  const std::int64_t rows = A.num_rows();
  if (layered) add(0, fill_y, 0, rows * vectors, items_per_ticket<ExecutionSpace>());
  if constexpr (sweeps_on_host<ExecutionSpace>)
    if (!layered) add_host_row_tickets<ExecutionSpace>(A, vectors, true, add);
  for (std::int32_t k = 1; k <= depth; ++k) {
    add(k, nodes, A.level_offsets[k - 1], A.level_offsets[k], per_ticket);
    if (layered) add(k, emits, A.emit_offsets[k - 1], A.emit_offsets[k], per_ticket);
  }
  if (layered) {
    add(depth + 1, emits, A.emit_offsets[depth], A.emit_offsets[depth + 1], per_ticket);
  } else if constexpr (sweeps_on_host<ExecutionSpace>) {
    add_host_row_tickets<ExecutionSpace>(A, vectors, false, add);
  } else {
    const std::int64_t symbols = static_cast<std::int64_t>(A.row_symbols.extent(0));
    if (symbols <= kSerialRowSymbols * std::max<std::int64_t>(rows, 1))
      add(depth + 1, rows_serial, 0, rows, per_ticket);
    else
      add(depth + 1, rows_team, 0, rows, 1);
  }
  plan.num_tickets = static_cast<std::int64_t>(level.size());
  std::vector<std::int64_t> chunk_first_row;
  if (!layered) {
    const auto& offsets = A.row_offsets_host;
    const std::int64_t symbols = offsets.empty() ? 0 : offsets.back();
    for (std::int64_t c0 = 0; c0 < symbols; c0 += plan.chunk_symbols)
      chunk_first_row.push_back(
          static_cast<std::int64_t>(std::upper_bound(offsets.begin(), offsets.end(), c0) -
                                    offsets.begin()) -
          1);
  }
  auto upload = [](auto& view, const auto& host, const char* label) {
    using V = std::decay_t<decltype(view)>;
    view = V(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label)), host.size());
    Kokkos::deep_copy(
        view, Kokkos::View<const typename V::value_type*, Kokkos::HostSpace,
                           Kokkos::MemoryTraits<Kokkos::Unmanaged>>(host.data(), host.size()));
  };
  upload(plan.ticket_level, level, "kcla::grammar::ticket_level");
  upload(plan.ticket_kind, kind, "kcla::grammar::ticket_kind");
  upload(plan.ticket_begin, begin, "kcla::grammar::ticket_begin");
  upload(plan.ticket_end, end, "kcla::grammar::ticket_end");
  upload(plan.tickets_per_level_device, plan.tickets_per_level, "kcla::grammar::tickets_per_level");
  std::vector<std::int64_t> level_first(static_cast<std::size_t>(depth) + 2, 0);
  for (std::int32_t k = 1; k <= depth; ++k) level_first[k] = A.level_offsets[k - 1];
  upload(plan.level_first, level_first, "kcla::grammar::level_first");
  upload(plan.chunk_first_row, chunk_first_row, "kcla::grammar::chunk_first_row");
  plan.counters = Kokkos::View<SweepCounter*, MemorySpace>("kcla::grammar::counters",
                                                           plan.tickets_per_level.size() + 1);
  plan.epoch = 0;
}

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
  for (std::int32_t k = 1; k <= depth; ++k) {
    LevelFunctor<Semiring, Scalar> f{
        a, k, A.level_offsets[k - 1], A.level_offsets[k] - A.level_offsets[k - 1], 0, 0};
    if (layered) {
      f.emit_first = A.emit_offsets[k - 1];
      f.emit_count = A.emit_offsets[k] - A.emit_offsets[k - 1];
    }
    launch.range("kcla::grammar_level", (f.count + f.emit_count) * vectors, f);
  }
  if (layered) {
    LevelFunctor<Semiring, Scalar> f{a,
                                     depth + 1,
                                     0,
                                     0,
                                     A.emit_offsets[depth],
                                     A.emit_offsets[depth + 1] - A.emit_offsets[depth]};
    launch.range("kcla::grammar_emit", f.emit_count * vectors, f);
  } else if (static_cast<std::int64_t>(A.row_symbols.extent(0)) <=
             kSerialRowSymbols * std::max<std::int64_t>(rows, 1)) {
    launch.range("kcla::grammar_rows", rows * vectors, RowsSerialFunctor<Semiring, Scalar>{a});
  } else {
    const auto& plan = A.plan();
    launch.range("kcla::grammar_fill", rows * vectors, FillFunctor<Semiring, Scalar>{a});
    launch.team("kcla::grammar_rows", static_cast<std::int64_t>(plan.chunk_first_row.extent(0)),
                team_size, sizeof(T) * static_cast<std::size_t>(team_size),
                RowsChunkFunctor<Semiring, Scalar, ExecutionSpace>{
                    a, plan.chunk_first_row.data(), plan.chunk_symbols,
                    static_cast<std::int64_t>(A.row_symbols.extent(0))});
  }
}

/// Runs one product. x: num_cols x B, y: num_rows x B, both vector-innermost.
template <class Semiring, class ExecutionSpace, class Scalar, class MemorySpace>
void sweep(const ExecutionSpace& exec, const GrammarMatrix<Scalar, MemorySpace>& A,
           const typename Semiring::value_type* x, typename Semiring::value_type* y,
           std::int64_t vectors, SweepLaunch launch) {
  using T = typename Semiring::value_type;
  // The matrix's prediction holds the launch mode its machine model prefers.
  if (launch == SweepLaunch::automatic) launch = A.prediction().launch;
  prepare_plan<ExecutionSpace>(A, vectors, sizeof(T));
  auto& plan = A.plan();
  const bool layered = A.schedule() == SweepSchedule::layered;

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
  const int team_size = sweep_team_size<ExecutionSpace>();
  const std::size_t scratch = sizeof(T) * static_cast<std::size_t>(team_size);

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
    FusedSweepFunctor<Semiring, Scalar, ExecutionSpace> f;
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
    Kokkos::parallel_for("kcla::grammar_sweep_fused",
                         Kokkos::TeamPolicy<ExecutionSpace>(exec, plan.num_tickets, team_size)
                             .set_scratch_size(0, Kokkos::PerTeam(scratch)),
                         f);
    ++plan.epoch;
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
