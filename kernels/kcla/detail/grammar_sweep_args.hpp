// What the grammar sweep's GPU kernels read and write (SweepArgs, raw pointers of one
// product), the coherent loads and counters of the fused kernel's level hand-off, the
// tagged slots of the dataflow kernel, and the team reduction of a row. Used by
// grammar_sweep_kernels.hpp.
#pragma once

#include <kcla/config.hpp>
#include <kcla/detail/warp_combine.hpp>
#include <kcla/grammar_matrix.hpp>
#include <kcla/schedule.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

namespace kcla::detail {

/// How a kernel reads value slots: plainly (per-level launches: the launch boundary orders
/// them), coherently (the fused kernel, after its level hand-off), or tagged (the dataflow
/// kernel: each slot is a 64-bit word holding the value and the product's tag, and a read
/// waits until the tag is the current product's).
enum SlotRead : int { kReadPlain = 0, kReadCoherent = 1, kReadTagged = 2 };

/// Symbols of C one thread gathers at once in the row phase (loads in flight per thread).
constexpr int kRowGatherBatch = 8;

/// Values the dataflow kernel can tag: at most 4 bytes, so value and tag fit one 64-bit
/// word that is written and read in one access.
template <class T>
constexpr bool taggable_value = sizeof(T) <= 4 && std::is_trivially_copyable<T>::value;

/// The tag of a product: never 0, so a zeroed workspace holds no product's values.
KOKKOS_INLINE_FUNCTION std::uint32_t slot_tag(std::int64_t epoch) {
  return static_cast<std::uint32_t>(static_cast<std::uint64_t>(epoch) % 0xFFFFFFFFull) + 1;
}

/// A dataflow product's tagged words: `workspace` grown to at least `words` and kept
/// between products (a new product's tag matches none of the old words).
template <class MemorySpace>
std::uint64_t* tagged_workspace(Kokkos::View<std::uint64_t*, MemorySpace>& workspace,
                                std::int64_t words, const char* label) {
  if (static_cast<std::int64_t>(workspace.extent(0)) < words)
    workspace = Kokkos::View<std::uint64_t*, MemorySpace>(std::string(label), words);
  return workspace.data();
}

template <class T>
KOKKOS_FORCEINLINE_FUNCTION std::uint64_t tag_value(T v, std::uint32_t tag) {
  std::uint32_t bits = 0;
  std::memcpy(&bits, &v, sizeof(T));
  return (static_cast<std::uint64_t>(tag) << 32) | bits;
}

/// Waits until slot word *p carries `tag`, then returns its value. Readers only wait for
/// slots of earlier tickets, held by teams already running (tickets are taken in order).
template <class T>
KOKKOS_FORCEINLINE_FUNCTION T wait_tagged(const std::uint64_t* p, std::uint32_t tag) {
  const volatile std::uint64_t* word = p;
  std::uint64_t w = *word;
  while (static_cast<std::uint32_t>(w >> 32) != tag) {
#if defined(__CUDA_ARCH__)
    __nanosleep(32);
#endif
    w = *word;
  }
  const auto bits = static_cast<std::uint32_t>(w);
  T v;
  std::memcpy(&v, &bits, sizeof(T));
  return v;
}

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
  std::uint64_t* tagged = nullptr;  // dataflow: one tagged word per slot and vector
  std::uint32_t tag = 0;            // dataflow: this product's tag
  std::int64_t vectors = 1;
  std::int64_t width = 0;  // layered frontier capacity
  std::int64_t num_rows = 0;
  bool layered = false;
  /// Full array on a device: the slot where the terminal table starts (terminal t's values
  /// at slot leaf_base + t, filled once per product alongside level 1), or -1: every read
  /// of a leaf evaluates it (coefficient and column, then x: a chain of dependent loads).
  std::int64_t leaf_base = -1;
  // Team row phase: C in chunks of chunk_symbols symbols, one team each. A row cut by
  // chunk boundaries leaves one partial per chunk (row_partials[chunk][0: the chunk's first
  // row, 1: its last][vector]); the last of its chunks to finish (row_arrivals counts them
  // over all products) combines them in chunk order: no atomics on y, no fill, the same
  // bits on every run. Rows without symbols are written by the chunks in turn.
  const std::int64_t* chunk_first_row = nullptr;
  std::int64_t chunk_symbols = 0, num_chunks = 0;
  T* row_partials = nullptr;
  SweepCounter* row_arrivals = nullptr;
  const std::int64_t* empty_rows = nullptr;
  std::int64_t num_empty_rows = 0;
  std::int64_t row_group = 1;  // threads per long whole row (a power of two dividing the team)
  // Whole rows of at most warp_row_items (symbols x vectors) are reduced by one warp each
  // (row_warp lanes, shuffles, no team barrier); the longer ones, listed in order in
  // long_rows, by sub-teams of row_group threads.
  std::int64_t row_warp = 1, warp_row_items = 0;
  const std::int64_t* long_rows = nullptr;
  std::int64_t num_long_rows = 0;

