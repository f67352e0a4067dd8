// The grammar sweep in host form, for execution spaces whose memory is host memory
// (Serial, OpenMP). The GPU form (grammar_sweep.hpp) spreads (item, vector) pairs over
// threads; on a CPU that costs an integer division per value and, in the row phase, a
// stride of B values between consecutive reads. Here a work unit is a chunk of items
// (nodes, emits, row symbols) and each item walks its B values contiguously: slots are
// vector-innermost, so the inner loop vectorises and every cache line fetched is used
// whole. The kernels read the sweep's arguments (SweepArgs) through the template
// parameter Args.
#pragma once

#include <kcla/detail/grammar_sweep_args.hpp>
#include <kcla/grammar_matrix.hpp>
#include <kcla/schedule.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

namespace kcla::detail {

/// Execution spaces that run the host form of the sweep.
template <class ExecutionSpace>
constexpr bool sweeps_on_host =
    std::is_same<typename ExecutionSpace::memory_space, Kokkos::HostSpace>::value;

/// Backs a fresh host buffer with pages before its first product, every thread of
/// ExecutionSpace populating a slice (MADV_POPULATE_WRITE, else a write per page): pages
/// faulted one at a time inside the sweep cost more than a product of a large batch on a
/// virtual machine. Huge pages are asked for only afterwards, for the kernel to collapse in
/// the background: asked for first, a fault may stall on memory compaction for seconds.
template <class ExecutionSpace>
void populate_host_buffer(void* data, std::size_t bytes) {
#if defined(__linux__)
  const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto begin = (reinterpret_cast<std::uintptr_t>(data) + page - 1) / page * page;
  const auto end = reinterpret_cast<std::uintptr_t>(data) + bytes;
  if (page == 0 || end <= begin + (std::uintptr_t(2) << 20)) return;  // small: not worth it
  const std::uintptr_t pages = (end - begin) / page;
  const std::int64_t parts = std::max(1, ExecutionSpace().concurrency());
  Kokkos::parallel_for(
      "kcla::grammar::populate_workspace",
      Kokkos::RangePolicy<ExecutionSpace, Kokkos::Schedule<Kokkos::Static>>(0, parts),
      [=](const std::int64_t i) {
        const std::uintptr_t first = begin + pages * static_cast<std::uintptr_t>(i) /
                                                 static_cast<std::uintptr_t>(parts) * page;
        const std::uintptr_t last = begin + pages * static_cast<std::uintptr_t>(i + 1) /
                                                static_cast<std::uintptr_t>(parts) * page;
#if defined(MADV_POPULATE_WRITE)
        if (madvise(reinterpret_cast<void*>(first), last - first, MADV_POPULATE_WRITE) == 0) return;
#endif
        for (std::uintptr_t a = first; a < last; a += page)  // older kernels: touch each page
          *reinterpret_cast<volatile char*>(a) = 0;
      });
  ExecutionSpace().fence();
#if defined(MADV_HUGEPAGE)
  madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);  // a hint only
#endif
#else
  (void)data, (void)bytes;
#endif
}

/// A View of type V (in host-accessible memory) holding a copy of `values`.
template <class V, class T>
V host_copy(const std::vector<T>& values, const char* label) {
  V v(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label)), values.size());
  std::copy(values.begin(), values.end(), v.data());
  return v;
}

/// Values of one item handled per pass: a local accumulator this wide stays in L1;
/// larger B runs in blocks.
constexpr std::int64_t kHostBlock = 64;

/// Work per unit (items x B) of host launches: large enough to amortise scheduling,
/// small enough to balance a level over the threads.
constexpr std::int64_t kHostUnitValues = 16384;

