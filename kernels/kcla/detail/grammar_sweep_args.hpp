// What the grammar sweep's GPU kernels read and write (SweepArgs, raw pointers of one
// product), the coherent loads and counters of the fused kernel's level hand-off, the
// tagged slots of the dataflow kernel, and the team reduction of a row. Used by
// grammar_sweep_kernels.hpp.
#pragma once

#include <kcla/config.hpp>
#include <kcla/grammar_matrix.hpp>
#include <kcla/schedule.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace kcla::detail {

/// How a kernel reads value slots: plainly (per-level launches: the launch boundary orders
/// them), coherently (the fused kernel, after its level hand-off), or tagged (the dataflow
/// kernel: each slot is a 64-bit word holding the value and the product's tag, and a read
/// waits until the tag is the current product's).
enum SlotRead : int { kReadPlain = 0, kReadCoherent = 1, kReadTagged = 2 };

/// Values the dataflow kernel can tag: at most 4 bytes, so value and tag fit one 64-bit
/// word that is written and read in one access.
template <class T>
constexpr bool taggable_value = sizeof(T) <= 4 && std::is_trivially_copyable<T>::value;

/// The tag of a product: never 0, so a zeroed workspace holds no product's values.
KOKKOS_INLINE_FUNCTION std::uint32_t slot_tag(std::int64_t epoch) {
  return static_cast<std::uint32_t>(static_cast<std::uint64_t>(epoch) % 0xFFFFFFFFull) + 1;
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

  template <int Mode>
  KOKKOS_FORCEINLINE_FUNCTION T value(std::int32_t code, const T* read, std::int64_t b) const {
    if (code >= 0) {
      const std::int64_t at = static_cast<std::int64_t>(code) * vectors + b;
      if constexpr (Mode == kReadTagged) {
        if constexpr (taggable_value<T>) return wait_tagged<T>(tagged + at, tag);
      }
      return Mode == kReadCoherent ? load_coherent(read + at) : read[at];
    }
    if (code == kNoChild) return Semiring::zero();
    const std::int64_t t = -static_cast<std::int64_t>(code) - 1;
    return Semiring::leaf(Semiring::coefficient(coefficients[t]),
                          x[static_cast<std::int64_t>(columns[t]) * vectors + b]);
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
  template <int Mode>
  KOKKOS_FORCEINLINE_FUNCTION void finish_node(std::int32_t level, std::int64_t first,
                                               std::int64_t n, std::int64_t b,
                                               const NodeOperands& o) const {
    const T* read = layered ? buffer(level - 1) : slots;
    const T l = o.left_code >= 0 ? child<Mode>(o.left_code, read, first, b) : o.left_value;
    const T r = o.right_code >= 0 ? child<Mode>(o.right_code, read, first, b) : o.right_value;
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
    for (auto k = row_offsets[r]; k < row_offsets[r + 1]; ++k)
      sum = Semiring::combine(sum, value<Mode>(row_symbols[k], slots, b));
    y[r * vectors + b] = sum;
  }
};

/// Row r reduced by a whole team: threads split into groups over the row's symbols and
/// lanes over vectors; partials meet in team scratch.
/// Symbols [begin, end) of row r (all of it, or one chunk's part) reduced by a team; a
/// partial row is combined atomically into y, which then must start at zero.
template <int Mode, class Semiring, class Scalar, class Member>
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
        partial = Semiring::combine(partial, a.template value<Mode>(a.row_symbols[k], a.slots, b));
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

template <int Mode, class Semiring, class Scalar, class Member>
KOKKOS_INLINE_FUNCTION void row_team(const SweepArgs<Semiring, Scalar>& a, const Member& team,
                                     std::int64_t r, typename Semiring::value_type* scratch) {
  row_segment_team<Mode>(a, team, r, a.row_offsets[r], a.row_offsets[r + 1], true, scratch);
}

}  // namespace kcla::detail