  /// The slot holding code's value, or -1 (a leaf evaluated on the spot, or kNoChild).
  KOKKOS_FORCEINLINE_FUNCTION std::int64_t slot_of(std::int32_t code) const {
    if (code >= 0) return code;
    if (code == kNoChild || leaf_base < 0) return -1;
    return leaf_base - static_cast<std::int64_t>(code) - 1;
  }
  /// A leaf's value from the inputs (code < 0).
  KOKKOS_FORCEINLINE_FUNCTION T evaluate_leaf(std::int32_t code, std::int64_t b) const {
    if (code == kNoChild) return Semiring::zero();
    const std::int64_t t = -static_cast<std::int64_t>(code) - 1;
    return Semiring::leaf(Semiring::coefficient(coefficients[t]),
                          x[static_cast<std::int64_t>(columns[t]) * vectors + b]);
  }
  /// Terminal t's entry of a table starting at slot `table` (vector b): evaluated and
  /// stored, tagged when the kernel reads tagged slots.
  template <int Mode>
  KOKKOS_FORCEINLINE_FUNCTION void store_leaf(std::int64_t table, std::int64_t t,
                                              std::int64_t b) const {
    const T v = evaluate_leaf(static_cast<std::int32_t>(-t - 1), b);
    const std::int64_t at = (table + t) * vectors + b;
    if constexpr (Mode == kReadTagged) {
      if constexpr (taggable_value<T>) {
        *static_cast<volatile std::uint64_t*>(tagged + at) = tag_value(v, tag);
        return;
      }
    }
    slots[at] = v;
  }
  /// The values of N codes (vector b) with every load issued before any is used: a row's
  /// gathers overlap instead of each waiting for the one before (HLC's row phase, Nsight
  /// Compute, docs/gpu-notes.md run 59). `read` is the slot array (full array).
  template <int Mode, int N>
  KOKKOS_FORCEINLINE_FUNCTION void gather(const std::int32_t (&codes)[N], const T* read,
                                          std::int64_t b, T (&out)[N]) const {
    std::int64_t at[N];
    for (int u = 0; u < N; ++u) {
      const std::int64_t s = slot_of(codes[u]);
      at[u] = s < 0 ? -1 : s * vectors + b;
    }
    if constexpr (Mode == kReadTagged && taggable_value<T>) {
      std::uint64_t w[N];
      for (int u = 0; u < N; ++u)
        w[u] = at[u] < 0 ? 0 : *static_cast<const volatile std::uint64_t*>(tagged + at[u]);
      for (int u = 0; u < N; ++u) {
        if (at[u] < 0) {
          out[u] = evaluate_leaf(codes[u], b);
          continue;
        }
        if (static_cast<std::uint32_t>(w[u] >> 32) != tag) {
          out[u] = wait_tagged<T>(tagged + at[u], tag);
          continue;
        }
        const auto bits = static_cast<std::uint32_t>(w[u]);
        std::memcpy(&out[u], &bits, sizeof(T));
      }
    } else {
      for (int u = 0; u < N; ++u)
        out[u] = at[u] < 0               ? evaluate_leaf(codes[u], b)
                 : Mode == kReadCoherent ? load_coherent(read + at[u])
                                         : read[at[u]];
    }
  }