/// Sets (Accumulate: combines into) t[0, n) the values b0 .. b0 + n of child `code`: a
/// slot of `read`, a leaf (terminal applied to x) or no child (the semiring zero).
template <bool Accumulate, class Semiring, class Args>
KOKKOS_FORCEINLINE_FUNCTION void host_operand(const Args& a,
                                              typename Semiring::value_type* KOKKOS_RESTRICT t,
                                              std::int32_t code,
                                              const typename Semiring::value_type* read,
                                              std::int64_t b0, std::int64_t n) {
  using T = typename Semiring::value_type;
  if (n == 1) {  // B = 1: no loop to set up
    const T v = a.template value<kReadPlain>(code, read, b0);
    t[0] = Accumulate ? Semiring::combine(t[0], v) : v;
    return;
  }
  if (code >= 0) {
    const T* KOKKOS_RESTRICT s = read + static_cast<std::int64_t>(code) * a.vectors + b0;
    for (std::int64_t b = 0; b < n; ++b) t[b] = Accumulate ? Semiring::combine(t[b], s[b]) : s[b];
  } else if (code == kNoChild) {
    for (std::int64_t b = 0; b < n; ++b)
      t[b] = Accumulate ? Semiring::combine(t[b], Semiring::zero()) : Semiring::zero();
  } else {
    const std::int64_t i = -static_cast<std::int64_t>(code) - 1;
    const T w = Semiring::coefficient(a.coefficients[i]);
    const T* KOKKOS_RESTRICT xs = a.x + static_cast<std::int64_t>(a.columns[i]) * a.vectors + b0;
    for (std::int64_t b = 0; b < n; ++b)
      t[b] =
          Accumulate ? Semiring::combine(t[b], Semiring::leaf(w, xs[b])) : Semiring::leaf(w, xs[b]);
  }
}

/// Items ahead whose operands are prefetched: the operands are random reads of B values
/// each, and without prefetches a core keeps too few of them in flight to cover memory
/// latency.
constexpr std::int64_t kHostPrefetchDistance = 16;

/// Prefetches the values b0 .. b0 + n of child `code` (see host_operand).
template <class Semiring, class Args>
KOKKOS_FORCEINLINE_FUNCTION void host_prefetch(const Args& a, std::int32_t code,
                                               const typename Semiring::value_type* read,
                                               std::int64_t b0, std::int64_t n) {
#if defined(__GNUC__) && !defined(__CUDA_ARCH__)
  using T = typename Semiring::value_type;
  if (code == kNoChild) return;
  const T* p =
      code >= 0 ? read + static_cast<std::int64_t>(code) * a.vectors + b0
                : a.x +
                      static_cast<std::int64_t>(a.columns[-static_cast<std::int64_t>(code) - 1]) *
                          a.vectors +
                      b0;
  const char* bytes = reinterpret_cast<const char*>(p);
  for (std::int64_t offset = 0; offset < n * static_cast<std::int64_t>(sizeof(T)); offset += 64)
    __builtin_prefetch(bytes + offset);
#else
  (void)a, (void)code, (void)read, (void)b0, (void)n;
#endif
}

/// Prefetches the terminal entry (column, coefficient) of a leaf child: its x address
/// depends on it.
template <class Args>
KOKKOS_FORCEINLINE_FUNCTION void host_prefetch_terminal(const Args& a, std::int32_t code) {
#if defined(__GNUC__) && !defined(__CUDA_ARCH__)
  if (code < 0 && code != kNoChild) {
    const std::int64_t t = -static_cast<std::int64_t>(code) - 1;
    __builtin_prefetch(a.columns + t);
    __builtin_prefetch(a.coefficients + t);
  }
#else
  (void)a, (void)code;
#endif
}

/// Combines acc[0, n) into y's row r, values b0 .. b0 + n; atomically where other units
/// may add to the same row concurrently.
template <class Semiring, class Args>
KOKKOS_FORCEINLINE_FUNCTION void host_combine_into_y(const Args& a, std::int64_t r,
                                                     const typename Semiring::value_type* acc,
                                                     std::int64_t b0, std::int64_t n, bool shared) {
  auto* y = a.y + r * a.vectors + b0;
  if (shared)
    for (std::int64_t b = 0; b < n; ++b) Semiring::atomic_combine(&y[b], acc[b]);
  else
    for (std::int64_t b = 0; b < n; ++b) y[b] = Semiring::combine(y[b], acc[b]);
}

