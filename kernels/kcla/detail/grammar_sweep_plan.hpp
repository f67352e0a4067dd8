// Host-side planning of the grammar sweep: team and ticket sizes per execution space, the
// value slots a product needs, and the fused kernel's ticket table (prepare_plan).
#pragma once

#include <kcla/detail/grammar_sweep_args.hpp>
#include <kcla/detail/grammar_sweep_host.hpp>
#include <kcla/grammar_matrix.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace kcla::detail {

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

/// Batches of kRowGatherBatch gathers each thread of a device row-phase chunk aims at.
constexpr std::int64_t kRowChunkBatches = 4;

/// Average symbols per row below which a row is reduced by one thread, not a team.
constexpr std::int64_t kSerialRowSymbols = 48;

/// Whether a device product's row phase (full array) reduces C in chunks of symbols, one
/// team each, rather than one row per thread: rows averaging more than kSerialRowSymbols.
template <class Scalar, class MemorySpace>
bool uses_row_chunks(const GrammarMatrix<Scalar, MemorySpace>& A) {
  return A.schedule() != SweepSchedule::layered &&
         static_cast<std::int64_t>(A.row_symbols.extent(0)) >
             kSerialRowSymbols * std::max<std::int64_t>(A.num_rows(), 1);
}

/// Whether products on ExecutionSpace evaluate the terminals once into a table (the slots
/// after the last level's; SweepTuning::leaf_table).
template <class ExecutionSpace, class Scalar, class MemorySpace>
bool uses_leaf_table(const GrammarMatrix<Scalar, MemorySpace>& A) {
  if constexpr (sweeps_on_host<ExecutionSpace>) {
    return false;
  } else {
    const std::int64_t terminals = static_cast<std::int64_t>(A.terminal_columns.extent(0));
    if (A.schedule() == SweepSchedule::layered || A.depth() < 1 || terminals == 0) return false;
    switch (A.options().tuning.leaf_table) {
      case LeafTable::always:
        return true;
      case LeafTable::never:
        return false;
      default:
        return static_cast<std::int64_t>(A.row_symbols.extent(0)) >= 2 * terminals;
    }
  }
}

/// Value slots a product needs: the full array's (and its terminal table), or the layered
/// schedule's two frontier buffers.
template <class ExecutionSpace, class Scalar, class MemorySpace>
std::int64_t sweep_slots(const GrammarMatrix<Scalar, MemorySpace>& A) {
  if (A.schedule() == SweepSchedule::layered) return 2 * A.max_width;
  return A.level_offsets.back() + (uses_leaf_table<ExecutionSpace>(A)
                                       ? static_cast<std::int64_t>(A.terminal_columns.extent(0))
                                       : 0);
}

/// 8-byte words of value slots a product with `vectors` vectors of `value_bytes` needs.
template <class ExecutionSpace, class Scalar, class MemorySpace>
std::int64_t workspace_words(const GrammarMatrix<Scalar, MemorySpace>& A, std::int64_t vectors,
                             std::int64_t value_bytes) {
  return (sweep_slots<ExecutionSpace>(A) * vectors * value_bytes + 7) / 8;
}