  /// The value of a code (vector b): a slot of `read`, a terminal table entry (in the
  /// slot array, full array only), or a leaf evaluated on the spot.
  template <int Mode>
  KOKKOS_FORCEINLINE_FUNCTION T value(std::int32_t code, const T* read, std::int64_t b) const {
    const std::int64_t s = slot_of(code);
    if (s < 0) return evaluate_leaf(code, b);
    const std::int64_t at = s * vectors + b;
    if constexpr (Mode == kReadTagged) {
      if constexpr (taggable_value<T>) return wait_tagged<T>(tagged + at, tag);
    }
    return Mode == kReadCoherent ? load_coherent(read + at) : read[at];
  }
  /// Child `code` of a node whose level (full array: phase) starts at slot `first`: a slot
  /// of `read`, a leaf, or, in a phase merging several levels, a rule of the same phase
  /// (code >= first), whose subtree is walked down to the slots and leaves below the phase.
  template <int Mode>
  KOKKOS_FORCEINLINE_FUNCTION T child(std::int32_t code, const T* read, std::int64_t first,
                                      std::int64_t b) const {
    if (layered || code < first) return value<Mode>(code, read, b);
    // Depth-first, right child pushed first; a phase of k levels keeps at most k + 1 codes.
    std::int32_t stack[kMaxPhaseLevels + 1];
    int top = 0;
    stack[top++] = code;
    T sum = Semiring::zero();
    while (top > 0) {
      const std::int32_t c = stack[--top];
      if (c >= first) {
        stack[top++] = right[c];
        stack[top++] = left[c];
      } else {
        sum = Semiring::combine(sum, value<Mode>(c, read, b));
      }
    }
    return sum;
  }
  KOKKOS_FORCEINLINE_FUNCTION T* buffer(std::int32_t level) const {
    return slots + (level % 2) * width * vectors;
  }
  /// A node's operands as far as they can be known before the level below is complete:
  /// child codes, and the values of leaf children evaluated on the spot (inputs only, no
  /// slot or terminal-table reads).
  struct NodeOperands {
    std::int32_t left_code, right_code;
    T left_value, right_value;
  };
  KOKKOS_FORCEINLINE_FUNCTION NodeOperands prefetch_node(std::int64_t n, std::int64_t b) const {
    NodeOperands o;
    o.left_code = left[n];
    o.right_code = right[n];
    o.left_value = slot_of(o.left_code) < 0 ? evaluate_leaf(o.left_code, b) : Semiring::zero();
    o.right_value = slot_of(o.right_code) < 0 ? evaluate_leaf(o.right_code, b) : Semiring::zero();
    return o;
  }
  /// Completes node n of `level` (global index, level starts at first), vector b: reads the
  /// children that are slots and stores the node's value.
  template <int Mode>
  KOKKOS_FORCEINLINE_FUNCTION void finish_node(std::int32_t level, std::int64_t first,
                                               std::int64_t n, std::int64_t b,
                                               const NodeOperands& o) const {
    const T* read = layered ? buffer(level - 1) : slots;
    const T l = slot_of(o.left_code) >= 0 ? child<Mode>(o.left_code, read, first, b) : o.left_value;
    const T r =
        slot_of(o.right_code) >= 0 ? child<Mode>(o.right_code, read, first, b) : o.right_value;
    if constexpr (Mode == kReadTagged) {
      if constexpr (taggable_value<T>) {
        // One 64-bit store: value and tag become visible together.
        *static_cast<volatile std::uint64_t*>(tagged + n * vectors + b) =
            tag_value(Semiring::combine(l, r), tag);
        return;
      }
    }
    T* target = layered ? buffer(level) + (n - first) * vectors : slots + n * vectors;
    target[b] = Semiring::combine(l, r);
  }
  /// Node item: node n of `level`, vector b, in one go.
  template <int Mode>
  KOKKOS_FORCEINLINE_FUNCTION void node(std::int32_t level, std::int64_t first, std::int64_t n,
                                        std::int64_t b) const {
    finish_node<Mode>(level, first, n, b, prefetch_node(n, b));
  }
  /// Emit item of layered level `level` (0: a terminal standing in C).
  template <int Mode>
  KOKKOS_FORCEINLINE_FUNCTION void emit(std::int32_t level, std::int64_t e, std::int64_t b) const {
    // A terminal standing in C has code -(t+1) (encode_terminal is host-only).
    const T v = level == 0 ? value<Mode>(-emit_positions[e] - 1, nullptr, b)
                           : value<Mode>(emit_positions[e], buffer(level), b);
    Semiring::atomic_combine(&y[static_cast<std::int64_t>(emit_rows[e]) * vectors + b], v);
  }
  /// Row r, vector b, reduced by one thread.
  template <int Mode>
  KOKKOS_FORCEINLINE_FUNCTION void row_serial(std::int64_t r, std::int64_t b) const {
    T sum = Semiring::zero();
    const std::int64_t end = row_offsets[r + 1];
    for (auto k = row_offsets[r]; k < end; k += kRowGatherBatch) {
      std::int32_t codes[kRowGatherBatch];
      T v[kRowGatherBatch];
      for (int u = 0; u < kRowGatherBatch; ++u)
        codes[u] = k + u < end ? row_symbols[k + u] : kNoChild;
      gather<Mode>(codes, slots, b, v);
      for (int u = 0; u < kRowGatherBatch && k + u < end; ++u) sum = Semiring::combine(sum, v[u]);
    }
    y[r * vectors + b] = sum;
  }
};

