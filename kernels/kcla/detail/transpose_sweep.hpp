// The left product z = A^T y over a grammar matrix's transpose schedule
// (kcla/transpose_schedule.hpp): one launch per level group, top down, then one for the
// columns; or, on a device (dataflow), one ticketed kernel whose node reads wait for their
// own node's tag. Every value is a pull (a combine over a node's references in a fixed
// order): no atomics, the same bits on every run, any semiring.
#pragma once

#include <kcla/detail/grammar_sweep.hpp>
#include <kcla/detail/transpose_views.hpp>
#include <kcla/error.hpp>
#include <kcla/grammar_matrix.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <typeindex>
#include <typeinfo>

namespace kcla::detail {

// Tuning (measured on the H200, docs/gpu-notes.md run 26): consecutive level groups of at
// most kTransposeNarrowItems (node, vector) items each run in one kernel of one team of
// kTransposeNarrowTeam threads, with a team barrier between groups instead of a kernel
// boundary (a RePair grammar's top levels hold a handful of rules each).
constexpr std::int64_t kTransposeNarrowItems = 1024;
constexpr int kTransposeNarrowTeam = 512;
/// Dataflow: threads per team, one item (node or column, vector) each per ticket.
constexpr int kTransposeDataflowTeam = 256;

/// Raw pointers of one left product with B vectors (y: rows x B, z: cols x B, node values:
/// nodes x B, all vector-innermost).
template <class Semiring, class Scalar>
struct TransposeArgs {
  using T = typename Semiring::value_type;
  const std::int64_t* in_offsets = nullptr;
  const std::int32_t* in_sources = nullptr;
  const Scalar* coefficients = nullptr;
  const std::int64_t* terminal_offsets = nullptr;
  const std::int32_t* terminal_sources = nullptr;
  const std::int64_t* column_offsets = nullptr;
  const T* y = nullptr;
  T* z = nullptr;
  T* nodes = nullptr;
  std::int64_t vectors = 1;

  /// Value b of a reference: a row of y or an evaluated node.
  KOKKOS_INLINE_FUNCTION T source(std::int32_t c, std::int64_t b) const {
    return c >= 0 ? nodes[static_cast<std::int64_t>(c) * vectors + b]
                  : y[(-static_cast<std::int64_t>(c) - 1) * vectors + b];
  }
  /// The combine of references [e0, e1) of `sources` (vector b), in order, node values
  /// read plainly (they were written by an earlier kernel or before a barrier).
  KOKKOS_INLINE_FUNCTION T combine_sources(const std::int32_t* sources, std::int64_t e0,
                                           std::int64_t e1, std::int64_t b) const {
    auto acc = Semiring::zero();
    for (auto e = e0; e < e1; ++e) acc = Semiring::combine(acc, source(sources[e], b));
    return acc;
  }
  /// Value b of column j: its terminals' coefficients applied to their references'
  /// combines, each read through `reader.combine_sources` (plain or tagged).
  template <class Reader>
  KOKKOS_INLINE_FUNCTION T column(const Reader& reader, std::int64_t j, std::int64_t b) const {
    auto acc = Semiring::zero();
    for (auto k = column_offsets[j]; k < column_offsets[j + 1]; ++k) {
      const T u =
          reader.combine_sources(terminal_sources, terminal_offsets[k], terminal_offsets[k + 1], b);
      acc = Semiring::combine(acc, Semiring::leaf(Semiring::coefficient(coefficients[k]), u));
    }
    return acc;
  }
};

/// Device form: one thread per (node, vector), vectors fastest (coalesced node values).
template <class Semiring, class Scalar>
struct TransposeNodesFunctor {
  TransposeArgs<Semiring, Scalar> a;
  std::int64_t first = 0;
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i) const {
    const std::int64_t n = first + i / a.vectors, b = i % a.vectors;
    a.nodes[n * a.vectors + b] =
        a.combine_sources(a.in_sources, a.in_offsets[n], a.in_offsets[n + 1], b);
  }
};

/// Device form of a run of narrow groups [group_begin, group_end): one team, a barrier
/// between groups (writes before a barrier are visible to the whole team after it).
template <class Semiring, class Scalar, class ExecutionSpace>
struct TransposeNarrowRunFunctor {
  TransposeArgs<Semiring, Scalar> a;
  const std::int64_t* level_offsets = nullptr;
  std::int32_t group_begin = 0, group_end = 0;
  using member = typename Kokkos::TeamPolicy<ExecutionSpace>::member_type;
  KOKKOS_INLINE_FUNCTION void operator()(const member& team) const {
    for (std::int32_t g = group_begin; g < group_end; ++g) {
      const std::int64_t first = level_offsets[g - 1];
      const std::int64_t items = (level_offsets[g] - first) * a.vectors;
      const TransposeNodesFunctor<Semiring, Scalar> node{a, first};
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, items), [&](std::int64_t i) { node(i); });
      team.team_barrier();
    }
  }
};