/// host_operand for a child of a node whose level (full array: phase) starts at slot
/// `first`: a rule of the same phase (code >= first) is walked, value by value.
template <bool Accumulate, class Semiring, class Args>
KOKKOS_FORCEINLINE_FUNCTION void host_child(const Args& a,
                                            typename Semiring::value_type* KOKKOS_RESTRICT t,
                                            std::int32_t code,
                                            const typename Semiring::value_type* read,
                                            std::int64_t first) {
  if (a.layered || code < first) {
    host_operand<Accumulate, Semiring>(a, t, code, read, 0, a.vectors);
    return;
  }
  for (std::int64_t b = 0; b < a.vectors; ++b) {
    const auto v = a.template child<kReadPlain>(code, read, first, b);
    t[b] = Accumulate ? Semiring::combine(t[b], v) : v;
  }
}

/// Nodes [begin, end) of `level` (global indices; the level starts at `first`).
template <class Semiring, class Args>
KOKKOS_INLINE_FUNCTION void host_nodes(const Args& a, std::int32_t level, std::int64_t first,
                                       std::int64_t begin, std::int64_t end) {
  const auto* read = a.layered ? a.buffer(level - 1) : a.slots;
  // A code at or above `first` is a rule walked inside the phase: nothing to prefetch.
  auto ahead = [&](std::int32_t code) { return a.layered || code < first ? code : kNoChild; };
  for (std::int64_t n = begin; n < end; ++n) {
    if (n + 2 * kHostPrefetchDistance < end) {
      host_prefetch_terminal(a, a.left[n + 2 * kHostPrefetchDistance]);
      host_prefetch_terminal(a, a.right[n + 2 * kHostPrefetchDistance]);
    }
    if (n + kHostPrefetchDistance < end) {
      host_prefetch<Semiring>(a, ahead(a.left[n + kHostPrefetchDistance]), read, 0, a.vectors);
      host_prefetch<Semiring>(a, ahead(a.right[n + kHostPrefetchDistance]), read, 0, a.vectors);
    }
    auto* target = a.layered ? a.buffer(level) + (n - first) * a.vectors : a.slots + n * a.vectors;
    host_child<false, Semiring>(a, target, a.left[n], read, first);
    host_child<true, Semiring>(a, target, a.right[n], read, first);
  }
}

/// The child code of emit e of list `level`: a frontier position, or in list 0 a terminal
/// standing in C, coded -(t+1) as a leaf child.
template <class Args>
KOKKOS_FORCEINLINE_FUNCTION std::int32_t emit_code(const Args& a, std::int32_t level,
                                                   std::int64_t e) {
  return level == 0 ? -a.emit_positions[e] - 1 : a.emit_positions[e];
}

/// Emits [begin, end) of layered emit list `level` (0: terminals standing in C). Each list
/// is in row order, so a run of one row inside the chunk is this unit's alone and is
/// combined into y once, plainly; the runs at the chunk's ends may continue in the
/// neighbouring units and are combined atomically.
template <class Semiring, class Args>
KOKKOS_INLINE_FUNCTION void host_emits(const Args& a, std::int32_t level, std::int64_t begin,
                                       std::int64_t end) {
  using T = typename Semiring::value_type;
  const T* read = level == 0 ? nullptr : a.buffer(level);
  T acc[kHostBlock];
  for (std::int64_t run = begin; run < end;) {
    const std::int32_t r = a.emit_rows[run];
    std::int64_t run_end = run + 1;
    while (run_end < end && a.emit_rows[run_end] == r) ++run_end;
    const bool shared = run == begin || run_end == end;
    for (std::int64_t b0 = 0; b0 < a.vectors; b0 += kHostBlock) {
      const std::int64_t n = a.vectors - b0 < kHostBlock ? a.vectors - b0 : kHostBlock;
      for (std::int64_t b = 0; b < n; ++b) acc[b] = Semiring::zero();
      for (std::int64_t e = run; e < run_end; ++e) {
        if (e + kHostPrefetchDistance < end)
          host_prefetch<Semiring>(a, emit_code(a, level, e + kHostPrefetchDistance), read, b0, n);
        host_operand<true, Semiring>(a, acc, emit_code(a, level, e), read, b0, n);
      }
      host_combine_into_y<Semiring>(a, r, acc, b0, n, shared);
    }
    run = run_end;
  }
}