/// (Re)builds the fused kernel's ticket table and workspace for `vectors` vectors.
template <class ExecutionSpace, class Scalar, class MemorySpace>
void prepare_plan(const GrammarMatrix<Scalar, MemorySpace>& A, std::int64_t vectors,
                  std::int64_t value_bytes) {
  if constexpr (sweeps_on_host<ExecutionSpace>)
    prepare_host_plan<ExecutionSpace>(A, vectors, value_bytes);
  auto& plan = A.plan();
  const bool layered = A.schedule() == SweepSchedule::layered;
  const std::int64_t words = workspace_words<ExecutionSpace>(A, vectors, value_bytes);
  if (plan.vectors == vectors && static_cast<std::int64_t>(plan.workspace.extent(0)) >= words &&
      plan.num_tickets > 0)
    return;
  plan.vectors = vectors;
  plan.graph.reset();  // a captured graph names the old workspace and ticket table
  if (static_cast<std::int64_t>(plan.workspace.extent(0)) < words) {
    plan.workspace = Kokkos::View<std::uint64_t*, MemorySpace>(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "kcla::grammar::workspace"), words);
    if constexpr (sweeps_on_host<ExecutionSpace>)
      populate_host_buffer<ExecutionSpace>(plan.workspace.data(),
                                           static_cast<std::size_t>(words) * 8);
  }

  const std::int32_t depth = A.depth();
  const std::int64_t per_ticket =
      std::max<std::int64_t>(1, items_per_ticket<ExecutionSpace>() / vectors);
  // Chunks of C for the row phase of per-level launches: ~8 items per thread on a GPU.
  const std::int64_t chunk_items =
      sweep_team_size<ExecutionSpace>() > 1 ? 8 * sweep_team_size<ExecutionSpace>() : 16384;
  plan.chunk_symbols = std::max<std::int64_t>(64, chunk_items / vectors);
  if constexpr (!sweeps_on_host<ExecutionSpace>) {
    // The device row phase. Every chunk pays a fixed cost (a tree of barriers, a fence, an
    // arrival), so a chunk aims at kRowChunkBatches batches of gathers per thread, but
    // leaves at least one chunk per multiprocessor (about 8 teams of 256 threads), and is
    // never so small that C needs more chunks than the device holds teams at once
    // (docs/level-phases.md, runs 61-62).
    const std::int64_t team = sweep_team_size<ExecutionSpace>();
    const std::int64_t teams =
        std::max<std::int64_t>(1, static_cast<std::int64_t>(ExecutionSpace().concurrency()) / team);
    const std::int64_t multiprocessors = std::max<std::int64_t>(1, teams / 8);
    const std::int64_t symbols = static_cast<std::int64_t>(A.row_symbols.extent(0));
    const std::int64_t aimed = kRowChunkBatches * kRowGatherBatch * team / vectors;
    plan.chunk_symbols =
        std::max(plan.chunk_symbols,
                 std::max(std::min(aimed, (symbols + multiprocessors - 1) / multiprocessors),
                          (symbols + teams - 1) / teams));
    if (A.options().tuning.row_chunk_symbols > 0)
      plan.chunk_symbols = std::max<std::int64_t>(64, A.options().tuning.row_chunk_symbols);
  }
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
  plan.leaf_table = uses_leaf_table<ExecutionSpace>(A) ? A.level_offsets.back() : -1;
  if (plan.leaf_table >= 0)
    add(1, leaves, 0, static_cast<std::int64_t>(A.terminal_columns.extent(0)), per_ticket);
  for (std::int32_t k = 1; k <= depth; ++k) {
    add(k, nodes, A.level_offsets[k - 1], A.level_offsets[k], per_ticket);
    if (layered) add(k, emits, A.emit_offsets[k - 1], A.emit_offsets[k], per_ticket);
  }
  if (layered) {
    add(depth + 1, emits, A.emit_offsets[depth], A.emit_offsets[depth + 1], per_ticket);
  } else if constexpr (sweeps_on_host<ExecutionSpace>) {
    add_host_row_tickets<ExecutionSpace>(A, vectors, false, add);
  } else {
    // The ticketed kernels give each row a team of its own where the mean row is longer
    // than what one warp reduces whole inside a chunk (short rows go to warps there) but
    // no longer than a chunk (longer rows are cut into chunks and their partials combined).
    const std::int64_t symbols = static_cast<std::int64_t>(A.row_symbols.extent(0));
    const std::int64_t chunks = (symbols + plan.chunk_symbols - 1) / plan.chunk_symbols;
    const std::int64_t warp_items =
        row_warp_lanes<ExecutionSpace>() * kRowGatherBatch * kRowChunkBatches;
    const std::int64_t mean_row = rows > 0 ? symbols / rows : 0;
    const auto choice = A.options().tuning.row_tickets;
    const bool team_per_row = choice == RowTickets::rows ||
                              (choice == RowTickets::automatic && mean_row * vectors > warp_items &&
                               mean_row <= plan.chunk_symbols);
    if (!uses_row_chunks(A))
      add(depth + 1, rows_serial, 0, rows, per_ticket);
    else if (team_per_row)
      add(depth + 1, rows_team, 0, rows, 1);
    else
      add(depth + 1, row_chunks, 0, chunks, 1);
  }
  auto upload = [](auto& view, const auto& host, const char* label) {
    using V = std::decay_t<decltype(view)>;
    view = V(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label)), host.size());
    Kokkos::deep_copy(
        view, Kokkos::View<const typename V::value_type*, Kokkos::HostSpace,
                           Kokkos::MemoryTraits<Kokkos::Unmanaged>>(host.data(), host.size()));
  };
  plan.num_tickets = static_cast<std::int64_t>(level.size());
  std::vector<std::int64_t> chunk_first_row, empty_rows;
  if (!layered) {
    const auto& offsets = A.row_offsets_host;
    const std::int64_t symbols = offsets.empty() ? 0 : offsets.back();
    for (std::int64_t c0 = 0; c0 < symbols; c0 += plan.chunk_symbols)
      chunk_first_row.push_back(
          static_cast<std::int64_t>(std::upper_bound(offsets.begin(), offsets.end(), c0) -
                                    offsets.begin()) -
          1);
    for (std::int64_t r = 0; r + 1 < static_cast<std::int64_t>(offsets.size()); ++r)
      if (offsets[r] == offsets[r + 1]) empty_rows.push_back(r);
  }
  if constexpr (!sweeps_on_host<ExecutionSpace>) {
    // Whole rows of up to kRowChunkBatches gather batches per lane go to one warp each; the
    // longer ones to sub-teams of about kRowGatherBatch (symbol, vector) items per thread,
    // at least a warp, at most the team.
    const std::int64_t team = sweep_team_size<ExecutionSpace>();
    plan.row_warp = row_warp_lanes<ExecutionSpace>();
    plan.warp_row_items = plan.row_warp * kRowGatherBatch * kRowChunkBatches;
    std::vector<std::int64_t> long_rows;
    std::int64_t long_items = 0;
    const auto& offsets = A.row_offsets_host;
    for (std::int64_t r = 0; r + 1 < static_cast<std::int64_t>(offsets.size()); ++r) {
      const std::int64_t items = (offsets[r + 1] - offsets[r]) * vectors;
      if (items > plan.warp_row_items) {
        long_rows.push_back(r);
        long_items += items;
      }
    }
    const std::int64_t row_items =
        long_rows.empty() ? 0 : long_items / static_cast<std::int64_t>(long_rows.size());
    plan.row_group = std::min<std::int64_t>(32, team);
    while (plan.row_group < team && plan.row_group * kRowGatherBatch < row_items)
      plan.row_group *= 2;
    upload(plan.long_rows, long_rows, "kcla::grammar::long_rows");
    // Partials and arrivals only where the row phase runs in chunks (not one thread a row).
    const bool row_chunks_used = uses_row_chunks(A);
    const std::int64_t chunks =
        row_chunks_used ? static_cast<std::int64_t>(chunk_first_row.size()) : 0;
    plan.row_partials = Kokkos::View<std::uint64_t*, MemorySpace>(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "kcla::grammar::row_partials"),
        (2 * chunks * vectors * value_bytes + 7) / 8);
    plan.row_arrivals = Kokkos::View<SweepCounter*, MemorySpace>("kcla::grammar::row_arrivals",
                                                                 row_chunks_used ? rows : 0);
  }
  upload(plan.empty_rows, empty_rows, "kcla::grammar::empty_rows");
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

}  // namespace kcla::detail