template <class Semiring, class Scalar>
struct TransposeColumnsFunctor {
  TransposeArgs<Semiring, Scalar> a;
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i) const {
    const std::int64_t j = i / a.vectors, b = i % a.vectors;
    a.z[j * a.vectors + b] = a.column(a, j, b);
  }
};

/// Dataflow form: one kernel. Teams take tickets of one item per thread from a counter,
/// in item order: the nodes (top level first, so a node's references are earlier items),
/// then the columns. A read of a node waits for that node's tag; nothing waits for a whole
/// level. Values of at most 4 bytes (a tagged slot is one 64-bit word).
template <class Semiring, class Scalar, class ExecutionSpace>
struct TransposeDataflowFunctor {
  using T = typename Semiring::value_type;
  using member = typename Kokkos::TeamPolicy<ExecutionSpace>::member_type;
  TransposeArgs<Semiring, Scalar> a;
  std::uint64_t* tagged = nullptr;
  std::uint32_t tag = 0;
  unsigned long long* counter = nullptr;
  std::int64_t first_ticket = 0;  // tickets handed out by earlier products
  std::int64_t node_items = 0, column_items = 0;

  /// The combine of references [e0, e1) of `sources` (vector b), in order. Loads are issued
  /// kRowGatherBatch at a time before any tag is checked: a long reference list (a node or
  /// terminal used by hundreds of rows) then costs a few round trips, not one per reference.
  KOKKOS_FORCEINLINE_FUNCTION T combine_sources(const std::int32_t* sources, std::int64_t e0,
                                                std::int64_t e1, std::int64_t b) const {
    constexpr int N = kRowGatherBatch;
    T acc = Semiring::zero();
    for (std::int64_t e = e0; e < e1; e += N) {
      std::int32_t c[N];
      std::uint64_t w[N];
      for (int u = 0; u < N; ++u) c[u] = e + u < e1 ? sources[e + u] : -1;
      for (int u = 0; u < N; ++u)
        w[u] = c[u] >= 0 ? *static_cast<const volatile std::uint64_t*>(
                               tagged + static_cast<std::int64_t>(c[u]) * a.vectors + b)
                         : 0;
      for (int u = 0; u < N && e + u < e1; ++u) {
        T v;
        if (c[u] < 0) {
          v = a.y[(-static_cast<std::int64_t>(c[u]) - 1) * a.vectors + b];
        } else if (static_cast<std::uint32_t>(w[u] >> 32) != tag) {
          v = wait_tagged<T>(tagged + static_cast<std::int64_t>(c[u]) * a.vectors + b, tag);
        } else {
          const auto bits = static_cast<std::uint32_t>(w[u]);
          std::memcpy(&v, &bits, sizeof(T));
        }
        acc = Semiring::combine(acc, v);
      }
    }
    return acc;
  }
  KOKKOS_INLINE_FUNCTION void operator()(const member& team) const {
    std::int64_t ticket = 0;
    Kokkos::single(
        Kokkos::PerTeam(team),
        [&](std::int64_t& t) {
          t = static_cast<std::int64_t>(Kokkos::atomic_fetch_add(counter, 1ull)) - first_ticket;
        },
        ticket);
    const std::int64_t i = ticket * team.team_size() + team.team_rank();
    const std::int64_t B = a.vectors;
    if (i < node_items) {
      const std::int64_t n = i / B, b = i % B;
      const T acc = combine_sources(a.in_sources, a.in_offsets[n], a.in_offsets[n + 1], b);
      *static_cast<volatile std::uint64_t*>(tagged + n * B + b) = tag_value(acc, tag);
    } else if (i < node_items + column_items) {
      const std::int64_t j = (i - node_items) / B, b = (i - node_items) % B;
      a.z[j * B + b] = a.column(*this, j, b);
    }
  }
};