/// Symbols [begin, end) of row r (full array); a whole row is stored, a partial one
/// combined atomically into y, which then must start at zero.
template <class Semiring, class Args>
KOKKOS_INLINE_FUNCTION void host_row_segment(const Args& a, std::int64_t r, std::int64_t begin,
                                             std::int64_t end, bool whole_row) {
  using T = typename Semiring::value_type;
  T acc[kHostBlock];
  for (std::int64_t b0 = 0; b0 < a.vectors; b0 += kHostBlock) {
    const std::int64_t n = a.vectors - b0 < kHostBlock ? a.vectors - b0 : kHostBlock;
    for (std::int64_t b = 0; b < n; ++b) acc[b] = Semiring::zero();
    for (std::int64_t k = begin; k < end; ++k) {
      if (k + kHostPrefetchDistance < end)
        host_prefetch<Semiring>(a, a.row_symbols[k + kHostPrefetchDistance], a.slots, b0, n);
      host_operand<true, Semiring>(a, acc, a.row_symbols[k], a.slots, b0, n);
    }
    T* y = a.y + r * a.vectors + b0;
    if (whole_row)
      for (std::int64_t b = 0; b < n; ++b) y[b] = acc[b];
    else
      for (std::int64_t b = 0; b < n; ++b) Semiring::atomic_combine(&y[b], acc[b]);
  }
}

// --- per-level launches --------------------------------------------------------------

/// One level: units [0, node_units) take chunks of the level's nodes, the rest chunks of
/// the emits of level - 1 (layered).
template <class Semiring, class Args>
struct HostLevelFunctor {
  Args a;
  std::int32_t level;
  std::int64_t first, count;            // nodes of this level
  std::int64_t emit_first, emit_count;  // layered: emits of level - 1
  std::int64_t chunk, node_units;
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t unit) const {
    if (unit < node_units) {
      const std::int64_t begin = first + unit * chunk;
      host_nodes<Semiring>(a, level, first, begin,
                           begin + chunk < first + count ? begin + chunk : first + count);
    } else {
      const std::int64_t begin = emit_first + (unit - node_units) * chunk;
      const std::int64_t last = emit_first + emit_count;
      host_emits<Semiring>(a, level - 1, begin, begin + chunk < last ? begin + chunk : last);
    }
  }
};

/// The row phase of the full array, by row: C split into chunks of chunk_symbols symbols,
/// one per unit (so a matrix with few, very long rows still fills every thread). y starts
/// at zero.
template <class Semiring, class Args>
struct HostRowsFunctor {
  Args a;
  const std::int64_t* chunk_first_row;
  std::int64_t chunk_symbols, total_symbols;
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t unit) const {
    const std::int64_t c0 = unit * chunk_symbols;
    const std::int64_t c1 = c0 + chunk_symbols < total_symbols ? c0 + chunk_symbols : total_symbols;
    for (std::int64_t r = chunk_first_row[unit]; r < a.num_rows && a.row_offsets[r] < c1; ++r) {
      const std::int64_t begin = a.row_offsets[r] > c0 ? a.row_offsets[r] : c0;
      const std::int64_t end = a.row_offsets[r + 1] < c1 ? a.row_offsets[r + 1] : c1;
      if (begin >= end) continue;
      const bool whole = a.row_offsets[r] >= c0 && a.row_offsets[r + 1] <= c1;
      host_row_segment<Semiring>(a, r, begin, end, whole);
    }
  }
};