/// The combine of C's symbols first, first + step, ... (below end) for vector b, gathered
/// kRowGatherBatch at a time in the order one symbol at a time would combine them.
template <int Mode, class Semiring, class Scalar>
KOKKOS_FORCEINLINE_FUNCTION typename Semiring::value_type strided_symbols(
    const SweepArgs<Semiring, Scalar>& a, std::int64_t first, std::int64_t end, std::int64_t step,
    std::int64_t b) {
  using T = typename Semiring::value_type;
  T partial = Semiring::zero();
  for (auto k = first; k < end; k += step * kRowGatherBatch) {
    std::int32_t codes[kRowGatherBatch];
    T v[kRowGatherBatch];
    for (int u = 0; u < kRowGatherBatch; ++u)
      codes[u] = k + u * step < end ? a.row_symbols[k + u * step] : kNoChild;
    a.template gather<Mode>(codes, a.slots, b, v);
    for (int u = 0; u < kRowGatherBatch && k + u * step < end; ++u)
      partial = Semiring::combine(partial, v[u]);
  }
  return partial;
}

/// Thread t holds the partial of group `part` (of `groups`) for its lane in scratch[t];
/// afterwards group 0's threads hold the combine of their lane's groups. A tree: log2
/// steps instead of one thread walking them all. Every thread of the team calls it.
template <class Semiring, class Member, class T>
KOKKOS_INLINE_FUNCTION void reduce_groups(const Member& team, T* scratch, std::int64_t t,
                                          std::int64_t part, std::int64_t groups,
                                          std::int64_t lanes) {
  team.team_barrier();
  std::int64_t span = 1;
  while (span < groups) span *= 2;
  for (std::int64_t half = span / 2; half >= 1; half /= 2) {
    if (part < half && part + half < groups)
      scratch[t] = Semiring::combine(scratch[t], scratch[t + half * lanes]);
    team.team_barrier();
  }
}

/// Symbols [begin, end) of row r reduced by a team into out[0 .. vectors): threads split
/// into groups over the symbols and lanes over vectors; partials meet in team scratch.
template <int Mode, class Semiring, class Scalar, class Member>
KOKKOS_INLINE_FUNCTION void row_segment_team(const SweepArgs<Semiring, Scalar>& a,
                                             const Member& team, std::int64_t begin,
                                             std::int64_t end, typename Semiring::value_type* out,
                                             typename Semiring::value_type* scratch) {
  const int team_size = team.team_size(), t = team.team_rank();
  const std::int64_t lanes = a.vectors < team_size ? a.vectors : team_size;
  const std::int64_t groups = team_size / lanes;
  const std::int64_t lane = t % lanes, group = t / lanes;
  for (std::int64_t b0 = 0; b0 < a.vectors; b0 += lanes) {
    const std::int64_t b = b0 + lane;
    scratch[t] = group < groups && b < a.vectors
                     ? strided_symbols<Mode>(a, begin + group, end, groups, b)
                     : Semiring::zero();
    reduce_groups<Semiring>(team, scratch, t, group, groups, lanes);
    if (group == 0 && b < a.vectors) out[b] = scratch[lane];
    team.team_barrier();
  }
}

