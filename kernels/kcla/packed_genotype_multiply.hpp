// y = G x and Y = G X straight on 2-bit packed genotypes (the PLINK .bed layout): what a
// user would run instead of kcla's grammar engine, so the baseline it is measured against.
//
//   kcla::PackedGenotypeMatrix<float> G(kcla::read_plink_packed("panel"));  // or pack_genotypes
//   kcla::multiply(exec, G, x, y);   // y = G x: x has num_variants entries, y num_samples
//   kcla::multiply(exec, G, X, Y);   // rank 2, LayoutRight (the B values of a row contiguous)
//
// G is samples x variants with entries 0/1/2 (missing calls 0, as kcla's PLINK reader
// reads them). y is overwritten; the product runs on `exec`, asynchronously like any
// Kokkos kernel, and needs no workspace (products on several streams may overlap).
// docs/packed-genotypes.md describes the kernels and what each costs per genotype.
#pragma once

#include <kcla/config.hpp>
#include <kcla/detail/packed_genotype_imma.hpp>
#include <kcla/detail/packed_genotype_kernels.hpp>
#include <kcla/detail/packed_genotype_mma.hpp>
#include <kcla/detail/product_operands.hpp>
#include <kcla/error.hpp>
#include <kcla/packed_genotypes.hpp>

#include <Kokkos_Core.hpp>

#include <array>
#include <climits>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>

namespace kcla {

/// Every tuning constant of the packed-genotype products.
struct PackedGenotypeTuning {
  // Pair tables (y = G x; up to 4 vectors per pass): one team per (tile of samples,
  // chunk of variants), one thread per 32-bit word of 16 samples.
  int table_chunk_variants = 128;  ///< variants per team (even): 64 pair tables
  int table_max_team_words = 256;  ///< words (threads) per team: 4,096 samples; / vectors
  int table_max_vectors = 4;       ///< `automatic` takes tables up to this many vectors

  // Quad tables (y = G x, one vector per pass): a team of quad_team_threads threads is
  // slices of whole warps, each covering the tile's words; a slice sums quad_slice_quads
  // quads (4 variants each) per step, teams stride over the steps.
  int quad_team_threads = 128;    ///< slices are added while the team stays within this
  int quad_max_team_words = 256;  ///< words (threads) of a slice: 4,096 samples
  int quad_slice_quads = 4;       ///< 1 to 4 (16 words in flight per thread)
  int quad_target_teams = 0;      ///< teams in all (0: GPU half-full; one per host thread)

  // Tensor cores (y = G x, float, one vector per pass; NVIDIA sm_80 and newer): teams of
  // mma_team_warps warps, each warp 128 samples x one range of at least
  // mma_min_part_steps x 16 variants, ranges until there are about mma_target_warps warps.
  int mma_team_warps = 8;       ///< 1 to 8: blocks of 128 samples first, then variant splits
  int mma_min_part_steps = 32;  ///< a range's sums go into y once (atomics): keep them long
  int mma_target_warps = 0;     ///< 0: one wave (3 teams of 8 warps per multiprocessor)

  // Integer tensor cores (y = G x, float, one vector per pass; NVIDIA sm_80 and newer):
  // teams of up to 8 warps on consecutive blocks of 128 samples, one range of variants
  // each, ranges until there are about imma_target_warps warps.
  int imma_target_warps = 0;     ///< 0: one wave (3 teams of 8 warps per multiprocessor)
  int imma_min_chunk_steps = 8;  ///< a range is at least this many steps (fills the copy ring)
  /// Replicas of the partial sums (1 .. 32; 0: one for a single vector, where the sums go
  /// straight into y, zeroed first; else about one per 64 ranges of variants).
  int imma_replicas = 0;

  // Decoded tiles (Y = G X, many vectors): a team of tile_sample_groups x
  // tile_vector_groups threads owns tile_samples samples x (tile_vector_groups x 2, 4 or 8)
  // vectors and steps through its variants tile_variants at a time.
  static constexpr int tile_samples = 128;
  static constexpr int tile_variants = 16;
  static constexpr int tile_sample_groups = 16;  ///< 8 samples per thread
  static constexpr int tile_vector_groups = 8;   ///< 2, 4 or 8 vectors per thread
  int tile_target_teams = 1024;  ///< the variants are split until there are about this many teams

  // Host execution spaces: blocks of samples, one thread each.
  int host_block_bytes = 32 * 1024;  ///< a block's partial sums (samples x vectors), about L1
  int host_chunk_variants = 256;     ///< partial sums go into y every this many variants

  /// Scratch of one team at level 0, at most what the back end allows (40 KiB on CUDA).
  int max_team_scratch_bytes = 40 * 1024;
};

/// Which kernel multiply() runs. `automatic`: host_blocks on host execution spaces; on a
/// device, for one vector int8_tensor_cores with its sums straight into y (y 16-byte
/// aligned; else quad_tables), tables up to PackedGenotypeTuning::table_max_vectors
/// vectors, tiles above (measured on an H100 and an H200: docs/packed-genotypes.md). The
/// others force one (every kernel runs on every space; tests use that). quad_tables runs pair
/// tables instead when its smallest tables do not fit the team scratch
/// (PackedGenotypeTuning::max_team_scratch_bytes); tensor_cores and int8_tensor_cores run
/// quad_tables instead where they do not run: Scalar double, host spaces, GPUs without sm_80 tensor
/// cores (packed_tensor_cores_available and packed_int8_tensor_cores_available say which;
/// tensor_cores also needs code values 0 .. 3). int8_tensor_cores keeps a workspace with the matrix
/// unless its sums go straight into y (one vector, one replica, y 16-byte aligned: what `automatic`
/// runs): products with one matrix on several execution space instances at once must not force it.
enum class PackedKernel {
  automatic,
  tables,
  tiles,
  host_blocks,
  quad_tables,
  tensor_cores,
  int8_tensor_cores
};

struct PackedMultiplyOptions {
  PackedKernel kernel = PackedKernel::automatic;
  PackedGenotypeTuning tuning;
};

/// The codes of a PackedGenotypes in MemorySpace, as 32-bit words (16 samples each,
/// words_per_variant() per variant), and the value of each code as Scalar.
template <class Scalar, class MemorySpace = Kokkos::DefaultExecutionSpace::memory_space>
class PackedGenotypeMatrix {
 public:
  using value_type = Scalar;
  using memory_space = MemorySpace;
  static_assert(std::is_floating_point<Scalar>::value,
                "kcla::PackedGenotypeMatrix: Scalar must be float or double");