/// The row phase of the full array, by occurrence: each unit takes a range of the codes
/// standing in C, in slot order (so the slots are read as a stream, not gathered), and
/// combines each code's values into the rows it occurs in, in its thread's own copy of y.
template <class Semiring, class Args, class Token>
struct HostOccurrenceRowsFunctor {
  using T = typename Semiring::value_type;
  Args a;
  Token token;
  const std::int32_t* codes;    // distinct codes of C: slots ascending, then terminals
  const std::int64_t* offsets;  // codes[i] occurs in rows[offsets[i], offsets[i + 1])
  const std::int32_t* rows;
  const std::int64_t* units;  // unit u: codes [units[u], units[u + 1])
  T* copies;                  // token.size() copies of y
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t unit) const {
    const int id = token.acquire();
    T* y = copies + static_cast<std::int64_t>(id) * a.num_rows * a.vectors;
    T v[kHostBlock];
    for (std::int64_t i = units[unit]; i < units[unit + 1]; ++i)
      for (std::int64_t b0 = 0; b0 < a.vectors; b0 += kHostBlock) {
        const std::int64_t n = a.vectors - b0 < kHostBlock ? a.vectors - b0 : kHostBlock;
        host_operand<false, Semiring>(a, v, codes[i], a.slots, b0, n);
        if (n == 1)
          for (std::int64_t k = offsets[i]; k < offsets[i + 1]; ++k)
            y[rows[k]] = Semiring::combine(y[rows[k]], v[0]);
        else
          for (std::int64_t k = offsets[i]; k < offsets[i + 1]; ++k) {
            T* KOKKOS_RESTRICT yr = y + static_cast<std::int64_t>(rows[k]) * a.vectors + b0;
            for (std::int64_t b = 0; b < n; ++b) yr[b] = Semiring::combine(yr[b], v[b]);
          }
      }
    token.release(id);
  }
};

/// y = the combination of the threads' copies of y.
template <class Semiring>
struct HostReduceCopiesFunctor {
  using T = typename Semiring::value_type;
  T* y;
  const T* copies;
  std::int64_t size, count;  // values of y, copies
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i) const {
    T sum = copies[i];
    for (std::int64_t c = 1; c < count; ++c) sum = Semiring::combine(sum, copies[c * size + i]);
    y[i] = sum;
  }
};

template <class Semiring>
struct HostFillFunctor {
  typename Semiring::value_type* data;
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i) const { data[i] = Semiring::zero(); }
};

/// Items of a host unit for B vectors.
inline std::int64_t host_chunk(std::int64_t vectors) {
  return vectors < kHostUnitValues ? kHostUnitValues / vectors : 1;
}

/// Largest y (rows x B values of 8 bytes, the widest value type, so that the choice and
/// the ticket table hold for every semiring) for which the full array's row phase runs by
/// occurrence: every thread combines into its own copy of y, which must stay in its cache.
constexpr std::int64_t kHostRowCopyBytes = std::int64_t(1) << 20;

template <class Scalar, class MemorySpace>
bool host_rows_by_occurrence(const GrammarMatrix<Scalar, MemorySpace>& A, std::int64_t vectors) {
  return A.schedule() == SweepSchedule::full_array &&
         A.num_rows() * vectors * 8 <= kHostRowCopyBytes;
}

