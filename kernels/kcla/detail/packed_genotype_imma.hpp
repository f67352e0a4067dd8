// y = G x on 2-bit packed genotypes through the integer tensor cores (NVIDIA sm_80 and
// newer): the kernel behind PackedKernel::int8_tensor_cores (docs/packed-genotypes.md).
//
// Why: a GEMV on .bed codes reads 2 bits per genotype, so at an H200's copy bandwidth it
// may spend about one integer instruction per genotype (the integer pipe runs at half the
// rate of the FP32 pipe). Table lookups and the fp16 tensor-core kernel need more. Here the
// product is an integer matrix product, A (samples x variants, allele counts as u8) times
// B (variants x 4 columns: the balanced base-256 digits of x * 2^e as s8), accumulated
// exactly in s32: a code reaches its fragment register with a quarter of a logic operation
// (one mask per 4 genotypes), an eighth of a byte permute and an eighth of the code-to-count
// map.
//
// Accuracy: x * 2^e is rounded to an integer of at most 2^30 in magnitude (e per team: the
// team's largest |x| becomes 2^29 .. 2^30), so each term carries an absolute error of at
// most 2^-30 of the team's largest |x| (times the count); the sums are exact.
#pragma once

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>

namespace kcla::detail {

/// The allele counts of the 16 codes of a word, in the same 2-bit fields: counting A1
/// (codes 00, 01, 10, 11 -> 2, 0, 1, 0) or A2 (0, 0, 1, 2); a missing call (01) counts 0.
template <bool CountA2>
KOKKOS_FORCEINLINE_FUNCTION std::uint32_t packed_imma_counts(std::uint32_t codes) {
  const std::uint32_t high = codes >> 1;  // each field's high bit at its low position
  if constexpr (CountA2) {
    // code - (code != 0): 0, 1, 2, 3 -> 0, 0, 1, 2; no field borrows from the next
    return codes - ((codes | high) & 0x55555555u);
  } else {
    // low bit: high & ~low; high bit: ~high & ~low (three-input logic operations)
    return (high & ~codes & 0x55555555u) | (~codes & ~(codes << 1) & 0xAAAAAAAAu);
  }
}

/// Byte b of x (b = 0 .. 3) as PTX's prmt picks it: byte i of the result is byte
/// (s >> 4 i) & 7 of the 8 bytes (y:x).
KOKKOS_FORCEINLINE_FUNCTION std::uint32_t packed_imma_perm(std::uint32_t x, std::uint32_t y,
                                                           std::uint32_t s) {
#if defined(__CUDA_ARCH__)
  return __byte_perm(x, y, s);
#else
  const std::uint64_t both = (static_cast<std::uint64_t>(y) << 32) | x;
  std::uint32_t r = 0;
  for (int i = 0; i < 4; ++i)
    r |= static_cast<std::uint32_t>((both >> (8 * ((s >> (4 * i)) & 7u))) & 255u) << (8 * i);
  return r;
#endif
}

/// The 4 x 4 byte transpose: byte i of out[b] is byte b of in[i]. With in[i] the word of
/// variant i (16 samples), out[b] holds samples 4b .. 4b + 3 of the four variants, one
/// variant per byte: the u8 layout of an mma A register (4 consecutive k in one row).
KOKKOS_FORCEINLINE_FUNCTION void packed_imma_transpose(const std::uint32_t* in,
                                                       std::uint32_t* out) {
  const std::uint32_t t0 = packed_imma_perm(in[0], in[1], 0x5140u);
  const std::uint32_t t1 = packed_imma_perm(in[0], in[1], 0x7362u);
  const std::uint32_t t2 = packed_imma_perm(in[2], in[3], 0x5140u);
  const std::uint32_t t3 = packed_imma_perm(in[2], in[3], 0x7362u);
  out[0] = packed_imma_perm(t0, t2, 0x5410u);
  out[1] = packed_imma_perm(t0, t2, 0x7632u);
  out[2] = packed_imma_perm(t1, t3, 0x5410u);
  out[3] = packed_imma_perm(t1, t3, 0x7632u);
}

/// Register r (0 .. 3) of the A fragment of tile t (0 .. 7) of a lane's word: tile
/// t = 2 b + h has row g (the lane's group) <- sample 4 b + 2 h and row g + 8 <- sample
/// 4 b + 2 h + 1 of the word; registers 0, 1 hold variants 4 q .. 4 q + 3 of the step (from
/// x4 = the transposed words of those variants), 2, 3 variants 16 + 4 q .. (from y4).
/// Sample j of a byte keeps its bits 2j, 2j + 1, so its value is 4^j times its count
/// (at most 128: u8); the product removes the 4^j at the end.
KOKKOS_FORCEINLINE_FUNCTION std::uint32_t packed_imma_register(const std::uint32_t* x4,
                                                               const std::uint32_t* y4, int t,
                                                               int r) {
  const std::uint32_t source = r < 2 ? x4[t >> 1] : y4[t >> 1];
  const std::uint32_t mask = (r & 1 ? 0x0C0C0C0Cu : 0x03030303u) << (4 * (t & 1));
  return source & mask;
}

/// Sample offset within a lane's word (0 .. 15) of row g (high false) or g + 8 (high true)
/// of tile t, and the power of 4 its value carries.
KOKKOS_FORCEINLINE_FUNCTION int packed_imma_sample(int t, bool high) {
  return 4 * (t >> 1) + 2 * (t & 1) + (high ? 1 : 0);
}

/// The balanced base-256 digits of v (|v| <= 2^30): v = d0 + 2^8 d1 + 2^16 d2 + 2^24 d3,
/// each digit in [-128, 127].
KOKKOS_FORCEINLINE_FUNCTION void packed_imma_digits(std::int32_t v, std::int8_t* d) {
  for (int n = 0; n < 4; ++n) {
    const auto digit = static_cast<std::int8_t>(static_cast<std::uint32_t>(v) & 0xFFu);
    d[n] = digit;
    v = (v - digit) >> 8;
  }
}

/// Byte offset, in a team's B fragments, of digit n of variant k (0 .. 31) of step s: the
/// registers of lane (g, q) of a step are the 8 bytes at 8 (16 s + 4 g + q) (b0: variants
/// 4 q .. 4 q + 3, b1: 16 + 4 q .., column g = digit g; lanes g >= 4 take zeros).
KOKKOS_FORCEINLINE_FUNCTION int packed_imma_fragment_byte(int s, int n, int k) {
  return (((s * 4 + n) * 4 + ((k & 15) >> 2)) * 2 + (k >> 4)) * 4 + (k & 3);
}

/// A lane's share of a row's sum from its D registers d0, d1 (row g) or d2, d3 (row g + 8):
/// columns 2 q and 2 q + 1 are digits 2 q and 2 q + 1, so lanes q = 0 and 1 together hold
/// the row (columns 4 .. 7 are zero); exact in 64 bits.
KOKKOS_FORCEINLINE_FUNCTION long long packed_imma_row_share(const int* d, int q, bool high) {
  if (q >= 2) return 0;
  // Multiplying, not shifting: the sums are signed and a left shift of a negative value is
  // undefined; the compiler emits the same shift for the power of two.
  const long long scale = q == 0 ? 1LL : 65536LL;
  const int* c = high ? d + 2 : d;
  return (static_cast<long long>(c[0]) + static_cast<long long>(c[1]) * 256LL) * scale;
}

/// The power of two that makes the largest |x| of a team 2^29 .. 2^30 (0 for 0).
KOKKOS_INLINE_FUNCTION int packed_imma_exponent(float most) {
  if (!(most > 0.0f)) return 0;
  int exponent = 0;
  (void)frexpf(most, &exponent);
  return 30 - exponent;
}

/// Word position, in a warp's ring stage of 256 words (32 variants x 8 words of its 128
/// samples), of word g of variant v: variants 4 r .. 4 r + 3 fill the 32 banks of row r,
/// rotated by 8 r words, so that the reads of a step (lanes (g, q): variants 4 q + i or
/// 16 + 4 q + i, word g) hit 32 different banks, and each variant's 8 words stay two
/// aligned 16-byte pieces.
KOKKOS_FORCEINLINE_FUNCTION int packed_imma_ring_word(int v, int g) {
  return 32 * (v >> 2) + ((8 * (v & 3) + 8 * (v >> 2) + g) & 31);
}

/// Replicas of the partial sums for a product with `chunks` ranges of variants: every
/// range adds its sums into replica (range mod replicas), so that no cache line takes
/// more than about 64 ranges' atomics (they serialize per line in L2).
inline int packed_imma_replicas(std::int64_t chunks) {
  const std::int64_t r = (chunks + 63) / 64;
  return static_cast<int>(r < 1 ? 1 : (r > 32 ? 32 : r));
}

/// A team is block_warps warps, each owning a block of 128 samples (8 words) of one range
/// of chunk_steps steps of 32 variants. A warp's words arrive by asynchronous copies
/// (lane L: variant L of a step, two 16-byte pieces) into a ring of `stages` steps in
/// team scratch, `stages - 1` steps ahead of the one it sums; the team builds the B
/// fragments (x's digits) of batch_steps steps in scratch at a time. At the end each warp
/// adds its 128 sums into one replica of the partial sums (4 samples per vector atomic);
/// the last team to finish adds the replicas into y and zeroes them for the next product,
/// so y is written, never read, and needs no zeroing.
template <class ExecutionSpace, bool CountA2>
struct PackedInt8TensorCoreFunctor {
  using member_type = typename Kokkos::TeamPolicy<ExecutionSpace>::member_type;
  static constexpr int max_team_warps = 8;  // the launch bound: 256 threads
  static constexpr int words_per_warp = 8;  // 128 samples
  static constexpr int step_variants = 32;
  static constexpr int batch_steps = 32;
  static constexpr int stages = 4;                                    // a power of 2
  static constexpr int stage_words = step_variants * words_per_warp;  // 1 KiB
  // int32 sums stay exact for 2^31 / (32 x 128 x 128) steps
  static constexpr int max_chunk_steps = 4096;
  static constexpr int fragment_bytes_per_step = 128;  // 4 digits x 4 lanes x 2 registers