  /// Copies the codes to MemorySpace. Throws InvalidArgument when `genotypes` is
  /// inconsistent (PackedGenotypes::validate).
  explicit PackedGenotypeMatrix(const PackedGenotypes& genotypes)
      : num_samples_(genotypes.num_samples),
        num_variants_(genotypes.num_variants),
        words_per_variant_(genotypes.bytes_per_variant / 4),
        counted_allele_(genotypes.counted_allele) {
    genotypes.validate("kcla::PackedGenotypeMatrix");
    const auto counts = allele_counts_of_codes(genotypes.counted_allele);
    for (std::size_t c = 0; c < 4; ++c) values_[c] = static_cast<Scalar>(counts[c]);
    words_ = Kokkos::View<std::uint32_t*, MemorySpace>(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "kcla::packed::words"),
        static_cast<std::size_t>(num_variants_ * words_per_variant_));
    auto host = Kokkos::create_mirror_view(words_);
    // Little-endian words: sample i of a word is in bits 2i, 2i + 1 (byte i / 4 of the .bed
    // layout); x86-64, Arm and every GPU Kokkos targets are little-endian.
    if (!genotypes.codes.empty())
      std::memcpy(host.data(), genotypes.codes.data(), genotypes.bytes());
    Kokkos::deep_copy(words_, host);
  }

  std::int64_t num_rows() const { return num_samples_; }
  std::int64_t num_cols() const { return num_variants_; }
  std::int64_t num_samples() const { return num_samples_; }
  std::int64_t num_variants() const { return num_variants_; }
  std::int64_t words_per_variant() const { return words_per_variant_; }
  CountedAllele counted_allele() const { return counted_allele_; }
  /// The value (allele count) each 2-bit code stands for.
  const std::array<Scalar, 4>& values_of_codes() const { return values_; }
  Kokkos::View<const std::uint32_t*, MemorySpace> words() const { return words_; }
  /// Bytes the codes occupy in MemorySpace.
  std::size_t device_bytes() const { return words_.span() * sizeof(std::uint32_t); }

  /// For PackedKernel::int8_tensor_cores (detail): at least `floats` floats and a counter,
  /// all zero, which that kernel leaves zero after each product; made (or grown) on first
  /// use, after fencing `exec`. Copies of the matrix share them, so products with one
  /// matrix on several execution space instances at once must not use that kernel.
  template <class ExecutionSpace>
  std::pair<Scalar*, unsigned*> int8_workspace(const ExecutionSpace& exec,
                                               std::size_t floats) const {
    if (int8_partials_.extent(0) < floats) {
      exec.fence();
      int8_partials_ = Kokkos::View<Scalar*, MemorySpace>("kcla::packed::int8_partials", floats);
      if (int8_done_.extent(0) == 0)
        int8_done_ = Kokkos::View<unsigned*, MemorySpace>("kcla::packed::int8_done", 1);
      Kokkos::fence();
    }
    return {int8_partials_.data(), int8_done_.data()};
  }

 private:
  std::int64_t num_samples_ = 0, num_variants_ = 0, words_per_variant_ = 0;
  CountedAllele counted_allele_ = CountedAllele::a1;
  std::array<Scalar, 4> values_{};
  Kokkos::View<std::uint32_t*, MemorySpace> words_;
  mutable Kokkos::View<Scalar*, MemorySpace> int8_partials_;
  mutable Kokkos::View<unsigned*, MemorySpace> int8_done_;
};