/// Whether whole row r is reduced by a warp (whole_rows_warp) rather than a sub-team.
template <class Semiring, class Scalar>
KOKKOS_FORCEINLINE_FUNCTION bool is_warp_row(const SweepArgs<Semiring, Scalar>& a, std::int64_t r) {
  return (a.row_offsets[r + 1] - a.row_offsets[r]) * a.vectors <= a.warp_row_items;
}

/// The short whole rows of [first, end), one row per warp at a time, warps independent:
/// lanes over vectors (a power of two), parts of the warp over the row's symbols, partials
/// met by shuffles: a short row costs no team barrier (docs/level-phases.md).
template <int Mode, class Semiring, class Scalar, class Member>
KOKKOS_INLINE_FUNCTION void whole_rows_warp(const SweepArgs<Semiring, Scalar>& a,
                                            const Member& team, std::int64_t first,
                                            std::int64_t end) {
  const std::int64_t w = a.row_warp, t = team.team_rank();
  const std::int64_t warps = team.team_size() / w, warp = t / w, g = t % w;
  std::int64_t lanes = 1;
  while (lanes * 2 <= w && lanes * 2 <= a.vectors) lanes *= 2;
  const std::int64_t parts = w / lanes, lane = g % lanes, part = g / lanes;
  for (std::int64_t r = first + warp; r < end; r += warps) {
    // Rows without symbols are written by the chunks in turn (row_chunk_team), once.
    if (a.row_offsets[r] == a.row_offsets[r + 1] || !is_warp_row(a, r)) continue;
    for (std::int64_t b0 = 0; b0 < a.vectors; b0 += lanes) {
      const std::int64_t b = b0 + lane;
      auto partial = b < a.vectors ? strided_symbols<Mode>(a, a.row_offsets[r] + part,
                                                           a.row_offsets[r + 1], parts, b)
                                   : Semiring::zero();
      partial = combine_warp_parts<Semiring>(partial, lanes, parts);
      if (part == 0 && b < a.vectors) a.y[r * a.vectors + b] = partial;
    }
  }
}

/// The long whole rows long_rows[first .. end) reduced by sub-teams of `group` threads (a
/// power of two that divides the team), one row per sub-team per round. Within a sub-team,
/// lanes over vectors and groups of threads over the row's symbols, as in row_segment_team;
/// every sub-team passes the same barriers.
template <int Mode, class Semiring, class Scalar, class Member>
KOKKOS_INLINE_FUNCTION void long_rows_team(const SweepArgs<Semiring, Scalar>& a, const Member& team,
                                           std::int64_t first, std::int64_t end, std::int64_t group,
                                           typename Semiring::value_type* scratch) {
  const std::int64_t t = team.team_rank();
  const std::int64_t subteams = team.team_size() / group, sub = t / group, g = t % group;
  const std::int64_t lanes = a.vectors < group ? a.vectors : group;
  const std::int64_t groups = group / lanes;
  const std::int64_t lane = g % lanes, part = g / lanes;
  for (std::int64_t base = first; base < end; base += subteams) {
    const bool has_row = base + sub < end && sub < subteams;
    const std::int64_t r = has_row ? a.long_rows[base + sub] : 0;
    for (std::int64_t b0 = 0; b0 < a.vectors; b0 += lanes) {
      const std::int64_t b = b0 + lane;
      scratch[t] =
          has_row && part < groups && b < a.vectors
              ? strided_symbols<Mode>(a, a.row_offsets[r] + part, a.row_offsets[r + 1], groups, b)
              : Semiring::zero();
      reduce_groups<Semiring>(team, scratch, t, part, groups, lanes);
      if (has_row && part == 0 && b < a.vectors) a.y[r * a.vectors + b] = scratch[t];
      team.team_barrier();
    }
  }
}