  const std::uint32_t* words = nullptr;
  const float* x = nullptr;
  float* y = nullptr;
  float* partials = nullptr;  // replicas x partial_stride, zero on entry and on exit
  unsigned* done = nullptr;   // teams finished; zero on entry and on exit
  std::int64_t ld = 1, vector0 = 0;
  std::int64_t num_samples = 0, num_variants = 0, words_per_variant = 0;
  std::int64_t sample_blocks = 1;  // ceil(sample words / 8)
  std::int64_t team_groups = 1;    // teams across the sample blocks
  std::int64_t num_steps = 1, chunk_steps = 1, partial_stride = 0;
  int block_warps = 1, replicas = 1;
  unsigned num_teams = 1;
  bool direct = false;  // partials is y itself (contiguous, zeroed): no replicas, no finish

  static KOKKOS_INLINE_FUNCTION std::size_t scratch_bytes(int warps) {
    return static_cast<std::size_t>(batch_steps) * fragment_bytes_per_step +
           static_cast<std::size_t>(warps) * stages * stage_words * 4 + 16 +  // 16: alignment
           max_team_warps * sizeof(float) + 16;
  }

#if defined(__CUDA_ARCH__)
  static __device__ __forceinline__ void mma(int* d, std::uint32_t a0, std::uint32_t a1,
                                             std::uint32_t a2, std::uint32_t a3, std::uint32_t b0,
                                             std::uint32_t b1) {
#if __CUDA_ARCH__ >= 800
    asm volatile(
        "mma.sync.aligned.m16n8k32.row.col.s32.u8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};\n"
        : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
#else
    __trap();  // the plan never launches this kernel below sm_80
#endif
  }

  static __device__ __forceinline__ std::uint32_t load_shared(unsigned address) {
    std::uint32_t v;
    asm volatile("ld.shared.u32 %0, [%1];\n" : "=r"(v) : "r"(address));
    return v;
  }

  /// Where a lane's copies go and come from: its variant's first 16-byte piece in a ring
  /// stage (the second follows it), the two pieces' byte counts (fewer past the panel's
  /// last word: zeros fill the rest), its words of step 0, the words between one step's
  /// and the next, and the steps that hold its variant (later steps copy zeros).
  struct CopyLane {
    unsigned to = 0;
    int bytes0 = 0, bytes1 = 0;
    int steps = 0;
    const std::uint32_t* from = nullptr;
    std::int64_t step_words = 0;
  };

  /// Starts the copy of step s, whose words start at `source` (the caller advances it by
  /// c.step_words a step: no 64-bit multiply in the loop), into ring slot s mod stages.
  __device__ __forceinline__ void copy_step(int s, const std::uint32_t* source, const CopyLane& c,
                                            unsigned ring) const {
    const bool ok = s < c.steps;
    const unsigned to = ring + static_cast<unsigned>((s & (stages - 1)) * stage_words * 4) + c.to;
    if (ok && c.bytes0 == 16 && c.bytes1 == 16) {  // the common case: two whole pieces
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(to), "l"(source));
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(to + 16u), "l"(source + 4));
      return;
    }
    const int bytes0 = ok ? c.bytes0 : 0, bytes1 = ok ? c.bytes1 : 0;
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(to),
                 "l"(bytes0 ? source : words), "r"(bytes0));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(to + 16u),
                 "l"(bytes1 ? source + 4 : words), "r"(bytes1));
  }

  /// B fragments of steps first .. first + count - 1 (relative to the range starting at
  /// variant v_first), as packed_imma_fragment_byte lays them out.
  __device__ void build_fragments(const member_type& team, std::int64_t v_first, std::int64_t first,
                                  int count, int e, unsigned char* out) const {
    for (int i = team.team_rank(); i < count * step_variants; i += team.team_size()) {
      const std::int64_t v = v_first + first * step_variants + i;
      const float value = v < num_variants ? x[v * ld + vector0] : 0.0f;
      std::int8_t d[4];
      packed_imma_digits(__float2int_rn(ldexpf(value, e)), d);
      const int s = i / step_variants, k = i % step_variants;
#pragma unroll
      for (int n = 0; n < 4; ++n)
        out[packed_imma_fragment_byte(s, n, k)] = static_cast<unsigned char>(d[n]);
    }
  }

  /// One step: the allele counts of 8 words (variants 4 q + i, then 16 + 4 q + i) into
  /// the 8 tiles' products.
  __device__ __forceinline__ void add_step(int (*acc)[4], const std::uint32_t* u, std::uint32_t b0,
                                           std::uint32_t b1) const {
    std::uint32_t x4[4], y4[4];
    packed_imma_transpose(u, x4);
    packed_imma_transpose(u + 4, y4);
#pragma unroll
    for (int t = 0; t < 8; ++t)
      mma(acc[t], packed_imma_register(x4, y4, t, 0), packed_imma_register(x4, y4, t, 1),
          packed_imma_register(x4, y4, t, 2), packed_imma_register(x4, y4, t, 3), b0, b1);
  }

  /// y = the sum of the replicas, which go back to zero; by the last team to finish.
  /// Every load before any store: the loads are independent and in flight together.
  __device__ void finish(const member_type& team) const {
    __threadfence();
    for (std::int64_t s = team.team_rank(); s < num_samples; s += team.team_size()) {
      float sum = 0.0f;
      for (int r = 0; r < replicas; ++r) sum += __ldcg(partials + r * partial_stride + s);
      y[s * ld + vector0] = sum;
    }
    team.team_barrier();
    for (std::int64_t i = team.team_rank(); i < replicas * partial_stride; i += team.team_size())
      partials[i] = 0.0f;
    if (team.team_rank() == 0) *done = 0u;
  }