namespace detail {

template <class ExecutionSpace>
constexpr bool packed_on_host() {
  return Kokkos::SpaceAccessibility<Kokkos::HostSpace,
                                    typename ExecutionSpace::memory_space>::accessible;
}

template <class ExecutionSpace, class Scalar>
void packed_zero(const ExecutionSpace& exec, Scalar* y, std::int64_t n) {
  if (n == 0) return;
  Kokkos::parallel_for(
      "kcla::packed::zero",
      Kokkos::RangePolicy<ExecutionSpace, Kokkos::IndexType<std::int64_t>>(exec, 0, n),
      PackedZeroFunctor<Scalar>{y});
}

inline int packed_league(std::int64_t teams, const char* kernel) {
  if (teams > INT_MAX)
    throw InvalidArgument(std::string("kcla::multiply (packed genotypes): ") + kernel +
                          " would need more than 2^31-1 teams");
  return static_cast<int>(teams);
}

template <class ExecutionSpace, class Functor>
int packed_team_size(const ExecutionSpace& exec, const Functor& f, int league, int wanted,
                     std::size_t scratch0, std::size_t scratch1 = 0) {
  Kokkos::TeamPolicy<ExecutionSpace> probe(exec, league, 1);
  probe.set_scratch_size(0, Kokkos::PerTeam(scratch0));
  if (scratch1 > 0) probe.set_scratch_size(1, Kokkos::PerTeam(scratch1));
  const int most = probe.team_size_max(f, Kokkos::ParallelForTag());
  return wanted < most ? wanted : (most > 0 ? most : 1);
}

template <class ExecutionSpace>
std::size_t packed_scratch_limit(const PackedGenotypeTuning& tuning) {
  const auto backend =
      static_cast<std::size_t>(Kokkos::TeamPolicy<ExecutionSpace>::scratch_size_max(0));
  const auto wanted = static_cast<std::size_t>(
      tuning.max_team_scratch_bytes > 0 ? tuning.max_team_scratch_bytes : 0);
  return wanted < backend ? wanted : backend;
}

/// The fields every table and tensor-core functor reads by the same names: the codes, x
/// and y (row stride ld = the number of vectors) and the panel's shape.
template <class Functor, class Scalar, class MemorySpace>
void packed_set_operands(Functor& f, const PackedGenotypeMatrix<Scalar, MemorySpace>& G,
                         const Scalar* x, Scalar* y, std::int64_t B) {
  f.words = G.words().data();
  f.x = x;
  f.y = y;
  f.ld = B;
  f.num_samples = G.num_samples();
  f.num_variants = G.num_variants();
  f.words_per_variant = G.words_per_variant();
}

struct PackedTablesPlan {
  int chunk = 2;
  std::int64_t tile_words = 1, num_tiles = 1, num_chunks = 1;
};

/// Chunk and tile sizes of the pair-table kernel for NV vectors per pass: the tuning's,
/// halved (the larger of tables and transposition buffer first) until the scratch fits.
template <int NV, class Scalar, class ExecutionSpace>
PackedTablesPlan packed_tables_plan(std::int64_t sample_words, std::int64_t num_variants,
                                    const PackedGenotypeTuning& tuning) {
  using functor = PackedTablesFunctor<Scalar, ExecutionSpace, NV>;
  const std::size_t limit = packed_scratch_limit<ExecutionSpace>(tuning);
  PackedTablesPlan plan;
  plan.chunk = tuning.table_chunk_variants / 2 * 2 > 2 ? tuning.table_chunk_variants / 2 * 2 : 2;
  std::int64_t max_words =
      tuning.table_max_team_words / NV > 1 ? tuning.table_max_team_words / NV : 1;
  while (true) {
    plan.num_tiles = (sample_words + max_words - 1) / max_words;
    plan.tile_words = (sample_words + plan.num_tiles - 1) / plan.num_tiles;
    if (functor::scratch_bytes(plan.chunk, plan.tile_words) <= limit) break;
    const std::size_t tables = functor::table_scalars(plan.chunk);
    const auto red = static_cast<std::size_t>(functor::red_stride * plan.tile_words * NV);
    if ((tables >= red || max_words == 1) && plan.chunk > 2)
      plan.chunk = plan.chunk / 4 * 2 > 2 ? plan.chunk / 4 * 2 : 2;
    else if (max_words > 1)
      max_words = (max_words + 1) / 2;
    else
      break;  // 2 variants x 1 word: a few hundred bytes, fits every back end
  }
  plan.num_chunks = (num_variants + plan.chunk - 1) / plan.chunk;
  return plan;
}

template <int NV, class ExecutionSpace, class Scalar, class MemorySpace>
void packed_tables_pass(const ExecutionSpace& exec,
                        const PackedGenotypeMatrix<Scalar, MemorySpace>& G, const Scalar* x,
                        Scalar* y, std::int64_t B, std::int64_t vector0,
                        const PackedTablesPlan& plan) {
  using functor = PackedTablesFunctor<Scalar, ExecutionSpace, NV>;
  functor f;
  packed_set_operands(f, G, x, y, B);
  f.vector0 = vector0;
  f.sample_words = (G.num_samples() + 15) / 16;
  f.tile_words = plan.tile_words;
  f.num_tiles = plan.num_tiles;
  f.chunk_variants = plan.chunk;
  f.direct = plan.num_chunks == 1;
  for (int c = 0; c < 4; ++c) f.value[c] = G.values_of_codes()[static_cast<std::size_t>(c)];
  const int league = packed_league(plan.num_tiles * plan.num_chunks, "the pair-table kernel");
  const std::size_t scratch = functor::scratch_bytes(plan.chunk, plan.tile_words);
  const int warp_words = static_cast<int>((plan.tile_words + 31) / 32 * 32);
  const int team = packed_team_size(exec, f, league, warp_words, scratch);
  Kokkos::parallel_for("kcla::packed::tables",
                       Kokkos::TeamPolicy<ExecutionSpace>(exec, league, team)
                           .set_scratch_size(0, Kokkos::PerTeam(scratch)),
                       f);
}

template <class ExecutionSpace, class Scalar, class MemorySpace>
void packed_tables(const ExecutionSpace& exec, const PackedGenotypeMatrix<Scalar, MemorySpace>& G,
                   const Scalar* x, Scalar* y, std::int64_t B, const PackedGenotypeTuning& tuning) {
  const std::int64_t sample_words = (G.num_samples() + 15) / 16;
  const std::int64_t n = G.num_variants();
  PackedTablesPlan plans[5];  // by vectors per pass
  plans[1] = packed_tables_plan<1, Scalar, ExecutionSpace>(sample_words, n, tuning);
  plans[2] = packed_tables_plan<2, Scalar, ExecutionSpace>(sample_words, n, tuning);
  plans[3] = packed_tables_plan<3, Scalar, ExecutionSpace>(sample_words, n, tuning);
  plans[4] = packed_tables_plan<4, Scalar, ExecutionSpace>(sample_words, n, tuning);
  const auto rest = static_cast<int>(B % 4);
  const bool direct =
      (B < 4 || plans[4].num_chunks == 1) && (rest == 0 || plans[rest].num_chunks == 1);
  if (!direct) packed_zero(exec, y, G.num_samples() * B);
  for (std::int64_t v0 = 0; v0 < B; v0 += 4) {
    switch (B - v0 < 4 ? B - v0 : 4) {
      case 1:
        packed_tables_pass<1>(exec, G, x, y, B, v0, plans[1]);
        break;
      case 2:
        packed_tables_pass<2>(exec, G, x, y, B, v0, plans[2]);
        break;
      case 3:
        packed_tables_pass<3>(exec, G, x, y, B, v0, plans[3]);
        break;
      default:
        packed_tables_pass<4>(exec, G, x, y, B, v0, plans[4]);
        break;
    }
  }
}

struct PackedQuadTablesPlan {
  bool fits = false;
  int slice_threads = 32, slices = 1, slice_quads = 1;
  std::int64_t tile_words = 1, num_tiles = 1, num_steps = 1, teams_per_tile = 1;
};

/// Tile, slices and quads of the quad-table kernel: the tuning's, shrunk until the scratch
/// fits (quads per slice down to 2, then slices, then quads down to 1, then tile words)
/// and the team fits `max_team` threads; `fits` is false when not even one quad's table
/// does. Teams per tile: quad_target_teams, or as many as the device's threads hold at
/// once, at most one per step.
template <class Scalar, class ExecutionSpace>
PackedQuadTablesPlan packed_quad_tables_plan(const ExecutionSpace& exec, std::int64_t sample_words,
                                             std::int64_t num_variants,
                                             const PackedGenotypeTuning& tuning, int max_team) {
  using functor = PackedQuadTablesFunctor<Scalar, ExecutionSpace>;
  const std::size_t limit = packed_scratch_limit<ExecutionSpace>(tuning);
  PackedQuadTablesPlan plan;
  std::int64_t max_words = tuning.quad_max_team_words > 1 ? tuning.quad_max_team_words : 1;
  plan.slice_quads = tuning.quad_slice_quads < 1                          ? 1
                     : tuning.quad_slice_quads > functor::max_slice_quads ? functor::max_slice_quads
                                                                          : tuning.quad_slice_quads;
  const int team_threads =
      tuning.quad_team_threads < max_team ? tuning.quad_team_threads : max_team;
  bool shaped = false;
  while (true) {
    plan.num_tiles = (sample_words + max_words - 1) / max_words;
    plan.tile_words = (sample_words + plan.num_tiles - 1) / plan.num_tiles;
    plan.slice_threads = static_cast<int>((plan.tile_words + 31) / 32 * 32);
    if (!shaped) {
      plan.slices = team_threads / plan.slice_threads;
      if (plan.slices < 1) plan.slices = 1;
      shaped = true;
    }
    // Host teams smaller than a slice keep their sums in scratch: no bound from max_team.
    const bool team_fits =
        plan.slices * plan.slice_threads <= max_team || max_team < plan.slice_threads;
    if (team_fits &&
        functor::scratch_bytes(plan.slices, plan.slice_quads, plan.slice_threads) <= limit) {
      plan.fits = true;
      break;
    }
    if (team_fits && plan.slice_quads > 2)
      plan.slice_quads /= 2;
    else if (plan.slices > 1)
      plan.slices /= 2;
    else if (team_fits && plan.slice_quads > 1)
      plan.slice_quads /= 2;
    else if (max_words > 1)
      max_words = (max_words + 1) / 2;
    else
      return plan;
  }
  const std::int64_t step = 4 * static_cast<std::int64_t>(plan.slices) * plan.slice_quads;
  plan.num_steps = (num_variants + step - 1) / step;
  std::int64_t target = tuning.quad_target_teams;
  if (target <= 0) {
    // As many teams as the device's threads hold at once (on a GPU, Kokkos' concurrency is
    // multiprocessors x resident threads): many teams for few samples, whose steps are
    // short; a host space gets about one team per thread.
    const std::int64_t threads = static_cast<std::int64_t>(plan.slices) * plan.slice_threads;
    target = exec.concurrency() / threads;
    // On a GPU, half of that (the tuning grid's best on an H200, docs/packed-genotypes.md):
    // half the atomic adds into y (one per sample and team), teams still fill the device.
    if (!packed_on_host<ExecutionSpace>()) target /= 2;
    if (target < 1) target = 1;
  }
  std::int64_t per_tile = (target + plan.num_tiles - 1) / plan.num_tiles;
  per_tile = per_tile < 1 ? 1 : (per_tile > plan.num_steps ? plan.num_steps : per_tile);
  plan.teams_per_tile = per_tile;
  return plan;
}

/// y = G x one vector at a time through quad tables; false (nothing done) when the plan
/// does not fit the team scratch.
template <class ExecutionSpace, class Scalar, class MemorySpace>
bool packed_quad_tables(const ExecutionSpace& exec,
                        const PackedGenotypeMatrix<Scalar, MemorySpace>& G, const Scalar* x,
                        Scalar* y, std::int64_t B, const PackedGenotypeTuning& tuning) {
  using functor = PackedQuadTablesFunctor<Scalar, ExecutionSpace>;
  const std::int64_t sample_words = (G.num_samples() + 15) / 16;
  functor f;
  // The most threads a team of this kernel may have (its registers decide on a GPU).
  const int max_team = packed_team_size(exec, f, 1, 1 << 20, 0);
  const auto plan =
      packed_quad_tables_plan<Scalar>(exec, sample_words, G.num_variants(), tuning, max_team);
  if (!plan.fits) return false;
  packed_set_operands(f, G, x, y, B);
  f.sample_words = sample_words;
  f.tile_words = plan.tile_words;
  f.num_tiles = plan.num_tiles;
  f.slice_threads = plan.slice_threads;
  f.slices = plan.slices;
  f.slice_quads = plan.slice_quads;
  f.num_steps = plan.num_steps;
  f.teams_per_tile = plan.teams_per_tile;
  f.direct = plan.teams_per_tile == 1;
  for (int c = 0; c < 4; ++c) f.value[c] = G.values_of_codes()[static_cast<std::size_t>(c)];
  const int league = packed_league(plan.num_tiles * plan.teams_per_tile, "the quad-table kernel");
  const std::size_t scratch =
      functor::scratch_bytes(plan.slices, plan.slice_quads, plan.slice_threads);
  const int team = packed_team_size(exec, f, league, plan.slices * plan.slice_threads, scratch);
  if (!f.direct) packed_zero(exec, y, G.num_samples() * B);
  for (std::int64_t v = 0; v < B; ++v) {
    f.vector0 = v;
    Kokkos::parallel_for("kcla::packed::quad_tables",
                         Kokkos::TeamPolicy<ExecutionSpace>(exec, league, team)
                             .set_scratch_size(0, Kokkos::PerTeam(scratch)),
                         f);
  }
  return true;
}

struct PackedTensorCorePlan {
  int block_warps = 1, splits = 1;
  std::int64_t sample_blocks = 1, team_groups = 1, num_steps = 1, split_steps = 4, num_parts = 1;
};

/// Teams of the tensor-core kernel for a panel of `sample_words` words of samples on a
/// device holding `concurrency` threads at once: mma_team_warps warps per team, first
/// across blocks of 128 samples, the rest splitting the team's variants; variant ranges of
/// at least mma_min_part_steps steps until there are about mma_target_warps warps.
inline PackedTensorCorePlan packed_tensor_core_plan(std::int64_t sample_words,
                                                    std::int64_t num_variants,
                                                    std::int64_t concurrency,
                                                    const PackedGenotypeTuning& tuning) {
  using functor = PackedTensorCoreFunctor<Kokkos::DefaultHostExecutionSpace>;
  PackedTensorCorePlan plan;
  plan.sample_blocks = (sample_words + functor::words_per_warp - 1) / functor::words_per_warp;
  if (plan.sample_blocks < 1) plan.sample_blocks = 1;
  const int wanted = tuning.mma_team_warps < 1                         ? 1
                     : tuning.mma_team_warps > functor::max_team_warps ? functor::max_team_warps
                                                                       : tuning.mma_team_warps;
  plan.block_warps = plan.sample_blocks < wanted ? static_cast<int>(plan.sample_blocks) : wanted;
  plan.splits = wanted / plan.block_warps;
  plan.team_groups = (plan.sample_blocks + plan.block_warps - 1) / plan.block_warps;
  plan.num_steps = (num_variants + functor::step_variants - 1) / functor::step_variants;
  if (plan.num_steps < 1) plan.num_steps = 1;
  std::int64_t target = tuning.mma_target_warps;
  // Kokkos' CUDA concurrency is multiprocessors x 2,048 threads; the launch bound holds 3
  // teams of 8 warps per multiprocessor, so this is one wave of full teams.
  if (target <= 0) target = concurrency * 3 / 256 > 1 ? concurrency * 3 / 256 : 1;
  // ranges of variants, each summed by team_groups x block_warps warps
  std::int64_t ranges = target / (plan.team_groups * plan.block_warps);
  const std::int64_t min_steps = tuning.mma_min_part_steps > 1 ? tuning.mma_min_part_steps : 1;
  if (ranges > plan.num_steps / min_steps) ranges = plan.num_steps / min_steps;
  if (ranges < 1) ranges = 1;
  const std::int64_t round = functor::split_round;
  plan.split_steps = ((plan.num_steps + ranges - 1) / ranges + round - 1) / round * round;
  ranges = (plan.num_steps + plan.split_steps - 1) / plan.split_steps;
  if (ranges < plan.splits) plan.splits = static_cast<int>(ranges);
  plan.num_parts = (ranges + plan.splits - 1) / plan.splits;
  return plan;
}

/// Whether the tensor-core kernel runs for this matrix on ExecutionSpace: a CUDA space on
/// a GPU of compute capability 8.0 or newer, Scalar float, code values 0 .. 3.
template <class ExecutionSpace, class Scalar, class MemorySpace>
bool packed_tensor_cores_available(const ExecutionSpace& exec,
                                   const PackedGenotypeMatrix<Scalar, MemorySpace>& G) {
#if KCLA_HAVE_CUDA
  if constexpr (std::is_same<ExecutionSpace, Kokkos::Cuda>::value &&
                std::is_same<Scalar, float>::value) {
    std::uint32_t table = 0, flip = 0;
    if (!packed_mma_table(G.values_of_codes(), table, flip)) return false;
    int major = 0;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, exec.cuda_device()) !=
        cudaSuccess)
      return false;
    return major >= 8;
  }
