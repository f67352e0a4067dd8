// The kernels behind kcla::multiply for a PackedGenotypeMatrix
// (<kcla/packed_genotype_multiply.hpp>; docs/packed-genotypes.md explains the design):
//   PackedTablesFunctor      y = G x (and up to 4 vectors per pass) through pair tables;
//   PackedQuadTablesFunctor  y = G x through tables over four variants, fewer
//                            instructions per genotype (one vector per pass);
//   PackedTilesFunctor       Y = G X for many vectors: codes decoded into a team's scratch,
//                            register tiles of samples x vectors;
//   PackedHostBlocksFunctor  host execution spaces: sample blocks, no atomics.
// Codes are the .bed's: variant-major, 16 samples per 32-bit word (sample i of a word in
// bits 2i, 2i+1), words_per_variant words per variant.
#pragma once

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>

#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
#define KCLA_PACKED_UNROLL _Pragma("unroll")
#else
#define KCLA_PACKED_UNROLL
#endif

namespace kcla::detail {

template <class T>
KOKKOS_INLINE_FUNCTION T packed_min(T a, T b) {
  return a < b ? a : b;
}

/// Byte m of v (one byte permute on a GPU, shift and mask elsewhere).
KOKKOS_FORCEINLINE_FUNCTION unsigned packed_byte(std::uint32_t v, int m) {
#if defined(__CUDA_ARCH__)
  return __byte_perm(v, 0u, 0x4440u + static_cast<unsigned>(m));
#else
  return (v >> (8 * m)) & 255u;
#endif
}

/// Interleaves the 16 calls of two variants' words into 4-bit pair codes: nibble k of
/// `even` is c0 | c1 << 2 of sample 2k, nibble k of `odd` that of sample 2k + 1 (c0 from
/// w0, c1 from w1). Two shifts and two three-input logic operations.
KOKKOS_INLINE_FUNCTION void packed_interleave(std::uint32_t w0, std::uint32_t w1,
                                              std::uint32_t& even, std::uint32_t& odd) {
  even = (w0 & 0x33333333u) | ((w1 << 2) & 0xCCCCCCCCu);
  odd = ((w0 >> 2) & 0x33333333u) | (w1 & 0xCCCCCCCCu);
}

/// y(:, vector0 .. vector0 + NV) (+)= G x(:, vector0 .. vector0 + NV) through pair tables.
/// One team per (tile of sample words, chunk of variants); one thread per 32-bit word
/// (16 samples) of the tile, looping when the team has fewer threads than words (host).
/// Per team: (1) in scratch, for each pair (j, j+1) of the chunk and each vector v, the
/// 16-entry table T[c_j | c_{j+1} << 2] = value(c_j) x_jv + value(c_{j+1}) x_{j+1,v};
/// (2) each thread streams its word of the chunk's variants, two at a time (consecutive
/// threads, consecutive words: coalesced), interleaves them into 4-bit pair codes and
/// adds 16 table entries into 16 register accumulators per vector; (3) the accumulators
/// go through scratch (transposed, padded against bank conflicts) so that the adds into y
/// are coalesced: plain stores when the whole matrix is one chunk, else atomic adds into
/// y zeroed beforehand.
template <class Scalar, class ExecutionSpace, int NV>
struct PackedTablesFunctor {
  using member_type = typename Kokkos::TeamPolicy<ExecutionSpace>::member_type;
  static constexpr int red_stride = 17;  // 16 sums of a word + 1: conflict-free banks
  static constexpr int group = 4;        // pairs whose words are loaded together

  const std::uint32_t* words = nullptr;
  const Scalar* x = nullptr;
  Scalar* y = nullptr;
  std::int64_t ld = 1;       // row stride of x and y (the number of vectors)
  std::int64_t vector0 = 0;  // first vector of this pass
  std::int64_t num_samples = 0, num_variants = 0, words_per_variant = 0;
  std::int64_t sample_words = 0;  // ceil(num_samples / 16): words that hold real samples
  std::int64_t tile_words = 0, num_tiles = 1;
  int chunk_variants = 2;  // even
  bool direct = false;     // one chunk: store instead of atomic add
  Scalar value[4] = {};    // allele count of each code