/// Builds what the row phase by occurrence needs: C's codes grouped by code (once per
/// matrix), units for `vectors` and the threads' copies of y.
template <class ExecutionSpace, class Scalar, class MemorySpace>
void prepare_host_plan(const GrammarMatrix<Scalar, MemorySpace>& A, std::int64_t vectors,
                       std::int64_t value_bytes) {
  if (!host_rows_by_occurrence(A, vectors)) return;
  auto& plan = A.plan();
  const std::int64_t symbols = static_cast<std::int64_t>(A.row_symbols.extent(0));
  if (static_cast<std::int64_t>(plan.occurrence_rows.extent(0)) != symbols) {
    // Counting sort of C's (code, row) pairs by code; rows stay ascending within a code.
    // Every thread owns a range of keys and scans all of C for them: the scans are
    // sequential, the counts and writes (random) are split.
    const std::int64_t slots = A.level_offsets.empty() ? 0 : A.level_offsets.back();
    const std::int64_t terminals = static_cast<std::int64_t>(A.terminal_columns.extent(0));
    const std::int64_t keys = slots + terminals;
    const std::int32_t* row_symbols = A.row_symbols.data();
    const std::int64_t* row_offsets = A.row_offsets_host.data();
    const std::int64_t rows = A.num_rows();
    const std::int64_t parts = std::max(1, ExecutionSpace().concurrency());
    auto key = [slots](std::int32_t code) {
      return code >= 0 ? static_cast<std::int64_t>(code) : slots + decode_terminal(code);
    };
    auto for_own_keys = [&](const char* label, auto&& body) {
      Kokkos::parallel_for(
          label, Kokkos::RangePolicy<ExecutionSpace, Kokkos::Schedule<Kokkos::Static>>(0, parts),
          [&](const std::int64_t part) {
            const std::int64_t lo = keys * part / parts, hi = keys * (part + 1) / parts;
            for (std::int64_t r = 0; r < rows; ++r)
              for (auto k = row_offsets[r]; k < row_offsets[r + 1]; ++k) {
                const std::int64_t c = key(row_symbols[k]);
                if (c >= lo && c < hi) body(c, r);
              }
          });
      ExecutionSpace().fence();
    };
    std::vector<std::int64_t> start(static_cast<std::size_t>(keys) + 1, 0);
    for_own_keys("kcla::grammar::count_occurrences",
                 [&](std::int64_t c, std::int64_t) { ++start[c + 1]; });
    std::vector<std::int32_t> codes;
    std::vector<std::int64_t> offsets{0};
    for (std::int64_t c = 0; c < keys; ++c)
      if (start[c + 1] > 0) {
        codes.push_back(c < slots ? static_cast<std::int32_t>(c) : encode_terminal(c - slots));
        offsets.push_back(offsets.back() + start[c + 1]);
      }
    for (std::int64_t c = 0; c < keys; ++c) start[c + 1] += start[c];
    plan.occurrence_rows = decltype(plan.occurrence_rows)(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "kcla::grammar::occurrence_rows"), symbols);
    std::int32_t* occurrence_rows = plan.occurrence_rows.data();
    for_own_keys("kcla::grammar::sort_occurrences", [&](std::int64_t c, std::int64_t r) {
      occurrence_rows[start[c]++] = static_cast<std::int32_t>(r);
    });
    plan.occurrence_codes =
        host_copy<decltype(plan.occurrence_codes)>(codes, "kcla::grammar::occurrence_codes");
    plan.occurrence_offsets =
        host_copy<decltype(plan.occurrence_offsets)>(offsets, "kcla::grammar::occurrence_offsets");
    plan.occurrence_unit_vectors = 0;
    plan.graph.reset();
  }
  if (plan.occurrence_unit_vectors != vectors) {
    // Units of about kHostUnitValues values each.
    const std::int64_t per_unit = host_chunk(vectors);
    const auto* offsets = plan.occurrence_offsets.data();
    const std::int64_t codes = static_cast<std::int64_t>(plan.occurrence_codes.extent(0));
    std::vector<std::int64_t> units{0};
    for (std::int64_t i = 0; i < codes; ++i)
      if (offsets[i + 1] - offsets[units.back()] >= per_unit || i + 1 == codes)
        units.push_back(i + 1);
    plan.occurrence_units =
        host_copy<decltype(plan.occurrence_units)>(units, "kcla::grammar::occurrence_units");
    plan.occurrence_unit_vectors = vectors;
    plan.graph.reset();
  }
  const std::int64_t copies = Kokkos::Experimental::UniqueToken<ExecutionSpace>().size();
  const std::int64_t words = (copies * A.num_rows() * vectors * value_bytes + 7) / 8;
  if (static_cast<std::int64_t>(plan.row_copies.extent(0)) < words) {
    plan.row_copies = decltype(plan.row_copies)(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "kcla::grammar::row_copies"), words);
    plan.graph.reset();
  }
}

/// Level phase in host form, through a launcher (immediate or graph): y filled where the
/// levels emit into it (layered), then one launch per level.
template <class Semiring, class Scalar, class MemorySpace, class Args, class Launcher>
void launch_host_levels(const GrammarMatrix<Scalar, MemorySpace>& A, const Args& a,
                        Launcher& launch) {
  const bool layered = A.schedule() == SweepSchedule::layered;
  const std::int32_t depth = A.depth();
  const std::int64_t chunk = host_chunk(a.vectors);
  auto units = [&](std::int64_t items) { return (items + chunk - 1) / chunk; };
  if (layered)
    launch.range("kcla::grammar_fill", A.num_rows() * a.vectors, HostFillFunctor<Semiring>{a.y});
  for (std::int32_t k = 1; k <= depth + (layered ? 1 : 0); ++k) {
    HostLevelFunctor<Semiring, Args> f{a, k, 0, 0, 0, 0, chunk, 0};
    if (k <= depth) {
      f.first = A.level_offsets[k - 1];
      f.count = A.level_offsets[k] - A.level_offsets[k - 1];
    }
    if (layered) {
      f.emit_first = A.emit_offsets[k - 1];
      f.emit_count = A.emit_offsets[k] - A.emit_offsets[k - 1];
    }
    f.node_units = units(f.count);
    launch.range(k <= depth ? "kcla::grammar_level" : "kcla::grammar_emit",
                 f.node_units + units(f.emit_count), f);
  }
}