#endif
  (void)exec;
  (void)G;
  return false;
}

/// y = G x one vector at a time through the tensor cores; false (nothing done) where the
/// kernel does not run (packed_tensor_cores_available).
template <class ExecutionSpace, class Scalar, class MemorySpace>
bool packed_tensor_cores(const ExecutionSpace& exec,
                         const PackedGenotypeMatrix<Scalar, MemorySpace>& G, const Scalar* x,
                         Scalar* y, std::int64_t B, const PackedGenotypeTuning& tuning) {
  if (!packed_tensor_cores_available(exec, G)) return false;
  if constexpr (std::is_same<Scalar, float>::value) {
    using functor = PackedTensorCoreFunctor<ExecutionSpace>;
    const std::int64_t sample_words = (G.num_samples() + 15) / 16;
    const auto plan =
        packed_tensor_core_plan(sample_words, G.num_variants(), exec.concurrency(), tuning);
    functor f;
    packed_set_operands(f, G, x, y, B);
    f.sample_blocks = plan.sample_blocks;
    f.team_groups = plan.team_groups;
    f.num_steps = plan.num_steps;
    f.split_steps = plan.split_steps;
    f.block_warps = plan.block_warps;
    f.splits = plan.splits;
    packed_mma_table(G.values_of_codes(), f.table, f.flip);
    const int league = packed_league(plan.team_groups * plan.num_parts, "the tensor-core kernel");
    const std::size_t scratch = functor::scratch_bytes(plan.block_warps, plan.splits);
    packed_zero(exec, y, G.num_samples() * B);
    // 3 teams of 256 threads per multiprocessor: at most 85 registers
    using policy = Kokkos::TeamPolicy<ExecutionSpace, Kokkos::LaunchBounds<256, 3>>;
    for (std::int64_t v = 0; v < B; ++v) {
      f.vector0 = v;
      Kokkos::parallel_for("kcla::packed::tensor_cores",
                           policy(exec, league, 32 * plan.block_warps * plan.splits)
                               .set_scratch_size(0, Kokkos::PerTeam(scratch)),
                           f);
    }
    return true;
  }
  return false;
}