/// The first index of the sorted list[0 .. n) whose value is at least v.
KOKKOS_INLINE_FUNCTION std::int64_t lower_bound_index(const std::int64_t* list, std::int64_t n,
                                                      std::int64_t v) {
  std::int64_t lo = 0, hi = n;
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    if (list[mid] < v)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/// Chunk c of C reduced by a team: its whole rows into y (short ones by warps, long ones by
/// sub-teams), and each row
/// cut by the chunk's bounds (at most two) into the chunk's partial; the last of a cut
/// row's chunks to finish combines its partials in chunk order into y.
template <int Mode, class Semiring, class Scalar, class Member>
KOKKOS_INLINE_FUNCTION void row_chunk_team(const SweepArgs<Semiring, Scalar>& a, const Member& team,
                                           std::int64_t c, typename Semiring::value_type* scratch) {
  using T = typename Semiring::value_type;
  const std::int64_t B = a.vectors, cs = a.chunk_symbols;
  const std::int64_t total = a.row_offsets[a.num_rows];
  const std::int64_t c0 = c * cs, c1 = c0 + cs < total ? c0 + cs : total;
  const std::int64_t stride = a.num_chunks * team.team_size();
  for (std::int64_t i = c * team.team_size() + team.team_rank(); i < a.num_empty_rows * B;
       i += stride)
    a.y[a.empty_rows[i / B] * B + i % B] = Semiring::zero();
  // The chunk's rows lie in [lo, hi]: lo holds symbol c0, hi the next chunk's first symbol
  // (or is the last row); rows strictly between them are whole.
  const std::int64_t lo = a.chunk_first_row[c];
  const std::int64_t hi = c + 1 < a.num_chunks ? a.chunk_first_row[c + 1] : a.num_rows - 1;
  const bool lo_cut = a.row_offsets[lo] < c0 || a.row_offsets[lo + 1] > c1;
  const bool hi_in = hi > lo && a.row_offsets[hi] < c1;
  const bool hi_cut = hi_in && a.row_offsets[hi + 1] > c1;
  const std::int64_t whole_first = lo_cut ? lo + 1 : lo;
  const std::int64_t whole_end =
      hi > lo ? (hi_in && !hi_cut ? hi + 1 : hi) : (lo_cut ? lo : lo + 1);
  if (whole_first < whole_end) {
    whole_rows_warp<Mode>(a, team, whole_first, whole_end);
    const std::int64_t l0 = lower_bound_index(a.long_rows, a.num_long_rows, whole_first);
    const std::int64_t l1 = lower_bound_index(a.long_rows, a.num_long_rows, whole_end);
    if (l0 < l1) long_rows_team<Mode>(a, team, l0, l1, a.row_group, scratch);
  }
  for (int side = 0; side < 2; ++side) {
    if (side == 0 ? !lo_cut : !hi_cut) continue;
    const std::int64_t r = side == 0 ? lo : hi;
    const std::int64_t r0 = a.row_offsets[r], r1 = a.row_offsets[r + 1];
    row_segment_team<Mode>(a, team, r0 > c0 ? r0 : c0, r1 < c1 ? r1 : c1,
                           a.row_partials + (2 * c + side) * B, scratch);
    const std::int64_t cf = r0 / cs, cl = (r1 - 1) / cs;
    // Every thread's partial stores ordered before the chunk's arrival.
    Kokkos::memory_fence();
    team.team_barrier();
    int last = 0;
    Kokkos::single(
        Kokkos::PerTeam(team),
        [&](int& is_last) {
          Kokkos::memory_fence();
          const auto before = Kokkos::atomic_fetch_add(&a.row_arrivals[r], SweepCounter(1));
          is_last = (before + 1) % static_cast<SweepCounter>(cl - cf + 1) == 0;
          Kokkos::memory_fence();
        },
        last);
    if (!last) continue;
    // Chunk k's partial of row r: side 0 where r is k's first row (every chunk after the
    // row's first), side 1 where r starts inside k after another row.
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, B), [&](std::int64_t b) {
      T sum = Semiring::zero();
      for (std::int64_t k = cf; k <= cl; ++k) {
        const std::int64_t at = 2 * k + (a.chunk_first_row[k] != r ? 1 : 0);
        sum = Semiring::combine(sum, load_coherent(a.row_partials + at * B + b));
      }
      a.y[r * B + b] = sum;
    });
    team.team_barrier();
  }
}

}  // namespace kcla::detail
