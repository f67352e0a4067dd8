// y = G x on 2-bit packed genotypes through the tensor cores (NVIDIA sm_80 and newer):
// the kernel behind PackedKernel::tensor_cores (docs/packed-genotypes.md).
//
// Why: a bandwidth-bound GEMV on .bed codes must spend at most about two instructions per
// genotype on an H200; table lookups need three or more (gathering a sample's codes across
// variants, a shared-memory load and an add per lookup). Here the codes become fp16 matrix
// fragments with one byte permute per two genotypes and the sums are mma instructions.
// As measured it is slower than the quad tables (the byte permutes and logic operations
// run on the half-rate integer pipe), so PackedKernel::automatic does not choose it.
//
// The product as a matrix product: per warp, A is 16 samples x 16 variants of codes as
// fp16 values, B is 16 variants x 8 columns: the three fp16 pieces hi + mid + lo of
// x * 2^e (e per team: the team's largest |x| becomes 2^14 .. 2^15), so the sum of the
// columns of D = A B is x's product to within 2^-33 of the team's largest |x| per term,
// with fp32 accumulation (the accuracy of an fp32 GEMV).
// A code becomes its value without arithmetic: the value (0 .. 3) is a byte of a 4-byte
// table, picked by a byte permute whose selector is the code itself, into either the low
// byte of an fp16 (the subnormal value * 2^-24) or the high byte (value * 2^-16), whichever
// position the code already has in the selector: no shifts for half of the samples, one
// shared shift for the other half. Each output row then carries a known power of two,
// removed at the end with the 2^e.
#pragma once

#include <kcla/detail/packed_genotype_kernels.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdint>
#include <type_traits>

#if defined(__CUDA_ARCH__)
#include <cuda_fp16.h>
#endif