  static KOKKOS_INLINE_FUNCTION std::size_t table_scalars(int chunk) {
    return static_cast<std::size_t>(chunk / 2) * NV * 16;
  }
  static KOKKOS_INLINE_FUNCTION std::size_t scratch_bytes(int chunk, std::int64_t tile) {
    return sizeof(Scalar) *
           (table_scalars(chunk) + static_cast<std::size_t>(red_stride * tile * NV));
  }

  /// Words of variants first .. first + 2 group of one column, 2 group loads in flight.
  KOKKOS_FORCEINLINE_FUNCTION void load_group(const std::uint32_t* column, int first,
                                              std::uint32_t* w) const {
    KCLA_PACKED_UNROLL
    for (int q = 0; q < 2 * group; ++q) w[q] = column[(first + q) * words_per_variant];
  }

  /// 16 samples x one pair of variants: interleave, then 16 table lookups and adds per
  /// vector (nibble k of `even` is sample 2k, of `odd` sample 2k + 1).
  static KOKKOS_FORCEINLINE_FUNCTION void add_pair(Scalar* acc, std::uint32_t a, std::uint32_t b,
                                                   const Scalar* t) {
    std::uint32_t even, odd;
    packed_interleave(a, b, even, odd);
    KCLA_PACKED_UNROLL
    for (int k = 0; k < 8; ++k) {
      const unsigned ie = (even >> (4 * k)) & 15u, io = (odd >> (4 * k)) & 15u;
      KCLA_PACKED_UNROLL
      for (int v = 0; v < NV; ++v) {
        acc[2 * k * NV + v] += t[v * 16 + ie];
        acc[(2 * k + 1) * NV + v] += t[v * 16 + io];
      }
    }
  }