/// Host form: one thread per node (or column), the B vectors in the inner loop so each
/// reference is read once and the vector loop runs over contiguous values.
template <class Semiring, class Scalar>
struct TransposeNodesHostFunctor {
  TransposeArgs<Semiring, Scalar> a;
  std::int64_t first = 0;
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i) const {
    const std::int64_t n = first + i, B = a.vectors;
    auto* out = a.nodes + n * B;
    for (std::int64_t b = 0; b < B; ++b) out[b] = Semiring::zero();
    for (auto e = a.in_offsets[n]; e < a.in_offsets[n + 1]; ++e) {
      const std::int32_t c = a.in_sources[e];
      const auto* in = c >= 0 ? a.nodes + static_cast<std::int64_t>(c) * B
                              : a.y + (-static_cast<std::int64_t>(c) - 1) * B;
      for (std::int64_t b = 0; b < B; ++b) out[b] = Semiring::combine(out[b], in[b]);
    }
  }
};

template <class Semiring, class Scalar>
struct TransposeColumnsHostFunctor {
  TransposeArgs<Semiring, Scalar> a;
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t j) const {
    using T = typename Semiring::value_type;
    const std::int64_t B = a.vectors;
    auto* out = a.z + j * B;
    for (std::int64_t b = 0; b < B; ++b) out[b] = Semiring::zero();
    for (auto k = a.column_offsets[j]; k < a.column_offsets[j + 1]; ++k) {
      const T w = Semiring::coefficient(a.coefficients[k]);
      // leaf distributes over combine in every semiring, so each reference is applied
      // on its own: one pass over the references with the vector loop inside.
      for (auto e = a.terminal_offsets[k]; e < a.terminal_offsets[k + 1]; ++e) {
        const std::int32_t c = a.terminal_sources[e];
        const auto* in = c >= 0 ? a.nodes + static_cast<std::int64_t>(c) * B
                                : a.y + (-static_cast<std::int64_t>(c) - 1) * B;
        for (std::int64_t b = 0; b < B; ++b)
          out[b] = Semiring::combine(out[b], Semiring::leaf(w, in[b]));
      }
    }
  }
};

/// The launch sequence (level groups top down, then the columns) through a launcher.
template <class Semiring, class ExecutionSpace, class Scalar, class MemorySpace, class Launcher>
void launch_transpose(const TransposeViews<Scalar, MemorySpace>& t, std::int64_t num_cols,
                      const TransposeArgs<Semiring, Scalar>& a, Launcher& launch) {
  const std::int64_t B = a.vectors;
  auto narrow = [&](std::int32_t g) {
    return (t.level_offsets[g] - t.level_offsets[g - 1]) * B <= kTransposeNarrowItems;
  };
  for (std::int32_t g = 1; g <= t.depth;) {
    const auto first = t.level_offsets[g - 1], count = t.level_offsets[g] - first;
    if constexpr (sweeps_on_host<ExecutionSpace>) {
      launch.range("kcla::transpose_level", count,
                   TransposeNodesHostFunctor<Semiring, Scalar>{a, first});
      ++g;
    } else {
      std::int32_t end = g;
      while (end <= t.depth && narrow(end)) ++end;
      if (end - g >= 2) {  // two or more narrow groups: one kernel
        launch.team("kcla::transpose_narrow_levels", 1, kTransposeNarrowTeam, 0,
                    TransposeNarrowRunFunctor<Semiring, Scalar, ExecutionSpace>{
                        a, t.level_offsets_device.data(), g, end});
        g = end;
      } else {
        launch.range("kcla::transpose_level", count * B,
                     TransposeNodesFunctor<Semiring, Scalar>{a, first});
        ++g;
      }
    }
  }
  if constexpr (sweeps_on_host<ExecutionSpace>)
    launch.range("kcla::transpose_columns", num_cols,
                 TransposeColumnsHostFunctor<Semiring, Scalar>{a});
  else
    launch.range("kcla::transpose_columns", num_cols * B,
                 TransposeColumnsFunctor<Semiring, Scalar>{a});
}