#endif

  KOKKOS_INLINE_FUNCTION void operator()(const member_type& team) const {
#if defined(__CUDA_ARCH__)
    const std::int64_t group = team.league_rank() % team_groups;
    const std::int64_t chunk = team.league_rank() / team_groups;
    const int rank = team.team_rank(), lane = rank & 31, warp_id = rank >> 5;
    const int g = lane >> 2, q = lane & 3;
    const std::int64_t block = group * block_warps + warp_id;
    const bool block_ok = block < sample_blocks;
    const std::int64_t first = chunk * chunk_steps;
    const std::int64_t last = first + chunk_steps < num_steps ? first + chunk_steps : num_steps;
    const int steps = static_cast<int>(last - first);
    const std::int64_t v_first = first * step_variants;
    const std::int64_t v_end =
        last * step_variants < num_variants ? last * step_variants : num_variants;
    auto* const scratch =
        static_cast<unsigned char*>(team.team_shmem().get_shmem(scratch_bytes(block_warps)));
    unsigned char* const fragments_bytes = scratch;
    auto* const rings = reinterpret_cast<std::uint32_t*>(
        (reinterpret_cast<std::uintptr_t>(scratch + batch_steps * fragment_bytes_per_step) + 15) /
        16 * 16);
    auto* const team_max = reinterpret_cast<float*>(rings + block_warps * stages * stage_words);
    std::uint32_t* const my_ring = rings + warp_id * stages * stage_words;
    const unsigned ring = static_cast<unsigned>(__cvta_generic_to_shared(my_ring));

    // The first stages - 1 steps' copies are in flight while the team finds its scale.
    // Words past the last (a block's unused lanes) arrive as zeros: their rows are samples
    // past the last, never stored (a zero word counts 2 for A1, harmless there).
    const std::int64_t first_word = block * words_per_warp;
    const int valid_words = block_ok
                                ? static_cast<int>(words_per_variant - first_word < words_per_warp
                                                       ? words_per_variant - first_word
                                                       : words_per_warp)
                                : 0;
    CopyLane copy;
    copy.to = 4u * static_cast<unsigned>(packed_imma_ring_word(lane, 0));
    copy.bytes0 = valid_words >= 4 ? 16 : 4 * valid_words;
    copy.bytes1 = valid_words >= 8 ? 16 : (valid_words > 4 ? 4 * (valid_words - 4) : 0);
    copy.from = words + (v_first + lane) * words_per_variant + (block_ok ? first_word : 0);
    copy.step_words = step_variants * words_per_variant;
    {
      const std::int64_t left = num_variants - v_first - lane;  // variants at or after its own
      const std::int64_t real = left > 0 ? (left + step_variants - 1) / step_variants : 0;
      copy.steps = static_cast<int>(real < steps ? real : steps);
    }
#pragma unroll
    for (int s = 0; s < stages - 1; ++s) {
      if (s < steps) copy_step(s, copy.from + s * copy.step_words, copy, ring);
      asm volatile("cp.async.commit_group;\n" ::);
    }

    float most = 0.0f;
    for (std::int64_t v = v_first + rank; v < v_end; v += team.team_size())
      most = fmaxf(most, fabsf(x[v * ld + vector0]));
#pragma unroll
    for (int s = 16; s > 0; s >>= 1) most = fmaxf(most, __shfl_xor_sync(0xffffffffu, most, s));
    if (lane == 0) team_max[warp_id] = most;
    team.team_barrier();
    most = 0.0f;
    for (int i = 0; i < block_warps; ++i) most = fmaxf(most, team_max[i]);
    // A NaN or infinite x: the team's samples get NaN (no exact integer form).
    const bool finite = most <= 3.4028235e38f;
    const int e = finite ? packed_imma_exponent(most) : 0;

    int acc[8][4];
#pragma unroll
    for (int t = 0; t < 8; ++t) acc[t][0] = acc[t][1] = acc[t][2] = acc[t][3] = 0;
    // lane (g, q) reads word g of variants 4 q + i (row q) and 16 + 4 q + i (row 4 + q)
    unsigned read_low[4], read_high[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      read_low[i] = ring + 4u * static_cast<unsigned>(packed_imma_ring_word(4 * q + i, g));
      read_high[i] = ring + 4u * static_cast<unsigned>(packed_imma_ring_word(16 + 4 * q + i, g));
    }

    // The words of the step whose copy the loop starts next (step + stages - 1).
    const std::uint32_t* next_copy = copy.from + (stages - 1) * copy.step_words;
    for (int batch = 0; batch < steps; batch += batch_steps) {
      const int count = steps - batch < batch_steps ? steps - batch : batch_steps;
      if (batch > 0) team.team_barrier();  // every warp is done with the last batch
      build_fragments(team, v_first, batch, count, e, fragments_bytes);
      team.team_barrier();
      const auto* fragments = reinterpret_cast<const uint2*>(fragments_bytes) + g * 4 + q;
      for (int s = 0; s < count; ++s) {
        const int step = batch + s;
        asm volatile("cp.async.wait_group %0;\n" ::"n"(stages - 2));
        __syncwarp();  // every lane's copies of this step have landed
        const unsigned slot = static_cast<unsigned>((step & (stages - 1)) * stage_words * 4);
        std::uint32_t u[8];
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          u[i] = packed_imma_counts<CountA2>(load_shared(read_low[i] + slot));
          u[4 + i] = packed_imma_counts<CountA2>(load_shared(read_high[i] + slot));
        }
        __syncwarp();  // every lane has read the slot the next copy refills
        if (step + stages - 1 < steps) copy_step(step + stages - 1, next_copy, copy, ring);
        next_copy += copy.step_words;
        asm volatile("cp.async.commit_group;\n" ::);
        std::uint32_t b0 = 0u, b1 = 0u;
        if (g < 4) {  // columns 4 .. 7 of B are zero
          const uint2 b = fragments[s * 16];
          b0 = b.x;
          b1 = b.y;
        }
        add_step(acc, u, b0, b1);
      }
    }
    asm volatile("cp.async.wait_all;\n" ::);
    __syncwarp();

    // Lanes q = 0 hold columns 0, 1 (digits 0, 1) and q = 1 columns 2, 3 of rows g and
    // g + 8; one exchange sums a row's digits, exactly, in 64 bits. The warp's 128 sums
    // then go through its ring (free now) so that lane L adds samples 4 L .. 4 L + 3.
    float* const sums = reinterpret_cast<float*>(my_ring);