  KOKKOS_INLINE_FUNCTION void operator()(const member_type& team) const {
    const std::int64_t tile = team.league_rank() % num_tiles;
    const std::int64_t j0 = team.league_rank() / num_tiles * chunk_variants;
    const int nv = static_cast<int>(packed_min<std::int64_t>(chunk_variants, num_variants - j0));
    const int pairs = (nv + 1) / 2;
    const std::int64_t w0 = tile * tile_words;
    const int words_here = static_cast<int>(packed_min(tile_words, sample_words - w0));
    Scalar* const tables = static_cast<Scalar*>(
        team.team_shmem().get_shmem(scratch_bytes(chunk_variants, tile_words)));
    Scalar* const red = tables + table_scalars(chunk_variants);

    // (1) pair tables: [pair][vector][16]
    for (int i = team.team_rank(); i < pairs * NV * 16; i += team.team_size()) {
      const int idx = i & 15, v = (i >> 4) % NV, p = (i >> 4) / NV;
      const std::int64_t j = j0 + 2 * p;
      const Scalar xa = x[j * ld + vector0 + v];
      const Scalar xb = 2 * p + 1 < nv ? x[(j + 1) * ld + vector0 + v] : Scalar(0);
      tables[i] = value[idx & 3] * xa + value[idx >> 2] * xb;
    }
    team.team_barrier();

    // (2) one word (16 samples) per thread
    for (int wl = team.team_rank(); wl < words_here; wl += team.team_size()) {
      Scalar acc[16 * NV];
      KCLA_PACKED_UNROLL
      for (int i = 0; i < 16 * NV; ++i) acc[i] = Scalar(0);
      const std::uint32_t* const column = words + j0 * words_per_variant + w0 + wl;
      // Groups of `group` whole pairs, the next group's words loaded while this group is
      // summed (2 x group loads in flight per thread: enough bytes in flight to cover DRAM
      // latency with one team of ~5 warps per ~4,096 samples); then the rest pair by pair.
      const int groups = nv / (2 * group);
      std::uint32_t current[2 * group], next[2 * group];
      if (groups > 0) load_group(column, 0, current);
      for (int g = 0; g < groups; ++g) {
        const bool more = g + 1 < groups;
        if (more) load_group(column, (g + 1) * 2 * group, next);
        KCLA_PACKED_UNROLL
        for (int q = 0; q < group; ++q)
          add_pair(acc, current[2 * q], current[2 * q + 1], tables + (g * group + q) * (NV * 16));
        if (more) {
          KCLA_PACKED_UNROLL
          for (int q = 0; q < 2 * group; ++q) current[q] = next[q];
        }
      }
      for (int p = groups * group; p < pairs; ++p) {
        const std::uint32_t a = column[2 * p * words_per_variant];
        const std::uint32_t b = 2 * p + 1 < nv ? column[(2 * p + 1) * words_per_variant] : 0u;
        add_pair(acc, a, b, tables + p * (NV * 16));
      }
      Scalar* const r = red + red_stride * wl * NV;
      KCLA_PACKED_UNROLL
      for (int i = 0; i < 16 * NV; ++i) r[i] = acc[i];
    }
    team.team_barrier();

    // (3) coalesced: consecutive threads, consecutive samples (and vectors)
    const std::int64_t s0 = 16 * w0;
    const std::int64_t count = packed_min<std::int64_t>(16 * words_here, num_samples - s0) * NV;
    for (std::int64_t i = team.team_rank(); i < count; i += team.team_size()) {
      const std::int64_t sl = i / NV;
      const int v = static_cast<int>(i % NV);
      const Scalar sum = red[(red_stride * (sl >> 4) + (sl & 15)) * NV + v];
      Scalar* const target = y + (s0 + sl) * ld + vector0 + v;
      if (direct)
        *target = sum;
      else
        Kokkos::atomic_add(target, sum);
    }
  }
};

/// y(:, vector0) (+)= G x(:, vector0) through tables over four variants: per quad of
/// variants j .. j + 3, the 256-entry table T[c0 | c1 << 2 | c2 << 4 | c3 << 6] =
/// sum_i value(c_i) x_{j+i}; per 32-bit word (16 samples) and quad, 16 logic operations
/// gather each sample's four codes into a byte, then 16 table lookups and adds: about 1.3
/// instructions per genotype on a GPU against the pair tables' 3.6.
/// A team is `slices` groups of `slice_threads` threads (a multiple of the warp; thread
/// (slice, word) owns 16 samples of the team's tile); per step the team builds the tables
/// of slices x slice_quads quads in scratch and each slice sums its own quads, its words
/// loaded before the tables are built. Teams stride over the steps of their tile, so on a
/// GPU a thread's 16 sums stay in registers for the whole product; at the end the slices
/// add their sums in scratch one after the other and the team adds into y once: one
/// atomic per sample and team (y zeroed beforehand), or plain stores when one team covers
/// the tile. A team with fewer threads than slices x slice_threads (host spaces) keeps the
/// sums in scratch instead, each thread owning words across all slices.
template <class Scalar, class ExecutionSpace>
struct PackedQuadTablesFunctor {
  using member_type = typename Kokkos::TeamPolicy<ExecutionSpace>::member_type;
  static constexpr int red_stride = 17;      // 16 sums of a word + 1: conflict-free banks
  static constexpr int table_entries = 256;  // four 2-bit codes
  static constexpr int max_slice_quads = 4;  // a thread's words of one step: 16 loads in flight

  const std::uint32_t* words = nullptr;
  const Scalar* x = nullptr;
  Scalar* y = nullptr;
  std::int64_t ld = 1;       // row stride of x and y (the number of vectors)
  std::int64_t vector0 = 0;  // the vector of this pass
  std::int64_t num_samples = 0, num_variants = 0, words_per_variant = 0, sample_words = 0;
  std::int64_t tile_words = 0, num_tiles = 1;
  int slice_threads = 32, slices = 1, slice_quads = max_slice_quads;
  std::int64_t num_steps = 1, teams_per_tile = 1;
  bool direct = false;  // one team per tile: store instead of atomic add
  Scalar value[4] = {};