namespace kcla::detail {

/// Bytes s of (x, y) as PTX's prmt (default mode): byte i of the result is byte
/// (s >> 4 i) & 7 of the 8-byte (y:x); the 4th bit of a selector nibble (sign
/// replication) is never used here.
KOKKOS_FORCEINLINE_FUNCTION std::uint32_t packed_byte_perm(std::uint32_t x, std::uint32_t y,
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

/// The two codes of one sample for a pair of variants, as an fp16x2 fragment register (the
/// kernel's decode, which add_step writes out with a fused flip and mask; tests check it).
/// `pair` (flipped: packed_mma_table) has the pair's two bytes holding the sample, first
/// variant in bits 0..7, second in bits 8..15, the sample's codes at bits 0..1 and 8..9
/// (`high` false) or 4..5 and 12..13 (`high` true). The halves are the first and the
/// second variant's value times 2^-24 (low) or 2^-16 (high): the selector is the masked
/// pair itself, its other nibbles 0, which picks a code of value 0.
KOKKOS_FORCEINLINE_FUNCTION std::uint32_t packed_mma_register(std::uint32_t pair, bool high,
                                                              std::uint32_t table) {
  return packed_byte_perm(table, 0u, pair & (high ? 0x3030u : 0x0303u));
}

/// The table packed_mma_register reads and the flip applied to the codes first: byte c of
/// `table` is the value of code c ^ z, where z is a code whose value is 0 and `flip` is z
/// in every 2-bit field, so that a selector nibble masked to 0 picks a zero. False when a
/// value is not one of 0, 1, 2, 3 (other values have no exact subnormal encoding here) or
/// no code has the value 0.
/// `value`: four values by code (an array or PackedGenotypeMatrix::values_of_codes()).
template <class Values>
inline bool packed_mma_table(const Values& value, std::uint32_t& table, std::uint32_t& flip) {
  using Scalar = std::decay_t<decltype(value[0])>;
  int zero = -1;
  for (int c = 0; c < 4; ++c) {
    const Scalar v = value[c];
    if (!(v == Scalar(0) || v == Scalar(1) || v == Scalar(2) || v == Scalar(3))) return false;
    if (v == Scalar(0) && zero < 0) zero = c;
  }
  if (zero < 0) return false;
  table = 0;
  for (int c = 0; c < 4; ++c) table |= static_cast<std::uint32_t>(value[c ^ zero]) << (8 * c);
  flip = 0x55555555u * static_cast<std::uint32_t>(zero);
  return true;
}

/// A team is block_warps x splits warps: block_warps consecutive blocks of 128 samples (8
/// words; one warp each) times `splits` consecutive ranges of split_steps steps of 16
/// variants (a part of the variants per team). Each warp steps through its range with 8
/// m16n8k16 products per step (one per 16 samples); its words (16 variants x 8 words per
/// step) arrive by asynchronous copies into a ring of `stages` steps in team scratch, so
/// the loads in flight hold no registers. The B fragments of batch_steps steps of every
/// split are built in team scratch (double-buffered, one barrier per batch). At the end
/// the splits' sums are added in scratch and each sample's sum goes into y, zeroed
/// beforehand: one atomic per sample and team.
template <class ExecutionSpace>
struct PackedTensorCoreFunctor {
  using member_type = typename Kokkos::TeamPolicy<ExecutionSpace>::member_type;
  static constexpr int max_team_warps = 8;  // the launch bound: 256 threads, 3 teams per SM
  static constexpr int words_per_warp = 8;  // 128 samples
  static constexpr int step_variants = 16;
  static constexpr int batch_steps = 16;
  static constexpr int stages = 4;           // steps in flight per warp (a power of 2)
  static constexpr int split_round = 4;      // a split's steps are a multiple of this
  static constexpr int fragment_words = 24;  // per step: 3 pieces x 4 lanes x 2 registers
  static constexpr int block_samples = 16 * words_per_warp;
  // A step's 16 rows of 8 words, a padding row after every 4: the reads of variants 2t,
  // 2t + 1, 2t + 8, 2t + 9 by the four lanes t of a group hit four different banks.
  static constexpr int stage_words = 20 * words_per_warp;

  static KOKKOS_INLINE_FUNCTION int row_offset(int variant) {
    return (variant + (variant >> 2)) * words_per_warp;
  }

  const std::uint32_t* words = nullptr;
  const float* x = nullptr;
  float* y = nullptr;
  std::int64_t ld = 1, vector0 = 0;
  std::int64_t num_samples = 0, num_variants = 0, words_per_variant = 0;
  std::int64_t sample_blocks = 1;  // ceil(sample words / 8)
  std::int64_t team_groups = 1;    // teams across the sample blocks
  std::int64_t num_steps = 1, split_steps = split_round;
  int block_warps = 1, splits = 1;
  std::uint32_t table = 0;  // byte c: the value of code c ^ flip
  std::uint32_t flip = 0;   // a code whose value is 0, in every 2-bit field

  static KOKKOS_INLINE_FUNCTION std::size_t scratch_bytes(int block_warps_, int splits_) {
    return sizeof(std::uint32_t) *
               (static_cast<std::size_t>(block_warps_) * splits_ * stages * stage_words +
                2 * static_cast<std::size_t>(splits_) * batch_steps * fragment_words +
                static_cast<std::size_t>(splits_ > 1 ? block_warps_ * block_samples : 0) +
                max_team_warps) +
           16;  // the rings' 16-byte alignment
  }

#if defined(__CUDA_ARCH__)
  static __device__ __forceinline__ void mma(float* d, std::uint32_t a0, std::uint32_t a1,
                                             std::uint32_t a2, std::uint32_t a3, std::uint32_t b0,
                                             std::uint32_t b1) {
#if __CUDA_ARCH__ >= 800
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
#else
    __trap();  // the plan never launches this kernel below sm_80
#endif
  }

  /// Shared-memory accesses by 32-bit shared addresses: Kokkos' scratch pointers are
  /// generic, and generic loads of shared memory cost more than ld.shared.
  static __device__ __forceinline__ unsigned shared_address(const void* p) {
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
  }
  template <int offset>
  static __device__ __forceinline__ std::uint32_t load_shared(unsigned address) {
    std::uint32_t v;
    asm volatile("ld.shared.u32 %0, [%1+%2];\n" : "=r"(v) : "r"(address), "n"(offset));
    return v;
  }
  /// (a ^ b) & mask in one three-input logic operation.
  template <unsigned mask>
  static __device__ __forceinline__ std::uint32_t flip_and_mask(std::uint32_t a, std::uint32_t b) {
    std::uint32_t d;
    asm("lop3.b32 %0, %1, %2, %3, 0x28;\n" : "=r"(d) : "r"(a), "r"(b), "n"(mask));
    return d;
  }

  /// The B fragments of steps first + i (i < batch_steps) of every split, split v's
  /// starting at split_first + v split_steps: fragment word (v, i, piece, t, r) holds
  /// piece `piece` of x * 2^e for variants 2t, 2t + 1 (r = 0) or 2t + 8, 2t + 9 (r = 1) of
  /// the step as fp16x2; zero past the split's range and the last variant.
  __device__ void build_fragments(const member_type& team, std::int64_t split_first,
                                  std::int64_t batch, int e, std::uint32_t* out) const {
    auto* halves = reinterpret_cast<unsigned short*>(out);
    for (int i = team.team_rank(); i < splits * batch_steps * step_variants;
         i += team.team_size()) {
      const int split = i / (batch_steps * step_variants);
      const int ls = (i / step_variants) % batch_steps, k = i % step_variants;
      const std::int64_t local = batch * batch_steps + ls;
      const std::int64_t v = (split_first + split * split_steps + local) * step_variants + k;
      const float value = local < split_steps && v < num_variants ? x[v * ld + vector0] : 0.0f;
      const float b = ldexpf(value, e);
      const __half hi = __float2half_rn(b);
      const float r1 = b - __half2float(hi);
      const __half mid = __float2half_rn(r1);
      const __half lo = __float2half_rn(r1 - __half2float(mid));
      const int t = (k & 7) >> 1, r = k >> 3, half = k & 1;
      const int base = ((split * batch_steps + ls) * fragment_words + t * 2 + r) * 2 + half;
      halves[base] = __half_as_ushort(hi);
      halves[base + 16] = __half_as_ushort(mid);
      halves[base + 32] = __half_as_ushort(lo);
    }
  }

  /// Starts the copy of 16 bytes (lane L: 4 words of variant L / 2 of a step) into the
  /// ring at shared address `target`; zeros instead when `ok` is false.
  __device__ __forceinline__ void copy_words(unsigned target, const std::uint32_t* source,
                                             bool ok) const {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(target),
                 "l"(ok ? source : words), "r"(ok ? 16 : 0));
  }

  /// One step: 4 words (variants 2t, 2t + 1, 2t + 8, 2t + 9 of the thread's word of 16
  /// samples) into 8 products. Tile (m, q) has rows g <- sample 4m + q (low encoding) and
  /// g + 8 <- sample 4m + q + 2 (high encoding) of the word.
  __device__ __forceinline__ void add_step(float (*acc)[4], const std::uint32_t* w,
                                           std::uint32_t b0, std::uint32_t b1) const {
#pragma unroll
    for (int m = 0; m < 4; ++m) {
      const std::uint32_t pick = 0x40u + 0x11u * static_cast<std::uint32_t>(m);
      const std::uint32_t ab = __byte_perm(w[0], w[1], pick);
      const std::uint32_t cd = __byte_perm(w[2], w[3], pick);
      // codes flipped so that code 0 has the value 0 (masked-out nibbles then pick it);
      // flip has the same value in every 2-bit field, so it commutes with the shift
#pragma unroll
      for (int q = 0; q < 2; ++q) {
        const std::uint32_t pab = ab >> (2 * q), pcd = cd >> (2 * q);
        mma(acc[2 * m + q], __byte_perm(table, 0u, flip_and_mask<0x0303u>(pab, flip)),
            __byte_perm(table, 0u, flip_and_mask<0x3030u>(pab, flip)),
            __byte_perm(table, 0u, flip_and_mask<0x0303u>(pcd, flip)),
            __byte_perm(table, 0u, flip_and_mask<0x3030u>(pcd, flip)), b0, b1);
      }
    }
  }

#endif

  KOKKOS_INLINE_FUNCTION void operator()(const member_type& team) const {
#if defined(__CUDA_ARCH__)
    const std::int64_t group = team.league_rank() % team_groups;
    const std::int64_t part = team.league_rank() / team_groups;
    const int rank = team.team_rank(), lane = rank & 31, warp_id = rank >> 5;
    const int g = lane >> 2, t = lane & 3;
    const int local_block = warp_id % block_warps, split = warp_id / block_warps;
    const std::int64_t block = group * block_warps + local_block;
    const bool warp_active = block < sample_blocks;
    // Words past the last one (a block's unused lanes) read as zeros: their rows are
    // samples >= num_samples, never stored.
    const std::int64_t word = block * words_per_warp + g;
    const std::int64_t team_first = part * splits * split_steps;
    const std::int64_t first = team_first + split * split_steps;
    const std::int64_t team_last = team_first + splits * split_steps < num_steps
                                       ? team_first + splits * split_steps
                                       : num_steps;
    auto* const scratch = static_cast<std::uint32_t*>(
        team.team_shmem().get_shmem(scratch_bytes(block_warps, splits)));
    auto* const rings = reinterpret_cast<std::uint32_t*>(
        (reinterpret_cast<std::uintptr_t>(scratch) + 15) / 16 * 16);
    std::uint32_t* const fragments_base = rings + block_warps * splits * stages * stage_words;
    const int buffer_words = splits * batch_steps * fragment_words;
    float* const partial = reinterpret_cast<float*>(fragments_base + 2 * buffer_words);
    float* const team_max = partial + (splits > 1 ? block_warps * block_samples : 0);

    // The team's scale: its largest |x| becomes 2^14 .. 2^15 (fp16's largest is 65504).
    float most = 0.0f;
    const std::int64_t v_end =
        team_last * step_variants < num_variants ? team_last * step_variants : num_variants;
    for (std::int64_t v = team_first * step_variants + rank; v < v_end; v += team.team_size())
      most = fmaxf(most, fabsf(x[v * ld + vector0]));
#pragma unroll
    for (int s = 16; s > 0; s >>= 1) most = fmaxf(most, __shfl_xor_sync(0xffffffffu, most, s));
    if (lane == 0) team_max[warp_id] = most;
    team.team_barrier();
    most = 0.0f;
    for (int i = 0; i < block_warps * splits; ++i) most = fmaxf(most, team_max[i]);
    int e = 0;
    if (most > 0.0f && most <= 3.4028235e38f) {
      int exponent = 0;
      frexpf(most, &exponent);
      e = 15 - exponent;
    }

    float acc[8][4];
#pragma unroll
    for (int i = 0; i < 8; ++i) acc[i][0] = acc[i][1] = acc[i][2] = acc[i][3] = 0.0f;

    const bool working = warp_active && first < num_steps;
    const int copy_variant = lane >> 1;
    const std::int64_t copy_word = block * words_per_warp + 4 * (lane & 1);
    const std::int64_t step_words = step_variants * words_per_variant;
    const std::uint32_t* source =
        words +
        (working ? (first * step_variants + copy_variant) * words_per_variant + copy_word : 0);
    const int steps_here =
        working
            ? static_cast<int>(first + split_steps < num_steps ? split_steps : num_steps - first)
            : 0;
    // Steps whose copy is real: the lane's variant exists and its words too.
    int copy_steps = 0;
    if (working && copy_word < words_per_variant) {
      const std::int64_t variants_left = num_variants - first * step_variants - copy_variant;
      const std::int64_t real =
          variants_left > 0 ? (variants_left + step_variants - 1) / step_variants : 0;
      copy_steps = static_cast<int>(real < steps_here ? real : steps_here);
    }
    constexpr unsigned stage_bytes = 4 * stage_words, ring_bytes = stages * stage_bytes;
    const unsigned ring = shared_address(rings + warp_id * stages * stage_words);
    const unsigned copy_at =
        ring + 4u * static_cast<unsigned>(row_offset(copy_variant) + 4 * (lane & 1));
    // the ring's prologue: steps 0 .. stages - 2
    if (working)
      for (int i = 0; i < stages - 1; ++i) {
        if (i < steps_here) copy_words(copy_at + i * stage_bytes, source, i < copy_steps);
        asm volatile("cp.async.commit_group;\n" ::);
        source += step_words;
      }
    unsigned read_at = ring + 4u * static_cast<unsigned>(row_offset(2 * t) + g);
    unsigned write_at = copy_at + (stages - 1) * stage_bytes;

    build_fragments(team, team_first, 0, e, fragments_base);
    team.team_barrier();
    const int batches = static_cast<int>((split_steps + batch_steps - 1) / batch_steps);
    for (int batch = 0; batch < batches; ++batch) {
      std::uint32_t* const current = fragments_base + (batch & 1) * buffer_words;
      if (batch + 1 < batches)
        build_fragments(team, team_first, batch + 1, e,
                        fragments_base + ((batch + 1) & 1) * buffer_words);
      if (working) {
        unsigned fragment_at = shared_address(current + split * batch_steps * fragment_words) +
                               8u * static_cast<unsigned>(g * 4 + t);
        const int s_end =
            (batch + 1) * batch_steps < steps_here ? (batch + 1) * batch_steps : steps_here;
        for (int s = batch * batch_steps; s < s_end; ++s) {
          asm volatile("cp.async.wait_group %0;\n" ::"n"(stages - 2));
          __syncwarp();  // every lane's copies of step s have landed
          const std::uint32_t w[4] = {load_shared<0>(read_at), load_shared<32>(read_at),
                                      load_shared<320>(read_at), load_shared<352>(read_at)};
          const int ahead = s + stages - 1;
          if (ahead < steps_here) copy_words(write_at, source, ahead < copy_steps);
          asm volatile("cp.async.commit_group;\n" ::);
          source += step_words;
          read_at += stage_bytes;
          if (read_at >= ring + ring_bytes) read_at -= ring_bytes;
          write_at += stage_bytes;
          if (write_at >= ring + ring_bytes) write_at -= ring_bytes;
          std::uint32_t f0 = 0u, f1 = 0u;
          if (g < 3) {
            f0 = load_shared<0>(fragment_at);
            f1 = load_shared<4>(fragment_at);
          }
          fragment_at += 4 * fragment_words;
          add_step(acc, w, f0, f1);
        }
      }
      team.team_barrier();
    }
    if (working) asm volatile("cp.async.wait_all;\n" ::);

    // Row g + 8 of tile (m, q) and row g: columns 0 .. 2 hold the pieces; t = 0 holds
    // columns 0, 1 and t = 1 columns 2, 3 (3 .. 7 are zero), so one exchange sums a row.
    // Splits 1.. leave their sums in scratch, split 0 adds them and goes to y.
    float sums[8][2];
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      float low = acc[i][0] + acc[i][1], high = acc[i][2] + acc[i][3];
      low += __shfl_xor_sync(0xffffffffu, low, 1);
      high += __shfl_xor_sync(0xffffffffu, high, 1);
      sums[i][0] = low;
      sums[i][1] = high;
    }
    float* const mine = partial + local_block * block_samples + 16 * g;
    for (int v = splits - 1; v >= 1; --v) {
      if (split == v && t < 2) {
#pragma unroll
        for (int m = 0; m < 4; ++m) {
          const int i = 2 * m + t;  // lane t keeps the tiles with q = t
          const float low = sums[i][0] + (v + 1 < splits ? mine[4 * m + t] : 0.0f);
          const float high = sums[i][1] + (v + 1 < splits ? mine[4 * m + t + 2] : 0.0f);
          mine[4 * m + t] = low;
          mine[4 * m + t + 2] = high;
        }
      }
      team.team_barrier();
    }
    if (split != 0 || !warp_active || t >= 2 || word >= words_per_variant) return;
    const std::int64_t sample0 = 16 * word;
#pragma unroll
    for (int m = 0; m < 4; ++m) {
      const int i = 2 * m + t;
      float low = sums[i][0], high = sums[i][1];
      if (splits > 1) {
        low += mine[4 * m + t];
        high += mine[4 * m + t + 2];
      }
      const std::int64_t s_low = sample0 + 4 * m + t, s_high = s_low + 2;
      if (s_low < num_samples) Kokkos::atomic_add(y + s_low * ld + vector0, ldexpf(low, 24 - e));
      if (s_high < num_samples) Kokkos::atomic_add(y + s_high * ld + vector0, ldexpf(high, 16 - e));
    }
#else
    (void)team;  // host execution spaces never launch this kernel (no tensor cores)
#endif
  }
};

}  // namespace kcla::detail