#pragma unroll
    for (int t = 0; t < 8; ++t) {
      long long low = packed_imma_row_share(acc[t], q, false);
      long long high = packed_imma_row_share(acc[t], q, true);
      low += __shfl_xor_sync(0xffffffffu, low, 1);
      high += __shfl_xor_sync(0xffffffffu, high, 1);
      if (q < 2) {
        const int j = packed_imma_sample(t, q == 1);
        sums[16 * g + j] = finite ? ldexpf(__ll2float_rn(q == 0 ? low : high), -e - 2 * (j & 3))
                                  : __int_as_float(0x7fc00000);
      }
    }
    __syncwarp();
    const std::int64_t sample0 = 16 * first_word + 4 * lane;
    if (block_ok && sample0 < num_samples) {
      float* const p = partials + (team.league_rank() % replicas) * partial_stride + sample0;
      const float4 v = reinterpret_cast<const float4*>(sums)[lane];
      // Into y directly, the last group of samples may be partial: scalar adds there.
      const bool whole_group = !direct || sample0 + 4 <= num_samples;
#if __CUDA_ARCH__ >= 900
      if (whole_group) {
        asm volatile("red.global.add.v4.f32 [%0], {%1, %2, %3, %4};\n" ::"l"(p), "f"(v.x), "f"(v.y),
                     "f"(v.z), "f"(v.w)
                     : "memory");
      } else
#endif
      {
        const float four[4] = {v.x, v.y, v.z, v.w};
        for (int i = 0; i < 4 && (whole_group || sample0 + i < num_samples); ++i)
          atomicAdd(p + i, four[i]);
      }
    }
    if (direct) return;  // the sums went straight into y, zeroed beforehand
    __threadfence();     // the sums are visible before this team counts as done
    // The last team to finish (its count is seen after every other team's sums) adds the
    // replicas into y.
    team.team_barrier();
    auto* const last_flag = reinterpret_cast<unsigned*>(team_max);
    if (rank == 0) {
      *last_flag = atomicAdd(done, 1u) == num_teams - 1 ? 1u : 0u;
    }
    team.team_barrier();
    if (*last_flag != 0u) finish(team);
#else
    (void)team;  // host execution spaces never launch this kernel (no tensor cores)
#endif
  }
};

}  // namespace kcla::detail