  static KOKKOS_INLINE_FUNCTION std::size_t table_scalars(int slices_, int slice_quads_) {
    return static_cast<std::size_t>(slices_) * slice_quads_ * table_entries;
  }
  static KOKKOS_INLINE_FUNCTION std::size_t scratch_bytes(int slices_, int slice_quads_,
                                                          int slice_threads_) {
    return sizeof(Scalar) * (table_scalars(slices_, slice_quads_) +
                             static_cast<std::size_t>(slice_threads_) * red_stride);
  }

  KOKKOS_INLINE_FUNCTION Scalar x_at(std::int64_t j) const {
    return j < num_variants ? x[j * ld + vector0] : Scalar(0);
  }

  /// The step's tables. Unit (quad, lane of 32) writes entries lane + 32 r, r < 8: the lane
  /// fixes c0, c1 and the low bit of c2, so a unit costs two products for its fixed part
  /// and then one add per entry.
  KOKKOS_INLINE_FUNCTION void build_tables(const member_type& team, std::int64_t j0,
                                           Scalar* tables) const {
    const int quads = slices * slice_quads;
    for (int u = team.team_rank(); u < quads * 32; u += team.team_size()) {
      const int q = u >> 5, lane = u & 31;
      const std::int64_t j = j0 + 4 * static_cast<std::int64_t>(q);
      const Scalar x0 = x_at(j), x1 = x_at(j + 1), x2 = x_at(j + 2), x3 = x_at(j + 3);
      const Scalar fixed = value[lane & 3] * x0 + value[(lane >> 2) & 3] * x1;
      const int c2 = (lane >> 4) & 1;
      const Scalar third[2] = {value[c2] * x2, value[c2 | 2] * x2};
      const Scalar fourth[4] = {value[0] * x3, value[1] * x3, value[2] * x3, value[3] * x3};
      Scalar* const t = tables + q * table_entries + lane;
      KCLA_PACKED_UNROLL
      for (int r = 0; r < 8; ++r) t[32 * r] = fixed + third[r & 1] + fourth[r >> 1];
    }
  }

  /// 16 samples x one quad: byte m of s0 / s1 / s2 / s3 is the table index of sample
  /// 4m / 4m + 1 / 4m + 2 / 4m + 3 (pair codes first, then pairs of pair codes).
  static KOKKOS_FORCEINLINE_FUNCTION void add_quad(Scalar* acc, std::uint32_t a, std::uint32_t b,
                                                   std::uint32_t c, std::uint32_t d,
                                                   const Scalar* t) {
    std::uint32_t e01, o01, e23, o23;
    packed_interleave(a, b, e01, o01);
    packed_interleave(c, d, e23, o23);
    const std::uint32_t s0 = (e01 & 0x0F0F0F0Fu) | ((e23 << 4) & 0xF0F0F0F0u);
    const std::uint32_t s2 = ((e01 >> 4) & 0x0F0F0F0Fu) | (e23 & 0xF0F0F0F0u);
    const std::uint32_t s1 = (o01 & 0x0F0F0F0Fu) | ((o23 << 4) & 0xF0F0F0F0u);
    const std::uint32_t s3 = ((o01 >> 4) & 0x0F0F0F0Fu) | (o23 & 0xF0F0F0F0u);
    KCLA_PACKED_UNROLL
    for (int m = 0; m < 4; ++m) {
      acc[4 * m] += t[packed_byte(s0, m)];
      acc[4 * m + 1] += t[packed_byte(s1, m)];
      acc[4 * m + 2] += t[packed_byte(s2, m)];
      acc[4 * m + 3] += t[packed_byte(s3, m)];
    }
  }