/// One left product: y is num_rows x B, z num_cols x B, both vector-innermost.
template <class Semiring, class ExecutionSpace, class Scalar, class MemorySpace>
void transpose_sweep(const ExecutionSpace& exec, const GrammarMatrix<Scalar, MemorySpace>& A,
                     const typename Semiring::value_type* y, typename Semiring::value_type* z,
                     std::int64_t vectors, SweepLaunch launch) {
  using T = typename Semiring::value_type;
  auto& t = A.transpose_views();
  if (launch == SweepLaunch::fused)
    throw InvalidArgument(
        "kcla::multiply_transpose: the fused launch is not available for transposed products "
        "(use automatic, per_level, graph or dataflow)");
  if (launch == SweepLaunch::automatic)
    launch = sweeps_on_host<ExecutionSpace> ? SweepLaunch::per_level : A.transpose_launch();
  // Host threads run their per-level form; values wider than 4 bytes the graph.
  if (launch == SweepLaunch::dataflow) {
    if constexpr (sweeps_on_host<ExecutionSpace>)
      launch = SweepLaunch::per_level;
    else if constexpr (!taggable_value<T>)
      launch = SweepLaunch::graph;
  }
  const std::int64_t words = (t.num_nodes * vectors * static_cast<std::int64_t>(sizeof(T)) + 7) / 8;
  if (static_cast<std::int64_t>(t.workspace.extent(0)) < words) {
    t.workspace = Kokkos::View<std::uint64_t*, MemorySpace>(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("kcla::transpose::nodes")),
        words);
    t.graph.reset();  // the captured graph points at the old workspace
  }
  TransposeArgs<Semiring, Scalar> a;
  a.in_offsets = t.in_offsets.data();
  a.in_sources = t.in_sources.data();
  a.coefficients = t.terminal_coefficients.data();
  a.terminal_offsets = t.terminal_offsets.data();
  a.terminal_sources = t.terminal_sources.data();
  a.column_offsets = t.column_offsets.data();
  a.y = y;
  a.z = z;
  a.nodes = reinterpret_cast<T*>(t.workspace.data());
  a.vectors = vectors;
  if constexpr (!sweeps_on_host<ExecutionSpace> && taggable_value<T>) {
    if (launch == SweepLaunch::dataflow) {
      const std::int64_t node_items = t.num_nodes * vectors;
      if (t.dataflow_counter.extent(0) == 0)
        t.dataflow_counter =
            Kokkos::View<unsigned long long*, MemorySpace>("kcla::transpose::tickets", 1);
      const int team = kTransposeDataflowTeam;
      TransposeDataflowFunctor<Semiring, Scalar, ExecutionSpace> f;
      f.a = a;
      f.tagged = tagged_workspace(t.tagged_workspace, node_items, "kcla::transpose::tagged_nodes");
      f.tag = slot_tag(t.dataflow_products++);
      f.counter = t.dataflow_counter.data();
      f.first_ticket = t.dataflow_tickets;
      f.node_items = node_items;
      f.column_items = A.num_cols() * vectors;
      const std::int64_t tickets = (f.node_items + f.column_items + team - 1) / team;
      t.dataflow_tickets += tickets;
      if (tickets > 0)
        Kokkos::parallel_for("kcla::transpose_dataflow",
                             Kokkos::TeamPolicy<ExecutionSpace>(exec, tickets, team), f);
      return;
    }
  }
  if (launch == SweepLaunch::graph) {
    const std::type_index semiring_type(typeid(Semiring));
    const std::uintptr_t stream = stream_identity(exec);
    if (!t.graph || t.graph_y != y || t.graph_z != z || t.graph_vectors != vectors ||
        t.graph_type != semiring_type || t.graph_stream != stream) {
      t.graph = std::make_shared<Kokkos::Experimental::Graph<ExecutionSpace>>(
          Kokkos::Experimental::create_graph(exec, [&](const auto& root) {
            GraphLauncher<ExecutionSpace> launcher{root};
            launch_transpose<Semiring, ExecutionSpace>(t, A.num_cols(), a, launcher);
          }));
      t.graph_y = y;
      t.graph_z = z;
      t.graph_vectors = vectors;
      t.graph_type = semiring_type;
      t.graph_stream = stream;
    }
    static_cast<Kokkos::Experimental::Graph<ExecutionSpace>*>(t.graph.get())->submit();
    return;
  }
  ImmediateLauncher<ExecutionSpace> launcher{exec};
  launch_transpose<Semiring, ExecutionSpace>(t, A.num_cols(), a, launcher);
}

/// Vectors one left product may take under the matrix's workspace budget.
template <class Scalar, class MemorySpace>
std::int64_t transpose_vectors_per_chunk(const GrammarMatrix<Scalar, MemorySpace>& A,
                                         std::int64_t vectors, std::int64_t value_bytes) {
  const std::int64_t budget = A.options().workspace_budget_bytes;
  if (budget <= 0) return vectors;
  const std::int64_t per_vector =
      std::max<std::int64_t>(1, A.transpose_views().num_nodes * value_bytes);
  return std::max<std::int64_t>(1, std::min(vectors, budget / per_vector));
}

}  // namespace kcla::detail