struct PackedInt8TensorCorePlan {
  int block_warps = 1, replicas = 1;
  std::int64_t sample_blocks = 1, team_groups = 1, num_steps = 1, chunk_steps = 1, num_chunks = 1;
};

/// Teams of the integer tensor-core kernel for a panel of `sample_words` words of samples
/// on a device holding `concurrency` threads at once, for products of `vectors` vectors:
/// teams of up to 8 warps on consecutive blocks of 128 samples (as many warps in each team
/// as the blocks allow), ranges of variants until the teams fill the device once (about 24
/// warps per multiprocessor; imma_target_warps overrides), each range at least
/// imma_min_chunk_steps steps.
inline PackedInt8TensorCorePlan packed_int8_tensor_core_plan(std::int64_t sample_words,
                                                             std::int64_t num_variants,
                                                             std::int64_t concurrency,
                                                             const PackedGenotypeTuning& tuning,
                                                             std::int64_t vectors = 1) {
  using functor = PackedInt8TensorCoreFunctor<Kokkos::DefaultHostExecutionSpace, false>;
  PackedInt8TensorCorePlan plan;
  plan.sample_blocks = (sample_words + functor::words_per_warp - 1) / functor::words_per_warp;
  if (plan.sample_blocks < 1) plan.sample_blocks = 1;
  const std::int64_t groups =
      (plan.sample_blocks + functor::max_team_warps - 1) / functor::max_team_warps;
  plan.block_warps = static_cast<int>((plan.sample_blocks + groups - 1) / groups);
  plan.team_groups = (plan.sample_blocks + plan.block_warps - 1) / plan.block_warps;
  plan.num_steps = (num_variants + functor::step_variants - 1) / functor::step_variants;
  if (plan.num_steps < 1) plan.num_steps = 1;
  // Kokkos' CUDA concurrency is multiprocessors x 2,048 threads; the launch bound holds
  // 24 warps per multiprocessor, in whole teams.
  std::int64_t teams = 0;
  if (tuning.imma_target_warps > 0) {
    teams = tuning.imma_target_warps / plan.block_warps;
  } else {
    const std::int64_t multiprocessors = concurrency / 2048 > 1 ? concurrency / 2048 : 1;
    teams = multiprocessors * (24 / plan.block_warps);
  }
  std::int64_t chunks = teams / plan.team_groups;
  if (chunks < 1) chunks = 1;
  plan.chunk_steps = (plan.num_steps + chunks - 1) / chunks;
  const std::int64_t min_steps =
      tuning.imma_min_chunk_steps < plan.num_steps ? tuning.imma_min_chunk_steps : plan.num_steps;
  if (plan.chunk_steps < min_steps) plan.chunk_steps = min_steps;
  if (plan.chunk_steps > functor::max_chunk_steps) plan.chunk_steps = functor::max_chunk_steps;
  plan.num_chunks = (plan.num_steps + plan.chunk_steps - 1) / plan.chunk_steps;
  // One vector: the sums go straight into y (measured faster than replicas on every panel
  // of docs/packed-genotypes.md); more vectors run one pass each into the replicas.
  plan.replicas = tuning.imma_replicas > 0 ? (tuning.imma_replicas > 32 ? 32 : tuning.imma_replicas)
                  : vectors == 1           ? 1
                                           : packed_imma_replicas(plan.num_chunks);
  return plan;
}