/// The row phase's functors (by occurrence, by row, the reduction of y's copies).
template <class Semiring, class ExecutionSpace, class Scalar, class MemorySpace, class Args>
auto host_occurrence_rows(const GrammarMatrix<Scalar, MemorySpace>& A, const Args& a) {
  using T = typename Semiring::value_type;
  using Token = Kokkos::Experimental::UniqueToken<ExecutionSpace>;
  const auto& plan = A.plan();
  return HostOccurrenceRowsFunctor<Semiring, Args, Token>{
      a,
      Token(),
      plan.occurrence_codes.data(),
      plan.occurrence_offsets.data(),
      plan.occurrence_rows.data(),
      plan.occurrence_units.data(),
      reinterpret_cast<T*>(plan.row_copies.data())};
}
template <class Semiring, class ExecutionSpace, class Scalar, class MemorySpace, class Args>
HostReduceCopiesFunctor<Semiring> host_reduce_copies(const GrammarMatrix<Scalar, MemorySpace>& A,
                                                     const Args& a) {
  using T = typename Semiring::value_type;
  return {a.y, reinterpret_cast<const T*>(A.plan().row_copies.data()), A.num_rows() * a.vectors,
          Kokkos::Experimental::UniqueToken<ExecutionSpace>().size()};
}
template <class Semiring, class Scalar, class MemorySpace, class Args>
HostRowsFunctor<Semiring, Args> host_rows_by_row(const GrammarMatrix<Scalar, MemorySpace>& A,
                                                 const Args& a) {
  return {a, A.plan().chunk_first_row.data(), A.plan().chunk_symbols,
          static_cast<std::int64_t>(A.row_symbols.extent(0))};
}

/// Row phase of the full array in host form (the layered schedule has none): by
/// occurrence where y's copies fit, else by row.
template <class Semiring, class ExecutionSpace, class Scalar, class MemorySpace, class Args,
          class Launcher>
void launch_host_rows(const GrammarMatrix<Scalar, MemorySpace>& A, const Args& a,
                      Launcher& launch) {
  if (A.schedule() == SweepSchedule::layered) return;
  const std::int64_t size = A.num_rows() * a.vectors;
  if (host_rows_by_occurrence(A, a.vectors)) {
    const auto rows = host_occurrence_rows<Semiring, ExecutionSpace>(A, a);
    launch.range("kcla::grammar_fill", rows.token.size() * size,
                 HostFillFunctor<Semiring>{rows.copies});
    launch.range("kcla::grammar_rows",
                 static_cast<std::int64_t>(A.plan().occurrence_units.extent(0)) - 1, rows);
    launch.range("kcla::grammar_rows_reduce", size,
                 host_reduce_copies<Semiring, ExecutionSpace>(A, a));
  } else {
    launch.range("kcla::grammar_fill", size, HostFillFunctor<Semiring>{a.y});
    launch.range("kcla::grammar_rows",
                 static_cast<std::int64_t>(A.plan().chunk_first_row.extent(0)),
                 host_rows_by_row<Semiring>(A, a));
  }
}