  /// A slice's words of one step at one word index (variants past the end read as 0:
  /// their x is 0, so every code adds nothing).
  KOKKOS_FORCEINLINE_FUNCTION void load_slice(std::uint32_t* w, int slice, std::int64_t j0,
                                              std::int64_t word) const {
    const std::int64_t first = j0 + 4 * static_cast<std::int64_t>(slice) * slice_quads;
    const std::uint32_t* p = words + first * words_per_variant + word;
    const int here = 4 * slice_quads;
    if (first + here <= num_variants) {  // the common case: no bound checks, one pointer
      KCLA_PACKED_UNROLL
      for (int i = 0; i < 4 * max_slice_quads; ++i) {
        w[i] = i < here ? *p : 0u;
        p += words_per_variant;
      }
      return;
    }
    KCLA_PACKED_UNROLL
    for (int i = 0; i < 4 * max_slice_quads; ++i) {
      w[i] = i < here && first + i < num_variants ? *p : 0u;
      p += words_per_variant;
    }
  }

  KOKKOS_FORCEINLINE_FUNCTION void add_slice(Scalar* acc, const std::uint32_t* w, int slice,
                                             const Scalar* tables) const {
    const Scalar* const t = tables + static_cast<std::size_t>(slice) * slice_quads * table_entries;
    KCLA_PACKED_UNROLL
    for (int q = 0; q < max_slice_quads; ++q)
      if (q < slice_quads)
        add_quad(acc, w[4 * q], w[4 * q + 1], w[4 * q + 2], w[4 * q + 3], t + q * table_entries);
  }

  KOKKOS_INLINE_FUNCTION void operator()(const member_type& team) const {
    const std::int64_t tile = team.league_rank() % num_tiles;
    const std::int64_t part = team.league_rank() / num_tiles;
    const std::int64_t w0 = tile * tile_words;
    const int words_here = static_cast<int>(packed_min(tile_words, sample_words - w0));
    const int rank = team.team_rank(), size = team.team_size();
    const bool registers = size >= slices * slice_threads;
    Scalar* const tables = static_cast<Scalar*>(
        team.team_shmem().get_shmem(scratch_bytes(slices, slice_quads, slice_threads)));
    Scalar* const red = tables + table_scalars(slices, slice_quads);
    const std::int64_t step_variants = 4 * static_cast<std::int64_t>(slices) * slice_quads;

    if (registers) {
      const int my_slice = rank / slice_threads, my_word = rank % slice_threads;
      const bool active = my_slice < slices && my_word < words_here;
      Scalar acc[16];
      KCLA_PACKED_UNROLL
      for (int i = 0; i < 16; ++i) acc[i] = Scalar(0);
      for (std::int64_t step = part; step < num_steps; step += teams_per_tile) {
        const std::int64_t j0 = step * step_variants;
        std::uint32_t w[4 * max_slice_quads];
        if (active) load_slice(w, my_slice, j0, w0 + my_word);  // in flight while tables build
        team.team_barrier();  // the previous step's tables are read by everyone
        build_tables(team, j0, tables);
        team.team_barrier();
        if (active) add_slice(acc, w, my_slice, tables);
      }
      for (int s = 0; s < slices; ++s) {  // the slices' sums, one slice after the other
        team.team_barrier();
        if (my_slice == s && my_word < words_here) {
          Scalar* const r = red + red_stride * my_word;
          KCLA_PACKED_UNROLL
          for (int i = 0; i < 16; ++i) r[i] = s == 0 ? acc[i] : r[i] + acc[i];
        }
      }
    } else {
      for (int i = rank; i < slice_threads * red_stride; i += size) red[i] = Scalar(0);
      for (std::int64_t step = part; step < num_steps; step += teams_per_tile) {
        const std::int64_t j0 = step * step_variants;
        team.team_barrier();
        build_tables(team, j0, tables);
        team.team_barrier();
        for (int wl = rank; wl < words_here; wl += size) {
          Scalar* const r = red + red_stride * wl;
          Scalar local[16];
          for (int i = 0; i < 16; ++i) local[i] = r[i];
          for (int s = 0; s < slices; ++s) {
            std::uint32_t w[4 * max_slice_quads];
            load_slice(w, s, j0, w0 + wl);
            add_slice(local, w, s, tables);
          }
          for (int i = 0; i < 16; ++i) r[i] = local[i];
        }
      }
    }
    team.team_barrier();

    // coalesced: consecutive threads, consecutive samples
    const std::int64_t s0 = 16 * w0;
    const std::int64_t count = packed_min<std::int64_t>(16 * words_here, num_samples - s0);
    for (std::int64_t i = rank; i < count; i += size) {
      const Scalar sum = red[red_stride * (i >> 4) + (i & 15)];
      Scalar* const target = y + (s0 + i) * ld + vector0;
      if (direct)
        *target = sum;
      else
        Kokkos::atomic_add(target, sum);
    }
  }
};

/// Y (+)= G X for many vectors. One team per (tile of Shape::tile_samples samples, tile
/// of vector_groups * TN vectors, range of variants); per step of tile_variants variants
/// the team decodes the tile's codes into scratch as Scalar values (one 32-bit word per
/// thread) and stages the X tile, then each of the sample_groups x vector_groups threads
/// accumulates a TM x TN register tile (samples strided by sample_groups, vectors by
/// vector_groups: conflict-free scratch reads). A team with fewer threads than that
/// (host spaces) runs the threads' tiles in turn, keeping them in level-1 scratch.
template <class Scalar, class ExecutionSpace, class Shape, int TN>
struct PackedTilesFunctor {
  using member_type = typename Kokkos::TeamPolicy<ExecutionSpace>::member_type;
  static constexpr int BM = Shape::tile_samples;
  static constexpr int KS = Shape::tile_variants;
  static constexpr int SG = Shape::tile_sample_groups;
  static constexpr int VG = Shape::tile_vector_groups;
  static constexpr int TM = BM / SG;
  static constexpr int BN = VG * TN;
  static constexpr int WM = BM / 16;  // words per variant in a tile
  static constexpr int threads = SG * VG;
  static constexpr int a_stride = BM + 1;  // padded: the decode's stores hit distinct banks
  static_assert(BM % 16 == 0 && BM % SG == 0, "tile_samples: whole words and sample groups");