/// Whether the integer tensor-core kernel runs for this matrix on ExecutionSpace: a CUDA
/// space on a GPU of compute capability 8.0 or newer, Scalar float.
template <class ExecutionSpace, class Scalar, class MemorySpace>
bool packed_int8_tensor_cores_available(const ExecutionSpace& exec,
                                        const PackedGenotypeMatrix<Scalar, MemorySpace>& G) {
  (void)G;
#if KCLA_HAVE_CUDA
  if constexpr (std::is_same<ExecutionSpace, Kokkos::Cuda>::value &&
                std::is_same<Scalar, float>::value) {
    int major = 0;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, exec.cuda_device()) !=
        cudaSuccess)
      return false;
    return major >= 8;
  }
#endif
  (void)exec;
  return false;
}

/// y = G x one vector at a time through the integer tensor cores; false (nothing done)
/// where the kernel does not run (packed_int8_tensor_cores_available).
template <bool CountA2, class ExecutionSpace, class Scalar, class MemorySpace>
void packed_int8_tensor_cores_launch(const ExecutionSpace& exec,
                                     const PackedGenotypeMatrix<Scalar, MemorySpace>& G,
                                     const Scalar* x, Scalar* y, std::int64_t B,
                                     const PackedInt8TensorCorePlan& plan) {
  using functor = PackedInt8TensorCoreFunctor<ExecutionSpace, CountA2>;
  functor f;
  packed_set_operands(f, G, x, y, B);
  f.sample_blocks = plan.sample_blocks;
  f.team_groups = plan.team_groups;
  f.num_steps = plan.num_steps;
  f.chunk_steps = plan.chunk_steps;
  f.block_warps = plan.block_warps;
  f.replicas = plan.replicas;
  f.partial_stride = (G.num_samples() + 3) / 4 * 4;
  f.direct = plan.replicas == 1 && B == 1 && reinterpret_cast<std::uintptr_t>(y) % 16 == 0;
  if (f.direct) {
    packed_zero(exec, y, G.num_samples());
    f.partials = y;
  } else {
    const auto workspace = G.int8_workspace(
        exec, static_cast<std::size_t>(plan.replicas) * static_cast<std::size_t>(f.partial_stride));
    f.partials = workspace.first;
    f.done = workspace.second;
  }
  const int league =
      packed_league(plan.team_groups * plan.num_chunks, "the integer tensor-core kernel");
  f.num_teams = static_cast<unsigned>(league);
  // 256 threads (8 warps) at most per team, 3 x 8 warps per multiprocessor: at most 85
  // registers
  using policy = Kokkos::TeamPolicy<ExecutionSpace, Kokkos::LaunchBounds<256, 3>>;
  for (std::int64_t v = 0; v < B; ++v) {
    f.vector0 = v;
    Kokkos::parallel_for(
        "kcla::packed::int8_tensor_cores",
        policy(exec, league, 32 * plan.block_warps)
            .set_scratch_size(0, Kokkos::PerTeam(functor::scratch_bytes(plan.block_warps))),
        f);
  }
}