/// The fused kernel's tickets for the full array's row phase in host form: y (or its
/// copies) filled at level 0 (`fill`, added before the levels' tickets: tickets are taken
/// in level order), else the row phase's units at level depth + 1 and the reduction of the
/// copies at depth + 2. `add(level, kind, begin, end, chunk)` adds tickets.
template <class ExecutionSpace, class Scalar, class MemorySpace, class Add>
void add_host_row_tickets(const GrammarMatrix<Scalar, MemorySpace>& A, std::int64_t vectors,
                          bool fill, Add&& add) {
  const std::int32_t depth = A.depth();
  const std::int64_t size = A.num_rows() * vectors;
  const auto& plan = A.plan();
  if (host_rows_by_occurrence(A, vectors)) {
    const std::int64_t copies = Kokkos::Experimental::UniqueToken<ExecutionSpace>().size();
    if (fill) {
      add(0, TicketKind::copies_fill, 0, copies * size, kHostUnitValues);
    } else {
      add(depth + 1, TicketKind::rows_by_occurrence, 0,
          static_cast<std::int64_t>(plan.occurrence_units.extent(0)) - 1, 1);
      add(depth + 2, TicketKind::copies_reduce, 0, size, kHostUnitValues);
    }
  } else if (fill) {
    add(0, TicketKind::fill_y, 0, size, kHostUnitValues);
  } else {
    const std::int64_t symbols = static_cast<std::int64_t>(A.row_symbols.extent(0));
    add(depth + 1, TicketKind::rows_by_chunk, 0,
        (symbols + plan.chunk_symbols - 1) / plan.chunk_symbols, 1);
  }
}

// --- the fused (ticketed) sweep ------------------------------------------------------

/// The ticket table of the fused kernel run by host threads: each call takes the next
/// ticket, waits until the level below is complete and runs the ticket's items in host
/// form. Tickets are taken in level order by running threads, so a wait always ends.
template <class Semiring, class Args, class Token>
struct HostFusedSweepFunctor {
  Args a;
  unsigned long long* counters;  // [0] ticket dispenser, [1 + level] tickets finished
  const std::int32_t* ticket_level;
  const std::int32_t* ticket_kind;
  const std::int64_t* ticket_begin;
  const std::int64_t* ticket_end;
  const std::int64_t* tickets_per_level;
  const std::int64_t* level_first;
  std::int64_t epoch, num_tickets;
  // The full array's row phase (add_host_row_tickets).
  HostOccurrenceRowsFunctor<Semiring, Args, Token> occurrence_rows;
  HostReduceCopiesFunctor<Semiring> reduce_copies;
  HostRowsFunctor<Semiring, Args> row_chunks;

  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t) const {
    const std::int64_t ticket =
        static_cast<std::int64_t>(Kokkos::atomic_fetch_add(&counters[0], 1ull)) -
        epoch * num_tickets;
    const std::int32_t level = ticket_level[ticket], kind = ticket_kind[ticket];
    const std::int64_t begin = ticket_begin[ticket], end = ticket_end[ticket];
    // Wait for the nearest level below that has tickets: an empty level in between (no
    // row units, nothing to fill) must not break the chain of hand-offs.
    std::int32_t below = level - 1;
    while (below >= 0 && tickets_per_level[below] == 0) --below;
    if (below >= 0) {
      const auto target = static_cast<unsigned long long>((epoch + 1) * tickets_per_level[below]);
      for (int spins = 0;
           *static_cast<const volatile unsigned long long*>(&counters[1 + below]) < target;
           ++spins) {
#if !defined(__CUDA_ARCH__)
        // More threads than cores: the ticket waited for may belong to a thread that is
        // not running; spinning on would keep it off the core.
        if (spins >= 1024) std::this_thread::yield();
#endif
      }
      Kokkos::memory_fence();
    }
    switch (kind) {
      case TicketKind::fill_y:
        for (std::int64_t i = begin; i < end; ++i) a.y[i] = Semiring::zero();
        break;
      case TicketKind::copies_fill:
        for (std::int64_t i = begin; i < end; ++i) occurrence_rows.copies[i] = Semiring::zero();
        break;
      case TicketKind::nodes:
        host_nodes<Semiring>(a, level, level_first[level], begin, end);
        break;
      case TicketKind::emits:
        host_emits<Semiring>(a, level - 1, begin, end);
        break;
      case TicketKind::rows_by_occurrence:
        for (std::int64_t u = begin; u < end; ++u) occurrence_rows(u);
        break;
      case TicketKind::copies_reduce:
        for (std::int64_t i = begin; i < end; ++i) reduce_copies(i);
        break;
      case TicketKind::rows_by_chunk:
        for (std::int64_t u = begin; u < end; ++u) row_chunks(u);
        break;
      default:
        break;
    }
    Kokkos::memory_fence();
    Kokkos::atomic_fetch_add(&counters[1 + level], 1ull);
  }
};

}  // namespace kcla::detail