  const std::uint32_t* words = nullptr;
  const Scalar* x = nullptr;
  Scalar* y = nullptr;
  std::int64_t num_vectors = 1;  // B: the row stride of X and Y
  std::int64_t num_samples = 0, num_variants = 0, words_per_variant = 0, sample_words = 0;
  std::int64_t sample_tiles = 1, vector_tiles = 1;
  std::int64_t split_variants = KS;  // variants per team, a multiple of KS
  bool direct = false;
  Scalar value[4] = {};

  static KOKKOS_INLINE_FUNCTION std::size_t scratch0_bytes() {
    return sizeof(Scalar) * static_cast<std::size_t>(KS * a_stride + KS * BN);
  }
  static KOKKOS_INLINE_FUNCTION std::size_t scratch1_bytes(bool registers) {
    return registers ? 0 : sizeof(Scalar) * static_cast<std::size_t>(BM * BN);
  }

  KOKKOS_INLINE_FUNCTION void load(const member_type& team, std::int64_t s0, std::int64_t b0,
                                   std::int64_t k0, std::int64_t k_end, Scalar* As,
                                   Scalar* Xs) const {
    for (int t = team.team_rank(); t < KS * WM; t += team.team_size()) {
      const int q = t / KS, k = t % KS;
      const std::int64_t j = k0 + k, w = s0 / 16 + q;
      const std::uint32_t word =
          j < k_end && w < sample_words ? words[j * words_per_variant + w] : 0x55555555u;
      Scalar* const dst = As + k * a_stride + 16 * q;
      KCLA_PACKED_UNROLL
      for (int i = 0; i < 16; ++i) dst[i] = value[(word >> (2 * i)) & 3u];
    }
    for (int t = team.team_rank(); t < KS * BN; t += team.team_size()) {
      const int k = t / BN, b = t % BN;
      const std::int64_t j = k0 + k, column = b0 + b;
      Xs[t] = j < k_end && column < num_vectors ? x[j * num_vectors + column] : Scalar(0);
    }
  }