template <class ExecutionSpace, class Scalar, class MemorySpace>
bool packed_int8_tensor_cores(const ExecutionSpace& exec,
                              const PackedGenotypeMatrix<Scalar, MemorySpace>& G, const Scalar* x,
                              Scalar* y, std::int64_t B, const PackedGenotypeTuning& tuning) {
  if (!packed_int8_tensor_cores_available(exec, G)) return false;
  if constexpr (std::is_same<Scalar, float>::value) {
    const auto plan = packed_int8_tensor_core_plan((G.num_samples() + 15) / 16, G.num_variants(),
                                                   exec.concurrency(), tuning, B);
    if (G.counted_allele() == CountedAllele::a2)
      packed_int8_tensor_cores_launch<true>(exec, G, x, y, B, plan);
    else
      packed_int8_tensor_cores_launch<false>(exec, G, x, y, B, plan);
    return true;
  }
  return false;
}

template <int TN, class ExecutionSpace, class Scalar, class MemorySpace>
void packed_tiles(const ExecutionSpace& exec, const PackedGenotypeMatrix<Scalar, MemorySpace>& G,
                  const Scalar* x, Scalar* y, std::int64_t B, const PackedGenotypeTuning& tuning) {
  using functor = PackedTilesFunctor<Scalar, ExecutionSpace, PackedGenotypeTuning, TN>;
  const std::int64_t m = G.num_samples(), n = G.num_variants();
  functor f;
  f.words = G.words().data();
  f.x = x;
  f.y = y;
  f.num_vectors = B;
  f.num_samples = m;
  f.num_variants = n;
  f.words_per_variant = G.words_per_variant();
  f.sample_words = (m + 15) / 16;
  f.sample_tiles = (m + functor::BM - 1) / functor::BM;
  f.vector_tiles = (B + functor::BN - 1) / functor::BN;
  const std::int64_t base = f.sample_tiles * f.vector_tiles;
  const std::int64_t steps = (n + functor::KS - 1) / functor::KS;
  const std::int64_t target = tuning.tile_target_teams > 0 ? tuning.tile_target_teams : 1;
  std::int64_t splits = (target + base - 1) / base;
  splits = splits < 1 ? 1 : (splits > steps ? steps : splits);
  const std::int64_t steps_per_split = (steps + splits - 1) / splits;
  splits = (steps + steps_per_split - 1) / steps_per_split;
  f.split_variants = steps_per_split * functor::KS;
  f.direct = splits == 1;
  for (int c = 0; c < 4; ++c) f.value[c] = G.values_of_codes()[static_cast<std::size_t>(c)];
  const int league = packed_league(base * splits, "the tile kernel");
  const std::size_t scratch0 = functor::scratch0_bytes();
  if (scratch0 > static_cast<std::size_t>(Kokkos::TeamPolicy<ExecutionSpace>::scratch_size_max(0)))
    throw InvalidArgument("kcla::multiply (packed genotypes): the tile kernel needs " +
                          std::to_string(scratch0) + " bytes of team scratch, more than " +
                          "this back end has (reduce PackedGenotypeTuning's tile sizes)");
  const int team =
      packed_team_size(exec, f, league, functor::threads, scratch0, functor::scratch1_bytes(false));
  const std::size_t scratch1 = functor::scratch1_bytes(team == functor::threads);
  if (!f.direct) packed_zero(exec, y, m * B);
  auto policy = Kokkos::TeamPolicy<ExecutionSpace>(exec, league, team);
  policy.set_scratch_size(0, Kokkos::PerTeam(scratch0));
  if (scratch1 > 0) policy.set_scratch_size(1, Kokkos::PerTeam(scratch1));
  Kokkos::parallel_for("kcla::packed::tiles", policy, f);
}

