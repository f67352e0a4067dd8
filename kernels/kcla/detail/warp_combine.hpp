// A semiring combine across the lanes of a CUDA warp by shuffles (no shared memory, no
// barrier), for the row phase's short rows (grammar_sweep_args.hpp, whole_rows_warp).
// Kokkos 3.4 reduces across vector lanes only, and the row kernel's teams have one lane
// each, so the shuffles are written here; other back ends reduce a short row in one thread.
#pragma once

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace kcla::detail {

/// Lanes that reduce one short row together on ExecutionSpace: a CUDA warp, else 1.
template <class ExecutionSpace>
constexpr std::int64_t row_warp_lanes() {
#if defined(KOKKOS_ENABLE_CUDA)
  if constexpr (std::is_same<ExecutionSpace, Kokkos::Cuda>::value) return 32;
#endif
  return 1;
}

#if defined(__CUDA_ARCH__)
/// v from the lane whose index differs from this one's by the bits of `mask` (all 32 lanes
/// of the warp take part). Any trivially copyable value, moved in 32-bit words.
template <class T>
__device__ __forceinline__ T shuffle_xor(const T& v, int mask) {
  static_assert(std::is_trivially_copyable<T>::value, "shuffled values are copied bytewise");
  constexpr int words = (static_cast<int>(sizeof(T)) + 3) / 4;
  std::uint32_t w[words] = {};
  std::memcpy(w, &v, sizeof(T));
  for (int i = 0; i < words; ++i) w[i] = __shfl_xor_sync(0xffffffffu, w[i], mask);
  T out;
  std::memcpy(&out, w, sizeof(T));
  return out;
}
#endif

/// Lane `part * lanes + lane` of a warp holds a partial for vector lane `lane`; afterwards
/// every part's lanes hold the combine over parts 0 .. parts - 1 (parts a power of two, at
/// most 32 / lanes). The whole warp calls it together. Without CUDA, parts must be 1.
template <class Semiring, class T>
KOKKOS_FORCEINLINE_FUNCTION T combine_warp_parts(T v, std::int64_t lanes, std::int64_t parts) {
#if defined(__CUDA_ARCH__)
  for (std::int64_t half = parts / 2; half >= 1; half /= 2)
    v = Semiring::combine(v, shuffle_xor(v, static_cast<int>(half * lanes)));
#else
  (void)lanes;
  (void)parts;
#endif
  return v;
}

}  // namespace kcla::detail