  static KOKKOS_INLINE_FUNCTION void accumulate(Scalar* acc, int sg, int vg, const Scalar* As,
                                                const Scalar* Xs) {
    for (int k = 0; k < KS; ++k) {
      Scalar a[TM], b[TN];
      KCLA_PACKED_UNROLL
      for (int i = 0; i < TM; ++i) a[i] = As[k * a_stride + sg + SG * i];
      KCLA_PACKED_UNROLL
      for (int v = 0; v < TN; ++v) b[v] = Xs[k * BN + vg + VG * v];
      KCLA_PACKED_UNROLL
      for (int i = 0; i < TM; ++i) {
        KCLA_PACKED_UNROLL
        for (int v = 0; v < TN; ++v) acc[i * TN + v] += a[i] * b[v];
      }
    }
  }

  KOKKOS_INLINE_FUNCTION void store(const Scalar* acc, int sg, int vg, std::int64_t s0,
                                    std::int64_t b0) const {
    KCLA_PACKED_UNROLL
    for (int i = 0; i < TM; ++i) {
      const std::int64_t s = s0 + sg + SG * i;
      if (s >= num_samples) continue;
      KCLA_PACKED_UNROLL
      for (int v = 0; v < TN; ++v) {
        const std::int64_t column = b0 + vg + VG * v;
        if (column >= num_vectors) continue;
        Scalar* const target = y + s * num_vectors + column;
        if (direct)
          *target = acc[i * TN + v];
        else
          Kokkos::atomic_add(target, acc[i * TN + v]);
      }
    }
  }

  KOKKOS_INLINE_FUNCTION void operator()(const member_type& team) const {
    std::int64_t r = team.league_rank();
    const std::int64_t s0 = r % sample_tiles * BM;
    r /= sample_tiles;
    const std::int64_t b0 = r % vector_tiles * BN;
    const std::int64_t k_begin = r / vector_tiles * split_variants;
    const std::int64_t k_end = packed_min(num_variants, k_begin + split_variants);
    Scalar* const As = static_cast<Scalar*>(team.team_shmem().get_shmem(scratch0_bytes()));
    Scalar* const Xs = As + KS * a_stride;

    if (team.team_size() == threads) {  // GPU: one register tile per thread
      const int sg = team.team_rank() / VG, vg = team.team_rank() % VG;
      Scalar acc[TM * TN];
      KCLA_PACKED_UNROLL
      for (int i = 0; i < TM * TN; ++i) acc[i] = Scalar(0);
      for (std::int64_t k0 = k_begin; k0 < k_end; k0 += KS) {
        team.team_barrier();  // the previous step's tiles are read by everyone
        load(team, s0, b0, k0, k_end, As, Xs);
        team.team_barrier();
        accumulate(acc, sg, vg, As, Xs);
      }
      store(acc, sg, vg, s0, b0);
      return;
    }
    // Fewer threads (host spaces): the register tiles of all `threads` live in scratch.
    Scalar* const out = static_cast<Scalar*>(team.team_scratch(1).get_shmem(scratch1_bytes(false)));
    for (int t = team.team_rank(); t < BM * BN; t += team.team_size()) out[t] = Scalar(0);
    for (std::int64_t k0 = k_begin; k0 < k_end; k0 += KS) {
      team.team_barrier();
      load(team, s0, b0, k0, k_end, As, Xs);
      team.team_barrier();
      for (int t = team.team_rank(); t < threads; t += team.team_size()) {
        Scalar* const acc = out + t * TM * TN;
        accumulate(acc, t / VG, t % VG, As, Xs);
      }
    }
    for (int t = team.team_rank(); t < threads; t += team.team_size())
      store(out + t * TM * TN, t / VG, t % VG, s0, b0);
  }
};

/// Host execution spaces: one team of one thread per block of samples (a multiple of 4,
/// whole bytes), so y needs no atomics. Per variant the block's bytes are decoded through
/// a 4-entry table of value x_j (one vector), or each nonzero call adds value X(j, :) to
/// its row of the block (several vectors, the inner loop contiguous). Partial sums of
/// chunk_variants variants are added into y, which keeps float sums accurate.
template <class Scalar, class ExecutionSpace>
struct PackedHostBlocksFunctor {
  using member_type = typename Kokkos::TeamPolicy<ExecutionSpace>::member_type;