template <class ExecutionSpace, class Scalar, class MemorySpace>
void packed_host_blocks(const ExecutionSpace& exec,
                        const PackedGenotypeMatrix<Scalar, MemorySpace>& G, const Scalar* x,
                        Scalar* y, std::int64_t B, const PackedGenotypeTuning& tuning) {
  using functor = PackedHostBlocksFunctor<Scalar, ExecutionSpace>;
  const std::int64_t m = G.num_samples();
  functor f;
  f.codes = reinterpret_cast<const std::uint8_t*>(G.words().data());
  f.x = x;
  f.y = y;
  f.num_vectors = B;
  f.num_samples = m;
  f.num_variants = G.num_variants();
  f.bytes_per_variant = 4 * G.words_per_variant();
  f.chunk_variants = tuning.host_chunk_variants > 0 ? tuning.host_chunk_variants : 1;
  for (int c = 0; c < 4; ++c) f.value[c] = G.values_of_codes()[static_cast<std::size_t>(c)];
  // Blocks of about host_block_bytes of partial sums, but at least one per thread.
  const auto row_bytes = static_cast<std::int64_t>(sizeof(Scalar)) * B;
  std::int64_t block = tuning.host_block_bytes / row_bytes / 4 * 4;
  const std::int64_t threads = exec.concurrency() > 0 ? exec.concurrency() : 1;
  const std::int64_t per_thread = ((m + threads - 1) / threads + 3) / 4 * 4;
  const std::int64_t cap = per_thread > 64 ? per_thread : 64;
  if (block > cap) block = cap;
  if (block < 4) block = 4;
  f.block_samples = block;
  const int league = packed_league((m + block - 1) / block, "the host kernel");
  const std::size_t scratch = f.scratch_bytes();
  const int level =
      scratch <= static_cast<std::size_t>(Kokkos::TeamPolicy<ExecutionSpace>::scratch_size_max(0))
          ? 0
          : 1;
  f.scratch_level = level;
  Kokkos::parallel_for("kcla::packed::host_blocks",
                       Kokkos::TeamPolicy<ExecutionSpace>(exec, league, 1)
                           .set_scratch_size(level, Kokkos::PerTeam(scratch)),
                       f);
}

template <class ExecutionSpace, class Scalar, class MemorySpace>
void packed_multiply(const ExecutionSpace& exec, const PackedGenotypeMatrix<Scalar, MemorySpace>& G,
                     const Scalar* x, Scalar* y, std::int64_t B,
                     const PackedMultiplyOptions& options) {
  const std::int64_t m = G.num_samples();
  if (m == 0 || B == 0) return;
  if (G.num_variants() == 0) {
    packed_zero(exec, y, m * B);
    return;
  }
  PackedKernel kernel = options.kernel;
  if (kernel == PackedKernel::automatic)
    kernel = packed_on_host<ExecutionSpace>() ? PackedKernel::host_blocks
             : B == 1 && reinterpret_cast<std::uintptr_t>(y) % 16 == 0
                 ? PackedKernel::int8_tensor_cores  // direct: no shared workspace
             : B == 1                                ? PackedKernel::quad_tables
             : B <= options.tuning.table_max_vectors ? PackedKernel::tables
                                                     : PackedKernel::tiles;
  constexpr int VG = PackedGenotypeTuning::tile_vector_groups;
  switch (kernel) {
    case PackedKernel::int8_tensor_cores:
      if (packed_int8_tensor_cores(exec, G, x, y, B, options.tuning)) break;
      if (!packed_quad_tables(exec, G, x, y, B, options.tuning))
        packed_tables(exec, G, x, y, B, options.tuning);
      break;
    case PackedKernel::tensor_cores:
      if (packed_tensor_cores(exec, G, x, y, B, options.tuning)) break;
      [[fallthrough]];
    case PackedKernel::quad_tables:
      if (!packed_quad_tables(exec, G, x, y, B, options.tuning))
        packed_tables(exec, G, x, y, B, options.tuning);
      break;
    case PackedKernel::tables:
      packed_tables(exec, G, x, y, B, options.tuning);
      break;
    case PackedKernel::tiles:
      if (B <= 2 * VG)
        packed_tiles<2>(exec, G, x, y, B, options.tuning);
      else if (B <= 4 * VG)
        packed_tiles<4>(exec, G, x, y, B, options.tuning);
      else
        packed_tiles<8>(exec, G, x, y, B, options.tuning);
      break;
    default:
      packed_host_blocks(exec, G, x, y, B, options.tuning);
      break;
  }
}

}  // namespace detail

/// y = G x (rank-1 x: num_variants, y: num_samples) or Y = G X (rank 2, LayoutRight:
/// X num_variants x B, Y num_samples x B). x and y hold Scalar, are contiguous and live
/// where `exec` can reach. Throws InvalidArgument for mismatched extents.
template <class ExecutionSpace, class Scalar, class MemorySpace, class XView, class YView>
void multiply(const ExecutionSpace& exec, const PackedGenotypeMatrix<Scalar, MemorySpace>& G,
              const XView& x, const YView& y, const PackedMultiplyOptions& options = {}) {
  detail::check_product_types<ExecutionSpace, MemorySpace, XView, YView>();
  static_assert(std::is_same<typename XView::non_const_value_type, Scalar>::value &&
                    std::is_same<typename YView::value_type, Scalar>::value,
                "kcla::multiply: x and y must hold the matrix's Scalar (y non-const)");
  const std::int64_t vectors = detail::check_product_extents(
      x, y, G.num_samples(), G.num_variants(),
      "packed genotypes " + std::to_string(G.num_samples()) + " samples",
      "packed genotypes " + std::to_string(G.num_variants()) + " variants");
  detail::packed_multiply(exec, G, x.data(), y.data(), vectors, options);
}

}  // namespace kcla