  const std::uint8_t* codes = nullptr;
  const Scalar* x = nullptr;
  Scalar* y = nullptr;
  std::int64_t num_vectors = 1;
  std::int64_t num_samples = 0, num_variants = 0, bytes_per_variant = 0;
  std::int64_t block_samples = 4;  // a multiple of 4
  std::int64_t chunk_variants = 1;
  int scratch_level = 0;  // 1 when a block's partial sums exceed level 0
  Scalar value[4] = {};

  KOKKOS_INLINE_FUNCTION std::size_t scratch_bytes() const {
    return sizeof(Scalar) * static_cast<std::size_t>(block_samples * num_vectors);
  }

  KOKKOS_INLINE_FUNCTION void operator()(const member_type& team) const {
    const std::int64_t s_begin = team.league_rank() * block_samples;
    const std::int64_t ns = packed_min(block_samples, num_samples - s_begin);
    const std::int64_t B = num_vectors, len = ns * B;
    Scalar* const part =
        static_cast<Scalar*>(team.team_scratch(scratch_level).get_shmem(scratch_bytes()));
    Scalar* const yb = y + s_begin * B;
    for (std::int64_t i = 0; i < len; ++i) yb[i] = Scalar(0);
    const std::int64_t full = ns / 4, tail = ns % 4;
    for (std::int64_t j0 = 0; j0 < num_variants; j0 += chunk_variants) {
      const std::int64_t j1 = packed_min(num_variants, j0 + chunk_variants);
      for (std::int64_t i = 0; i < len; ++i) part[i] = Scalar(0);
      for (std::int64_t j = j0; j < j1; ++j) {
        const std::uint8_t* const bytes = codes + j * bytes_per_variant + s_begin / 4;
        if (B == 1) {
          const Scalar xj = x[j];
          const Scalar t[4] = {value[0] * xj, value[1] * xj, value[2] * xj, value[3] * xj};
          for (std::int64_t b = 0; b < full; ++b) {
            const unsigned byte = bytes[b];
            part[4 * b] += t[byte & 3u];
            part[4 * b + 1] += t[(byte >> 2) & 3u];
            part[4 * b + 2] += t[(byte >> 4) & 3u];
            part[4 * b + 3] += t[byte >> 6];
          }
          for (std::int64_t q = 0; q < tail; ++q)
            part[4 * full + q] += t[(bytes[full] >> (2 * q)) & 3u];
        } else {
          const Scalar* const xj = x + j * B;
          for (std::int64_t s = 0; s < ns; ++s) {
            const Scalar v = value[(bytes[s / 4] >> (2 * (s % 4))) & 3u];
            if (v == Scalar(0)) continue;
            Scalar* const ps = part + s * B;
            for (std::int64_t b = 0; b < B; ++b) ps[b] += v * xj[b];
          }
        }
      }
      for (std::int64_t i = 0; i < len; ++i) yb[i] += part[i];
    }
  }
};

template <class Scalar>
struct PackedZeroFunctor {
  Scalar* y;
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i) const { y[i] = Scalar(0); }
};

}  // namespace kcla::detail
